// The read stage of the receive pipeline: a burst's frames read as runs where header prediction
// finds them (rx_take.cpp takes them), else one by one: the common data packet in one pass, any
// other parsed and checked in full (remote input is hostile: bounds-checked by the wire
// decoders, counted and dropped here, never asserted), then handed to the role it is for.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <variant>

#include "engine/engine_impl.hpp"

namespace uet {

namespace {

bool is_request_type(std::uint8_t type) {
    using wire::pds_type;
    const auto t = static_cast<pds_type>(type);
    return t == pds_type::rud || t == pds_type::rod || t == pds_type::rud_cc ||
           t == pds_type::rod_cc || t == pds_type::rudi_req || t == pds_type::uud;
}

}  // namespace

void rx_pipeline::receive_burst(engine_impl& e,
                                std::span<const std::span<const std::uint8_t>> frames,
                                const wire::frame_rest* rests, std::uint64_t now) {
    e.core_.tick(now);
    for (std::size_t i = 0; i < frames.size();) {
        const std::size_t taken = receive_run(e, frames.subspan(i), rests ? rests + i : nullptr);
        if (taken != 0) {
            i += taken;
            continue;
        }
        // Outside a run a frame is read whole: one in two pieces is joined first.
        receive_one(e, rests ? rests[i].join(frames[i], joined_) : frames[i]);
        ++i;
    }
}

// The run at the front of frames: how many frames it took (0: the first is no part of one).
std::size_t rx_pipeline::receive_run(engine_impl& e,
                                     std::span<const std::span<const std::uint8_t>> frames,
                                     const wire::frame_rest* rests) {
    const rx_batch b = read_batch(e, frames, rests);
    const std::size_t n = b.n;
    if (n == 0) return 0;
    const std::size_t frame_bytes = frames[0].size();  // prediction: all of one length
    e.core_.counters.frames_rx += n;
    e.core_.counters.bytes_rx += n * frame_bytes;
    e.core_.counters.frames_predicted += n;
    const wire::plain_request& f = rx_template_.reading;  // addresses: the same in every packet
    rx_context rx;
    rx.peer = e.peers_.source(f.src_mac, f.src_ip, pid_of_spdcid(e.core_, f.pds.spdcid));
    rx.frame_bytes = frame_bytes;
    rx.now = e.core_.now;
    // A source not yet in the table: each packet decides alone whether it may add it.
    if (rx.peer != transient_peer && e.core_.cfg.rx_batches && take_batch(e, rx, b))
        e.core_.counters.frames_in_runs += n;
    else
        receive_run_one_by_one(e, rx, b);
    return n;
}

// The predicted packets of a batch of kind K into run_, while each follows the one before it:
// how many. The first packet is taken before the loop, which then only compares.
template <rx_pipeline::batch_kind K>
std::size_t rx_pipeline::check_batch(const engine_core& core, std::size_t predicted) {
    if (predicted == 0) return 0;
    wire::plain_request& f = rx_template_.reading;
    const auto bytes = static_cast<std::uint32_t>(f.payload.size());
    const bool ce = f.ecn == static_cast<std::uint8_t>(wire::ecn_codepoint::ce);
    // What each packet has of its own but its segment.
    const auto read = [&](std::size_t i) {
        const wire::next_request_fields& x = batch_fields_[i];
        run_packet& r = run_[i];
        r.pds = f.pds;
        wire::load_request_changes(x.pds_at, r.pds);
        r.bytes = bytes;
        r.entropy = x.src_port;
        r.ip_id = x.ip_id;
        r.ce = ce;
        run_payloads_[i] = x.payload;
    };
    if constexpr (K == batch_kind::single_packet) {
        run_[0].seg = single_packet_segment_.seg;
    } else {
        // The SES header differs from the one checked before only in its message_offset: the
        // first packet's segment is checked as read_one_plain() checks it, each next one only
        // where it lies (it must follow the one before).
        f.ses.message_offset = batch_fields_[0].message_offset;
        if (!ses::check_next_plain_request(f.ses, bytes, core.cfg.mtu_payload,
                                           core.cfg.max_message_size, rx_segment_))
            return 0;
        run_[0].seg = rx_segment_.seg;
    }
    read(0);
    std::size_t n = 1;
    for (; n < predicted; ++n) {
        run_packet& r = run_[n];
        if constexpr (K == batch_kind::single_packet) {
            r.seg = single_packet_segment_.seg;
        } else if (!ses::check_following_segment(run_[n - 1].seg, batch_fields_[n].message_offset,
                                                 f.ses.request_length, r.seg)) {
            break;
        }
        read(n);
        if (r.pds.psn != run_[n - 1].pds.psn + 1) break;
    }
    return n;
}

// Reads the predicted data packets at the front of frames into run_ while each follows the one
// before it (the next PSN). Of the template's kind: the next packets of its message (the template's
// segment checked: each next offset is checked where it lies, after the one before), or one-packet
// messages (each a new message). Every frame predicted from a one-packet template has the
// template's SES header but for the message's own fields (id, buffer_offset, memory_key, header
// data), none of which check_plain_request looks at: its verdict on the template's reading, made
// once, is each frame's, and each frame's segment is that one with its own fields put in
// (batch_segment()). What the batch cannot take ends it; receive_one() then reads that frame
// whole.
rx_pipeline::rx_batch rx_pipeline::read_batch(engine_impl& e,
                                              std::span<const std::span<const std::uint8_t>> frames,
                                              const wire::frame_rest* rests) {
    const batch_kind kind =
        rx_segment_of_template_ ? batch_kind::message : batch_kind::single_packet;
    const rx_batch none{kind, 0};
    // Nothing to compare with, or a frame not as long as the one compared with: no prediction.
    if (rx_template_.frame_size == 0 || frames[0].size() != rx_template_.frame_size) return none;
    if (rx_template_.single_packet_messages != (kind == batch_kind::single_packet)) return none;
    // Whether the packets are ours: fields that prediction finds the same in all of them.
    wire::plain_request& f = rx_template_.reading;
    if (!takes_plain(e.core_, f)) return none;
    ses::rx_segment& common = single_packet_segment_;
    if (kind == batch_kind::single_packet) {
        common = {};
        if (!ses::check_plain_request(f.ses, f.payload.size(), e.core_.cfg.mtu_payload,
                                      e.core_.cfg.max_message_size, common))
            return none;
    }
    const std::size_t limit = std::min(frames.size(), max_run);
    const std::size_t predicted = wire::read_next_plain_requests(frames.first(limit), rx_template_,
                                                                 batch_fields_.data(), rests);
    // One loop per kind: the kind is the batch's, not a branch per packet.
    return {kind, kind == batch_kind::single_packet
                      ? check_batch<batch_kind::single_packet>(e.core_, predicted)
                      : check_batch<batch_kind::message>(e.core_, predicted)};
}

std::uint16_t rx_pipeline::source_pid(const engine_core& core,
                                      std::span<const std::uint8_t> l4) noexcept {
    constexpr std::size_t spdcid_at = 8;
    if (!core.cfg.fep_pids || l4.size() < spdcid_at + 2) return 0;
    using wire::pds_type;
    switch (static_cast<pds_type>(l4[0] >> 3)) {
        case pds_type::rudi_req:
        case pds_type::rudi_resp:
        case pds_type::uud:
        case pds_type::tss:
            return 0;
        default:
            return wire::pid_of_id(wire::load_be16(l4.data() + spdcid_at));
    }
}

std::uint16_t rx_pipeline::source_pid_of_request(const engine_core& core,
                                                 const wire::uet_packet& pkt) noexcept {
    if (!core.cfg.fep_pids || !pkt.ses) return 0;
    const bool connectionless =
        std::holds_alternative<wire::pds_uud>(pkt.pds) ||
        (std::holds_alternative<wire::pds_rudi>(pkt.pds) &&
         std::get<wire::pds_rudi>(pkt.pds).type == wire::pds_type::rudi_req);
    if (!connectionless) return 0;
    std::uint32_t initiator = wire::max_fep_pids;
    if (const auto* h = std::get_if<wire::ses_standard_request>(&*pkt.ses))
        initiator = h->initiator;
    else if (const auto* m = std::get_if<wire::ses_medium_request>(&*pkt.ses))
        initiator = m->initiator;
    return initiator < wire::max_fep_pids ? static_cast<std::uint16_t>(initiator) : 0;
}

bool rx_pipeline::names_our_pid(const engine_core& core, const wire::uet_packet& pkt) noexcept {
    if (!pkt.ses) return true;
    return std::visit(
        [&](const auto& h) {
            using H = std::decay_t<decltype(h)>;
            if constexpr (std::is_same_v<H, wire::ses_standard_request> ||
                          std::is_same_v<H, wire::ses_medium_request> ||
                          std::is_same_v<H, wire::ses_small_request>)
                return h.pid_on_fep == core.cfg.pid_on_fep;
            else
                return true;
        },
        *pkt.ses);
}

// A frame no run took: a data packet read whole (read_one_plain), any other parsed and checked
// in full.
void rx_pipeline::receive_one(engine_impl& e, std::span<const std::uint8_t> frame) {
    ++e.core_.counters.frames_rx;
    e.core_.counters.bytes_rx += frame.size();
    if (read_one_plain(e, frame)) return;
    wire::l2l4_view& v = rx_l2_;
    if (auto rc = wire::parse_l2l4(frame, v); rc != wire::reject_reason::none)
        return e.core_.count_reject(rc);
    if (v.l3 != wire::l2l4_view::l3_kind::ipv4 || !v.udp)
        return e.core_.count_drop(drop_reason::not_udp);
    if (v.ip.dst != e.core_.cfg.ip) return e.core_.count_drop(drop_reason::not_for_us);
    if (v.udp->dport != e.core_.cfg.udp_port) return e.core_.count_drop(drop_reason::wrong_port);
    rx_context rx;
    rx.peer = e.peers_.source(v.eth.src, v.ip.src, source_pid(e.core_, v.l4_payload));
    rx.entropy = v.udp->sport;
    rx.ip_id = v.ip.id;
    rx.ce = v.ip.ecn == static_cast<std::uint8_t>(wire::ecn_codepoint::ce);
    rx.frame_bytes = frame.size();
    rx.now = e.core_.now;
    // A trimmed request lost its payload (and with it maybe the SES header's consistency):
    // only its PDS header is read, to NACK it.
    if (v.ip.dscp == e.core_.cfg.trim_dscp && !v.l4_payload.empty() &&
        is_request_type(v.l4_payload[0] >> 3))
        return on_trimmed(e, rx, v.l4_payload);

    wire::uet_packet& pkt = rx_pkt_;
    if (auto rc = wire::decode_uet(v.l4_payload, false, pkt); rc != wire::reject_reason::none)
        return e.core_.count_reject(rc);
    if (pkt.tss) return e.core_.count_drop(drop_reason::unsupported_type);
    if (!names_our_pid(e.core_, pkt)) return e.core_.count_drop(drop_reason::wrong_pid);
    if (const std::uint16_t pid = source_pid_of_request(e.core_, pkt); pid != 0)
        rx.peer = e.peers_.source(v.eth.src, v.ip.src, pid);
    rx_control::dispatch(e, rx, pkt);
}

// The common data packet (wire::read_plain_request) read whole, to on_request as the general
// path below would hand it; false when it takes the general path instead, which then decides
// on the frame and counts any drop. It then stands for the packets after it (rx_template_, which
// read_batch predicts from).
bool rx_pipeline::read_one_plain(engine_impl& e, std::span<const std::uint8_t> frame) {
    wire::plain_request& f = rx_plain_;
    if (!wire::read_plain_request(frame, f)) return false;
    wire::remember_plain_request(frame, f, rx_template_);
    rx_segment_of_template_ = false;  // until this frame's segment is checked below
    if (!takes_plain(e.core_, f)) return false;
    ses::rx_segment& seg = rx_segment_;
    seg = {};
    if (!ses::check_plain_request(f.ses, f.payload.size(), e.core_.cfg.mtu_payload,
                                  e.core_.cfg.max_message_size, seg))
        return false;
    // The next packets of its message are checked against this segment (read_batch); one-packet
    // messages, each a new message, against the template's reading.
    rx_segment_of_template_ = rx_template_.frame_size != 0 && !rx_template_.single_packet_messages;
    rx_context rx;
    rx.peer = e.peers_.source(f.src_mac, f.src_ip, pid_of_spdcid(e.core_, f.pds.spdcid));
    rx.entropy = f.src_port;
    rx.ip_id = f.ip_id;
    rx.ce = f.ecn == static_cast<std::uint8_t>(wire::ecn_codepoint::ce);
    rx.frame_bytes = frame.size();
    rx.now = e.core_.now;
    on_request(e, rx, f.pds, rx_ses{nullptr, &seg, f.payload});
    return true;
}

}  // namespace uet
