// What comes in: parse and check every frame (remote input is hostile: bounds-checked by the
// wire decoders, counted and dropped here, never asserted), then hand it to the role it is for.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <variant>

#include "engine/answer_tracker_inline.hpp"
#include "engine/engine_impl.hpp"

namespace uet {

namespace {

bool is_request_type(std::uint8_t type) {
    using wire::pds_type;
    const auto t = static_cast<pds_type>(type);
    return t == pds_type::rud || t == pds_type::rod || t == pds_type::rud_cc ||
           t == pds_type::rod_cc || t == pds_type::rudi_req || t == pds_type::uud;
}

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

// A RUD_CC / ROD_CC request is a request plus a credit target.
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

}  // namespace

void engine_impl::receive(std::span<const std::uint8_t> frame, std::uint64_t now) {
    core_.tick(now);
    ++core_.counters.frames_rx;
    core_.counters.bytes_rx += frame.size();
    if (receive_plain(frame)) return;
    wire::l2l4_view& v = rx_l2_;
    if (auto rc = wire::parse_l2l4(frame, v); rc != wire::reject_reason::none)
        return core_.count_reject(rc);
    if (v.l3 != wire::l2l4_view::l3_kind::ipv4 || !v.udp)
        return core_.count_drop(drop_reason::not_udp);
    if (v.ip.dst != core_.cfg.ip) return core_.count_drop(drop_reason::not_for_us);
    if (v.udp->dport != core_.cfg.udp_port) return core_.count_drop(drop_reason::wrong_port);
    rx_context rx;
    rx.peer = peers_.source(v.eth.src, v.ip.src);
    rx.entropy = v.udp->sport;
    rx.ce = v.ip.ecn == static_cast<std::uint8_t>(wire::ecn_codepoint::ce);
    rx.frame_bytes = frame.size();
    rx.now = core_.now;
    // A trimmed request lost its payload (and with it maybe the SES header's consistency):
    // only its PDS header is read, to NACK it.
    if (v.ip.dscp == core_.cfg.trim_dscp && !v.l4_payload.empty() &&
        is_request_type(v.l4_payload[0] >> 3))
        return on_trimmed(rx, v.l4_payload);

    wire::uet_packet& pkt = rx_pkt_;
    if (auto rc = wire::decode_uet(v.l4_payload, false, pkt); rc != wire::reject_reason::none)
        return core_.count_reject(rc);
    if (pkt.tss) return core_.count_drop(drop_reason::unsupported_type);
    std::visit(
        [&](const auto& h) {
            using H = std::decay_t<decltype(h)>;
            if constexpr (std::is_same_v<H, wire::pds_rud_rod_request>) {
                on_request(rx, h, ses_of(pkt));
            } else if constexpr (std::is_same_v<H, wire::pds_rud_rod_cc_request>) {
                on_request(rx, as_request(h), ses_of(pkt), &h.credit_target);
            } else if constexpr (std::is_same_v<H, wire::pds_ack_cc>) {
                on_ack(rx, h, pkt);
            } else if constexpr (std::is_same_v<H, wire::pds_ack> ||
                                 std::is_same_v<H, wire::pds_ack_ccx>) {
                on_ack(rx, as_ack_cc(h), pkt);
            } else if constexpr (std::is_same_v<H, wire::pds_nack>) {
                on_nack(rx, h);
            } else if constexpr (std::is_same_v<H, wire::pds_nack_ccx>) {
                on_nack(rx, as_nack(h));
            } else if constexpr (std::is_same_v<H, wire::pds_ctrl>) {
                on_ctrl(rx, h);
            } else if constexpr (std::is_same_v<H, wire::pds_rudi>) {
                if (h.type == wire::pds_type::rudi_req)
                    on_rudi_request(rx, h, pkt);
                else
                    on_rudi_response(rx, h);
            } else if constexpr (std::is_same_v<H, wire::pds_uud>) {
                on_uud(rx, pkt);
            } else {
                core_.count_drop(drop_reason::unsupported_type);
            }
        },
        pkt.pds);
}

// The common data packet (wire::read_plain_request) in one pass, to on_request as the general
// path below would hand it; false when it takes the general path instead, which then decides
// on the frame and counts any drop.
bool engine_impl::receive_plain(std::span<const std::uint8_t> frame) {
    // The next packet of the last frame's message (or the next one-packet message after a
    // one-packet message) is compared with it; any other is read in full and then stands for the
    // packets after it.
    const wire::plain_request* next = wire::read_next_plain_request(frame, rx_template_);
    const bool predicted = next != nullptr;
    if (predicted) {
        ++core_.counters.frames_predicted;
    } else {
        if (!wire::read_plain_request(frame, rx_plain_)) return false;
        wire::remember_plain_request(frame, rx_plain_, rx_template_);
        rx_segment_of_template_ = false;  // until this frame's segment is checked below
        next = &rx_plain_;
    }
    const wire::plain_request& f = *next;
    if (!takes_plain(f)) return false;
    // A predicted packet's segment is checked against the one of the packet it was compared with.
    ses::rx_segment& seg = rx_segment_;
    if (predicted && rx_segment_of_template_) {
        if (!ses::check_next_plain_request(f.ses, f.payload.size(), core_.cfg.mtu_payload,
                                           core_.cfg.max_message_size, seg))
            return false;
    } else {
        seg = {};
        if (!ses::check_plain_request(f.ses, f.payload.size(), core_.cfg.mtu_payload,
                                      core_.cfg.max_message_size, seg))
            return false;
        // One-packet messages are predicted too, but each is a new message: its segment is
        // checked in full, and they make no runs.
        rx_segment_of_template_ =
            rx_template_.frame_size != 0 && !rx_template_.single_packet_messages;
    }
    rx_context rx;
    rx.peer = peers_.source(f.src_mac, f.src_ip);
    rx.entropy = f.src_port;
    rx.ce = f.ecn == static_cast<std::uint8_t>(wire::ecn_codepoint::ce);
    rx.frame_bytes = frame.size();
    rx.now = core_.now;
    on_request(rx, f.pds, rx_ses{nullptr, &seg, f.payload});
    return true;
}

// ---- target side of RUD / ROD ----

void engine_impl::on_trimmed(const rx_context& rx, std::span<const std::uint8_t> l4) {
    wire::pds_header header;
    std::size_t used = 0;
    if (auto rc = wire::decode_pds(l4, header, used); rc != wire::reject_reason::none)
        return core_.count_reject(rc);
    if (const auto* rudi = std::get_if<wire::pds_rudi>(&header)) {
        ++core_.connectionless.trimmed_received;
        return acks_.queue_nack(*this, rx, wire::nack_code::trimmed, rudi->pkt_id, 0, 0, true,
                                nullptr);
    }
    const auto* cc_req = std::get_if<wire::pds_rud_rod_cc_request>(&header);
    wire::pds_rud_rod_request from_cc;
    if (cc_req) from_cc = as_request(*cc_req);
    const auto* h = cc_req ? &from_cc : std::get_if<wire::pds_rud_rod_request>(&header);
    if (!h) {
        ++core_.connectionless.trimmed_received;
        return core_.count_drop(
            drop_reason::trimmed_dropped);  // UUD: best effort, nobody asks again
    }
    pds::pdc* p = nullptr;
    if (h->syn) {
        if (auto found = pdcs_.find_syn(rx.peer, h->spdcid)) p = &pdcs_[*found];
    } else {
        p = pdcs_.by_local_id(h->dpdcid);
        if (p && (p->role != pds::pdc_role::target || p->peer != rx.peer)) p = nullptr;
    }
    if (p) {
        ++p->counters.rx_packets;
        p->counters.rx_bytes += rx.frame_bytes;
        ++p->counters.trimmed_received;
        // The header survived the trim: the sender's credit target still counts.
        if (cc_req) on_credit_target(*p, cc_req->credit_target, rx.now);
        switch (p->classify(h->psn)) {
            case pds::pdc::rx_verdict::duplicate:
                ++p->counters.duplicates;
                return acks_.send_ack(*this, *p, h->psn, rx);
            case pds::pdc::rx_verdict::out_of_order:
                // ROD would drop it even whole: the go-back-N for the hole before it resends it.
                return core_.count_drop(drop_reason::out_of_order);
            default:
                break;
        }
    } else {
        ++core_.connectionless.trimmed_received;
    }
    // The PDC may not exist yet (a trimmed SYN packet): the NACK needs only the sender's PDCID.
    acks_.queue_nack(*this, rx, wire::nack_code::trimmed, h->psn, p ? p->local_id : 0, h->spdcid,
                     false, p, h->retx);
    // The sender's window now holds the trimmed packet's bytes until it resends: packets held
    // back for ACK coalescing are acknowledged at once, or a small window waits for a timeout.
    if (p && p->acks.pending()) acks_.send_ack(*this, *p, p->rx.highest(), rx);
}

pds::pdc* engine_impl::target_for(const rx_context& rx, const wire::pds_rud_rod_request& h,
                                  bool& created) {
    created = false;
    if (!h.syn) {
        pds::pdc* p = established_target(rx, h);
        if (!p) core_.count_drop(drop_reason::unknown_pdc);
        return p;
    }
    if (auto found = pdcs_.find_syn(rx.peer, h.spdcid)) {
        pds::pdc& p = pdcs_[*found];
        if (p.close_heard) reopen_if_forged_close(p, h.psn);
        return &p;
    }
    const psn_t start = h.psn - h.psn_offset;
    if (pdcs_.recently_closed(rx.peer, h.spdcid, start)) {
        core_.count_drop(drop_reason::stale_syn);
        return nullptr;
    }
    pds::pdc* p = allocate_pdc();
    if (!p) {
        // Nothing is lost: the sender backs off and sends the packet again.
        acks_.queue_nack(*this, rx, wire::nack_code::no_pdc_avail, h.psn, 0, h.spdcid, false,
                         nullptr);
        return nullptr;
    }
    p->peer = rx.peer;
    ++peers_[rx.peer].target_pdcs;
    p->open_target(pdcs_.rx_ring_of(p->index), start, h.type == wire::pds_type::rod,
                   core_.cfg.ack_every_bytes, core_.cfg.ack_every_packets);
    p->remote_id = h.spdcid;
    p->last_activity_ns = rx.now;
    p->owed_stamp = answers_.next_stamp();
    pdcs_.insert_syn(rx.peer, h.spdcid, p->index);
    core_.timers.schedule(p->idle_timer, rx.now + core_.cfg.pdc_target_idle_ns);
    ++core_.counters.target_pdcs_opened;
    created = true;
    return p;
}

pds::pdc* engine_impl::established_target(const rx_context& rx,
                                          const wire::pds_rud_rod_request& h) {
    pds::pdc* p = pdcs_.by_local_id(h.dpdcid);
    if (!p || p->role != pds::pdc_role::target || p->peer != rx.peer || p->remote_id != h.spdcid)
        return nullptr;
    if (p->close_heard) [[unlikely]]
        reopen_if_forged_close(*p, h.psn);
    if (!p->validated) [[unlikely]]
        validate(*p);
    return p;
}

// A packet on a PDC whose CLOSE was acknowledged: new data (at or after the CLOSE's PSN, not a
// late copy of something before it) shows that its initiator never sent that CLOSE.
void engine_impl::reopen_if_forged_close(pds::pdc& p, psn_t psn) {
    if (p.rx.classify(psn) == rx_window::verdict::duplicate) return;
    p.close_heard = false;
    pdcs_.drop_lingering();
    --core_.counters.target_pdcs_closed;
    core_.count_drop(drop_reason::forged_close);
    core_.timers.cancel(p.idle_timer);
    core_.timers.schedule(p.idle_timer, core_.now + core_.cfg.pdc_target_idle_ns);
}

// RCCC receiver: the sender wants credit up to `target` (cumulative): queue it at the pacer.
void engine_impl::on_credit_target(pds::pdc& p, std::uint32_t target, std::uint64_t now) {
    p.credit_mode = true;
    p.credit_rx.on_credit_target(target);
    pacer_->on_demand(p.credit_rx, now);
    arm_pacer();
}

// A request from a source not in the table: only a SYN, which opens a PDC, may add it, and only
// while a PDC is free (else the NACK that asks it to come back later is sent without state).
void engine_impl::on_request_from_new_source(const rx_context& rx,
                                             const wire::pds_rud_rod_request& h, const rx_ses& in,
                                             const std::uint32_t* credit_target) {
    if (!h.syn) return core_.count_drop(drop_reason::unknown_source);
    if (!pdcs_.has_free())
        return acks_.queue_nack(*this, rx, wire::nack_code::no_pdc_avail, h.psn, 0, h.spdcid, false,
                                nullptr);
    rx_context learned = rx;
    if (learn_peer(learned)) on_request(learned, h, in, credit_target);
}

void engine_impl::on_request(const rx_context& rx, const wire::pds_rud_rod_request& h,
                             const rx_ses& in, const std::uint32_t* credit_target) {
    if (rx.peer == transient_peer) [[unlikely]]
        return on_request_from_new_source(rx, h, in, credit_target);
    bool created = false;
    pds::pdc* p = target_for(rx, h, created);
    if (!p) return;
    const bool rod = h.type == wire::pds_type::rod;
    if (p->ordered != rod) return core_.count_drop(drop_reason::unknown_pdc);
    if (credit_target) on_credit_target(*p, *credit_target, rx.now);
    p->last_activity_ns = rx.now;
    ++p->counters.rx_packets;
    ++p->counters.rx_data_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    switch (p->classify(h.psn)) {
        case pds::pdc::rx_verdict::duplicate:
            ++p->counters.duplicates;
            p->acks.on_packet(false, h.ar, rx.ce, true, 0);
            return acks_.defer(*this, *p, h.psn, rx);
        case pds::pdc::rx_verdict::beyond_window:
            return core_.count_drop(drop_reason::beyond_window);
        case pds::pdc::rx_verdict::out_of_order:
            core_.count_drop(drop_reason::out_of_order);
            if (p->should_nack_out_of_order())
                acks_.queue_nack(*this, rx, wire::nack_code::rod_ooo, p->rx.expected(), p->local_id,
                                 p->remote_id, false, p);
            return;
        case pds::pdc::rx_verdict::accept:
            break;
    }
    // A request completed here is owed an answer: without room to note it, it waits.
    if (!answers_.owed_room()) return core_.count_drop(drop_reason::no_rx_buffer);
    ses::place_result placed;
    if (!place(rx, rod ? delivery_mode::rod : delivery_mode::rud, in, false, false, placed, p))
        return;  // not acknowledged: the sender will try again
    on_accepted(*p, h, static_cast<std::uint32_t>(in.payload.size()), created, rx);
}

void engine_impl::on_accepted(pds::pdc& p, const wire::pds_rud_rod_request& h, std::uint32_t bytes,
                              bool created, const rx_context& rx) {
    p.rx.accept(h.psn);
    if (rx.ce) p.ce_since_ack = true;
    // The first packet accepted (the first to arrive may have been out of order for ROD) is
    // acknowledged at once: it ends the initiator's SYN phase and gives it an RTT.
    const bool first = created || p.counters.acks_sent == 0;
    if (p.acks.on_packet(first, h.ar, rx.ce, false, bytes) != pds::ack_reason::none)
        acks_.defer(*this, p, h.psn, rx);
    else if (!p.ack_timer.scheduled())
        core_.timers.schedule(p.ack_timer, rx.now + core_.cfg.ack_delay_ns);
}

bool engine_impl::place_unchecked(const rx_context& rx, delivery_mode mode, const rx_ses& in,
                                  bool remember, bool single_packet, ses::place_result& result,
                                  pds::pdc* target) {
    ses::rx_segment checked;
    if (!in.header || !ses::check_packet(*in.header, in.payload.size(), core_.cfg.mtu_payload,
                                         core_.cfg.max_message_size, checked)) {
        core_.count_drop(drop_reason::malformed_ses);
        return false;
    }
    return place_checked(rx, mode, checked, in.payload, remember, single_packet, result, target);
}

// place() once the SES header is checked (the common data packet comes checked: no segment to
// construct and clear here for it).
bool engine_impl::place_checked(const rx_context& rx, delivery_mode mode,
                                const ses::rx_segment& seg, std::span<const std::uint8_t> payload,
                                bool remember, bool single_packet, ses::place_result& result,
                                pds::pdc* target) {
    if (single_packet && !(seg.seg.som && seg.seg.eom)) {
        core_.count_drop(drop_reason::malformed_ses);
        return false;
    }
    const ses::message_key key = message_key_of(rx, mode, seg);
    const bool external = placed_externally(seg);
    std::uint32_t slot = ses::no_index;
    result = reassembly_.place(key, seg.total, seg.seg, payload, remember, rx.now, &seg.fields,
                               external, &slot);
    switch (result) {
        case ses::place_result::no_resources:
            core_.count_drop(drop_reason::no_rx_buffer);
            return false;
        case ses::place_result::inconsistent:
            core_.count_drop(drop_reason::malformed_ses);
            return false;
        case ses::place_result::placed:
        case ses::place_result::completed:
            // New to reassembly, so never copied before (duplicates are not copied again).
            if (external) place_write(rx, seg, payload, slot);
            if (result == ses::place_result::completed && target)
                answers_.on_message_placed(*this, rx.peer, mode, seg, slot, target);
            return true;
        default:
            return true;
    }
}

// One new packet of a WRITE goes straight to where the hook says (checked there against the
// live region table, per packet: a region deregistered mid-message is never written).
void engine_impl::place_write(const rx_context& rx, const ses::rx_segment& seg,
                              std::span<const std::uint8_t> payload, std::uint32_t slot) {
    if (seg.seg.length == 0) return;  // nothing to copy: the target checks the range anyway
    std::uint8_t* where =
        core_.cfg.deliver_to->place_write(rx.peer, seg.fields, seg.seg.offset, seg.seg.length);
    if (where)
        std::memcpy(where, payload.data(), seg.seg.length);
    else
        reassembly_.mark_failed(slot);
}

void engine_impl::on_credit(const rx_context& rx, const wire::pds_ctrl& c) {
    if (rx.peer == transient_peer) return core_.count_drop(drop_reason::unknown_source);
    pds::pdc* p = pdcs_.by_local_id(c.dpdcid);
    if (!p || p->role != pds::pdc_role::initiator || p->peer != rx.peer ||
        (p->state != pds::pdc_state::syn_sent && c.spdcid != p->remote_id))
        return core_.count_drop(drop_reason::unknown_pdc);
    ++p->counters.rx_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    p->cc->on_credit(c.payload & cc::credit::field_mask, rx.now);
    core_.tx_ready = true;
}

void engine_impl::on_ctrl(const rx_context& rx, const wire::pds_ctrl& c) {
    if (c.ctrl_type == wire::ctrl_type::credit && !c.syn) return on_credit(rx, c);
    // CREDIT_REQUEST asks for credit; NOOP is what an initiator waiting only for answers its
    // ACK announced sends to show it has our PDC id (pdc::validated: answers held for it go).
    const bool credit_req = c.ctrl_type == wire::ctrl_type::credit_req;
    if ((credit_req || c.ctrl_type == wire::ctrl_type::noop) && !c.syn) {
        if (rx.peer == transient_peer) return core_.count_drop(drop_reason::unknown_source);
        pds::pdc* p = pdcs_.by_local_id(c.dpdcid);
        if (!p || p->role != pds::pdc_role::target || p->peer != rx.peer ||
            p->remote_id != c.spdcid)
            return core_.count_drop(drop_reason::unknown_pdc);
        ++p->counters.rx_packets;
        p->counters.rx_bytes += rx.frame_bytes;
        p->last_activity_ns = rx.now;
        if (!p->validated) validate(*p);
        if (credit_req) on_credit_target(*p, c.payload, rx.now);
        return;
    }
    if (c.ctrl_type != wire::ctrl_type::close || c.syn)
        return core_.count_drop(drop_reason::unsupported_type);
    pds::pdc* p = pdcs_.by_local_id(c.dpdcid);
    if (!p || p->role != pds::pdc_role::target || p->peer != rx.peer || p->remote_id != c.spdcid) {
        // Closed already (our ACK of the CLOSE was lost): acknowledge without state so the
        // initiator can finish too.
        return acks_.ack_stale_close(*this, rx, c);
    }
    ++p->counters.rx_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    p->last_activity_ns = rx.now;
    if (!p->validated) validate(*p);  // answers held go ahead of the CLOSE's ACK
    if (c.psn == p->rx.expected()) {
        // Its initiator closes only once every packet it sent is acknowledged: with a packet
        // received beyond a hole, or one not yet acknowledged, the CLOSE is not its.
        if (p->rx.highest() != p->rx.cack() || p->ack_due || p->acks.pending())
            return core_.count_drop(drop_reason::forged_close);
        // Acknowledged, and the PDC lingers (pdc::close_heard): the PSN is not kept as
        // received, so that data at it, should the CLOSE be forged, is taken as new.
        p->rx.accept(c.psn);
        acks_.send_ack(*this, *p, c.psn, rx);
        p->rx.retract_last();
        if (!p->close_heard) {
            p->close_heard = true;
            pdcs_.add_lingering();
            ++core_.counters.target_pdcs_closed;
            core_.timers.cancel(p->idle_timer);
            core_.timers.schedule(p->idle_timer, rx.now + close_linger_ns());
        }
    } else if (p->classify(c.psn) == pds::pdc::rx_verdict::duplicate) {
        acks_.send_ack(*this, *p, c.psn, rx);
    } else {
        // Data before it is still missing; its retransmission comes first.
        core_.count_drop(drop_reason::out_of_order);
    }
}

// ---- initiator side of RUD / ROD ----

void engine_impl::on_ack(const rx_context& rx, const wire::pds_ack_cc& a,
                         const wire::uet_packet& pkt) {
    if (rx.peer == transient_peer) return core_.count_drop(drop_reason::unknown_source);
    pds::pdc* p = pdcs_.by_local_id(a.dpdcid);
    if (!p || p->role != pds::pdc_role::initiator || p->peer != rx.peer)
        return core_.count_drop(drop_reason::unknown_pdc);
    ++p->counters.rx_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    ++p->counters.acks_received;
    pds::ack_event ev;
    ev.cack = a.cack_psn;
    ev.ack_psn = a.cack_psn + static_cast<psn_t>(a.ack_psn_offset);
    ev.sack.base = a.cack_psn + static_cast<psn_t>(a.sack_psn_offset);
    ev.sack.bitmap = a.sack_bitmap;
    ev.ecn = a.m;
    answers_.on_ack_header(*p, pkt);
    ack_listener listener(*this);
    const pds::ack_outcome out =
        p->on_ack(ev, a.spdcid, rx.now, core_.timers, listener, core_.params);
    answers_.ack_done();
    if (!out.valid) return core_.count_drop(drop_reason::bad_ack);
    answers_.settle(*this, *p, rx.now);
    // The selector heard about every packet this ACK covers (pdc::on_ack); the controller hears
    // about the ACK, and may judge that the trigger's path, not the network, is congested.
    if (a.cc_type == wire::cc_type::credit) p->cc->on_credit(a.credit.credit, rx.now);
    p->cc->on_ack(static_cast<std::uint32_t>(out.acked_bytes), out.rtt_ns, a.m, rx.now);
    if (p->cc->take_path_switch() && out.trigger_known) p->lb->on_path_switch(out.trigger_entropy);
    p->last_activity_ns = rx.now;
    core_.tx_ready = true;
    if (out.close_acked) {
        const std::uint32_t peer = p->peer;
        const std::size_t slot = p->slot;
        ++core_.counters.pdcs_closed;
        free_pdc(*p);
        // Messages posted while it was closing get a fresh PDC.
        open_initiator_pdc(peer, slot, rx.now);
        kick_waiting(rx.now);
        return;
    }
    maybe_schedule_close(*p, rx.now);
}

void engine_impl::on_nack(const rx_context& rx, const wire::pds_nack& n) {
    if (rx.peer == transient_peer) return core_.count_drop(drop_reason::unknown_source);
    const auto slot = static_cast<std::size_t>(pds::slot_of(n.code));
    if (n.nt) {
        const std::uint32_t index = rudi_.find(n.nack_psn, true);
        if (index == pds::rudi_window::no_packet || msgs_[rudi_[index].message].peer != rx.peer)
            return core_.count_drop(drop_reason::stale_response);
        ++core_.connectionless.nacks_received[slot];
        pds::rudi_packet& r = rudi_[index];
        core_.timers.cancel(r.timer);
        if (pds::slot_of(n.code) == pds::nack_slot::trimmed ||
            pds::slot_of(n.code) == pds::nack_slot::trimmed_lasthop) {
            rudi_.queue_retransmit(index, retx_cause::nack);
            core_.tx_ready = true;
        } else {
            core_.timers.schedule(r.timer, rx.now + rudi_rto(rx.peer, r.retries));
        }
        return;
    }
    pds::pdc* p = pdcs_.by_local_id(n.dpdcid);
    if (!p || p->role != pds::pdc_role::initiator || p->peer != rx.peer ||
        (n.spdcid != 0 && p->state != pds::pdc_state::syn_sent && n.spdcid != p->remote_id))
        return core_.count_drop(drop_reason::unknown_pdc);
    ++p->counters.rx_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    ++p->counters.nacks_received[slot];
    const pds::nack_action act =
        p->on_nack(n.code, n.nack_psn, rx.now, core_.timers, core_.params, n.retx ? 1 : 0);
    if (act == pds::nack_action::retransmit || act == pds::nack_action::rewind)
        core_.tx_ready = true;
}

// ---- RUDI and UUD ----

void engine_impl::on_rudi_request(const rx_context& rx_in, const wire::pds_rudi& h,
                                  const wire::uet_packet& pkt) {
    rx_context rx = rx_in;
    if (!learn_peer(rx)) return;  // its message is remembered under its peer (duplicates)
    ++core_.connectionless.rx_packets;
    ++core_.connectionless.rx_data_packets;
    core_.connectionless.rx_bytes += rx.frame_bytes;
    ses::place_result placed;
    if (!place(rx, delivery_mode::rudi, ses_of(pkt), true, false, placed)) return;
    if (placed == ses::place_result::duplicate) ++core_.connectionless.duplicates;
    // Every request packet, duplicate or not, gets its response (the first may have been lost).
    acks_.answer_rudi(*this, rx, h);
}

void engine_impl::on_rudi_response(const rx_context& rx, const wire::pds_rudi& h) {
    const std::uint32_t index = rudi_.find(h.pkt_id, false);
    if (index == pds::rudi_window::no_packet || msgs_[rudi_[index].message].peer != rx.peer)
        return core_.count_drop(drop_reason::stale_response);
    ++core_.connectionless.rx_packets;
    core_.connectionless.rx_bytes += rx.frame_bytes;
    ++core_.connectionless.acks_received;
    ++core_.counters.rudi_responses_rx;
    pds::rudi_packet& r = rudi_[index];
    core_.timers.cancel(r.timer);
    if (!r.resent && rx.now >= r.sent_ns) peers_[rx.peer].rudi_rtt.sample(rx.now - r.sent_ns);
    const std::uint32_t message = r.message;
    rudi_.release(index);
    core_.tx_ready = true;
    ses::tx_message& m = msgs_[message];
    if (m.in_use && ++m.packets_done >= m.packets_total) complete_message(message, status{});
}

void engine_impl::on_uud(const rx_context& rx_in, const wire::uet_packet& pkt) {
    rx_context rx = rx_in;
    if (!learn_peer(rx)) return;
    ++core_.connectionless.rx_packets;
    ++core_.connectionless.rx_data_packets;
    core_.connectionless.rx_bytes += rx.frame_bytes;
    ++core_.counters.uud_rx;
    ses::place_result placed;
    if (place(rx, delivery_mode::uud, ses_of(pkt), true, true, placed) &&
        placed == ses::place_result::duplicate)
        ++core_.connectionless.duplicates;
}

}  // namespace uet
