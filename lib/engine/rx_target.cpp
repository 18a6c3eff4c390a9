// One data packet at the target side of RUD / ROD: its PDC (opened by a SYN), its PSN in the
// window, its placement in reassembly (or, for a WRITE, the region), the ACK policy; and a
// trimmed packet, NACKed.
#include <cstdint>
#include <cstring>
#include <variant>

#include "engine/answer_tracker_inline.hpp"
#include "engine/engine_impl.hpp"

namespace uet {

wire::pds_rud_rod_request as_request(const wire::pds_rud_rod_cc_request& c) {
    wire::pds_rud_rod_request h;
    h.type = c.type == wire::pds_type::rod_cc ? wire::pds_type::rod : wire::pds_type::rud;
    h.next_hdr = c.next_hdr;
    h.retx = c.retx;
    h.ar = c.ar;
    h.syn = c.syn;
    h.clear_psn_offset = c.clear_psn_offset;
    h.psn = c.psn;
    h.spdcid = c.spdcid;
    h.dpdcid = c.dpdcid;
    h.use_rsv_pdc = c.use_rsv_pdc;
    h.psn_offset = c.psn_offset;
    return h;
}

void rx_pipeline::on_trimmed(engine_impl& e, const rx_context& rx,
                             std::span<const std::uint8_t> l4) {
    wire::pds_header header;
    std::size_t used = 0;
    if (auto rc = wire::decode_pds(l4, header, used); rc != wire::reject_reason::none)
        return e.core_.count_reject(rc);
    if (const auto* rudi = std::get_if<wire::pds_rudi>(&header)) {
        ++e.core_.connectionless.trimmed_received;
        return e.acks_.queue_nack(e, rx, wire::nack_code::trimmed, rudi->pkt_id, 0, 0, true,
                                  nullptr);
    }
    const auto* cc_req = std::get_if<wire::pds_rud_rod_cc_request>(&header);
    wire::pds_rud_rod_request from_cc;
    if (cc_req) from_cc = as_request(*cc_req);
    const auto* h = cc_req ? &from_cc : std::get_if<wire::pds_rud_rod_request>(&header);
    if (!h) {
        ++e.core_.connectionless.trimmed_received;
        return e.core_.count_drop(
            drop_reason::trimmed_dropped);  // UUD: best effort, nobody asks again
    }
    pds::pdc* p = nullptr;
    if (h->syn) {
        if (auto found = e.pdcs_.find_syn(rx.peer, h->spdcid)) p = &e.pdcs_[*found];
    } else {
        p = e.pdcs_.by_local_id(h->dpdcid);
        if (p && (p->role != pds::pdc_role::target || p->peer != rx.peer)) p = nullptr;
    }
    if (p) {
        ++p->counters.rx_packets;
        p->counters.rx_bytes += rx.frame_bytes;
        ++p->counters.trimmed_received;
        // The header survived the trim: the sender's credit target still counts.
        if (cc_req) e.pacer_.on_credit_target(e, *p, cc_req->credit_target, rx.now);
        switch (p->classify(h->psn)) {
            case pds::pdc::rx_verdict::duplicate:
                ++p->counters.duplicates;
                return e.acks_.send_ack(e, *p, h->psn, rx);
            case pds::pdc::rx_verdict::out_of_order:
                // ROD would drop it even whole: the go-back-N for the hole before it resends it.
                return e.core_.count_drop(drop_reason::out_of_order);
            default:
                break;
        }
    } else {
        ++e.core_.connectionless.trimmed_received;
    }
    // The PDC may not exist yet (a trimmed SYN packet): the NACK needs only the sender's PDCID.
    e.acks_.queue_nack(e, rx, wire::nack_code::trimmed, h->psn, p ? p->local_id : 0, h->spdcid,
                       false, p, h->retx);
    // The sender's window now holds the trimmed packet's bytes until it resends: packets held
    // back for ACK coalescing are acknowledged at once, or a small window waits for a timeout.
    if (p && p->acks.pending()) e.acks_.send_ack(e, *p, p->rx.highest(), rx);
}

pds::pdc* rx_pipeline::target_for(engine_impl& e, const rx_context& rx,
                                  const wire::pds_rud_rod_request& h, bool& created) {
    created = false;
    if (!h.syn) {
        pds::pdc* p = established_target(e, rx, h);
        if (!p) e.core_.count_drop(drop_reason::unknown_pdc);
        return p;
    }
    if (auto found = e.pdcs_.find_syn(rx.peer, h.spdcid)) {
        pds::pdc& p = e.pdcs_[*found];
        if (p.close_heard) reopen_if_forged_close(e, p, h.psn);
        return &p;
    }
    const psn_t start = h.psn - h.psn_offset;
    if (e.pdcs_.recently_closed(rx.peer, h.spdcid, start)) {
        e.core_.count_drop(drop_reason::stale_syn);
        return nullptr;
    }
    pds::pdc* p = e.allocate_pdc();
    if (!p) {
        // Nothing is lost: the sender backs off and sends the packet again.
        e.acks_.queue_nack(e, rx, wire::nack_code::no_pdc_avail, h.psn, 0, h.spdcid, false,
                           nullptr);
        return nullptr;
    }
    p->peer = rx.peer;
    ++e.peers_[rx.peer].target_pdcs;
    p->open_target(e.pdcs_.rx_ring_of(p->index), start, h.type == wire::pds_type::rod,
                   e.core_.cfg.ack_every_bytes, e.core_.cfg.ack_every_packets);
    p->remote_id = h.spdcid;
    p->last_activity_ns = rx.now;
    p->owed_stamp = e.answers_.next_stamp();
    e.pdcs_.insert_syn(rx.peer, h.spdcid, p->index);
    e.paths_.open(*p);
    e.core_.timers.schedule(p->idle_timer, rx.now + e.core_.cfg.pdc_target_idle_ns);
    ++e.core_.counters.target_pdcs_opened;
    created = true;
    return p;
}

pds::pdc* rx_pipeline::established_target(engine_impl& e, const rx_context& rx,
                                          const wire::pds_rud_rod_request& h) {
    pds::pdc* p = e.pdcs_.by_local_id(h.dpdcid);
    if (!p || p->role != pds::pdc_role::target || p->peer != rx.peer || p->remote_id != h.spdcid)
        return nullptr;
    if (p->close_heard) [[unlikely]]
        reopen_if_forged_close(e, *p, h.psn);
    if (!p->validated) [[unlikely]]
        e.validate(*p);
    return p;
}

// A packet on a PDC whose CLOSE was acknowledged: new data (at or after the CLOSE's PSN, not a
// late copy of something before it) shows that its initiator never sent that CLOSE.
void rx_pipeline::reopen_if_forged_close(engine_impl& e, pds::pdc& p, psn_t psn) {
    if (p.rx.classify(psn) == rx_window::verdict::duplicate) return;
    p.close_heard = false;
    e.pdcs_.drop_lingering();
    --e.core_.counters.target_pdcs_closed;
    e.core_.count_drop(drop_reason::forged_close);
    e.core_.timers.cancel(p.idle_timer);
    e.core_.timers.schedule(p.idle_timer, e.core_.now + e.core_.cfg.pdc_target_idle_ns);
}

// A request from a source not in the table: only a SYN, which opens a PDC, may add it, and only
// while a PDC is free (else the NACK that asks it to come back later is sent without state).
void rx_pipeline::on_request_from_new_source(engine_impl& e, const rx_context& rx,
                                             const wire::pds_rud_rod_request& h, const rx_ses& in,
                                             const std::uint32_t* credit_target) {
    if (!h.syn) return e.core_.count_drop(drop_reason::unknown_source);
    if (!e.pdcs_.has_free())
        return e.acks_.queue_nack(e, rx, wire::nack_code::no_pdc_avail, h.psn, 0, h.spdcid, false,
                                  nullptr);
    rx_context learned = rx;
    if (e.learn_peer(learned)) on_request(e, learned, h, in, credit_target);
}

void rx_pipeline::on_request(engine_impl& e, const rx_context& rx,
                             const wire::pds_rud_rod_request& h, const rx_ses& in,
                             const std::uint32_t* credit_target) {
    if (rx.peer == transient_peer) [[unlikely]]
        return on_request_from_new_source(e, rx, h, in, credit_target);
    bool created = false;
    pds::pdc* p = target_for(e, rx, h, created);
    if (!p) return;
    const bool rod = h.type == wire::pds_type::rod;
    if (p->ordered != rod) return e.core_.count_drop(drop_reason::unknown_pdc);
    if (credit_target) e.pacer_.on_credit_target(e, *p, *credit_target, rx.now);
    p->last_activity_ns = rx.now;
    ++p->counters.rx_packets;
    ++p->counters.rx_data_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    switch (p->classify(h.psn)) {
        case pds::pdc::rx_verdict::duplicate:
            ++p->counters.duplicates;
            p->acks.on_packet(false, h.ar, rx.ce, true, 0);
            return e.acks_.defer(e, *p, h.psn, rx);
        case pds::pdc::rx_verdict::beyond_window:
            return e.core_.count_drop(drop_reason::beyond_window);
        case pds::pdc::rx_verdict::out_of_order:
            e.core_.count_drop(drop_reason::out_of_order);
            if (p->should_nack_out_of_order())
                e.acks_.queue_nack(e, rx, wire::nack_code::rod_ooo, p->rx.expected(), p->local_id,
                                   p->remote_id, false, p);
            return;
        case pds::pdc::rx_verdict::accept:
            break;
    }
    // A request completed here is owed an answer: without room to note it, it waits.
    if (!e.answers_.owed_room()) return e.core_.count_drop(drop_reason::no_rx_buffer);
    ses::place_result placed;
    if (!place(e, rx, rod ? delivery_mode::rod : delivery_mode::rud, in, false, false, placed, p))
        return;  // not acknowledged: the sender will try again
    on_accepted(e, *p, h, static_cast<std::uint32_t>(in.payload.size()), created,
                placed == ses::place_result::completed, rx);
}

void rx_pipeline::on_accepted(engine_impl& e, pds::pdc& p, const wire::pds_rud_rod_request& h,
                              std::uint32_t bytes, bool created, bool completed,
                              const rx_context& rx) {
    p.rx.accept(h.psn);
    if (e.paths_.on()) e.paths_.on_accepted(e, p, h.psn, rx);
    if (rx.ce) p.ce_since_ack = true;
    // The first packet accepted (the first to arrive may have been out of order for ROD) is
    // acknowledged at once: it ends the initiator's SYN phase and gives it an RTT.
    const bool first = created || p.counters.acks_sent == 0;
    if (p.acks.on_packet(first, h.ar || completed, rx.ce, false, bytes) != pds::ack_reason::none)
        e.acks_.defer(e, p, h.psn, rx);
    else if (!p.ack_timer.scheduled())
        e.core_.timers.schedule(p.ack_timer, rx.now + e.core_.cfg.ack_delay_ns);
}

bool rx_pipeline::place_unchecked(engine_impl& e, const rx_context& rx, delivery_mode mode,
                                  const rx_ses& in, bool remember, bool single_packet,
                                  ses::place_result& result, pds::pdc* target) {
    ses::rx_segment checked;
    if (!in.header || !ses::check_packet(*in.header, in.payload.size(), e.core_.cfg.mtu_payload,
                                         e.core_.cfg.max_message_size, checked)) {
        e.core_.count_drop(drop_reason::malformed_ses);
        return false;
    }
    return place_checked(e, rx, mode, checked, in.payload, remember, single_packet, result, target);
}

// place() once the SES header is checked (the common data packet comes checked: no segment to
// construct and clear here for it).
bool rx_pipeline::place_checked(engine_impl& e, const rx_context& rx, delivery_mode mode,
                                const ses::rx_segment& seg, std::span<const std::uint8_t> payload,
                                bool remember, bool single_packet, ses::place_result& result,
                                pds::pdc* target) {
    if (single_packet && !(seg.seg.som && seg.seg.eom)) {
        e.core_.count_drop(drop_reason::malformed_ses);
        return false;
    }
    const ses::message_key key = message_key_of(rx, mode, seg);
    const bool external = placed_externally(e.core_, seg);
    std::uint32_t slot = ses::no_index;
    result = e.reassembly_.place(key, seg.total, seg.seg, payload, remember, rx.now, &seg.fields,
                                 external, &slot);
    switch (result) {
        case ses::place_result::no_resources:
            e.core_.count_drop(drop_reason::no_rx_buffer);
            return false;
        case ses::place_result::inconsistent:
            e.core_.count_drop(drop_reason::malformed_ses);
            return false;
        case ses::place_result::placed:
        case ses::place_result::completed:
            // New to reassembly, so never copied before (duplicates are not copied again).
            if (external) place_write(e, rx, seg, payload, slot);
            if (result == ses::place_result::completed && target)
                e.answers_.on_message_placed(e, rx.peer, mode, seg, slot, target);
            return true;
        default:
            return true;
    }
}

// One new packet of a WRITE goes straight to where the hook says (checked there against the
// live region table, per packet: a region deregistered mid-message is never written).
void rx_pipeline::place_write(engine_impl& e, const rx_context& rx, const ses::rx_segment& seg,
                              std::span<const std::uint8_t> payload, std::uint32_t slot) {
    if (seg.seg.length == 0) return;  // nothing to copy: the target checks the range anyway
    std::uint8_t* where =
        e.core_.cfg.deliver_to->place_write(rx.peer, seg.fields, seg.seg.offset, seg.seg.length);
    if (where)
        std::memcpy(where, payload.data(), seg.seg.length);
    else
        e.reassembly_.mark_failed(slot);
}

}  // namespace uet
