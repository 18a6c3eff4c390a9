#include "roce/completer.hpp"

#include <algorithm>
#include <cstring>

#include "roce/psn24.hpp"
#include "roce/requester.hpp"

namespace uet::roce {

namespace {

using wire::aeth_kind;
using wire::aeth_nak_code;
using wire::roce_opcode;

constexpr aeth_kind kind_of(std::uint8_t syndrome) noexcept {
    return static_cast<aeth_kind>((syndrome >> 5) & 3);
}

void restart_retry_timer(qp& q, std::uint64_t now) noexcept {
    requester_state& r = q.req;
    r.retries_left = q.attr.retry_cnt;
    r.retry_deadline =
        (r.una != r.next_psn && q.attr.timeout != 0) ? now + ack_timeout_ns(q.attr.timeout) : 0;
}

// Everything up to `psn` is acknowledged: SENDs and WRITEs it covers are done; a READ or atomic
// it passes without its answer means that answer was lost (an implicit NAK), and is asked for
// again. An answer that came earlier than the ACKs before it (its WQE blocked behind a READ
// asked for again) acknowledges its own PSNs too: the responder answers in PSN order. Returns
// whether anything moved.
bool acknowledge(qp& q, psn_t psn, std::uint64_t now) noexcept {
    requester_state& r = q.req;
    const psn_t before = r.una;
    psn_t covered = psn;
    q.sq.for_each([&](swqe& w) {
        if (!w.started) return false;
        if (psn_after(w.last_psn, covered)) {
            if (!(w.needs_response() && w.answered)) return false;
            covered = w.last_psn;
        }
        if (w.done) return true;
        if (w.needs_response() && !w.answered) {
            const psn_t missing = q.out_of_order() ? ooo_first_missing(q, w.first_psn, w.last_psn)
                                                   : w.first_psn + w.read_arrived;
            covered = missing - 1;
            resend_from(q, missing, resend_cause::implicit_nak, now);
            return false;
        }
        w.done = true;
        // A READ or atomic holds its max_rd_atomic credit until acknowledged in order, as
        // rxe's does: the responder keeps only that many atomic results to answer a resend.
        if (w.needs_response()) --r.rd_atomic_in_flight;
        return true;
    });
    if (psn_after(covered + 1, r.una)) r.una = covered + 1;
    const bool moved = r.una != before;
    if (moved) restart_retry_timer(q, now);
    return moved;
}

wc_status status_of_nak(std::uint8_t code) noexcept {
    switch (static_cast<aeth_nak_code>(code)) {
        case aeth_nak_code::invalid_request:
            return wc_status::rem_inv_req_err;
        case aeth_nak_code::remote_access_error:
            return wc_status::rem_access_err;
        case aeth_nak_code::remote_operational_error:
            return wc_status::rem_op_err;
        case aeth_nak_code::invalid_rd_request:
            return wc_status::rem_inv_rd_req_err;
        default:
            return wc_status::bad_resp_err;
    }
}

cpl_verdict on_aeth(qp& q, psn_t psn, std::uint8_t syndrome, std::uint64_t now) noexcept {
    requester_state& r = q.req;
    switch (kind_of(syndrome)) {
        case aeth_kind::ack:
            ++q.counters.acks_received;
            return acknowledge(q, psn, now) ? cpl_verdict::progress : cpl_verdict::nothing;
        case aeth_kind::rnr_nak:
            // The receiver had no receive for the SEND at psn (its expected PSN, in either mode):
            // wait, then send it again.
            ++q.counters.rnr_naks_received;
            acknowledge(q, psn - 1, now);
            if (r.rnr_retries_left != retry_forever) {
                if (r.rnr_retries_left == 0) {
                    fail(q, wc_status::rnr_retry_exc_err, q.sq.find_by_psn(psn));
                    return cpl_verdict::failed;
                }
                --r.rnr_retries_left;
            }
            r.rnr_until = now + rnr_timer_ns(syndrome & 0x1f);
            // The responder is alive and said when to try again: the RNR timer stands in for the
            // local ACK timeout, which runs again from the resend.
            r.retry_deadline = 0;
            r.retries_left = q.attr.retry_cnt;
            resend_from(q, psn, resend_cause::rnr, now);
            return cpl_verdict::progress;
        case aeth_kind::nak: {
            const std::uint8_t code = syndrome & 0x1f;
            if (code < nak_code_count) ++q.counters.naks_received[code];
            // In out-of-order mode a sequence NAK names a hole and acknowledges nothing before
            // it; every other NAK, like an RNR NAK, answers the expected PSN, so all before it
            // arrived.
            const bool sequence =
                code == static_cast<std::uint8_t>(aeth_nak_code::psn_sequence_error);
            if (!sequence || !q.out_of_order()) acknowledge(q, psn - 1, now);
            if (sequence) {
                resend_from(q, psn, resend_cause::psn_nak, now);
                return cpl_verdict::progress;
            }
            fail(q, status_of_nak(code), q.sq.find_by_psn(psn));
            return cpl_verdict::failed;
        }
        case aeth_kind::reserved:
            break;
    }
    q.counters.count_drop(roce_drop::unexpected_response);
    return cpl_verdict::dropped;
}

cpl_verdict on_read_response(qp& q, const resp_in& in, psn_t psn, std::uint64_t now) noexcept {
    swqe* w = q.sq.find_by_psn(psn);
    if (w == nullptr || w->wr.opcode != wr_opcode::read) {
        q.counters.count_drop(roce_drop::unexpected_response);
        return cpl_verdict::dropped;
    }
    const psn_t expected = w->first_psn + w->read_arrived;
    const bool early = q.out_of_order();  // responses are placed in any order
    if (w->answered || (early ? q.ooo.arrived[psn & q.ooo.mask] != 0 : psn_before(psn, expected))) {
        ++q.counters.duplicates;
        return cpl_verdict::duplicate;
    }
    if (!early && psn_after(psn, expected)) {
        // A response was lost: ask again from the first missing one (go-back-N).
        q.counters.count_drop(roce_drop::after_gap);
        if (!q.req.resending()) go_back(q, expected, resend_cause::psn_nak);
        return cpl_verdict::dropped;
    }
    const std::uint32_t mtu = q.mtu();
    const std::uint32_t offset = (psn - w->first_psn) * mtu;
    const bool last = psn == w->last_psn;
    const auto len = static_cast<std::uint32_t>(in.payload.size());
    const std::uint32_t want = std::min(mtu, w->wr.length - std::min(w->wr.length, offset));
    const bool last_opcode = in.opcode == roce_opcode::rc_rdma_read_response_last ||
                             in.opcode == roce_opcode::rc_rdma_read_response_only;
    if (len != want || last != last_opcode) {
        q.counters.count_drop(roce_drop::unexpected_response);
        return cpl_verdict::dropped;
    }
    if (len != 0) std::memcpy(w->wr.local + offset, in.payload.data(), len);
    ++w->read_arrived;
    if (early) q.ooo.arrived[psn & q.ooo.mask] = 1;
    ++q.counters.rx_packets;
    q.counters.rx_bytes += len;
    if (w->read_arrived == w->npkts) w->answered = true;
    // A response says the READ request arrived, and so did everything before it (requests are
    // taken in order); its own PSNs are acknowledged as their responses arrive.
    acknowledge(q, early && !w->answered ? w->first_psn - 1 : psn, now);
    return cpl_verdict::progress;
}

cpl_verdict on_atomic_answer(qp& q, const resp_in& in, psn_t psn, std::uint64_t now) noexcept {
    swqe* w = q.sq.find_by_psn(psn);
    if (w == nullptr || !w->needs_response() || w->wr.opcode == wr_opcode::read ||
        !in.has_atomic_ack) {
        q.counters.count_drop(roce_drop::unexpected_response);
        return cpl_verdict::dropped;
    }
    if (w->answered) {
        ++q.counters.duplicates;
        return cpl_verdict::duplicate;
    }
    w->answered = true;
    w->atomic_orig = in.original;
    std::memcpy(w->wr.local, &in.original, sizeof in.original);
    ++q.counters.rx_packets;
    acknowledge(q, psn, now);
    return cpl_verdict::progress;
}

}  // namespace

cpl_verdict on_response(qp& q, const resp_in& in, std::uint64_t now) noexcept {
    if (!requester_ready(q.attr.state)) {
        q.counters.count_drop(roce_drop::qp_not_ready);
        return cpl_verdict::dropped;
    }
    requester_state& r = q.req;
    const psn_t psn = extend(in.psn, r.una);
    // Anything at or beyond next_psn answers a packet never sent.
    if (!psn_before(psn, r.next_psn)) {
        q.counters.count_drop(roce_drop::ghost_ack);
        return cpl_verdict::dropped;
    }
    switch (in.opcode) {
        case roce_opcode::rc_acknowledge:
            if (!in.has_aeth) break;
            // A NAK names the PSN it refuses; an ACK below una repeats old news.
            if (psn_before(psn, r.una - 1)) {
                ++q.counters.duplicates;
                return cpl_verdict::nothing;
            }
            return on_aeth(q, psn, in.syndrome, now);
        case roce_opcode::rc_rdma_read_response_first:
        case roce_opcode::rc_rdma_read_response_middle:
        case roce_opcode::rc_rdma_read_response_last:
        case roce_opcode::rc_rdma_read_response_only:
            if (psn_before(psn, r.una)) {
                ++q.counters.duplicates;
                return cpl_verdict::duplicate;
            }
            return on_read_response(q, in, psn, now);
        case roce_opcode::rc_atomic_acknowledge:
            if (psn_before(psn, r.una)) {
                ++q.counters.duplicates;
                return cpl_verdict::duplicate;
            }
            return on_atomic_answer(q, in, psn, now);
        default:
            break;
    }
    q.counters.count_drop(roce_drop::unexpected_response);
    return cpl_verdict::dropped;
}

void on_timer(qp& q, std::uint64_t now) noexcept {
    requester_state& r = q.req;
    if (r.rnr_until != 0 && now >= r.rnr_until) r.rnr_until = 0;
    if (r.retry_deadline == 0 || now < r.retry_deadline || !requester_ready(q.attr.state)) return;
    if (r.una == r.next_psn) {
        r.retry_deadline = 0;
        return;
    }
    ++q.counters.timeouts;
    if (r.retries_left == 0) {
        fail(q, wc_status::retry_exc_err);
        return;
    }
    --r.retries_left;
    resend_from(q, r.una, resend_cause::timeout, now);
    r.retry_deadline = now + ack_timeout_ns(q.attr.timeout);
}

std::uint64_t next_deadline(const qp& q) noexcept {
    const std::uint64_t a = q.req.rnr_until, b = q.req.retry_deadline;
    if (a == 0) return b;
    if (b == 0) return a;
    return std::min(a, b);
}

void fail(qp& q, wc_status status, swqe* culprit) noexcept {
    if (q.attr.state != qp_state::err) {
        q.attr.state = qp_state::err;
        if (q.error == wc_status::success) q.error = status;
    }
    q.req.retry_deadline = 0;
    q.req.rnr_until = 0;
    if (culprit != nullptr && !culprit->done) {
        if (culprit->status == wc_status::success) culprit->status = status;
        return;
    }
    q.sq.for_each([&](swqe& w) {
        if (w.done) return true;
        if (w.status == wc_status::success) w.status = status;
        return false;
    });
}

std::size_t poll_completions(qp& q, std::span<work_completion> out) noexcept {
    std::size_t n = 0;
    const bool flushing = q.attr.state == qp_state::err;
    while (n < out.size()) {
        swqe* w = q.sq.front();
        if (w == nullptr) break;
        wc_status status = wc_status::success;
        if (!w->done || w->status != wc_status::success) {
            if (!flushing) break;
            status = w->status == wc_status::success ? wc_status::wr_flush_err : w->status;
        }
        if (w->wr.signaled || status != wc_status::success) {
            work_completion& c = out[n++];
            c = work_completion{};
            c.wr_id = w->wr.wr_id;
            c.status = status;
            c.opcode = w->wr.opcode;
            c.byte_len = status == wc_status::success ? w->wr.length : 0;
        }
        q.sq.pop_front();
    }
    return n;
}

}  // namespace uet::roce
