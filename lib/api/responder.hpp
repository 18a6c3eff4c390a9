// The endpoint's answers to requests for it, and the RMA and atomic requests it serves: every
// request is answered exactly once (engine::post_response): RC_OK without data in the PDS ACK
// (answers in ACKs), anything else by a SES response message carrying a return code; on UUD
// nothing is answered. Keys, access and bounds are checked before a byte of a region is touched
// (responder.cpp; the answer of nearly every received send in responder_inline.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "api/op_pool.hpp"
#include "api/region_holds.hpp"
#include "engine/engine.hpp"
#include "uet/uet.hpp"

namespace uet::detail {

struct endpoint_impl;

class responder {
  public:
    responder();

    void respond(endpoint_impl& ep, const received_message& m, wire::ses_return_code rc,
                 std::span<const std::uint8_t> data = {}, std::uint32_t modified = 0,
                 std::uint32_t buffer = none);
    // respond() once the answer is known to need a message of its own; false if the engine
    // refused it. send: the rendezvous send whose buffer data is cut from (its completion names
    // it), else none.
    bool respond_as_message(endpoint_impl& ep, const received_message& m, wire::ses_return_code rc,
                            std::span<const std::uint8_t> data, std::uint32_t modified,
                            std::uint32_t buffer, std::uint32_t send = none,
                            std::uint32_t region_hold = none);
    // respond(m, ok, {}, modified), the answer of nearly every received send, inline in its
    // delivery (responder_inline.hpp), once per message.
    void answer_ok(endpoint_impl& ep, const received_message& m, std::uint32_t modified);
    // answer_ok() and the message's release, in one engine call where the answer goes in the
    // ACK (nearly always): the end of a delivery.
    void answer_ok_and_release(endpoint_impl& ep, const received_message& m,
                               std::uint32_t modified);
    // Where one packet of a WRITE goes (nullptr: refused): the body of
    // endpoint_impl::place_write, inlined into it (responder.cpp only).
    std::uint8_t* place_write(endpoint_impl& ep, const ses_fields& f, std::uint32_t offset,
                              std::uint32_t length) noexcept;
    void on_write(endpoint_impl& ep, received_message& m);
    void on_read(endpoint_impl& ep, received_message& m);
    void on_atomic(endpoint_impl& ep, received_message& m);
    // A fetched-values buffer whose response message is done with.
    void free_buffer(std::uint32_t b) { free_buffers_.push_back(b); }
    // A read response cut from a registered region (zero copy) holds the region (mr_table::hold)
    // until the engine is done with it, so that deregistering the region waits for it; hold is
    // the index named in the response's context (region_context).
    void release_region(endpoint_impl& ep, std::uint32_t hold);
    // The endpoint closes: its engine, and the responses in it, are gone.
    void release_regions(endpoint_impl& ep);

  private:
    std::uint32_t hold_region(endpoint_impl& ep, std::uint64_t key);  // none: no room
    std::vector<std::uint8_t> buffers_;  // fetched atomic values in flight
    std::vector<std::uint32_t> free_buffers_;
    region_holds holds_;
};

}  // namespace uet::detail
