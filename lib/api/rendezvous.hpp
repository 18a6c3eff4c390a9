// Rendezvous and deferred sends. A rendezvous send's target pulls the bytes past the eager part
// with reads of a region registered for the send's duration; a deferrable send that finds no
// receive is answered NO_MATCH and kept here until a receive is posted for it, which asks the
// sender to send again with an RTR (rendezvous.cpp).
#pragma once

#include <cstdint>
#include <optional>

#include "api/op_pool.hpp"
#include "core/flat_map.hpp"
#include "engine/engine.hpp"
#include "ses/matching.hpp"
#include "uet/uet.hpp"

namespace uet::detail {

struct endpoint_impl;

// A send deferred until a receive is posted for it.
struct deferred_send {
    std::uint32_t peer = none;
    // The sender's address when it was deferred: a learned engine peer holding no state may be
    // forgotten and its id given to another source (engine::keep_peer), so the id alone may
    // name someone else by the time a receive asks for it.
    std::uint32_t ip = 0;
    bool tagged = false;
    std::uint64_t tag = 0;
    std::uint32_t initiator_token = 0;
    bool eager = false;        // a plain send (deferred for want of room): a multi-receive buffer's
    std::uint32_t length = 0;  // the whole message (what a probe reports)
};

class rendezvous {
  public:
    // max_sends: the endpoint's operations (each may be a rendezvous send).
    rendezvous(std::size_t max_deferred, std::size_t max_sends)
        : deferred_sends_(max_deferred), sends_(max_sends) {}

    // The region a rendezvous send's target pulls from, registered for its duration: false if
    // it could not be.
    bool register_send(endpoint_impl& ep, op& o, std::uint32_t index);
    // The rendezvous send whose region has this key, or none.
    std::uint32_t send_of(std::uint64_t key) const noexcept {
        const auto index = sends_.find(key);
        return index ? *index : none;
    }
    // The responses to the target's reads are cut from the send's buffer, by reference, and may
    // still be in the engine (a retransmission reads the buffer again) when the target answers
    // the send, an error above all: a target that gave up on its pull answers without waiting
    // for what is on its way. The send completes only once the last one is done with.
    // A response the engine gave up on (result) means the target is gone: the send's answer
    // will not come either (request_tracker::fail_peer).
    void read_served(endpoint_impl& ep, std::uint32_t index, const status& result);
    // The send is over: its region goes, so no read is served from it any more. True while
    // responses cut from its buffer are still in the engine: its completion waits for them.
    bool release_send(endpoint_impl& ep, op& o);
    // Receive `index` takes the rendezvous send m, whose eager bytes are in place: it pulls the
    // rest.
    void start_pull(endpoint_impl& ep, std::uint32_t index, received_message& m);
    // The rendezvous data is all here (or could not be pulled): answer the send.
    void end_pull(endpoint_impl& ep, op& o);
    // A send with no receive and no room to be held: NO_MATCH, asked for again once a receive is
    // posted (or DROPPED when too many wait).
    void defer(endpoint_impl& ep, received_message& m, bool tagged);
    // Receive `index` (rule) asks a deferred send it matches to come again: true if one did.
    bool match_deferred(endpoint_impl& ep, std::uint32_t index, const ses::match_rule& rule);
    // The deferred send that a receive of `rule` would ask for, left deferred (nullptr if none);
    // take_deferred: the same, no longer deferred (a probe claimed it).
    const deferred_send* find_deferred(const endpoint_impl& ep,
                                       const ses::match_rule& rule) const noexcept;
    std::optional<deferred_send> take_deferred(const endpoint_impl& ep,
                                               const ses::match_rule& rule) noexcept;
    void start_rtr(endpoint_impl& ep, std::uint32_t recv, const deferred_send& d);
    void on_rtr(endpoint_impl& ep, received_message& m);
    // The oldest deferred eager send a multi-receive buffer of `rule` may take, no longer deferred.
    std::optional<deferred_send> take_for_multi(endpoint_impl& ep, const ses::match_rule& rule);
    // A send take_for_multi() gave that could not be asked for: deferred again.
    void put_back(const deferred_send& d) noexcept { deferred_sends_.push(d); }
    bool empty() const noexcept { return deferred_sends_.empty(); }
    void drain() {
        deferred_sends_.drain([](const deferred_send&) {});
    }

    // Whether a deferred send's peer id still names the host that sent it.
    static bool still_there(const endpoint_impl& ep, const deferred_send& d) noexcept;

  private:
    ses::bounded_fifo<deferred_send> deferred_sends_;
    pds::flat_map sends_;  // rendezvous region key -> the send's operation
};

}  // namespace uet::detail
