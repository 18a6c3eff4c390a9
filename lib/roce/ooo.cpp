#include "roce/ooo.hpp"

#include <bit>

#include "roce/qp.hpp"
#include "wire/roce.hpp"

namespace uet::roce {

const char* to_string(retransmit_mode m) noexcept {
    return m == retransmit_mode::out_of_order ? "out-of-order" : "go-back-N";
}

void ooo_state::resize(std::uint32_t window) {
    const std::uint32_t n = std::bit_ceil(window < 64 ? 64u : window);
    mask = n - 1;
    sent_at.assign(n, 0);
    arrived.assign(n, 0);
    queued.assign(n, 0);
    resend.assign(n, 0);
    rx_bits.assign(n / 64, 0);
    deferred.assign(n, {});
    nak_at.assign(n, {});
    naks.assign(64, 0);
}

void ooo_sent(qp& q, psn_t psn, std::uint64_t now) noexcept {
    q.ooo.sent_at[psn & q.ooo.mask] = now;
}

bool ooo_resend_one(qp& q, psn_t psn, std::uint64_t now, bool force) noexcept {
    ooo_state& o = q.ooo;
    const requester_state& r = q.req;
    if (psn_before(psn, r.una) || !psn_before(psn, r.next_psn)) return false;
    const std::uint32_t slot = psn & o.mask;
    if (o.queued[slot]) return false;
    if (!force && now - o.sent_at[slot] < q.limits.reorder_window_ns) return false;
    if (o.resend_tail - o.resend_head > o.mask) return false;  // every slot queued already
    o.queued[slot] = 1;
    o.resend[o.resend_tail++ & o.mask] = psn;
    return true;
}

void ooo_resend_held_back(qp& q, psn_t missing, std::uint64_t now) noexcept {
    q.sq.for_each([&](swqe& w) {
        if (!w.started) return false;
        if (!psn_after(w.last_psn, missing) || w.done || w.answered) return true;
        switch (w.wr.opcode) {
            case wr_opcode::write:
            case wr_opcode::write_imm:
                return true;  // placed wherever they arrive
            case wr_opcode::read:
                // No response yet: its request may have been held back.
                if (w.read_arrived == 0 && psn_after(w.first_psn, missing))
                    ooo_resend_one(q, w.first_psn, now, true);
                return true;
            default:
                for (psn_t p = psn_after(w.first_psn, missing) ? w.first_psn : missing + 1;
                     p != w.last_psn + 1 && psn_before(p, q.req.next_psn); ++p)
                    ooo_resend_one(q, p, now, true);
                return true;
        }
    });
}

bool ooo_next_resend(qp& q, psn_t& psn) noexcept {
    ooo_state& o = q.ooo;
    while (o.resend_head != o.resend_tail) {
        const psn_t p = o.resend[o.resend_head++ & o.mask];
        o.queued[p & o.mask] = 0;
        if (!psn_before(p, q.req.una) && psn_before(p, q.req.next_psn)) {
            psn = p;
            return true;
        }
    }
    return false;
}

psn_t ooo_first_missing(const qp& q, psn_t first, psn_t last) noexcept {
    psn_t p = first;
    while (p != last && q.ooo.arrived[p & q.ooo.mask] != 0)
        ++p;
    return p;
}

bool ooo_may_place_early(std::uint8_t opcode) noexcept {
    return opcode == static_cast<std::uint8_t>(wire::roce_opcode::rc_rdma_write_only) ||
           opcode ==
               static_cast<std::uint8_t>(wire::roce_opcode::rc_rdma_write_only_with_immediate);
}

void ooo_after_arrival(qp& q, std::uint64_t now, delivery_target& d) noexcept {
    ooo_state& o = q.ooo;
    responder_state& r = q.rsp;
    // Completions waiting for the PSNs before them, in PSN order.
    const psn_t upto = o.rxw.expected();
    for (; psn_before(o.released, upto); ++o.released) {
        deferred_completion& c = o.deferred[o.released & o.mask];
        if (!c.pending) continue;
        if (c.remote_data) d.remote_data(q, c.imm, 0);
        if (c.message_end) ++r.msn;
        c = {};
    }
    r.epsn = upto;
    // Holes far enough below the highest arrival are not reordering any more: NAK each, by PSN.
    const psn_t highest = o.rxw.highest();
    if (psn_distance(o.rxw.cack(), highest) <=
        static_cast<std::int32_t>(q.limits.ooo_nak_threshold))
        return;
    const psn_t end = highest - q.limits.ooo_nak_threshold + 1;
    std::uint32_t scanned = 0;
    for (psn_t p = upto; psn_before(p, end) && scanned < 256; ++p, ++scanned)
        if (!o.rxw.received(p) && !ooo_nak_hole(q, p, now)) break;
}

bool ooo_nak_hole(qp& q, psn_t psn, std::uint64_t now) noexcept {
    ooo_state& o = q.ooo;
    ooo_state::hole_nak& h = o.nak_at[psn & o.mask];
    if (h.psn == psn && h.at != 0 && now - h.at < q.limits.nak_repeat_ns) return true;
    if (o.nak_tail - o.nak_head >= o.naks.size()) return false;
    h = {psn, now == 0 ? 1 : now};
    o.naks[o.nak_tail++ % o.naks.size()] = psn;
    ++q.counters.naks_sent[0];
    return true;
}

}  // namespace uet::roce
