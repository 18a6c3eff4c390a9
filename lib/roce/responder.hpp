// The responder of an RC queue pair (go-back-N): request packets in, in PSN order, placed into
// receives and regions through the delivery target; acknowledgements, NAKs, READ responses and
// atomic answers out. The order of checks is rxe's: PSN, opcode sequence, the QP's access,
// resources, length, the rkey, then execution. A fatal NAK (invalid request, remote access
// error) moves the QP to ERR once queued.
#pragma once

#include <cstdint>
#include <span>

#include "roce/delivery.hpp"
#include "roce/qp.hpp"
#include "wire/roce.hpp"

namespace uet::roce {

// One decoded request packet.
struct req_in {
    wire::roce_opcode opcode = wire::roce_opcode::rc_send_only;
    std::uint32_t psn = 0;  // 24 bits, as on the wire
    bool ack_req = false;
    const wire::reth_header* reth = nullptr;
    const wire::atomic_eth_header* atomic = nullptr;
    bool has_imm = false;
    std::uint32_t imm = 0;
    std::span<const std::uint8_t> payload;
};

enum class rsp_verdict : std::uint8_t {
    accepted,   // new and executed
    duplicate,  // seen before: acknowledged or answered again, nothing placed
    dropped,    // counted in the QP's drops
    nak,        // refused with a NAK (queued as the acknowledgement)
    rnr,        // no receive posted: RNR NAK queued, the requester will send it again
};

rsp_verdict on_request(qp& q, const req_in& in, std::uint64_t now, delivery_target& d) noexcept;

// The acknowledgements due, taken after each receive burst until false: out-of-order mode's
// NAKs of holes first, then the cumulative ACK or NAK. That one waits while READ responses or
// atomic answers do, so an ACK never passes a response the requester needs.
struct ack_out {
    psn_t psn = 0;
    std::uint8_t syndrome = 0;
    std::uint32_t msn = 0;
};
bool take_ack(qp& q, ack_out& out) noexcept;

// The next READ response packet or atomic answer, in PSN order. A READ's last packet gives its
// hold on the region back to `d` (delivery_target::read_done); out.payload stays readable until
// the caller returns to the layer above.
struct resp_packet {
    wire::roce_opcode opcode = wire::roce_opcode::rc_rdma_read_response_only;
    psn_t psn = 0;
    bool has_aeth = false;  // FIRST, LAST, ONLY and atomic answers carry the MSN
    std::uint8_t syndrome = 0;
    std::uint32_t msn = 0;
    const std::uint8_t* payload = nullptr;
    std::uint32_t length = 0;
    bool has_atomic_ack = false;
    std::uint64_t original = 0;
};
bool next_response(qp& q, resp_packet& out, delivery_target& d) noexcept;
bool has_response(const qp& q) noexcept;

// An ACK's syndrome: no end-to-end credits (credit count 31, as rxe sends).
inline constexpr std::uint8_t ack_syndrome =
    wire::aeth_header::make_syndrome(wire::aeth_kind::ack, 31);

}  // namespace uet::roce
