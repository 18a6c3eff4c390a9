// ACKs, NACKs and CTRL packets: built into the control queue when their cause arrives, or, for
// the ACKs deferred to the next transmit(), straight into its rooms.
#include "engine/ack_coalescer.hpp"

#include <cstdint>

#include "engine/engine_impl.hpp"

namespace uet {

namespace {

std::int16_t clamp_offset(std::int64_t d) {
    return d < INT16_MIN || d > INT16_MAX ? 0 : static_cast<std::int16_t>(d);
}

}  // namespace

ack_coalescer::ack_coalescer(const engine_config& cfg) {
    acks_due_.reserve(2 * std::size_t{cfg.max_pdcs});
}

rx_context ack_coalescer::due_context(const pds::pdc& p, std::uint64_t now) noexcept {
    rx_context rx;
    rx.peer = p.peer;
    rx.entropy = p.ack_entropy;
    rx.now = now;
    return rx;
}

void ack_coalescer::flush(engine_impl& e) {
    for (const std::uint32_t i : acks_due_) {
        pds::pdc& p = e.pdcs_[i];
        if (!p.ack_due) continue;  // sent already (a timer, a CLOSE) or the PDC was freed
        send_ack(e, p, p.ack_trigger, due_context(p, e.core_.now));
    }
    acks_due_.clear();
}

void ack_coalescer::flush_into(engine_impl& e, std::span<tx_frame> out, std::size_t& n) {
    std::size_t k = 0;
    for (; k < acks_due_.size() && n < out.size(); ++k) {
        pds::pdc& p = e.pdcs_[acks_due_[k]];
        if (!p.ack_due) continue;  // sent already (a timer, a CLOSE) or the PDC was freed
        tx_frame& f = out[n];
        if (f.room.size() < control_queue::frame_size) break;  // the queue's way, copied
        p.ack_due = false;
        const std::size_t len = build_ack(e, p, p.ack_trigger, due_context(p, e.core_.now),
                                          f.room.first(control_queue::frame_size));
        if (len == 0) continue;  // not built (counted where it failed)
        f.payload = {};
        f.payload_region = no_payload_region;
        f.data = f.room.first(len);
        ++n;
    }
    // The rest (no room left in out, or a room too small) as flush() does.
    acks_due_.erase(acks_due_.begin(), acks_due_.begin() + static_cast<std::ptrdiff_t>(k));
    flush(e);
}

void ack_coalescer::send_ack(engine_impl& e, pds::pdc& p, psn_t trigger, const rx_context& rx) {
    p.ack_due = false;
    const auto slot = e.control_.slot();
    if (slot.empty()) return e.core_.count_drop(drop_reason::control_queue_full);
    e.control_.commit(build_ack(e, p, trigger, rx, slot));
}

std::size_t ack_coalescer::build_ack(engine_impl& e, pds::pdc& p, psn_t trigger,
                                     const rx_context& rx, std::span<std::uint8_t> slot) {
    const psn_t cack = p.rx.cack();
    const sack_block sack = p.rx.sack(p.rx.highest());
    wire::pds_ack_cc a;
    a.m = p.ce_since_ack || rx.ce;
    a.cack_psn = cack;
    a.ack_psn_offset = clamp_offset(psn_distance(cack, trigger));
    a.spdcid = p.local_id;
    a.dpdcid = p.remote_id;
    a.cc_type = wire::cc_type::nscc;
    if (p.credit_mode) {
        a.cc_type = wire::cc_type::credit;
        a.credit.credit = p.credit_rx.credit_field();
    }
    a.sack_psn_offset = clamp_offset(psn_distance(cack, sack.base));
    a.sack_bitmap = sack.bitmap;
    wire::uet_packet_spec spec;
    if (e.core_.cfg.answers_in_acks) {
        e.answers_.announce(p);
        spec.ses = e.answers_.ack_header(p);
        a.next_hdr = wire::next_hdr_for(*spec.ses);
    }
    spec.pds = a;
    const std::size_t len =
        e.frames_.build_frame(e.peers_.at(p.peer), rx.entropy, false, spec, slot);
    p.ce_since_ack = false;
    p.acks.on_ack_sent();
    e.core_.timers.cancel(p.ack_timer);
    ++p.counters.acks_sent;
    e.core_.count_tx(&p, len, false);
    return len;
}

bool ack_coalescer::emit(engine_impl& e, std::uint32_t peer, std::uint16_t entropy,
                         const wire::uet_packet_spec& spec, pds::pdc* p) {
    const auto slot = e.control_.slot();
    if (slot.empty()) {
        e.core_.count_drop(drop_reason::control_queue_full);
        return false;
    }
    const std::size_t len = e.frames_.build_frame(e.peers_.at(peer), entropy, false, spec, slot);
    e.control_.commit(len);
    e.core_.count_tx(p, len, false);
    return true;
}

void ack_coalescer::queue_nack(engine_impl& e, const rx_context& rx, wire::nack_code code,
                               std::uint32_t psn, std::uint16_t spdcid, std::uint16_t dpdcid,
                               bool rudi, pds::pdc* p, bool retx) {
    wire::pds_nack n;
    n.code = code;
    n.nt = rudi;
    n.retx = retx;  // echoes the NACKed packet's: which transmission it was
    n.nack_psn = psn;
    n.spdcid = spdcid;
    n.dpdcid = dpdcid;
    n.m = rx.ce;
    wire::uet_packet_spec spec;
    spec.pds = n;
    if (!emit(e, rx.peer, rx.entropy, spec, p)) return;
    auto& c = p ? p->counters : e.core_.connectionless;
    ++c.nacks_sent[static_cast<std::size_t>(pds::slot_of(code))];
}

void ack_coalescer::send_credit(engine_impl& e, pds::pdc& p, std::uint32_t credit_field) {
    // Grants ride on the target's control entropy (0xc000 | pdc id), not the sender's spray.
    send_ctrl(e, p, wire::ctrl_type::credit, p.rx.cack(), credit_field & cc::credit::field_mask,
              static_cast<std::uint16_t>(0xc000 | p.local_id));
}

bool ack_coalescer::send_ctrl(engine_impl& e, pds::pdc& p, wire::ctrl_type type, std::uint32_t psn,
                              std::uint32_t payload, std::uint16_t entropy) {
    wire::pds_ctrl c;
    c.ctrl_type = type;
    c.is_rod = p.ordered;
    c.psn = psn;
    c.spdcid = p.local_id;
    c.dpdcid = p.remote_id;
    c.payload = payload;
    wire::uet_packet_spec spec;
    spec.pds = c;
    return emit(e, p.peer, entropy, spec, &p);
}

void ack_coalescer::ack_stale_close(engine_impl& e, const rx_context& rx, const wire::pds_ctrl& c) {
    wire::pds_ack_cc a;
    a.cack_psn = c.psn;
    a.spdcid = c.dpdcid;
    a.dpdcid = c.spdcid;
    a.sack_psn_offset = 1;
    wire::uet_packet_spec spec;
    spec.pds = a;
    emit(e, rx.peer, rx.entropy, spec, nullptr);
}

void ack_coalescer::answer_rudi(engine_impl& e, const rx_context& rx, const wire::pds_rudi& h) {
    wire::pds_rudi resp;
    resp.type = wire::pds_type::rudi_resp;
    resp.m = rx.ce;
    resp.pkt_id = h.pkt_id;
    wire::uet_packet_spec spec;
    spec.pds = resp;
    if (emit(e, rx.peer, rx.entropy, spec, nullptr)) ++e.core_.connectionless.acks_sent;
}

void ack_coalescer::on_ack_timer(engine_impl& e, pds::pdc& p, std::uint64_t now) {
    if (p.state == pds::pdc_state::free || p.role != pds::pdc_role::target || !p.acks.pending())
        return;
    rx_context rx;
    rx.peer = p.peer;
    rx.entropy = static_cast<std::uint16_t>(0xc000 | p.local_id);
    rx.now = now;
    send_ack(e, p, p.rx.highest(), rx);
}

}  // namespace uet
