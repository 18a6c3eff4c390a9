// What goes out: control frames first (ACK, NACK, RUDI responses), then retransmissions, then
// new data round-robin over the PDCs, then RUDI and UUD requests.
#include <algorithm>

#include "engine/engine_impl.hpp"
#include "engine/frame_builder_inline.hpp"

namespace uet {

std::size_t engine_impl::transmit(std::uint64_t now, std::span<tx_frame> out) {
    advance(now);
    // Frames handed out by the previous call are on the wire by now: reclaim their slots.
    control_.reclaim();
    std::size_t n = 0;
    // With no control frame waiting, the due ACKs are built where they leave (in order: any
    // that wait are older than these).
    if (control_.empty())
        acks_.flush_into(*this, out, n);
    else
        acks_.flush(*this);
    // Control frames were built when their cause arrived; a small copy into the room.
    control_.hand_out(out, n);
    std::size_t built = 0;
    bool exhausted = false;
    // The usual bulk case, one initiator PDC with nothing to resend (nor RUDI resends): its new
    // frames are what next_data_frame would pick, asked for without its scans and call per
    // frame. Sending queues no retransmission, so this holds for the whole call; once the PDC
    // has nothing more, what next_data_frame would look at is new RUDI and UUD requests.
    pds::pdc* const only = pdcs_.initiators().size() == 1 && !rudi_.retransmit_pending() &&
                                   !pdcs_[pdcs_.initiators()[0]].tx.has_retransmit()
                               ? &pdcs_[pdcs_.initiators()[0]]
                               : nullptr;
    bool only_done = false;
    while (!core_.data_stopped && n < out.size() && built < core_.cfg.tx_burst) {
        if (only != nullptr && !only_done) {
            // A run inside a message needs the template of a message of this PDC: most calls
            // with none (a stream of one-packet messages never sets it) skip the call. A stream
            // of one-packet messages makes runs of its own.
            const auto room = out.subspan(n, std::min(out.size() - n, core_.cfg.tx_burst - built));
            std::size_t k = frames_.template_on(only->index) ? send_run(*only, room, built) : 0;
            if (k == 0) k = send_single_packet_run(*only, room, built);
            if (k != 0) {
                n += k;
                built += k;
                rr_cursor_ = 1;
                continue;
            }
        }
        const std::span<std::uint8_t> buf = frames_.data_frame_buffer(out[n], built);
        std::size_t len = 0;
        bool got = false;
        if (only != nullptr && !only_done) {
            got = send_new_from(*only, core_.now, buf, len);
            if (got)
                rr_cursor_ = 1;  // as next_data_frame leaves it
            else
                only_done = true;
        }
        if (!got)
            got = only != nullptr ? next_connectionless_frame(core_.now, buf, len)
                                  : next_data_frame(core_.now, buf, len);
        if (!got) {
            exhausted = true;
            break;
        }
        if (len == 0) continue;
        out[n].payload = frames_.referenced();
        out[n].payload_region = frames_.referenced_region();
        out[n++].data = buf.first(len);
        ++built;
    }
    frames_.end_call();
    core_.tx_ready = !exhausted;
    count_tx_call(exhausted, built);
    return n;
}

// Why this call's data frames ended (a call that found no data frame to build counts too, the
// idle polls of a sender; one with only control frames and no data pending does not).
void engine_impl::count_tx_call(bool exhausted, std::size_t built) {
    if (!exhausted) {
        if (built != 0) ++core_.counters.tx_calls_full;
        return;
    }
    switch (tx_stop_) {
        case tx_stop::window:
            ++core_.counters.tx_calls_held_by_window;
            break;
        case tx_stop::nothing_queued:
            if (built != 0 || !pdcs_.initiators().empty()) ++core_.counters.tx_calls_nothing_queued;
            break;
        case tx_stop::other:
            break;
    }
    tx_stop_ = tx_stop::nothing_queued;
}

bool engine_impl::next_data_frame(std::uint64_t now, std::span<std::uint8_t> buf,
                                  std::size_t& len) {
    // Retransmissions go ahead of any new data (trimmed packets come back at once).
    for (const std::uint32_t i : pdcs_.initiators())
        if (pdcs_[i].tx.has_retransmit() && retransmit_from(pdcs_[i], now, buf, len)) return true;
    // The RUDI and UUD queues are checked here, not in their senders: this runs once per frame,
    // and a PDC's stream of data frames must not pay two calls that find nothing.
    if (rudi_.retransmit_pending() && send_rudi(now, buf, len, true)) return true;
    const std::size_t count = pdcs_.initiators().size();
    std::size_t at = rr_cursor_ < count ? rr_cursor_ : 0;
    for (std::size_t k = 0; k < count; ++k) {
        if (send_new_from(pdcs_[pdcs_.initiators()[at]], now, buf, len)) {
            rr_cursor_ = at + 1;
            return true;
        }
        if (++at == count) at = 0;  // round robin without a division per frame
    }
    return next_connectionless_frame(now, buf, len);
}

bool engine_impl::next_connectionless_frame(std::uint64_t now, std::span<std::uint8_t> buf,
                                            std::size_t& len) {
    return (!rudi_queue_.empty() && send_rudi(now, buf, len, false)) ||
           (!uud_queue_.empty() && send_uud(now, buf, len));
}

std::uint64_t engine_impl::credit_backlog(const pds::pdc& p) const {
    return peers_[p.peer].queued_bytes[p.slot] + p.retx_bytes;
}

// A credit sender that cannot send has no data packet to carry its credit target; when what it
// wants grew since it last said (a retransmission queued after its last packet left), it says so
// in a CTRL CREDIT_REQ, once per new target.
void engine_impl::maybe_request_credit(pds::pdc& p) {
    if (!p.credit_cc || p.state != pds::pdc_state::established) return;
    const std::uint32_t target = p.cc->credit_target(credit_backlog(p)) & cc::credit::field_mask;
    if (cc::credit::distance(target, p.credit_target_sent) <= 0) return;
    if (!acks_.send_ctrl(*this, p, wire::ctrl_type::credit_req, p.tx.next(), target,
                         p.lb.next_entropy(core_.now)))
        return;
    p.credit_target_sent = target;
}

bool engine_impl::retransmit_from(pds::pdc& p, std::uint64_t now, std::span<std::uint8_t> buf,
                                  std::size_t& len) {
    tx_entry* e = p.tx.peek_retransmit();
    if (!e) return false;
    // Retransmissions spend window (or credit) like new data; a CLOSE is never held back.
    if (e->kind == tx_kind::data && !p.cc_allows(e->length)) {
        maybe_request_credit(p);
        return false;
    }
    p.tx.pop_retransmit();
    p.on_retransmit_popped(*e);
    ++p.counters.retransmits[static_cast<std::size_t>(e->cause)];
    // A fresh path for the resend: the one the packet took may be the reason it was lost.
    e->entropy = p.lb.next_entropy(now);
    len = frames_.build_pdc_packet(peers_.at(p.peer), p, msgs_, *e, true, true, buf);
    p.on_sent(*e, now, core_.timers, core_.params);
    core_.count_tx(&p, len, e->kind == tx_kind::data);
    return true;
}

bool engine_impl::send_new_from(pds::pdc& p, std::uint64_t now, std::span<std::uint8_t> buf,
                                std::size_t& len) {
    if (p.state == pds::pdc_state::closing) {
        if (!p.tx.empty()) return false;
        // One round trip: CLOSE at the next PSN; its ACK (cumulative over it) ends the PDC.
        tx_entry& e = p.tx.push(tx_kind::close);
        e.entropy = p.lb.next_entropy(now);
        len = frames_.build_pdc_packet(peers_.at(p.peer), p, msgs_, e, false, true, buf);
        p.on_sent(e, now, core_.timers, core_.params);
        core_.count_tx(&p, len, false);
        return true;
    }
    tx_stop_ = tx_stop::other;
    if (p.state != pds::pdc_state::syn_sent && p.state != pds::pdc_state::established) return false;
    ses::message_queue& q = peers_[p.peer].queue[p.slot];
    // Lost packets go first; new data waits while the controller holds them back.
    if (p.tx.peek_retransmit()) return false;
    if (q.empty()) {
        tx_stop_ = tx_stop::nothing_queued;
        return false;
    }
    const std::uint32_t mi = q.head;
    ses::tx_message& m = msgs_[mi];
    const std::uint32_t next_len = std::min(msgs_.mtu(), m.length - m.next_offset);
    if (!p.can_send_new(next_len, core_.params)) {
        tx_stop_ = tx_stop::window;
        maybe_request_credit(p);
        return false;
    }
    const ses::segment seg = msgs_.next_segment(m);
    auto& queued = peers_[p.peer].queued_bytes[p.slot];
    queued -= std::min<std::uint64_t>(queued, seg.length);
    m.owner = p.index;
    tx_entry& e = p.tx.push(tx_kind::data);
    e.message = mi;
    e.offset = seg.offset;
    e.length = seg.length;
    e.entropy = p.lb.next_entropy(now);
    if (msgs_.fully_segmented(m)) q.pop(msgs_.pool());
    // Ask for an ACK at once when nothing follows for now and this packet ends a message of
    // several packets or is the only one in flight, or when the window is full: the receiver
    // would otherwise wait for 16 KiB that may never come. A stream of single-packet messages
    // that each empty the queue does not ask: its ACKs come every ack_every_packets or after
    // the receiver's ack_delay_ns, not one per message.
    const bool ends_burst = q.empty() && (!seg.som || p.tx.outstanding() <= 1);
    const bool ar = ends_burst || p.tx.outstanding() >= p.psn_limit(core_.params) ||
                    p.cc_full_after(seg.length, msgs_.mtu());
    len = frames_.build_pdc_packet(peers_.at(p.peer), p, msgs_, e, false, ar, buf);
    p.on_sent(e, now, core_.timers, core_.params);
    core_.count_tx(&p, len, true);
    return true;
}

// ---- RUDI: no PDC; every request packet has its own id, timer and response ----

bool engine_impl::send_rudi(std::uint64_t now, std::span<std::uint8_t> buf, std::size_t& len,
                            bool retransmissions_only) {
    std::uint32_t index = rudi_.pop_retransmit();
    const bool retx = index != pds::rudi_window::no_packet;
    if (retx) {
        ++core_.connectionless.retransmits[static_cast<std::size_t>(rudi_[index].cause)];
    } else {
        if (retransmissions_only || rudi_queue_.empty() || !rudi_.has_room()) return false;
        const std::uint32_t mi = rudi_queue_.head;
        ses::tx_message& m = msgs_[mi];
        const ses::segment seg = msgs_.next_segment(m);
        if (msgs_.fully_segmented(m)) rudi_queue_.pop(msgs_.pool());
        index = rudi_.take(mi, seg.offset, seg.length);
    }
    pds::rudi_packet& r = rudi_[index];
    r.st = pds::rudi_packet::state::in_flight;
    r.sent_ns = now;
    r.resent = retx;
    len = frames_.build_rudi_request(peers_, msgs_, core_.rng, r, retx, buf);
    core_.timers.schedule(r.timer, now + rudi_rto(msgs_[r.message].peer, r.retries));
    ++core_.counters.rudi_requests_tx;
    core_.count_tx(nullptr, len, true);
    return true;
}

bool engine_impl::send_uud(std::uint64_t, std::span<std::uint8_t> buf, std::size_t& len) {
    if (uud_queue_.empty()) return false;
    const std::uint32_t mi = uud_queue_.pop(msgs_.pool());
    ses::tx_message& m = msgs_[mi];
    const ses::segment seg = msgs_.next_segment(m);
    const wire::ses_header ses = ses::packet_header(m, seg);
    wire::pds_uud h;
    h.next_hdr = wire::next_hdr_for(ses);
    wire::uet_packet_spec spec;
    spec.pds = h;
    spec.ses = ses;
    spec.payload = std::span<const std::uint8_t>(m.data, seg.length);
    const auto entropy = static_cast<std::uint16_t>(core_.rng.next_u64() | 0xc000);
    len = frames_.build_frame(peers_.at(m.peer), entropy, true, spec, buf);
    ++core_.counters.uud_tx;
    core_.count_tx(nullptr, len, true);
    // Best effort: done once it is on its way.
    complete_message(mi, status{});
    return true;
}

}  // namespace uet
