// RUDI and UUD: no PDC. Every RUDI request packet has its own id, timer and response; a UUD
// message is one packet, done once it is on its way.
#include "engine/connectionless.hpp"

#include "engine/engine_impl.hpp"

namespace uet {

connectionless::connectionless(const engine_config& cfg) {
    rudi_.resize(cfg.rudi_max_in_flight);
    if (cfg.fep_pids) rudi_.set_pid(cfg.pid_on_fep);
    for (std::uint32_t i = 0; i < rudi_.size(); ++i)
        rudi_[i].timer.cookie = make_cookie(timer_kind::rudi, i);
}

// ---- transmit ----

bool connectionless::send_rudi(engine_impl& e, std::uint64_t now, std::span<std::uint8_t> buf,
                               std::size_t& len, bool retransmissions_only) {
    std::uint32_t index = rudi_.pop_retransmit();
    const bool retx = index != pds::rudi_window::no_packet;
    if (retx) {
        ++e.core_.connectionless.retransmits[static_cast<std::size_t>(rudi_[index].cause)];
    } else {
        if (retransmissions_only || rudi_queue_.empty() || !rudi_.has_room()) return false;
        const std::uint32_t mi = rudi_queue_.head;
        ses::tx_message& m = e.msgs_[mi];
        const ses::segment seg = e.msgs_.next_segment(m);
        if (e.msgs_.fully_segmented(m)) rudi_queue_.pop(e.msgs_.pool());
        index = rudi_.take(mi, seg.offset, seg.length);
    }
    pds::rudi_packet& r = rudi_[index];
    r.st = pds::rudi_packet::state::in_flight;
    r.sent_ns = now;
    r.resent = retx;
    len = e.frames_.build_rudi_request(e.peers_, e.msgs_, e.core_.rng, r, retx, buf);
    e.core_.timers.schedule(
        r.timer, now + rto(e.peers_, e.core_.params, e.msgs_[r.message].peer, r.retries));
    ++e.core_.counters.rudi_requests_tx;
    e.core_.count_tx(nullptr, len, true);
    return true;
}

bool connectionless::send_uud(engine_impl& e, std::uint64_t, std::span<std::uint8_t> buf,
                              std::size_t& len) {
    if (uud_queue_.empty()) return false;
    const std::uint32_t mi = uud_queue_.pop(e.msgs_.pool());
    ses::tx_message& m = e.msgs_[mi];
    const ses::segment seg = e.msgs_.next_segment(m);
    const wire::ses_header ses = ses::packet_header(m, seg);
    wire::pds_uud h;
    h.next_hdr = wire::next_hdr_for(ses);
    wire::uet_packet_spec spec;
    spec.pds = h;
    spec.ses = ses;
    spec.payload = std::span<const std::uint8_t>(m.data, seg.length);
    const auto entropy = static_cast<std::uint16_t>(e.core_.rng.next_u64() | 0xc000);
    len = e.frames_.build_frame(e.peers_.at(m.peer), entropy, true, spec, buf);
    ++e.core_.counters.uud_tx;
    e.core_.count_tx(nullptr, len, true);
    // Best effort: done once it is on its way.
    e.complete_message(mi, status{});
    return true;
}

// ---- receive ----

// A RUDI response or NACK names no PIDonFEP of its sender: it is the peer's that the request went
// to if it comes from that peer's address (the pkt_id, ours, says which request).
bool connectionless::from_peer_of(engine_impl& e, const rx_context& rx, std::uint32_t message) {
    const peer_state& to = e.peers_[e.msgs_[message].peer];
    const peer_state& from = e.peers_.at(rx.peer);
    return to.ip == from.ip;
}

void connectionless::on_request(engine_impl& e, const rx_context& rx_in, const wire::pds_rudi& h,
                                const wire::uet_packet& pkt) {
    rx_context rx = rx_in;
    if (!e.learn_peer(rx)) return;  // its message is remembered under its peer (duplicates)
    ++e.core_.connectionless.rx_packets;
    ++e.core_.connectionless.rx_data_packets;
    e.core_.connectionless.rx_bytes += rx.frame_bytes;
    ses::place_result placed;
    if (!e.rx_.place(e, rx, delivery_mode::rudi, rx_pipeline::ses_of(pkt), true, false, placed))
        return;
    if (placed == ses::place_result::duplicate) ++e.core_.connectionless.duplicates;
    // Every request packet, duplicate or not, gets its response (the first may have been lost).
    e.acks_.answer_rudi(e, rx, h);
}

void connectionless::on_response(engine_impl& e, const rx_context& rx, const wire::pds_rudi& h) {
    const std::uint32_t index = rudi_.find(h.pkt_id, false);
    if (index == pds::rudi_window::no_packet || !from_peer_of(e, rx, rudi_[index].message))
        return e.core_.count_drop(drop_reason::stale_response);
    ++e.core_.connectionless.rx_packets;
    e.core_.connectionless.rx_bytes += rx.frame_bytes;
    ++e.core_.connectionless.acks_received;
    ++e.core_.counters.rudi_responses_rx;
    pds::rudi_packet& r = rudi_[index];
    e.core_.timers.cancel(r.timer);
    const std::uint32_t peer = e.msgs_[r.message].peer;
    if (!r.resent && rx.now >= r.sent_ns) e.peers_[peer].rudi_rtt.sample(rx.now - r.sent_ns);
    const std::uint32_t message = r.message;
    rudi_.release(index);
    e.core_.tx_ready = true;
    ses::tx_message& m = e.msgs_[message];
    if (m.in_use && ++m.packets_done >= m.packets_total) e.complete_message(message, status{});
}

void connectionless::on_nack(engine_impl& e, const rx_context& rx, const wire::pds_nack& n) {
    const auto slot = static_cast<std::size_t>(pds::slot_of(n.code));
    const std::uint32_t index = rudi_.find(n.nack_psn, true);
    if (index == pds::rudi_window::no_packet || !from_peer_of(e, rx, rudi_[index].message))
        return e.core_.count_drop(drop_reason::stale_response);
    ++e.core_.connectionless.nacks_received[slot];
    pds::rudi_packet& r = rudi_[index];
    e.core_.timers.cancel(r.timer);
    if (pds::slot_of(n.code) == pds::nack_slot::trimmed ||
        pds::slot_of(n.code) == pds::nack_slot::trimmed_lasthop) {
        rudi_.queue_retransmit(index, retx_cause::nack);
        e.core_.tx_ready = true;
    } else {
        e.core_.timers.schedule(
            r.timer, rx.now + rto(e.peers_, e.core_.params, e.msgs_[r.message].peer, r.retries));
    }
}

void connectionless::on_uud(engine_impl& e, const rx_context& rx_in, const wire::uet_packet& pkt) {
    rx_context rx = rx_in;
    if (!e.learn_peer(rx)) return;
    ++e.core_.connectionless.rx_packets;
    ++e.core_.connectionless.rx_data_packets;
    e.core_.connectionless.rx_bytes += rx.frame_bytes;
    ++e.core_.counters.uud_rx;
    ses::place_result placed;
    if (e.rx_.place(e, rx, delivery_mode::uud, rx_pipeline::ses_of(pkt), true, true, placed) &&
        placed == ses::place_result::duplicate)
        ++e.core_.connectionless.duplicates;
}

// ---- timers ----

void connectionless::on_timer(engine_impl& e, std::uint32_t index) {
    if (index >= rudi_.size()) return;
    pds::rudi_packet& r = rudi_[index];
    if (r.st != pds::rudi_packet::state::in_flight) return;
    ++e.core_.connectionless.timeouts;
    if (++r.retries > e.core_.params.max_retransmits)
        return fail_message(e, r.message, status{status_code::retry_limit});
    rudi_.queue_retransmit(index, retx_cause::timeout);
    e.core_.tx_ready = true;
}

void connectionless::fail_message(engine_impl& e, std::uint32_t message, status result) {
    rudi_.release_message(message, [&e](timer_node& t) { e.core_.timers.cancel(t); });
    if (rudi_queue_.head == message) rudi_queue_.pop(e.msgs_.pool());
    e.complete_message(message, result);
}

}  // namespace uet
