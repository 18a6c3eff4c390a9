// Initiator side of a PDC: sending, acknowledgements, loss detection, retransmission timers.
#include <algorithm>
#include <array>

#include "pds/pdc.hpp"

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
    newest_acked_sent_ns = 0;
    highest_acked_psn = start - 1;
    acked_any_ = false;
    inflight_bytes = 0;
    retx_bytes = 0;
    credit_target_sent = 0;
    backoff_level = 0;
    min_rtt_ns = 0;
    srtt_ns = rttvar_ns = 0;
    rto_ns = params.rto_ns;
    timeout_mark_seq = 0;
    timeout_rounds = rto_backoff = 0;
    last_progress_ns = 0;
    answers_announced = answers_received = 0;
    last_answer_ns = 0;
    undecided_head = undecided_tail = 0xffffffffu;
    // In place: the controller and selector live in the PDC slot, no allocation per PDC.
    cc::cc_config c = params.cc;
    c.fixed_window = params.window_bytes;
    cc.reset(c);
    credit_cc = cc->uses_credit();
    lb::lb_context no_ctx;  // no generator: a static path
    lb.reset(params.lb_ctx ? params.lb : lb::algorithm::static_path,
             params.lb_ctx ? *params.lb_ctx : no_ctx, entropy);
    lb_hears_acks = lb->hears_acks();
    counters = {};
}

std::uint64_t pdc::backed_off_rto(const pdc_params& params) const noexcept {
    // Exponential back-off per timeout round since the last clean RTT sample, capped.
    std::uint64_t rto = std::max<std::uint64_t>(rto_ns, 1);
    for (unsigned i = 0; i < rto_backoff && rto < params.rto_max_ns; ++i)
        rto <<= 1;
    return std::min(rto, params.rto_max_ns);
}

// RFC 6298: SRTT and RTTVAR from each clean sample; RTO = SRTT + 4 RTTVAR within
// [rto_min_ns, rto_max_ns]. Queueing under load raises it, so a long transfer's deep queue does
// not fire spurious timeouts; the floor keeps a quiet link's RTO above host jitter.
void pdc::on_rtt_sample(std::uint64_t rtt, const pdc_params& params) noexcept {
    if (srtt_ns == 0) {
        srtt_ns = rtt;
        rttvar_ns = rtt / 2;
    } else {
        const std::uint64_t diff = srtt_ns > rtt ? srtt_ns - rtt : rtt - srtt_ns;
        rttvar_ns = (3 * rttvar_ns + diff) / 4;
        srtt_ns = (7 * srtt_ns + rtt) / 8;
    }
    rto_ns = std::clamp(srtt_ns + 4 * rttvar_ns, params.rto_min_ns, params.rto_max_ns);
    rto_backoff = 0;
}

void pdc::release_inflight(tx_entry& e) noexcept {
    if (!e.counted) return;
    e.counted = false;
    inflight_bytes -= std::min<std::uint64_t>(inflight_bytes, e.length);
}

void pdc::requeue(tx_entry& e, retx_cause cause) noexcept {
    release_inflight(e);
    if (e.state != tx_state::retx_queued) retx_bytes += e.length;
    tx.queue_retransmit(e, cause);
}

std::uint64_t pdc::resend_guard(const pdc_params&) const noexcept {
    // Without an RTT sample there is no telling a stale NACK from a fresh one: act on all.
    return min_rtt_ns;
}

void pdc::on_sent(tx_entry& e, std::uint64_t now, timer_wheel& timers,
                  const pdc_params& params) noexcept {
    on_sent_until(e, now, now + current_rto(params), timers);
}

std::size_t pdc::collect_due(std::uint64_t now, std::span<std::uint32_t> slots) {
    std::size_t n = 0;
    for (psn_t psn = tx.una(); psn != tx.next() && n < slots.size(); ++psn) {
        const tx_entry* e = tx.find(psn);
        if (e && e->deadline != no_deadline && e->deadline <= now) slots[n++] = tx.slot_of(*e);
    }
    const auto due = slots.first(n);
    std::sort(due.begin(), due.end(), [this](std::uint32_t a, std::uint32_t b) {
        const tx_entry& x = tx.at_slot(a);
        const tx_entry& y = tx.at_slot(b);
        return x.deadline != y.deadline ? x.deadline < y.deadline : x.tx_seq < y.tx_seq;
    });
    return n;
}

void pdc::rearm(timer_wheel& timers) noexcept {
    std::uint64_t earliest = no_deadline;
    for (psn_t psn = tx.una(); psn != tx.next(); ++psn) {
        const tx_entry* e = tx.find(psn);
        if (e && e->deadline != no_deadline && (earliest == no_deadline || e->deadline < earliest))
            earliest = e->deadline;
    }
    if (earliest == no_deadline)
        timers.cancel(rto_timer);
    else
        timers.schedule(rto_timer, earliest);
}

bool pdc::ack_one(tx_entry& e, const ack_event& ack, ack_outcome& out) noexcept {
    if (e.state == tx_state::acked || e.state == tx_state::free) return false;
    if (e.state == tx_state::retx_queued) on_retransmit_popped(e);
    e.deadline = no_deadline;
    e.state = tx_state::acked;
    if (e.tx_seq > highest_acked_seq) {
        highest_acked_seq = e.tx_seq;
        newest_acked_sent_ns = e.sent_ns;
    }
    release_inflight(e);
    // The receiver acknowledges a CE-marked packet at once, so the mark belongs to the packet
    // that triggered the ACK; the others it covers came back clean.
    lb->on_ack(e.entropy, ack.ecn && e.psn == ack.ack_psn);
    ++out.newly_acked;
    out.acked_bytes += e.length;
    if (e.kind == tx_kind::close) out.close_acked = true;
    return true;
}

// ack_one() for a data packet in flight whose path selector hears nothing of ACKs: nearly every
// packet a cumulative ACK covers. Its bytes leave inflight_bytes once for the ACK (the
// subtraction is saturating, so in any order it gives the same). Its entry is left as it is:
// on_ack moves the window's front past the whole cumulative range at once (tx_window::pass),
// and nothing reads an entry behind the front.
void pdc::ack_plain(const tx_entry& e, plain_acks& acks) noexcept {
    if (e.tx_seq > highest_acked_seq) {
        highest_acked_seq = e.tx_seq;
        newest_acked_sent_ns = e.sent_ns;
    }
    acks.released += e.counted ? e.length : 0;
    ++acks.packets;
    acks.bytes += e.length;
}

namespace {

// Consecutive data packets of one message acknowledged, told to the listener as one entry; the
// entries of an ACK told in one call (or one per acked_batch).
class acked_run {
  public:
    acked_run(pdc& p, tx_listener& listener) noexcept : p_(p), listener_(listener) {}
    ~acked_run() { flush(); }
    void add(const tx_entry& e) noexcept {
        if (e.kind != tx_kind::data) return;
        if (n_ != 0 && runs_[n_ - 1].message == e.message) {
            ++runs_[n_ - 1].packets;
            return;
        }
        if (n_ == runs_.size()) flush();
        runs_[n_++] = acked_message{e.message, 1};
    }
    void flush() noexcept {
        if (n_ != 0) listener_.on_data_acked(p_, std::span<const acked_message>(runs_.data(), n_));
        n_ = 0;
    }

  private:
    pdc& p_;
    tx_listener& listener_;
    std::array<acked_message, tx_listener::acked_batch> runs_;
    std::size_t n_ = 0;
};

}  // namespace

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
    if (tx_entry* t = tx.find(ack.ack_psn); t && t->state != tx_state::acked) {
        out.trigger_entropy = t->entropy;
        out.trigger_known = true;
    }
    psn_t highest = tx.una() - 1;
    {
        acked_run run(*this, listener);
        // Bounded by what is outstanding, whatever a hostile cack says.
        psn_t psn = tx.una();
        plain_acks plain;
        for (; psn != tx.next() && !psn_after(psn, ack.cack); ++psn) {
            tx_entry& e = tx.entry(psn);
            if (e.state == tx_state::in_flight && e.kind == tx_kind::data && !lb_hears_acks)
                ack_plain(e, plain);
            else if (e.state == tx_state::free || !ack_one(e, ack, out))
                continue;
            run.add(e);
        }
        // Every packet before psn is acknowledged now (or was): the front passes them all, so
        // that the SACK bits below find none of them and advance() need not walk them again.
        tx.pass(psn);
        highest = psn - 1;
        out.newly_acked += plain.packets;
        out.acked_bytes += plain.bytes;
        inflight_bytes -= std::min(inflight_bytes, plain.released);
        for (std::uint64_t bits = ack.sack.bitmap; bits != 0; bits &= bits - 1) {
            const psn_t psn = ack.sack.base + static_cast<psn_t>(__builtin_ctzll(bits));
            if (tx_entry* e = tx.find(psn)) {
                if (ack_one(*e, ack, out)) run.add(*e);
                highest = psn_max(highest, psn);
            }
        }
    }
    if (out.rtt_ns != 0) {
        counters.rtt.add(out.rtt_ns);
        min_rtt_ns = min_rtt_ns == 0 ? out.rtt_ns : std::min(min_rtt_ns, out.rtt_ns);
        on_rtt_sample(out.rtt_ns, params);
    }
    if (out.newly_acked > 0) {
        timeout_rounds = 0;
        last_progress_ns = now;
    }
    if (psn_after(highest, highest_acked_psn) || !acked_any_) highest_acked_psn = highest;
    acked_any_ = true;
    // The acknowledged prefix leaves first: infer_losses looks only at packets still in flight,
    // which start after it (a cumulative ACK of a whole burst leaves it nothing to walk).
    tx.advance();
    if (!ordered) infer_losses(highest, params, out);
    // Entries acknowledged while queued may still be linked: nothing is left to resend, and
    // no timeout runs (an idle engine need not wake for a timer with nothing due).
    if (tx.empty()) {
        tx.clear_retransmits();
        timers.cancel(rto_timer);
    }
    return out;
}

// A packet is lost once ooo_threshold packets sent after its last transmission are
// acknowledged (RACK-like, counted in transmissions rather than PSNs, so a retransmitted hole
// needs fresh evidence before it is sent again) and the newest of them left at least one
// smoothed RTT after it. The time rule is RACK's reordering window: sprayed packets take paths
// whose delays differ by up to a queue, and a packet merely on a slower path is not lost.
// Congestion losses are reported by trimming NACKs anyway; this catches the rest.
void pdc::infer_losses(psn_t up_to, const pdc_params& params, ack_outcome& out) noexcept {
    if (highest_acked_seq <= params.ooo_threshold) return;
    const std::uint64_t limit = highest_acked_seq - params.ooo_threshold;
    const std::uint64_t reorder_window = srtt_ns;
    for (psn_t psn = tx.una(); psn_before(psn, up_to); ++psn) {
        tx_entry* e = tx.find(psn);
        if (!e || e->state != tx_state::in_flight || e->tx_seq > limit) continue;
        if (e->sent_ns + reorder_window > newest_acked_sent_ns) continue;
        // Lost, not trimmed: its path may be broken. The selector hears it as it hears a NACK.
        lb->on_nack(e->entropy);
        requeue(*e, retx_cause::sack);
        ++out.sack_retransmits;
    }
}

void pdc::rewind(psn_t from, retx_cause cause) noexcept {
    // Go-back-N: everything from `from` goes again, in PSN order. Packets before it that were
    // already waiting keep their place at the front.
    tx.clear_retransmits();
    for (psn_t psn = tx.una(); psn != tx.next(); ++psn) {
        tx_entry* e = tx.find(psn);
        if (!e || e->state == tx_state::acked) continue;
        if (psn_before(psn, from)) {
            if (e->state == tx_state::retx_queued) requeue(*e, e->cause);
            continue;
        }
        e->deadline = no_deadline;
        requeue(*e, cause);
    }
}

nack_action pdc::on_nack(wire::nack_code code, psn_t psn, std::uint64_t now, timer_wheel& timers,
                         const pdc_params& params, int nack_retx) noexcept {
    tx_entry* e = tx.find(psn);
    if (!e) return nack_action::ignored;
    switch (slot_of(code)) {
        case nack_slot::trimmed:
        case nack_slot::trimmed_lasthop:
        case nack_slot::inferred_loss:  // lost whole rather than trimmed: resent the same way
            if (e->state != tx_state::in_flight) return nack_action::ignored;
            // A NACK of the first transmission of a packet resent since asks for nothing new;
            // without the echo, one that comes back sooner than half the smallest RTT cannot be
            // about the resend. (The time rule alone misjudges when every RTT measured was
            // queued, as in an incast: the resend's own NACK then looks too early.)
            if (e->resent && nack_retx == 0) return nack_action::ignored;
            if (e->resent && nack_retx < 0 && now - e->sent_ns < resend_guard(params) / 2)
                return nack_action::ignored;
            e->deadline = no_deadline;
            // A loss found by path ID is one infer_losses() would find later, which tells the
            // congestion control nothing: only sooner. A trim is a congestion signal.
            if (slot_of(code) != nack_slot::inferred_loss) cc->on_nack(e->length, true, now);
            lb->on_nack(e->entropy);
            if (ordered) {
                // The target drops everything after the hole: go back to it.
                rewind(psn, retx_cause::nack);
                return nack_action::rewind;
            }
            requeue(*e, retx_cause::nack);
            return nack_action::retransmit;
        case nack_slot::rod_ooo: {
            if (!ordered || e->state != tx_state::in_flight) return nack_action::ignored;
            // Once PSN p has been resent, NACKs raised by packets of the previous round (still
            // arriving when the network reorders) must not rewind again: a genuine NACK for the
            // resent p cannot come back sooner than a round trip after it left.
            if (e->resent && now - e->sent_ns < resend_guard(params)) return nack_action::ignored;
            rewind(psn, retx_cause::nack);
            return nack_action::rewind;
        }
        case nack_slot::no_pdc_avail:
        case nack_slot::psn_oor_window:
        case nack_slot::no_resource: {
            if (e->state != tx_state::in_flight) return nack_action::ignored;
            const unsigned shift = std::min<unsigned>(backoff_level, 16);
            const std::uint64_t delay = std::min(params.rto_ns << shift, params.rto_max_ns);
            ++backoff_level;
            release_inflight(*e);
            e->state = tx_state::backoff;
            arm(*e, now + delay, timers);
            return nack_action::backoff;
        }
        default:
            return nack_action::ignored;
    }
}

timeout_action pdc::on_timer(tx_entry& e, std::uint64_t now, timer_wheel& timers,
                             const pdc_params& params) noexcept {
    e.deadline = no_deadline;  // fired; re-armed below if it must wait on
    if (e.state == tx_state::backoff) {
        // The receiver was out of resources: try again; it does not count as a loss.
        requeue(e, retx_cause::nack);
        return timeout_action::retransmit;
    }
    if (e.state != tx_state::in_flight) return timeout_action::none;
    // While ACKs keep acknowledging new packets the receiver is alive and the path delivers: a
    // hole then shows up in the SACKs (infer_losses, NACKs), and a packet whose RTT merely grew
    // (queued behind a window at a busy receiver, a descheduled peer) must not be resent, nor
    // the rest of its window after it. As TCP's single timer (RFC 6298 5.3), the timeout of a
    // packet runs from the last ACK that made progress since it was sent. Progress cannot go on
    // forever past a real hole: the window stops at it, the ACKs stop, and the timer fires one
    // RTO later.
    if (last_progress_ns > e.sent_ns) {
        if (const std::uint64_t at = last_progress_ns + current_rto(params); now < at) {
            arm(e, at, timers);
            return timeout_action::none;
        }
    }
    // RUD: a SACK reports the 64 PSNs below the newest received. A packet more than that past
    // the oldest unacknowledged one and more than that below the newest acknowledged may well
    // have arrived without the receiver being able to say so until the hole is filled. Resending
    // it would be a spurious retransmission (on real ports most of them were): wait for the
    // hole's own timer and the cumulative ACK that follows its resend.
    if (!ordered && psn_distance(tx.una(), e.psn) >= sack_span &&
        psn_distance(e.psn, highest_acked_psn) >= sack_span) {
        arm(e, now + current_rto(params), timers);
        return timeout_action::none;
    }
    ++counters.timeouts;
    if (++e.retries > params.max_retransmits) return timeout_action::failed;
    // Timers of packets sent before the last counted timeout belong to its round: resent, but
    // neither counted against the PDC nor backed off again (a dead peer fails after
    // max_retransmits rounds, whatever the window).
    if (e.tx_seq > timeout_mark_seq) {
        timeout_mark_seq = tx_seq;
        if (++timeout_rounds > params.max_retransmits) return timeout_action::failed;
        rto_backoff = std::min(rto_backoff + 1, 32u);
        cc->on_timeout(now);
        lb->on_timeout(e.entropy, now);
        repath_static(params);
    }
    if (ordered) {
        rewind(tx.una(), retx_cause::timeout);
        return timeout_action::rewind;
    }
    requeue(e, retx_cause::timeout);
    return timeout_action::retransmit;
}

// A static (ECMP) PDC whose packets time out may sit on a dead or broken path that it would
// never leave: like Linux's txhash rethink on RTO, it draws a new entropy value, so the next
// round hashes onto another path. Spraying selectors move by themselves.
void pdc::repath_static(const pdc_params& params) noexcept {
    if (lb.kind() != lb::algorithm::static_path || !params.lb_ctx || !params.lb_ctx->rng) return;
    const auto entropy = static_cast<std::uint16_t>(params.lb_ctx->rng->next_u64() | 0xc000);
    lb.reset(lb::algorithm::static_path, *params.lb_ctx, entropy);
    ++counters.repaths;
}

void pdc::cancel_timers(timer_wheel& timers) noexcept {
    timers.cancel(idle_timer);
    timers.cancel(ack_timer);
    timers.cancel(rto_timer);
    if (role != pdc_role::initiator) return;
    for (psn_t psn = tx.una(); psn != tx.next(); ++psn)
        if (tx_entry* e = tx.find(psn)) e->deadline = no_deadline;
}

}  // namespace uet::pds
