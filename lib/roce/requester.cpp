#include "roce/requester.hpp"

#include <algorithm>

#include "roce/psn24.hpp"

namespace uet::roce {

namespace {

using wire::roce_opcode;

constexpr std::uint32_t max_message = 1u << 31;

bool is_atomic(wr_opcode op) noexcept {
    return op == wr_opcode::cmp_swap || op == wr_opcode::fetch_add;
}

roce_opcode send_opcode(bool first, bool last, bool imm) noexcept {
    if (first && last)
        return imm ? roce_opcode::rc_send_only_with_immediate : roce_opcode::rc_send_only;
    if (first) return roce_opcode::rc_send_first;
    if (last) return imm ? roce_opcode::rc_send_last_with_immediate : roce_opcode::rc_send_last;
    return roce_opcode::rc_send_middle;
}

roce_opcode write_opcode(bool first, bool last, bool imm) noexcept {
    if (first && last)
        return imm ? roce_opcode::rc_rdma_write_only_with_immediate
                   : roce_opcode::rc_rdma_write_only;
    if (first) return roce_opcode::rc_rdma_write_first;
    if (last)
        return imm ? roce_opcode::rc_rdma_write_last_with_immediate
                   : roce_opcode::rc_rdma_write_last;
    return roce_opcode::rc_rdma_write_middle;
}

// The packet of `w` at `psn` (inside its range). Returns the PSN after the packet: a READ
// request covers every response PSN from `psn` to the end of the READ.
psn_t describe(const qp& q, swqe& w, psn_t psn, req_packet& out) noexcept {
    const send_wr& wr = w.wr;
    const std::uint32_t mtu = q.mtu();
    const std::uint32_t k = psn - w.first_psn;
    const std::uint32_t offset = k * mtu;
    out = req_packet{};
    out.psn = psn;
    out.wqe = &w;
    out.offset = offset;
    switch (wr.opcode) {
        case wr_opcode::send:
        case wr_opcode::send_imm:
        case wr_opcode::write:
        case wr_opcode::write_imm: {
            const bool first = k == 0, last = k + 1 == w.npkts;
            const bool imm = wr.opcode == wr_opcode::send_imm || wr.opcode == wr_opcode::write_imm;
            const bool write = wr.opcode == wr_opcode::write || wr.opcode == wr_opcode::write_imm;
            if (write && q.out_of_order()) {
                // Every packet a WRITE_ONLY with its own RETH; the immediate follows alone.
                const bool imm_packet = imm && last;
                out.opcode = imm_packet ? roce_opcode::rc_rdma_write_only_with_immediate
                                        : roce_opcode::rc_rdma_write_only;
                out.length =
                    imm_packet ? 0 : std::min(mtu, wr.length - std::min(wr.length, offset));
                out.payload = wr.local && out.length ? wr.local + offset : nullptr;
                out.has_reth = true;
                out.reth = {wr.remote_va + std::min(wr.length, offset), wr.rkey, out.length};
                out.has_imm = imm_packet;
                out.imm = wr.imm;
                out.ack_req = last;
                return psn + 1;
            }
            out.opcode = write ? write_opcode(first, last, imm) : send_opcode(first, last, imm);
            out.length = std::min(mtu, wr.length - std::min(wr.length, offset));
            out.payload = wr.local ? wr.local + offset : nullptr;
            if (write && first) {
                out.has_reth = true;
                out.reth = {wr.remote_va, wr.rkey, wr.length};
            }
            if (imm && last) {
                out.has_imm = true;
                out.imm = wr.imm;
            }
            out.ack_req = last;
            return psn + 1;
        }
        case wr_opcode::read:
            out.opcode = roce_opcode::rc_rdma_read_request;
            out.has_reth = true;
            out.reth = {wr.remote_va + offset, wr.rkey, wr.length - std::min(wr.length, offset)};
            out.ack_req = true;
            return w.last_psn + 1;
        case wr_opcode::cmp_swap:
        case wr_opcode::fetch_add:
            out.opcode = wr.opcode == wr_opcode::cmp_swap ? roce_opcode::rc_compare_swap
                                                          : roce_opcode::rc_fetch_add;
            out.has_atomic = true;
            out.atomic = {wr.remote_va, wr.rkey,
                          wr.opcode == wr_opcode::cmp_swap ? wr.swap : wr.compare_add,
                          wr.opcode == wr_opcode::cmp_swap ? wr.compare_add : 0};
            out.ack_req = true;
            return psn + 1;
    }
    return psn + 1;
}

void sent(qp& q, std::uint64_t now, req_packet& out) noexcept {
    // AckReq on message ends, on resends, and on every Nth packet so that a long message is
    // acknowledged while it streams.
    if (out.resend || ++q.req.since_ack_req >= q.limits.ack_req_every) out.ack_req = true;
    if (out.ack_req) q.req.since_ack_req = 0;
    ++q.counters.tx_packets;
    q.counters.tx_bytes += out.length;
    if (q.out_of_order()) ooo_sent(q, out.psn, now);
    if (q.req.retry_deadline == 0 && q.attr.timeout != 0)
        q.req.retry_deadline = now + ack_timeout_ns(q.attr.timeout);
}

}  // namespace

const char* to_string(post_error e) noexcept {
    switch (e) {
        case post_error::none:
            return "ok";
        case post_error::not_ready:
            return "queue pair is not ready to send (needs RTS)";
        case post_error::queue_full:
            return "send queue is full";
        case post_error::bad_length:
            return "work request longer than 2^31 bytes";
        case post_error::no_buffer:
            return "work request has a length but no local buffer";
        case post_error::read_beyond_window:
            return "READ longer than max_outstanding packets in out-of-order mode";
        case post_error::bad_atomic:
            return "atomic needs an 8-byte local buffer and an 8-byte aligned remote address";
    }
    return "unknown";
}

const char* to_string(req_stop s) noexcept {
    switch (s) {
        case req_stop::none:
            return "none";
        case req_stop::empty:
            return "empty";
        case req_stop::not_ready:
            return "not ready";
        case req_stop::window:
            return "window";
        case req_stop::rd_atomic:
            return "max_rd_atomic";
        case req_stop::rnr_wait:
            return "RNR wait";
    }
    return "unknown";
}

post_error post_send(qp& q, const send_wr& wr) noexcept {
    if (!requester_ready(q.attr.state) && q.attr.state != qp_state::err)
        return post_error::not_ready;
    if (wr.length > max_message) return post_error::bad_length;
    if (wr.length != 0 && wr.local == nullptr) return post_error::no_buffer;
    if (is_atomic(wr.opcode) && (wr.length != 8 || (wr.remote_va & 7) != 0))
        return post_error::bad_atomic;
    const std::uint32_t npkts = packets_for(wr.opcode, wr.length, q.mtu(), q.out_of_order());
    // Out-of-order mode tracks a READ's response PSNs over rings as wide as the window.
    if (q.out_of_order() && wr.opcode == wr_opcode::read && npkts > q.limits.max_outstanding)
        return post_error::read_beyond_window;
    swqe* w = q.sq.push(wr);
    if (w == nullptr) return post_error::queue_full;
    w->npkts = npkts;
    return post_error::none;
}

bool next_request(qp& q, std::uint64_t now, req_packet& out, req_stop& stop) noexcept {
    requester_state& r = q.req;
    if (!requester_ready(q.attr.state)) {
        stop = req_stop::not_ready;
        return false;
    }
    if (r.rnr_until != 0) {
        stop = req_stop::rnr_wait;
        return false;
    }
    psn_t one = 0;
    if (q.out_of_order() && ooo_next_resend(q, one)) {
        if (swqe* w = q.sq.find_by_psn(one)) {
            describe(q, *w, one, out);
            out.resend = true;
            sent(q, now, out);
            stop = req_stop::none;
            return true;
        }
    }
    while (r.resending()) {
        if (psn_before(r.resend_psn, r.una)) r.resend_psn = r.una;  // acknowledged meanwhile
        swqe* w = r.resending() ? q.sq.find_by_psn(r.resend_psn) : nullptr;
        if (w == nullptr) {
            r.resend_psn = r.resend_end;
            break;
        }
        // What already came back is not asked for again: an answered READ or atomic is
        // skipped, a READ is asked for from its first missing response.
        if (w->answered || w->done) {
            r.resend_psn = w->last_psn + 1;
            if (psn_after(r.resend_psn, r.resend_end)) r.resend_psn = r.resend_end;
            continue;
        }
        if (w->wr.opcode == wr_opcode::read &&
            psn_before(r.resend_psn, w->first_psn + w->read_arrived))
            r.resend_psn = w->first_psn + w->read_arrived;
        r.resend_psn = describe(q, *w, r.resend_psn, out);
        if (psn_after(r.resend_psn, r.resend_end)) r.resend_psn = r.resend_end;
        out.resend = true;
        sent(q, now, out);
        stop = req_stop::none;
        return true;
    }
    swqe* w = q.sq.next_unsent();
    if (w == nullptr) {
        stop = req_stop::empty;
        return false;
    }
    if (psn_distance(r.una, r.next_psn) >= static_cast<std::int32_t>(q.limits.max_outstanding)) {
        stop = req_stop::window;
        return false;
    }
    if (!w->started) {
        if (q.out_of_order() && w->wr.opcode == wr_opcode::read &&
            psn_distance(r.una, r.next_psn) + w->npkts > q.limits.max_outstanding) {
            stop = req_stop::window;
            return false;
        }
        if (w->needs_response()) {
            if (r.rd_atomic_in_flight >= q.attr.max_rd_atomic) {
                stop = req_stop::rd_atomic;
                return false;
            }
            ++r.rd_atomic_in_flight;
        }
        w->started = true;
        w->first_psn = r.next_psn;
        w->last_psn = r.next_psn + w->npkts - 1;
        if (q.out_of_order() && w->wr.opcode == wr_opcode::read)
            for (psn_t p = w->first_psn; p != w->last_psn + 1; ++p)
                q.ooo.arrived[p & q.ooo.mask] = 0;
    }
    r.next_psn = describe(q, *w, r.next_psn, out);
    if (psn_after(r.next_psn, w->last_psn)) q.sq.segmented();
    sent(q, now, out);
    stop = req_stop::none;
    return true;
}

bool can_send_new(const qp& q) noexcept {
    const requester_state& r = q.req;
    const swqe* w = q.sq.next_unsent();
    if (w == nullptr) return false;
    const std::int32_t in_flight = psn_distance(r.una, r.next_psn);
    if (in_flight >= static_cast<std::int32_t>(q.limits.max_outstanding)) return false;
    if (w->started) return true;
    if (q.out_of_order() && w->wr.opcode == wr_opcode::read &&
        in_flight + w->npkts > q.limits.max_outstanding)
        return false;
    return !w->needs_response() || r.rd_atomic_in_flight < q.attr.max_rd_atomic;
}

void resend_from(qp& q, psn_t psn, resend_cause cause, std::uint64_t now) noexcept {
    if (!q.out_of_order()) {
        go_back(q, psn, cause);
        return;
    }
    ++q.counters.resends[static_cast<std::size_t>(cause)];
    if (ooo_resend_one(q, psn, now, cause != resend_cause::psn_nak))
        ooo_resend_held_back(q, psn, now);
}

void go_back(qp& q, psn_t from, resend_cause cause) noexcept {
    requester_state& r = q.req;
    if (psn_before(from, r.una)) from = r.una;
    if (!psn_before(from, r.next_psn)) return;
    r.resend_psn = from;
    r.resend_end = r.next_psn;
    ++q.counters.go_back_rounds;
    q.counters.resends[static_cast<std::size_t>(cause)] += r.next_psn - from;
}

}  // namespace uet::roce
