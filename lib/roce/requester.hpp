// The requester of an RC queue pair: work requests in, request packets out, one at a time.
// Resends (go-back-N from a PSN) go before new packets. Segmentation follows IBTA: a message is
// FIRST, MIDDLE..., LAST or ONLY; a WRITE's RETH rides its FIRST or ONLY packet; a READ is one
// request that reserves a PSN per response packet; an atomic takes one PSN.
#pragma once

#include <cstdint>

#include "roce/qp.hpp"
#include "wire/roce.hpp"

namespace uet::roce {

// Why ibv_post_send would refuse a work request (its EINVAL / ENOMEM cases).
enum class post_error : std::uint8_t {
    none,
    not_ready,           // the QP is not in RTS, SQD or ERR
    queue_full,          // the send queue holds sq_depth work requests
    bad_length,          // longer than 2^31 bytes
    no_buffer,           // a length but no local buffer
    bad_atomic,          // an atomic's length is not 8 or its remote address not 8-byte aligned
    read_beyond_window,  // out-of-order mode: a READ of more than max_outstanding packets
};
const char* to_string(post_error e) noexcept;

// Queues one work request. In ERR it is queued to complete with wr_flush_err.
post_error post_send(qp& q, const send_wr& wr) noexcept;

// One request packet, described; the engine writes the frame.
struct req_packet {
    wire::roce_opcode opcode = wire::roce_opcode::rc_send_only;
    psn_t psn = 0;  // extended; the wire carries to_wire(psn)
    bool ack_req = false;
    bool resend = false;
    swqe* wqe = nullptr;
    const std::uint8_t* payload = nullptr;  // wqe->wr.local + offset
    std::uint32_t offset = 0;               // into the work request's local buffer
    std::uint32_t length = 0;               // payload bytes
    bool has_reth = false;
    wire::reth_header reth;
    bool has_atomic = false;
    wire::atomic_eth_header atomic;
    bool has_imm = false;
    std::uint32_t imm = 0;
};

enum class req_stop : std::uint8_t {
    none,
    empty,      // nothing to send
    not_ready,  // the QP cannot send in its state
    window,     // max_outstanding PSNs in flight
    rd_atomic,  // max_rd_atomic READs and atomics in flight
    rnr_wait,   // waiting out an RNR NAK's timer
};
const char* to_string(req_stop s) noexcept;

// The next packet to send at `now`, or false with the reason in `stop`.
bool next_request(qp& q, std::uint64_t now, req_packet& out, req_stop& stop) noexcept;
// Whether next_request() has a new packet (not a resend) to give: a work request not all sent,
// room in the window and, for one not started that needs an answer, a READ/atomic credit. The
// RNR wait and the QP's state are the caller's to check.
bool can_send_new(const qp& q) noexcept;

// Go-back-N: every PSN from `from` up to the last sent is sent again, in order, before anything
// new. A READ whose responses are partly in is asked again from `from`, for the rest.
void go_back(qp& q, psn_t from, resend_cause cause) noexcept;

// What a lost packet costs in each mode: go-back-N from `psn`, or in out-of-order mode that one
// PSN again (a NAK's PSN only once it is older than the reorder window).
void resend_from(qp& q, psn_t psn, resend_cause cause, std::uint64_t now) noexcept;

}  // namespace uet::roce
