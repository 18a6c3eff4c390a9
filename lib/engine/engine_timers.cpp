// What time does: retransmit timers, PDC idle close / expiry, RUDI request timers.
#include <algorithm>

#include "engine/engine_impl.hpp"

namespace uet {

void engine_impl::advance(std::uint64_t now) {
    core_.tick(now);
    core_.timers.advance(core_.now, [this](timer_node& n) { on_timer(n, core_.now); });
}

void engine_impl::on_timer(timer_node& n, std::uint64_t now) {
    const auto kind = static_cast<timer_kind>(n.cookie >> 60);
    const auto a = static_cast<std::uint32_t>((n.cookie >> 32) & 0x0fffffff);
    switch (kind) {
        case timer_kind::packet: {
            pds::pdc& p = pdcs_[a];
            if (p.state != pds::pdc_state::free) on_rto_timer(p, now);
            break;
        }
        case timer_kind::pdc_idle:
            on_idle_timer(pdcs_[a], now);
            break;
        case timer_kind::rudi:
            connectionless_.on_timer(*this, static_cast<std::uint32_t>(a));
            break;
        case timer_kind::pacer:
            pacer_.on_timer(*this, now);
            break;
        case timer_kind::ack:
            acks_.on_ack_timer(*this, pdcs_[a], now);
            break;
    }
}

// The PDC's one wheel timer: its packets whose timeouts are due, each as its own timer fired.
void engine_impl::on_rto_timer(pds::pdc& p, std::uint64_t now) {
    const std::size_t n = p.collect_due(now, pdcs_.due_slots());
    for (std::size_t i = 0; i < n; ++i) {
        tx_entry& e = p.tx.at_slot(pdcs_.due_slots()[i]);
        // Cancelled by one handled before it (a go-back-N rewind requeues the rest).
        if (e.deadline == no_deadline) continue;
        if (!on_packet_timer(p, e, now)) return;  // the PDC failed and is gone
    }
    p.rearm(core_.timers);
}

bool engine_impl::on_packet_timer(pds::pdc& p, tx_entry& e, std::uint64_t now) {
    switch (p.on_timer(e, now, core_.timers, core_.params)) {
        case pds::timeout_action::none:
            break;
        case pds::timeout_action::retransmit:
        case pds::timeout_action::rewind:
            core_.tx_ready = true;
            break;
        case pds::timeout_action::failed:
            fail_initiator(
                p,
                status{p.state == pds::pdc_state::syn_sent ? status_code::peer_unreachable
                                                           : status_code::retry_limit},
                now);
            return false;
    }
    return true;
}

void engine_impl::maybe_schedule_close(pds::pdc& p, std::uint64_t now) {
    if (p.state == pds::pdc_state::established && p.drained() &&
        peers_[p.peer].queue[p.slot].empty())
        core_.timers.schedule(p.idle_timer, now + core_.cfg.pdc_idle_close_ns);
}

void engine_impl::on_idle_timer(pds::pdc& p, std::uint64_t now) {
    if (p.state == pds::pdc_state::free) return;
    if (p.role == pds::pdc_role::target) {
        if (p.close_heard) {  // its linger is over: nothing came after the CLOSE
            if (now - p.last_activity_ns >= close_linger_ns())
                free_pdc(p);
            else
                core_.timers.schedule(p.idle_timer, p.last_activity_ns + close_linger_ns());
            return;
        }
        // A target cannot know that its initiator gave up (retry limit): it forgets a PDC
        // that stayed silent for pdc_target_idle_ns.
        if (now - p.last_activity_ns >= core_.cfg.pdc_target_idle_ns) {
            ++core_.counters.target_pdcs_expired;
            free_pdc(p);
        } else {
            core_.timers.schedule(p.idle_timer, p.last_activity_ns + core_.cfg.pdc_target_idle_ns);
        }
        return;
    }
    if (p.state == pds::pdc_state::established && p.drained() &&
        peers_[p.peer].queue[p.slot].empty()) {
        // Requests acknowledged but not yet known to be answered keep the PDC (its count of
        // announced answers) open until they are, or until they waited too long.
        answers_.settle(*this, p, now);
        if (p.undecided_head != none) {
            // The target may hold an error answer until we show it our packets come from us
            // (answer_tracker.cpp, held answers): with nothing else to send, a NOOP does.
            // Unacknowledged, it is sent again every RTO while the wait lasts.
            acks_.send_ctrl(*this, p, wire::ctrl_type::noop, p.tx.next(), 0,
                            p.lb.next_entropy(now));
            core_.timers.schedule(p.idle_timer, std::min(answers_.undecided_deadline(msgs_, p),
                                                         now + p.current_rto(core_.params)));
            return;
        }
        p.state = pds::pdc_state::closing;
        core_.tx_ready = true;
    }
}

void engine_impl::fail_initiator(pds::pdc& p, status result, std::uint64_t now) {
    ++core_.counters.pdcs_failed;
    const std::uint32_t peer = p.peer;
    const std::size_t slot = p.slot;
    ses::message_queue& q = peers_[peer].queue[slot];
    // The message being cut into packets leaves the queue with the others this PDC carried.
    if (!q.empty() && msgs_[q.head].owner == p.index) {
        const ses::tx_message& m = msgs_[q.head];
        peers_[peer].queued_bytes[slot] -=
            std::min<std::uint64_t>(peers_[peer].queued_bytes[slot], m.length - m.next_offset);
        q.pop(msgs_.pool());
    }
    // Rare path: a scan of the message pool for everything this PDC carried.
    for (std::uint32_t i = 0; i < msgs_.capacity(); ++i) {
        const ses::tx_message& m = msgs_[i];
        if (m.in_use && m.owner == p.index && m.peer == peer &&
            (m.mode == static_cast<std::uint8_t>(delivery_mode::rud) ||
             m.mode == static_cast<std::uint8_t>(delivery_mode::rod)))
            complete_message(i, result);
    }
    free_pdc(p);
    open_initiator_pdc(peer, slot, now);
    kick_waiting(now);
}

}  // namespace uet
