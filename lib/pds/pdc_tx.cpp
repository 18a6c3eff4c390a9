// Initiator side of a PDC: sending, acknowledgements, loss detection, retransmission timers.
#include <algorithm>

#include "pdc.hpp"

namespace uet::pds {

const char* to_string(pdc_state s) noexcept {
    switch (s) {
        case pdc_state::free:
            return "free";
        case pdc_state::syn_sent:
            return "syn_sent";
        case pdc_state::established:
            return "established";
        case pdc_state::closing:
            return "closing";
        case pdc_state::open:
            return "open";
    }
    return "unknown";
}

void pdc::open_initiator(std::span<tx_entry> ring, psn_t start, std::uint16_t entropy,
                         const pdc_params& params) noexcept {
    role = pdc_role::initiator;
    state = pdc_state::syn_sent;
    remote_id = 0;
    start_psn = start;
    tx.reset(ring, start);
    tx_seq = highest_acked_seq = 0;
    inflight_bytes = 0;
    backoff_level = 0;
    min_rtt_ns = 0;
    cc = cc::fixed_window(params.window_bytes);
    lb = lb::static_path(entropy);
    counters = {};
}

bool pdc::can_send_new(std::uint32_t bytes, const pdc_params& params) const noexcept {
    const std::uint32_t span_limit = std::min(params.mpr, tx.capacity());
    if (tx.outstanding() >= span_limit) return false;
    // A packet always fits into an empty window, however small the window is.
    return inflight_bytes == 0 || inflight_bytes + bytes <= cc.window_bytes();
}

std::uint64_t pdc::rto_for(const tx_entry& e, const pdc_params& params) const noexcept {
    // Exponential back-off per retry, capped.
    std::uint64_t rto = params.rto_ns;
    for (unsigned i = 0; i < e.retries && rto < params.rto_max_ns; ++i)
        rto <<= 1;
    return std::min(rto, params.rto_max_ns);
}

std::uint64_t pdc::resend_guard(const pdc_params&) const noexcept {
    // Without an RTT sample there is no telling a stale NACK from a fresh one: act on all.
    return min_rtt_ns;
}

void pdc::on_sent(tx_entry& e, std::uint64_t now, timer_wheel& timers,
                  const pdc_params& params) noexcept {
    e.resent = e.tx_seq != 0;
    e.sent_ns = now;
    e.tx_seq = ++tx_seq;
    e.state = tx_state::in_flight;
    timers.schedule(e.timer, now + rto_for(e, params));
}

void pdc::ack_one(tx_entry& e, timer_wheel& timers, tx_listener& listener,
                  ack_outcome& out) noexcept {
    if (e.state == tx_state::acked || e.state == tx_state::free) return;
    timers.cancel(e.timer);
    e.state = tx_state::acked;
    highest_acked_seq = std::max(highest_acked_seq, e.tx_seq);
    inflight_bytes -= std::min<std::uint64_t>(inflight_bytes, e.length);
    ++out.newly_acked;
    out.acked_bytes += e.length;
    if (e.kind == tx_kind::close) out.close_acked = true;
    listener.on_packet_acked(*this, e);
}

ack_outcome pdc::on_ack(const ack_event& ack, std::uint16_t from_pdcid, std::uint64_t now,
                        timer_wheel& timers, tx_listener& listener,
                        const pdc_params& params) noexcept {
    ack_outcome out;
    // An ACK may acknowledge up to the newest PSN sent, never beyond.
    if (psn_after(ack.cack, tx.next() - 1) ||
        (state != pdc_state::syn_sent && from_pdcid != remote_id)) {
        out.valid = false;
        return out;
    }
    if (state == pdc_state::syn_sent) {
        remote_id = from_pdcid;
        state = pdc_state::established;
    }
    backoff_level = 0;
    // RTT from the packet that triggered the ACK, when it was sent only once (Karn).
    if (tx_entry* t = tx.find(ack.ack_psn); t && !t->resent && t->state == tx_state::in_flight &&
                                            t->tx_seq != 0 && t->psn == ack.ack_psn &&
                                            now >= t->sent_ns) {
        out.rtt_ns = now - t->sent_ns;
    }
    psn_t highest = tx.una() - 1;
    // Bounded by what is outstanding, whatever a hostile cack says.
    for (psn_t psn = tx.una(); psn != tx.next() && !psn_after(psn, ack.cack); ++psn) {
        if (tx_entry* e = tx.find(psn)) ack_one(*e, timers, listener, out);
        highest = psn;
    }
    for (std::uint64_t bits = ack.sack.bitmap; bits != 0; bits &= bits - 1) {
        const psn_t psn = ack.sack.base + static_cast<psn_t>(__builtin_ctzll(bits));
        if (tx_entry* e = tx.find(psn)) {
            ack_one(*e, timers, listener, out);
            highest = psn_max(highest, psn);
        }
    }
    if (out.rtt_ns != 0) {
        counters.rtt.add(out.rtt_ns);
        min_rtt_ns = min_rtt_ns == 0 ? out.rtt_ns : std::min(min_rtt_ns, out.rtt_ns);
    }
    if (!ordered) infer_losses(highest, params, out);
    tx.advance();
    // Entries acknowledged while queued may still be linked: nothing is left to resend.
    if (tx.empty()) tx.clear_retransmits();
    return out;
}

// A packet is lost once ooo_threshold packets sent after its last transmission are
// acknowledged (RACK-like, counted in transmissions rather than PSNs, so a retransmitted hole
// needs fresh evidence before it is sent again).
void pdc::infer_losses(psn_t up_to, const pdc_params& params, ack_outcome& out) noexcept {
    if (highest_acked_seq <= params.ooo_threshold) return;
    const std::uint64_t limit = highest_acked_seq - params.ooo_threshold;
    for (psn_t psn = tx.una(); psn_before(psn, up_to); ++psn) {
        tx_entry* e = tx.find(psn);
        if (!e || e->state != tx_state::in_flight || e->tx_seq > limit) continue;
        tx.queue_retransmit(*e, retx_cause::sack);
        ++out.sack_retransmits;
    }
}

void pdc::rewind(psn_t from, timer_wheel& timers, retx_cause cause) noexcept {
    // Go-back-N: everything from `from` goes again, in PSN order. Packets before it that were
    // already waiting keep their place at the front.
    tx.clear_retransmits();
    for (psn_t psn = tx.una(); psn != tx.next(); ++psn) {
        tx_entry* e = tx.find(psn);
        if (!e || e->state == tx_state::acked) continue;
        if (psn_before(psn, from)) {
            if (e->state == tx_state::retx_queued) tx.queue_retransmit(*e, e->cause);
            continue;
        }
        timers.cancel(e->timer);
        tx.queue_retransmit(*e, cause);
    }
}

nack_action pdc::on_nack(wire::nack_code code, psn_t psn, std::uint64_t now, timer_wheel& timers,
                         const pdc_params& params) noexcept {
    tx_entry* e = tx.find(psn);
    if (!e) return nack_action::ignored;
    switch (slot_of(code)) {
        case nack_slot::trimmed:
        case nack_slot::trimmed_lasthop:
            if (e->state != tx_state::in_flight) return nack_action::ignored;
            // A duplicated NACK for a packet resent a moment ago asks for nothing new.
            if (e->resent && now - e->sent_ns < resend_guard(params) / 2)
                return nack_action::ignored;
            timers.cancel(e->timer);
            cc.on_nack(e->length, true, now);
            lb.on_nack(e->entropy);
            if (ordered) {
                // The target drops everything after the hole: go back to it.
                rewind(psn, timers, retx_cause::nack);
                return nack_action::rewind;
            }
            tx.queue_retransmit(*e, retx_cause::nack);
            return nack_action::retransmit;
        case nack_slot::rod_ooo: {
            if (!ordered || e->state != tx_state::in_flight) return nack_action::ignored;
            // Once PSN p has been resent, NACKs raised by packets of the previous round (still
            // arriving when the network reorders) must not rewind again: a genuine NACK for the
            // resent p cannot come back sooner than a round trip after it left.
            if (e->resent && now - e->sent_ns < resend_guard(params)) return nack_action::ignored;
            rewind(psn, timers, retx_cause::nack);
            return nack_action::rewind;
        }
        case nack_slot::no_pdc_avail:
        case nack_slot::psn_oor_window:
        case nack_slot::no_resource: {
            if (e->state != tx_state::in_flight) return nack_action::ignored;
            const unsigned shift = std::min<unsigned>(backoff_level, 16);
            const std::uint64_t delay = std::min(params.rto_ns << shift, params.rto_max_ns);
            ++backoff_level;
            e->state = tx_state::backoff;
            timers.schedule(e->timer, now + delay);
            return nack_action::backoff;
        }
        default:
            return nack_action::ignored;
    }
}

timeout_action pdc::on_timer(tx_entry& e, std::uint64_t now, timer_wheel& timers,
                             const pdc_params& params) noexcept {
    if (e.state == tx_state::backoff) {
        // The receiver was out of resources: try again; it does not count as a loss.
        tx.queue_retransmit(e, retx_cause::nack);
        return timeout_action::retransmit;
    }
    if (e.state != tx_state::in_flight) return timeout_action::none;
    ++counters.timeouts;
    if (++e.retries > params.max_retransmits) return timeout_action::failed;
    cc.on_timeout(now);
    lb.on_timeout(e.entropy);
    if (ordered) {
        rewind(tx.una(), timers, retx_cause::timeout);
        return timeout_action::rewind;
    }
    tx.queue_retransmit(e, retx_cause::timeout);
    return timeout_action::retransmit;
}

void pdc::cancel_timers(timer_wheel& timers) noexcept {
    timers.cancel(idle_timer);
    if (role != pdc_role::initiator) return;
    for (psn_t psn = tx.una(); psn != tx.next(); ++psn)
        if (tx_entry* e = tx.find(psn)) timers.cancel(e->timer);
}

}  // namespace uet::pds
