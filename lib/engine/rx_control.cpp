// What comes in that is not a data packet for a target PDC: the dispatch of a decoded packet by
// its PDS header, CTRL packets (credit, NOOP, CLOSE), and the initiator side of RUD / ROD (ACKs
// and NACKs).
#include <cstdint>
#include <type_traits>
#include <variant>

#include "engine/engine_impl.hpp"

namespace uet {

namespace {

// Every ACK form reduced to what the sender uses (plain ACKs carry no SACK).
template <class Ack>
wire::pds_ack_cc common_ack_fields(const Ack& a) {
    wire::pds_ack_cc c;
    c.m = a.m;
    c.ack_psn_offset = a.ack_psn_offset;
    c.cack_psn = a.cack_psn;
    c.spdcid = a.spdcid;
    c.dpdcid = a.dpdcid;
    return c;
}

wire::pds_ack_cc as_ack_cc(const wire::pds_ack& a) {
    wire::pds_ack_cc c = common_ack_fields(a);
    c.sack_psn_offset = 1;
    return c;
}

wire::pds_ack_cc as_ack_cc(const wire::pds_ack_ccx& a) {
    wire::pds_ack_cc c = common_ack_fields(a);
    c.sack_psn_offset = a.sack_psn_offset;
    c.sack_bitmap = a.sack_bitmap;
    return c;
}

wire::pds_nack as_nack(const wire::pds_nack_ccx& n) {
    wire::pds_nack c;
    c.m = n.m;
    c.retx = n.retx;
    c.nt = n.nt;
    c.code = n.code;
    c.nack_psn = n.nack_psn;
    c.spdcid = n.spdcid;
    c.dpdcid = n.dpdcid;
    return c;
}

}  // namespace

void rx_control::dispatch(engine_impl& e, const rx_context& rx, const wire::uet_packet& pkt) {
    std::visit(
        [&](const auto& h) {
            using H = std::decay_t<decltype(h)>;
            if constexpr (std::is_same_v<H, wire::pds_rud_rod_request>) {
                e.rx_.on_request(e, rx, h, rx_pipeline::ses_of(pkt));
            } else if constexpr (std::is_same_v<H, wire::pds_rud_rod_cc_request>) {
                e.rx_.on_request(e, rx, as_request(h), rx_pipeline::ses_of(pkt), &h.credit_target);
            } else if constexpr (std::is_same_v<H, wire::pds_ack_cc>) {
                on_ack(e, rx, h, pkt);
            } else if constexpr (std::is_same_v<H, wire::pds_ack> ||
                                 std::is_same_v<H, wire::pds_ack_ccx>) {
                on_ack(e, rx, as_ack_cc(h), pkt);
            } else if constexpr (std::is_same_v<H, wire::pds_nack>) {
                on_nack(e, rx, h);
            } else if constexpr (std::is_same_v<H, wire::pds_nack_ccx>) {
                on_nack(e, rx, as_nack(h));
            } else if constexpr (std::is_same_v<H, wire::pds_ctrl>) {
                on_ctrl(e, rx, h);
            } else if constexpr (std::is_same_v<H, wire::pds_rudi>) {
                if (h.type == wire::pds_type::rudi_req)
                    e.connectionless_.on_request(e, rx, h, pkt);
                else
                    e.connectionless_.on_response(e, rx, h);
            } else if constexpr (std::is_same_v<H, wire::pds_uud>) {
                e.connectionless_.on_uud(e, rx, pkt);
            } else {
                e.core_.count_drop(drop_reason::unsupported_type);
            }
        },
        pkt.pds);
}

void rx_control::on_ctrl(engine_impl& e, const rx_context& rx, const wire::pds_ctrl& c) {
    if (c.ctrl_type == wire::ctrl_type::credit && !c.syn) return e.pacer_.on_credit(e, rx, c);
    // CREDIT_REQUEST asks for credit; NOOP is what an initiator waiting only for answers its
    // ACK announced sends to show it has our PDC id (pdc::validated: answers held for it go).
    const bool credit_req = c.ctrl_type == wire::ctrl_type::credit_req;
    if ((credit_req || c.ctrl_type == wire::ctrl_type::noop) && !c.syn) {
        if (rx.peer == transient_peer) return e.core_.count_drop(drop_reason::unknown_source);
        pds::pdc* p = e.pdcs_.by_local_id(c.dpdcid);
        if (!p || p->role != pds::pdc_role::target || p->peer != rx.peer ||
            p->remote_id != c.spdcid)
            return e.core_.count_drop(drop_reason::unknown_pdc);
        ++p->counters.rx_packets;
        p->counters.rx_bytes += rx.frame_bytes;
        p->last_activity_ns = rx.now;
        if (!p->validated) e.validate(*p);
        if (credit_req) e.pacer_.on_credit_target(e, *p, c.payload, rx.now);
        return;
    }
    if (c.ctrl_type != wire::ctrl_type::close || c.syn)
        return e.core_.count_drop(drop_reason::unsupported_type);
    pds::pdc* p = e.pdcs_.by_local_id(c.dpdcid);
    if (!p || p->role != pds::pdc_role::target || p->peer != rx.peer || p->remote_id != c.spdcid) {
        // Closed already (our ACK of the CLOSE was lost): acknowledge without state so the
        // initiator can finish too.
        return e.acks_.ack_stale_close(e, rx, c);
    }
    ++p->counters.rx_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    p->last_activity_ns = rx.now;
    if (!p->validated) e.validate(*p);  // answers held go ahead of the CLOSE's ACK
    if (c.psn == p->rx.expected()) {
        // Its initiator closes only once every packet it sent is acknowledged: with a packet
        // received beyond a hole, or one not yet acknowledged, the CLOSE is not its.
        if (p->rx.highest() != p->rx.cack() || p->ack_due || p->acks.pending())
            return e.core_.count_drop(drop_reason::forged_close);
        // Acknowledged, and the PDC lingers (pdc::close_heard): the PSN is not kept as
        // received, so that data at it, should the CLOSE be forged, is taken as new.
        p->rx.accept(c.psn);
        e.acks_.send_ack(e, *p, c.psn, rx);
        p->rx.retract_last();
        if (!p->close_heard) {
            p->close_heard = true;
            e.pdcs_.add_lingering();
            ++e.core_.counters.target_pdcs_closed;
            e.core_.timers.cancel(p->idle_timer);
            e.core_.timers.schedule(p->idle_timer, rx.now + e.close_linger_ns());
        }
    } else if (p->classify(c.psn) == pds::pdc::rx_verdict::duplicate) {
        e.acks_.send_ack(e, *p, c.psn, rx);
    } else {
        // Data before it is still missing; its retransmission comes first.
        e.core_.count_drop(drop_reason::out_of_order);
    }
}

void rx_control::on_ack(engine_impl& e, const rx_context& rx, const wire::pds_ack_cc& a,
                        const wire::uet_packet& pkt) {
    if (rx.peer == transient_peer) return e.core_.count_drop(drop_reason::unknown_source);
    pds::pdc* p = e.pdcs_.by_local_id(a.dpdcid);
    if (!p || p->role != pds::pdc_role::initiator || p->peer != rx.peer)
        return e.core_.count_drop(drop_reason::unknown_pdc);
    ++p->counters.rx_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    ++p->counters.acks_received;
    pds::ack_event ev;
    ev.cack = a.cack_psn;
    ev.ack_psn = a.cack_psn + static_cast<psn_t>(a.ack_psn_offset);
    ev.sack.base = a.cack_psn + static_cast<psn_t>(a.sack_psn_offset);
    ev.sack.bitmap = a.sack_bitmap;
    ev.ecn = a.m;
    e.answers_.on_ack_header(*p, pkt);
    ack_listener listener(e);
    const pds::ack_outcome out =
        p->on_ack(ev, a.spdcid, rx.now, e.core_.timers, listener, e.core_.params);
    e.answers_.ack_done();
    if (!out.valid) return e.core_.count_drop(drop_reason::bad_ack);
    e.answers_.settle(e, *p, rx.now);
    // The selector heard about every packet this ACK covers (pdc::on_ack); the controller hears
    // about the ACK, and may judge that the trigger's path, not the network, is congested.
    if (a.cc_type == wire::cc_type::credit) p->cc->on_credit(a.credit.credit, rx.now);
    p->cc->on_ack(static_cast<std::uint32_t>(out.acked_bytes), out.rtt_ns, a.m, rx.now);
    if (p->cc->take_path_switch() && out.trigger_known) p->lb->on_path_switch(out.trigger_entropy);
    p->last_activity_ns = rx.now;
    e.core_.tx_ready = true;
    if (out.close_acked) {
        const std::uint32_t peer = p->peer;
        const std::size_t slot = p->slot;
        ++e.core_.counters.pdcs_closed;
        e.free_pdc(*p);
        // Messages posted while it was closing get a fresh PDC.
        e.open_initiator_pdc(peer, slot, rx.now);
        e.kick_waiting(rx.now);
        return;
    }
    e.maybe_schedule_close(*p, rx.now);
}

void rx_control::on_nack(engine_impl& e, const rx_context& rx, const wire::pds_nack& n) {
    if (rx.peer == transient_peer) return e.core_.count_drop(drop_reason::unknown_source);
    if (n.nt) return e.connectionless_.on_nack(e, rx, n);
    const auto slot = static_cast<std::size_t>(pds::slot_of(n.code));
    pds::pdc* p = e.pdcs_.by_local_id(n.dpdcid);
    if (!p || p->role != pds::pdc_role::initiator || p->peer != rx.peer ||
        (n.spdcid != 0 && p->state != pds::pdc_state::syn_sent && n.spdcid != p->remote_id))
        return e.core_.count_drop(drop_reason::unknown_pdc);
    ++p->counters.rx_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    ++p->counters.nacks_received[slot];
    const pds::nack_action act =
        p->on_nack(n.code, n.nack_psn, rx.now, e.core_.timers, e.core_.params, n.retx ? 1 : 0);
    if (act == pds::nack_action::retransmit || act == pds::nack_action::rewind)
        e.core_.tx_ready = true;
}

}  // namespace uet
