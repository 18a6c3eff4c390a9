// What the responder asks of the layer above (the API's RoCE endpoint, or a test harness): a
// posted receive for a SEND, memory for a WRITE, READ or atomic (the rkey checked against the
// regions), and the completions of arriving messages. Called during receive; an implementation
// never calls back into the QP.
#pragma once

#include <cstdint>
#include <span>

#include "roce/verbs.hpp"

namespace uet::roce {

struct qp;

// A posted receive: message bytes at offsets >= skip go to base + (offset - skip). skip lets
// the layer above keep a header of its own at the start of every SEND.
struct recv_slot {
    std::uint8_t* base = nullptr;
    std::uint32_t capacity = 0;
    std::uint32_t skip = 0;
    std::uint64_t cookie = 0;
};

// A READ's source holds its region until the responses are cut (delivery_target::read_done).
inline constexpr std::uint32_t no_hold = ~std::uint32_t{0};

// Where a remote access lands, or nullptr when the rkey, range or permission is wrong. A READ's
// source comes with the target's hold on its region (no_hold: nothing to give back).
struct remote_memory {
    std::uint8_t* where = nullptr;
    std::uint32_t hold = no_hold;
};

struct atomic_outcome {
    bool ok = false;  // false: bad rkey, range or permission
    std::uint64_t original = 0;
};

// What happened to a queue pair outside any work request's completion.
enum class qp_event : std::uint8_t {
    established,   // the connection manager brought it to RTS (a passive QP is new here)
    rejected,      // the peer answered its connection request with a REJ (detail: the reason)
    error,         // it entered ERR (qp::error says why); its work requests flush
    disconnected,  // the peer disconnected (DREQ): it is in ERR and its work requests flush
};
const char* to_string(qp_event e) noexcept;

class delivery_target {
  public:
    virtual ~delivery_target() = default;
    // A SEND's first packet arrived: the receive it goes to, or false when none is posted (the
    // responder answers with an RNR NAK and the requester tries again later).
    virtual bool take_receive(qp& q, std::span<const std::uint8_t> first_payload,
                              recv_slot& out) = 0;
    // The SEND is whole (`length` counts from `skip`), or failed with `status`.
    virtual void receive_done(qp& q, std::uint64_t cookie, std::uint32_t length, bool with_imm,
                              std::uint32_t imm, wc_status status) = 0;
    // Memory for a WRITE of `length` bytes at (rkey, va), checked once for the whole message.
    virtual remote_memory place_write(qp& q, std::uint32_t rkey, std::uint64_t va,
                                      std::uint32_t length) = 0;
    // Where one packet of an open WRITE goes: (rkey, va) checked again against the live
    // regions, so that a region deregistered mid-WRITE is never written after (its owner may
    // have freed it); nullptr when it is gone. By default place_write, for targets whose memory
    // never goes away.
    virtual std::uint8_t* write_packet_at(qp& q, std::uint32_t rkey, std::uint64_t va,
                                          std::uint32_t length) {
        return place_write(q, rkey, va, length).where;
    }
    // A WRITE with immediate is whole: the immediate data for the remote completion.
    virtual void remote_data(qp& q, std::uint32_t imm, std::uint32_t length) = 0;
    // The source of a READ of `length` bytes (not 0) at (rkey, va). Its responses are cut from
    // it over later transmit bursts; a hold keeps the region from going back to its owner until
    // the responder gives it back through read_done, once: when its last response is built, or
    // when the responses are dropped (the QP reset or destroyed). An engine destroyed with
    // responses queued gives nothing back: the target forgets its holds itself then.
    virtual remote_memory read_source(qp& q, std::uint32_t rkey, std::uint64_t va,
                                      std::uint32_t length) = 0;
    // The READ response that read_source's hold was for is done with the region. A target
    // whose read_source holds nothing need not implement it.
    virtual void read_done(qp& q, std::uint32_t hold) {
        (void)q;
        (void)hold;
    }
    // Runs one 8-byte atomic at (rkey, va) and returns the original value.
    virtual atomic_outcome atomic(qp& q, std::uint32_t rkey, std::uint64_t va, wr_opcode op,
                                  std::uint64_t swap_add, std::uint64_t compare) = 0;
    // A connection or error event of `q`; detail is the REJ reason code for `rejected`, else 0.
    virtual void on_qp_event(qp& q, qp_event e, std::uint16_t detail) = 0;
};

}  // namespace uet::roce
