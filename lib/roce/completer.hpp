// The completer of an RC queue pair: what comes back to the requester (ACKs, NAKs, RNR NAKs,
// READ responses, atomic answers), its two timers (local ACK timeout, RNR wait), and the work
// completions, which leave in posting order. Any error completion moves the QP to ERR; then
// every other work request completes with wr_flush_err, as verbs does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "roce/qp.hpp"
#include "wire/roce.hpp"

namespace uet::roce {

// One decoded response-side packet.
struct resp_in {
    wire::roce_opcode opcode = wire::roce_opcode::rc_acknowledge;
    std::uint32_t psn = 0;  // 24 bits, as on the wire
    bool has_aeth = false;
    std::uint8_t syndrome = 0;
    std::uint32_t msn = 0;
    bool has_atomic_ack = false;
    std::uint64_t original = 0;
    std::span<const std::uint8_t> payload;
};

enum class cpl_verdict : std::uint8_t {
    progress,   // something was acknowledged, answered or placed
    nothing,    // valid and changes nothing (a repeated ACK)
    duplicate,  // a response already taken
    dropped,    // counted in the QP's drops
    failed,     // an error NAK or a retry count ran out: the QP is in ERR
};

cpl_verdict on_response(qp& q, const resp_in& in, std::uint64_t now) noexcept;

// Runs the timers due at `now`: the end of an RNR wait, the local ACK timeout (go back to the
// oldest unacknowledged PSN, or retry_exc_err when retry_cnt timeouts passed without progress).
void on_timer(qp& q, std::uint64_t now) noexcept;
// The earliest time on_timer has work, or 0 when none.
std::uint64_t next_deadline(const qp& q) noexcept;

// Moves the QP to ERR: the work request that failed (`culprit`, or else the oldest unfinished
// one) completes with `status`, every other unfinished one with wr_flush_err.
void fail(qp& q, wc_status status, swqe* culprit = nullptr) noexcept;

// Completions in posting order, at most out.size(): finished signaled work requests, and in
// ERR every remaining one (signaled or not). Returns how many were written.
std::size_t poll_completions(qp& q, std::span<work_completion> out) noexcept;

}  // namespace uet::roce
