// Out-of-order mode, as NICs with adaptive routing run RC: every RDMA WRITE packet carries its
// own RETH (RDMA_WRITE_ONLY) so the responder places it wherever it arrives, tracks arrivals in
// a bitmap, and NAKs each hole by its PSN; the requester resends only what is missing. READ
// responses are placed in any order too. A SEND, a READ request and an atomic are taken only in
// order: an RC SEND packet does not say which message it belongs to, so one that arrives early
// is held back (dropped) and comes again when its hole is NAKed. A NAK here names one missing
// PSN and acknowledges nothing; cumulative ACKs carry the point below which all arrived.
#pragma once

#include <cstdint>
#include <vector>

#include "core/psn.hpp"
#include "core/rx_window.hpp"

namespace uet::roce {

struct qp;
class delivery_target;

enum class retransmit_mode : std::uint8_t { go_back_n, out_of_order };
const char* to_string(retransmit_mode m) noexcept;

// A completion that waits for the PSNs before it: a WRITE with immediate placed early.
struct deferred_completion {
    bool pending = false;
    bool message_end = false;  // counts in the MSN when released
    bool remote_data = false;  // a WRITE with immediate: the delivery target is told
    std::uint32_t imm = 0;
};

struct ooo_state {
    // Both sides track PSNs over rings of `window` slots (a power of two).
    void resize(std::uint32_t window);
    std::uint32_t mask = 0;

    // Requester: when each PSN was last sent, which READ response PSNs arrived, and the PSNs
    // queued to go again.
    std::vector<std::uint64_t> sent_at;
    std::vector<std::uint8_t> arrived;
    std::vector<std::uint8_t> queued;
    std::vector<psn_t> resend;
    std::uint32_t resend_head = 0, resend_tail = 0;

    // Responder: arrivals, completions waiting for their turn, when each hole was NAKed, and
    // the NAKs waiting to go.
    rx_window rxw;
    std::vector<std::uint64_t> rx_bits;
    std::vector<deferred_completion> deferred;
    psn_t released = 0;  // the next PSN whose deferred completion may be released
    struct hole_nak {
        psn_t psn = 0;
        std::uint64_t at = 0;
    };
    std::vector<hole_nak> nak_at;
    std::vector<psn_t> naks;
    std::uint32_t nak_head = 0, nak_tail = 0;
};

// Requester side.
void ooo_sent(qp& q, psn_t psn, std::uint64_t now) noexcept;
// Queues `psn` to be sent again, unless it went out less than reorder_window_ns ago (a NAK that
// raced its resend) or is queued already; `force` skips the reorder check (a timeout). Whether
// it was queued.
bool ooo_resend_one(qp& q, psn_t psn, std::uint64_t now, bool force) noexcept;
// `missing` did not arrive: queues the packets sent after it that the responder held back
// (SENDs, READ requests and atomics it takes only in order), so that one NAK or timeout
// brings back the whole run rather than one PSN each.
void ooo_resend_held_back(qp& q, psn_t missing, std::uint64_t now) noexcept;
// The next PSN queued to go again that is still unacknowledged; false when none.
bool ooo_next_resend(qp& q, psn_t& psn) noexcept;
// The first response PSN of a READ not yet arrived.
psn_t ooo_first_missing(const qp& q, psn_t first, psn_t last) noexcept;

// Responder side: a new request packet beyond the expected PSN. Only RDMA_WRITE_ONLY (with or
// without immediate) is placed; anything else is held back.
bool ooo_may_place_early(std::uint8_t opcode) noexcept;
// After an arrival: releases deferred completions up to the cumulative point, and queues a NAK
// for each hole ooo_nak_threshold PSNs below the highest arrival.
void ooo_after_arrival(qp& q, std::uint64_t now, delivery_target& d) noexcept;
// Queues a NAK of the missing `psn`, at most once per nak_repeat_ns; false when the NAK queue
// is full.
bool ooo_nak_hole(qp& q, psn_t psn, std::uint64_t now) noexcept;

}  // namespace uet::roce
