#include "roce_engine/engine.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/rng.hpp"
#include "roce/psn24.hpp"
#include "roce/responder.hpp"
#include "wire/frame.hpp"
#include "wire/ipv4.hpp"
#include "wire/roce.hpp"

namespace uet::roce {

namespace {

using wire::roce_opcode;

// The largest frame: Ethernet + VLAN + IPv4 + UDP + BTH + AtomicETH (the largest extension) +
// ImmDt + a 4096-byte payload + ICRC, rounded up.
constexpr std::size_t max_frame = 4096 + 128;

enum class packet_side : std::uint8_t { request, response, cnp, other };

packet_side side_of(std::uint8_t opcode) noexcept {
    if (opcode <= static_cast<std::uint8_t>(roce_opcode::rc_rdma_read_request) ||
        opcode == static_cast<std::uint8_t>(roce_opcode::rc_compare_swap) ||
        opcode == static_cast<std::uint8_t>(roce_opcode::rc_fetch_add))
        return packet_side::request;
    if (opcode >= static_cast<std::uint8_t>(roce_opcode::rc_rdma_read_response_first) &&
        opcode <= static_cast<std::uint8_t>(roce_opcode::rc_atomic_acknowledge))
        return packet_side::response;
    if (opcode == static_cast<std::uint8_t>(roce_opcode::cnp)) return packet_side::cnp;
    return packet_side::other;
}

wire::roce_packet_spec spec_of(const qp& q, const req_packet& p) {
    wire::roce_packet_spec s;
    s.bth.opcode = static_cast<std::uint8_t>(p.opcode);
    s.bth.dest_qp = q.attr.dest_qpn;
    s.bth.ack_req = p.ack_req;
    s.bth.psn = to_wire(p.psn);
    if (p.has_reth) s.reth = p.reth;
    if (p.has_atomic) s.atomic_eth = p.atomic;
    if (p.has_imm) s.immdt = wire::immdt_header{p.imm};
    if (p.length != 0) s.payload = {p.payload, p.length};
    return s;
}

wire::roce_packet_spec spec_of(const qp& q, const resp_packet& p) {
    wire::roce_packet_spec s;
    s.bth.opcode = static_cast<std::uint8_t>(p.opcode);
    s.bth.dest_qp = q.attr.dest_qpn;
    s.bth.psn = to_wire(p.psn);
    if (p.has_aeth) s.aeth = wire::aeth_header{p.syndrome, p.msn & psn24_mask};
    if (p.has_atomic_ack) s.atomic_ack_eth = wire::atomic_ack_eth_header{p.original};
    if (p.length != 0) s.payload = {p.payload, p.length};
    return s;
}

// A CNP (BECN set, 16 reserved bytes) to the QP whose marked data arrived here.
struct cnp_out {};
constexpr std::array<std::uint8_t, 16> cnp_body{};

wire::roce_packet_spec spec_of(const qp& q, const cnp_out&) {
    wire::roce_packet_spec s;
    s.bth.opcode = static_cast<std::uint8_t>(roce_opcode::cnp);
    s.bth.dest_qp = q.attr.dest_qpn;
    s.bth.becn = true;
    s.payload = cnp_body;
    return s;
}

wire::roce_packet_spec spec_of(const qp& q, const ack_out& a) {
    wire::roce_packet_spec s;
    s.bth.opcode = static_cast<std::uint8_t>(roce_opcode::rc_acknowledge);
    s.bth.dest_qp = q.attr.dest_qpn;
    s.bth.psn = to_wire(a.psn);
    s.aeth = wire::aeth_header{a.syndrome, a.msn & psn24_mask};
    return s;
}

}  // namespace

engine::engine(const engine_config& config, delivery_target& target)
    : cfg_(config),
      target_(target),
      qps_(config.max_qps),
      cc_(config.max_qps),
      headers_(config.max_qps),
      cm_(std::max<std::size_t>(16, 2 * std::size_t{config.max_qps}), config.seed) {
    cfg_.tx_burst = std::max<std::size_t>(1, cfg_.tx_burst);
    if (cfg_.spray && cfg_.qp.mode != retransmit_mode::out_of_order)
        throw std::invalid_argument(
            "roce engine: spray needs the out-of-order retransmission mode (qp.mode)");
    rng random(cfg_.seed);
    // QP numbers from a random base, above the management QPs and clear of the 24-bit end; a
    // slot's later QPs take the numbers qpn_stride_ on (slot_of_qpn).
    if (cfg_.max_qps > 0x10000) throw std::invalid_argument("roce engine: max_qps above 65536");
    qpn_stride_ = std::bit_ceil(std::max<std::uint32_t>(cfg_.max_qps, 1));
    qpn_span_ = (0xff0000 - 0x100) / qpn_stride_ * qpn_stride_;
    qpn_offset_ =
        static_cast<std::uint32_t>(random.next_u64() % (0xff0000 - cfg_.max_qps)) % qpn_span_;
    generation_.assign(cfg_.max_qps, 0);
    spray_rng_ = rng(random.next_u64());
    staging_.resize(cfg_.tx_burst * max_frame);
    joined_.resize(max_frame);
}

engine::~engine() = default;

qpn_t engine::create_qp(std::uint64_t context) {
    for (std::uint32_t i = 0; i < qps_.size(); ++i) {
        if (qps_[i]) continue;
        qps_[i] = std::make_unique<qp>(qpn_of_slot(i), cfg_.qp);
        qps_[i]->context = context;
        in_use_ = std::max(in_use_, i + 1);
        headers_[i].built = false;
        if (cfg_.dcqcn) cc_[i] = std::make_unique<qp_cc>(cfg_.dcqcn_params);
        return qps_[i]->qpn;
    }
    return 0;
}

bool engine::destroy_qp(qpn_t qpn) {
    qp* q = find(qpn);
    if (q == nullptr) return false;
    const std::size_t slot = slot_of(*q);
    // A connected QP says goodbye (its entry keeps sending the DREQ); a half-made one is
    // forgotten, and the peer's attempt runs out of retries.
    if (cm_entry* e = cm_.by_qpn(qpn)) {
        if (e->state == cm_state::established) disconnect(qpn, now_);
        if (e->state == cm_state::dreq_sent)
            e->qpn = 0;
        else
            cm_.release(*e);
    }
    drop_responses(*q, target_);
    qps_[slot].reset();
    generation_[slot] = (generation_[slot] + 1) % (qpn_span_ / qpn_stride_);  // wraps round
    while (in_use_ != 0 && !qps_[in_use_ - 1])
        --in_use_;
    cc_[slot].reset();
    return true;
}

qp* engine::find(qpn_t qpn) noexcept {
    return const_cast<qp*>(std::as_const(*this).find(qpn));
}

const qp* engine::find(qpn_t qpn) const noexcept {
    const std::uint32_t slot = slot_of_qpn(qpn);
    const qp* q = slot < qps_.size() ? qps_[slot].get() : nullptr;
    return q != nullptr && q->qpn == qpn ? q : nullptr;
}

fsm_result engine::modify_qp(qpn_t qpn, const qp_attr& attr, std::uint32_t mask) {
    qp* q = find(qpn);
    if (q == nullptr) return {fsm_error::bad_transition, attr_state};
    return roce::modify_qp(*q, attr, mask, target_);
}

post_error engine::post_send(qpn_t qpn, const send_wr& wr) {
    qp* q = find(qpn);
    if (q == nullptr) return post_error::not_ready;
    return roce::post_send(*q, wr);
}

std::size_t engine::poll_completions(std::span<work_completion> out) {
    std::size_t n = 0;
    for (auto& q : live()) {
        if (!q || n == out.size()) continue;
        const std::size_t k = roce::poll_completions(*q, out.subspan(n));
        for (std::size_t i = n; i < n + k; ++i)
            out[i].qp_num = q->qpn;
        n += k;
    }
    return n;
}

void engine::receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                           const wire::frame_rest* rests, std::uint64_t now) {
    now_ = now;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        ++counters_.frames_rx;
        counters_.bytes_rx += frames[i].size();
        if (rests == nullptr || rests[i].at == nullptr)
            receive_one(frames[i], now);
        else if (rests[i].tail_at != nullptr)
            receive_split(frames[i], rests[i], now);
        else
            receive_one(rests[i].join(frames[i], joined_), now);
    }
}

bool engine::admit(std::span<const std::uint8_t> frame, wire::l2l4_view& v) {
    if (const wire::reject_reason r = wire::parse_l2l4(frame, v); r != wire::reject_reason::none) {
        ++counters_.rejects[static_cast<std::size_t>(r)];
        return false;
    }
    if (v.l3 != wire::l2l4_view::l3_kind::ipv4 || !v.udp || v.udp->dport != cfg_.udp_port) {
        count_drop(roce_drop::not_roce);
        return false;
    }
    if (v.ip.dst != cfg_.ip) {
        count_drop(roce_drop::not_for_us);
        return false;
    }
    return true;
}

void engine::receive_one(std::span<const std::uint8_t> frame, std::uint64_t now) {
    wire::l2l4_view v;
    if (!admit(frame, v)) return;
    wire::roce_packet p;
    if (const wire::reject_reason r = wire::decode_roce(v.l4_payload, v.ip_packet, p);
        r != wire::reject_reason::none) {
        ++counters_.rejects[static_cast<std::size_t>(r)];
        return;
    }
    dispatch(v, p, now);
}

void engine::receive_split(std::span<const std::uint8_t> frame, const wire::frame_rest& rest,
                           std::uint64_t now) {
    if (rest.from > rest.tail_from || rest.tail_from > frame.size()) {
        receive_one(rest.join(frame, joined_), now);  // pieces that do not add up: dropped
        return;
    }
    // The Ethernet, IP and UDP headers are parsed from the frame's span, whose first rest.from
    // bytes are the first piece (a peer that split inside them only misleads the parse: the
    // memory is the port's, and the ICRC is checked over what really arrived).
    wire::l2l4_view v;
    if (!admit(frame, v)) return;
    const std::size_t ip_off = static_cast<std::size_t>(v.ip_packet.data() - frame.data());
    const std::size_t udp_at = static_cast<std::size_t>(v.l4_payload.data() - v.ip_packet.data());
    wire::roce_packet p;
    const std::optional<wire::reject_reason> r =
        rest.from < ip_off
            ? std::nullopt
            : wire::decode_roce_split(v.ip_packet.first(rest.from - ip_off), udp_at,
                                      v.l4_payload.size(), {rest.at, rest.tail_from - rest.from},
                                      {rest.tail_at, frame.size() - rest.tail_from}, p);
    if (!r) {  // another split: read joined
        receive_one(rest.join(frame, joined_), now);
        return;
    }
    if (*r != wire::reject_reason::none) {
        ++counters_.rejects[static_cast<std::size_t>(*r)];
        return;
    }
    dispatch(v, p, now);
}

void engine::dispatch(const wire::l2l4_view& v, const wire::roce_packet& p, std::uint64_t now) {
    if (p.deth) [[unlikely]] {
        on_cm_datagram(v, p, now);
        return;
    }
    qp* q = find(p.bth.dest_qp);
    if (q == nullptr) {
        count_drop(roce_drop::wrong_qpn);
        return;
    }
    if (v.ip.src != q->attr.peer_ip) {
        count_drop(roce_drop::wrong_source);
        return;
    }
    qp_cc* cc = cc_[slot_of(*q)].get();
    const packet_side side = side_of(p.bth.opcode);
    // Notification point: marked data (a request, or a READ response) is answered with a CNP to
    // the QP that sent it.
    if (cc != nullptr && side != packet_side::cnp &&
        cc->np.on_packet(v.ip.ecn == static_cast<std::uint8_t>(wire::ecn_codepoint::ce), now))
        cc->cnp_due = true;
    switch (side) {
        case packet_side::request: {
            req_in in;
            in.opcode = static_cast<roce_opcode>(p.bth.opcode);
            in.psn = p.bth.psn;
            in.ack_req = p.bth.ack_req;
            in.reth = p.reth ? &*p.reth : nullptr;
            in.atomic = p.atomic_eth ? &*p.atomic_eth : nullptr;
            in.has_imm = p.immdt.has_value();
            in.imm = p.immdt ? p.immdt->imm : 0;
            in.payload = p.payload;
            if (q->attr.state == qp_state::rtr) [[unlikely]]
                if (cm_entry* e = cm_.by_qpn(q->qpn); e && e->state == cm_state::rep_sent)
                    establish(*e, *q);
            watch_error(*q, [&] { on_request(*q, in, now, target_); });
            return;
        }
        case packet_side::response: {
            resp_in in;
            in.opcode = static_cast<roce_opcode>(p.bth.opcode);
            in.psn = p.bth.psn;
            in.has_aeth = p.aeth.has_value();
            in.syndrome = p.aeth ? p.aeth->syndrome : 0;
            in.msn = p.aeth ? p.aeth->msn : 0;
            in.has_atomic_ack = p.atomic_ack_eth.has_value();
            in.original = p.atomic_ack_eth ? p.atomic_ack_eth->orig_remote_data : 0;
            in.payload = p.payload;
            watch_error(*q, [&] { on_response(*q, in, now); });
            return;
        }
        case packet_side::cnp:
            ++q->counters.cnps_received;
            ++counters_.cnps_received;
            if (cc != nullptr) cc->rp.on_cnp(now);
            return;
        case packet_side::other:
            q->counters.count_drop(roce_drop::unexpected_response);
            return;
    }
}

template <typename Step>
void engine::watch_error(qp& q, Step&& step) {
    const bool before = q.attr.state == qp_state::err;
    step();
    if (!before && q.attr.state == qp_state::err) [[unlikely]]
        target_.on_qp_event(q, qp_event::error, 0);
}

const engine::qp_headers& engine::headers_of(const qp& q) noexcept {
    qp_headers& h = headers_[slot_of(q)];
    if (!h.built || h.ip != q.attr.peer_ip || h.mac != q.attr.peer_mac) [[unlikely]] {
        const frame_path to{q.attr.peer_ip, q.attr.peer_mac, 0};
        h.built =
            h.data.build(frame_spec_to(to, true)) && h.control.build(frame_spec_to(to, false));
        h.ip = q.attr.peer_ip;
        h.mac = q.attr.peer_mac;
    }
    return h;
}

// A QP's frames: from its headers' template, the payload copied with the ICRC summed on the way
// (build_roce_frame_fast); the connection manager's few datagrams take build_roce_frame.
template <typename Spec>
std::size_t engine::emit(const qp& q, const Spec& packet, bool data, tx_frame& out,
                         std::size_t slot) {
    const wire::roce_packet_spec spec = spec_of(q, packet);
    const qp_headers& h = headers_of(q);
    if (data && by_reference(spec.payload, out) && h.built) {
        std::size_t tail = 0;
        const std::size_t len = wire::build_roce_headers_fast(
            h.data, ip_id_++, source_port_of(q, spec.bth.opcode), spec, out.room, out.tail, tail);
        if (emitted(len, out.room, out) == 0) return 0;
        out.payload = spec.payload;
        out.payload_region = reference_region_;
        out.tail_length = static_cast<std::uint8_t>(tail);
        counters_.bytes_tx += spec.payload.size() + tail;
        return len + spec.payload.size() + tail;
    }
    const std::span<std::uint8_t> room =
        room_for(wire::udp_header_template::size + wire::roce_udp_payload_size(spec), out, slot);
    return emitted(h.built ? wire::build_roce_frame_fast(data ? h.data : h.control, ip_id_++,
                                                         source_port_of(q, spec.bth.opcode),
                                                         cfg_.udp_checksum, spec, room)
                           : 0,
                   room, out);
}

// Whether a data packet's payload may leave by reference (engine_config::zero_copy): sets
// reference_region_ to the caller's region holding it.
bool engine::by_reference(std::span<const std::uint8_t> payload, const tx_frame& out) noexcept {
    if (cfg_.zero_copy == nullptr || cfg_.udp_checksum || payload.size() < cfg_.zero_copy_min ||
        out.room.empty())  // the headers go in the caller's room (build_roce_headers_fast checks)
        return false;
    reference_region_ = cfg_.zero_copy->find(payload.data(), payload.size());
    return reference_region_ != no_payload_region;
}

std::size_t engine::emitted(std::size_t len, std::span<std::uint8_t> room, tx_frame& out) noexcept {
    if (len == 0) {
        ++counters_.tx_dropped;
        return 0;
    }
    out.data = room.first(len);
    out.payload = {};
    out.payload_region = no_payload_region;
    ++counters_.frames_tx;
    counters_.bytes_tx += len;
    return len;
}

std::span<std::uint8_t> engine::room_for(std::size_t frame, tx_frame& out,
                                         std::size_t slot) noexcept {
    return out.room.size() >= frame
               ? out.room
               : std::span<std::uint8_t>(staging_).subspan(slot * max_frame, max_frame);
}

wire::frame_spec engine::frame_spec_to(const frame_path& to, bool data) const noexcept {
    wire::frame_spec f;
    f.src_mac = cfg_.mac;
    f.dst_mac = to.mac;
    f.src_ip = cfg_.ip;
    f.dst_ip = to.ip;
    f.dscp = data ? cfg_.dscp : cfg_.control_dscp;
    f.ecn =
        static_cast<std::uint8_t>(data ? wire::ecn_codepoint::ect0 : wire::ecn_codepoint::not_ect);
    f.src_port = to.udp_sport;
    f.dst_port = cfg_.udp_port;
    f.udp_checksum = cfg_.udp_checksum;
    return f;
}

std::uint16_t engine::source_port_of(const qp& q, std::uint8_t opcode) noexcept {
    const auto op = static_cast<roce_opcode>(opcode);
    const bool placed_anywhere =
        op == roce_opcode::rc_rdma_write_only || (op >= roce_opcode::rc_rdma_read_response_first &&
                                                  op <= roce_opcode::rc_rdma_read_response_only);
    if (cfg_.spray && placed_anywhere && q.out_of_order())
        return static_cast<std::uint16_t>(0xc000 | (spray_rng_.next_u64() & 0x3fff));
    return source_port(q.qpn, q.attr.udp_sport);
}

std::size_t engine::emit_frame(const frame_path& to, const wire::roce_packet_spec& spec, bool data,
                               tx_frame& out, std::size_t slot) {
    wire::frame_spec f = frame_spec_to(to, data);
    f.ip_id = ip_id_++;
    const std::span<std::uint8_t> room = room_for(max_frame, out, slot);
    return emitted(wire::build_roce_frame(f, spec, room), room, out);
}

bool engine::paced(qp_cc* cc, std::uint64_t now) const noexcept {
    return cc != nullptr && cc->rp.limited() && cc->rp.next_send_ns(now) > now;
}

bool engine::has_work(const qp& q) const noexcept {
    qp_cc* cc = cc_[slot_of(q)].get();
    if (q.rsp.ack_due || q.ooo.nak_head != q.ooo.nak_tail || (cc != nullptr && cc->cnp_due))
        return true;
    if (data_stopped_ || paced(cc, now_)) return false;  // next_deadline() gives the pace's time
    if (q.rsp.jobs_queued() != 0) return true;
    if (!requester_ready(q.attr.state) || q.req.rnr_until != 0) return false;
    // New data only while the window and the READ/atomic credits let it go: else the next event
    // is an acknowledgement or a timer, and the engine must not spin on work it cannot do.
    return q.req.resending() || q.ooo.resend_head != q.ooo.resend_tail || can_send_new(q);
}

std::size_t engine::transmit(std::uint64_t now, std::span<tx_frame> out) {
    now_ = now;
    for (auto& q : live()) {
        if (!q) continue;
        const std::uint64_t due = roce::next_deadline(*q);
        if (due != 0 && due <= now) watch_error(*q, [&] { on_timer(*q, now); });
    }
    cm_timers(now);
    const std::size_t limit = std::min(out.size(), cfg_.tx_burst);
    std::size_t n = 0;
    // The connection manager's datagrams first: a connection waits on them.
    for (; n < limit && cm_.queued(); cm_.pop()) {
        const cm_datagram& d = *cm_.front();
        wire::roce_packet_spec s;
        s.bth.opcode = static_cast<std::uint8_t>(roce_opcode::ud_send_only);
        s.bth.dest_qp = wire::gsi_qpn;
        s.bth.psn = cm_psn_++ & psn24_mask;
        s.deth = wire::deth_header{wire::gsi_qkey, wire::gsi_qpn};
        s.payload = d.mad;
        n += emit_frame({d.peer_ip, d.peer_mac, d.udp_sport}, s, false, out[n], n) != 0;
    }
    const std::uint32_t count = in_use_;
    // Round robin over the QPs that send: the next call starts after the last QP that sent
    // here, so QPs with work get turns in order whatever idle slots lie between them.
    std::uint32_t next_rr = count ? (rr_ + 1) % count : 0;
    for (std::uint32_t k = 0; k < count && n < limit; ++k) {
        qp* q = qps_[(rr_ + k) % count].get();
        if (!q) continue;
        const std::size_t before = n;
        // Per QP: a CNP and acknowledgements first, then, at the QP's DCQCN rate, READ
        // responses and atomic answers, then its own requests, until the burst is full.
        qp_cc* cc = cc_[slot_of(*q)].get();
        if (cc != nullptr && cc->cnp_due && emit(*q, cnp_out{}, false, out[n], n) != 0) {
            cc->cnp_due = false;
            ++counters_.cnps_sent;
            ++q->counters.cnps_sent;
            ++n;
        }
        while (n < limit) {
            ack_out a;
            if (take_ack(*q, a)) {
                n += emit(*q, a, false, out[n], n) != 0;
                continue;
            }
            if (data_stopped_) break;
            if (paced(cc, now)) {
                ++counters_.paced;
                break;
            }
            std::size_t len = 0;
            resp_packet r;
            req_packet p;
            req_stop stop;
            if (next_response(*q, r, target_))
                len = emit(*q, r, true, out[n], n);
            else if (next_request(*q, now, p, stop))
                len = emit(*q, p, true, out[n], n);
            else
                break;
            if (len == 0) continue;  // counted in tx_dropped; the protocol sends it again
            ++n;
            if (cc != nullptr) cc->rp.on_sent(static_cast<std::uint32_t>(len), now);
        }
        if (n > before) next_rr = (rr_ + k + 1) % count;
    }
    rr_ = next_rr;
    return n;
}

std::uint64_t engine::next_deadline() const {
    std::uint64_t earliest = std::numeric_limits<std::uint64_t>::max();
    if (cm_.queued()) return now_;
    if (const std::uint64_t due = cm_.next_deadline(); due != 0) earliest = due;
    for (const auto& q : live()) {
        if (!q) continue;
        if (has_work(*q)) return now_;
        const std::uint64_t due = roce::next_deadline(*q);
        if (due != 0) earliest = std::min(earliest, due);
        // A paced QP with data to send: when its rate lets the next packet go.
        qp_cc* cc = cc_[slot_of(*q)].get();
        if (paced(cc, now_) &&
            (q->rsp.jobs_queued() != 0 || q->sq.next_unsent() != nullptr || q->req.resending()))
            earliest = std::min(earliest, cc->rp.next_send_ns(now_));
    }
    return earliest;
}

}  // namespace uet::roce
