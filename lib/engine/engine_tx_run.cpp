// Transmit runs: the packets inside a message (neither its first nor its last) that may leave in
// one transmit() call are built as a run. Each is what send_new_from() and build_pdc_packet()
// would make of it, byte for byte and in the same state, but the work they share is done once:
// the PDC's state and queue, the message and its template, the RTO deadline, the controller's
// window (asked once: runs are never a credit PDC's, see cc::controller::on_send), the PSN
// span's limit and the counters. Per packet there remain the window check, its slot in the
// window, its entropy, its headers (from the frame template, or without a UDP checksum the run's
// first frame's with the changing fields written in), its payload and its timer. The first packet
// of a message, its last, retransmissions and anything unusual go packet by packet. A stream of
// one-packet messages (small sends) is built as a run too (send_single_packet_run): per message
// there remain taking it from the queue, the window check, its slot, its entropy and ACK request,
// its headers and payload, and its timer.
#include <algorithm>

#include "engine/engine_impl.hpp"
#include "engine/frame_builder_inline.hpp"

namespace uet {

std::uint32_t engine_impl::run_message(const pds::pdc& p) const {
    if (p.state != pds::pdc_state::established || p.credit_cc || p.tx.has_retransmit()) return none;
    const ses::message_queue& q = peers_[p.peer].queue[p.slot];
    if (q.empty()) return none;
    // The template is set by a message's first packet inside it (build_pdc_packet) and dropped
    // when the message or PDC is freed: it names this message only if its packets take it.
    const std::uint32_t mtu = msgs_.mtu();
    if (!frames_.template_names(p.index, q.head, mtu)) return none;
    const ses::tx_message& m = msgs_[q.head];
    // Inside: not the first packet, and a full packet follows this one's (not the last).
    if (m.next_offset == 0 || m.length - m.next_offset <= mtu) return none;
    return q.head;
}

std::size_t engine_impl::send_run(pds::pdc& p, std::span<tx_frame> out, std::size_t staged) {
    if (out.size() < 2) return 0;  // a run of one is the packet-by-packet path
    const std::uint32_t mi = run_message(p);
    if (mi == none) return 0;
    ses::tx_message& m = msgs_[mi];
    const std::uint32_t mtu = msgs_.mtu();
    const std::uint32_t limit = p.psn_limit(core_.params);
    // No ACK is handled within the run, so the RTO (back-off included) and the controller's
    // window stay what they are: one deadline (0 means none) and one arming of the RTO timer.
    const std::uint64_t deadline =
        std::max<std::uint64_t>(core_.now + p.current_rto(core_.params), 1);
    const std::uint64_t window = p.cc->window_bytes();
    // Without a UDP checksum to sum, the run's frames after its first are that one's with the
    // changing fields written in (copy_run_frame); where the first one's payload stayed in
    // registered memory (zero-copy transmit) and so does the rest of the message, one lookup
    // stands for the run's other payloads, left where they are too.
    const bool copy_frames = !core_.cfg.udp_checksum;
    std::uint32_t run_region = no_payload_region;
    const std::uint8_t* first = nullptr;
    std::uint32_t first_ip_sum = 0;
    std::size_t n = 0, sent = 0, bytes = 0;
    while (n < out.size() && m.length - m.next_offset > mtu) {
        if (!p.run_may_send(mtu, window, limit)) break;  // send_new_from says why
        tx_frame& f = out[n];
        const std::span<std::uint8_t> buf = frames_.data_frame_buffer(f, staged + n);
        const std::uint32_t offset = m.next_offset;
        m.next_offset += mtu;
        tx_entry& e =
            p.push_run_packet(mi, offset, mtu, p.lb.next_entropy(core_.now), core_.now, deadline);
        // As send_new_from asks: the queue still holds this message, so only a full window
        // (packets, or the controller's bytes) makes the packet ask for an ACK at once.
        const bool ar = p.run_full_after(mtu, mtu, window, limit);
        const std::span<const std::uint8_t> payload{m.data + offset, mtu};
        std::size_t len;
        if (first != nullptr) {
            const bool by_reference = run_region != no_payload_region && frames_.by_reference();
            len = frames_.copy_run_frame(first, first_ip_sum, e.entropy, e.psn, ar, offset,
                                         by_reference ? std::span<const std::uint8_t>{} : payload,
                                         buf);
            if (by_reference) frames_.set_referenced(payload, run_region);
        } else {
            wire::pds_rud_rod_request h = frame_builder::request_pds_header(p, e, false, ar);
            h.next_hdr = wire::pds_next_hdr::request_std;
            len = frames_.build_next_request_frame(peers_.at(p.peer), e.entropy, h, offset, payload,
                                                   buf);
            if (copy_frames && len != 0) {
                first = buf.data();
                first_ip_sum = wire::ipv4_sum_rest(first);
                if (frames_.referenced_region() != no_payload_region)
                    run_region = core_.cfg.zero_copy->find(payload.data(), m.length - offset);
            }
        }
        p.inflight_bytes += mtu;
        ++sent;
        bytes += len;
        n += frames_.hand_out(f, buf, len);
    }
    if (sent != 0) p.arm_timer(deadline, core_.timers);
    return end_tx_run(p, std::uint64_t{sent} * mtu, sent, bytes, n);
}

// What a run of `sent` packets (`n` handed out, `bytes` on the wire, `payload_bytes` of the
// queue's) counts once, as send_new_from() counts each: returns n.
std::size_t engine_impl::end_tx_run(pds::pdc& p, std::uint64_t payload_bytes, std::size_t sent,
                                    std::size_t bytes, std::size_t n) {
    auto& queued = peers_[p.peer].queued_bytes[p.slot];
    queued -= std::min<std::uint64_t>(queued, payload_bytes);
    p.counters.tx_packets += sent;
    p.counters.tx_data_packets += sent;
    p.counters.tx_bytes += bytes;
    core_.counters.frames_tx += sent;
    core_.counters.bytes_tx += bytes;
    core_.counters.frames_sent_in_runs += n;
    return n;
}

std::size_t engine_impl::send_single_packet_run(pds::pdc& p, std::span<tx_frame> out,
                                                std::size_t staged) {
    if (out.size() < 2 || p.state != pds::pdc_state::established || p.credit_cc ||
        p.tx.has_retransmit())
        return 0;
    ses::message_queue& q = peers_[p.peer].queue[p.slot];
    const std::uint32_t mtu = msgs_.mtu();
    const std::uint32_t limit = p.psn_limit(core_.params);
    // No ACK is handled within the run, so the RTO (back-off included) and the controller's
    // window stay what they are, as in send_run.
    const std::uint64_t deadline =
        std::max<std::uint64_t>(core_.now + p.current_rto(core_.params), 1);
    const std::uint64_t window = p.cc->window_bytes();
    // As in send_run: the frames after the run's first built by build_pdc_packet are that one's
    // with the changing fields written in, where the messages agree on all the rest (their
    // length among it). A payload that may go by reference (zero-copy) is built frame by frame.
    const bool copy_frames = !core_.cfg.udp_checksum;
    const std::uint8_t* first = nullptr;
    std::uint32_t first_ip_sum = 0, first_message = none;
    std::size_t n = 0, sent = 0, bytes = 0;
    std::uint64_t payload_bytes = 0;
    while (n < out.size() && !q.empty()) {
        const std::uint32_t mi = q.head;
        ses::tx_message& m = msgs_[mi];
        // Anything else, and a full window, are send_new_from's to decide (and count).
        if (!single_packet_run_message(m) || !p.run_may_send(m.length, window, limit)) break;
        tx_frame& f = out[n];
        const ses::segment seg = msgs_.next_segment(m);
        m.owner = p.index;
        tx_entry& e =
            p.push_run_packet(mi, 0, seg.length, p.lb.next_entropy(core_.now), core_.now, deadline);
        q.pop(msgs_.pool());
        // As send_new_from asks for an ACK of a one-packet message (see there).
        const bool ends_burst = q.empty() && p.tx.outstanding() <= 1;
        const bool ar = ends_burst || p.run_full_after(seg.length, mtu, window, limit);
        std::size_t len;
        if (first != nullptr &&
            frame_builder::same_single_packet_headers(msgs_[first_message], m)) {
            // Its payload is copied (the first is built only where it may not go by reference).
            const std::span<std::uint8_t> buf = frames_.copied_frame_buffer(f, staged + n);
            len = frames_.copy_single_packet_run_frame(first, first_ip_sum, e.entropy, e.psn, ar, m,
                                                       buf);
            if (len != 0) {
                f.payload = {};
                f.payload_region = no_payload_region;
                f.data = buf.first(len);
                ++n;
            }
        } else {
            const std::span<std::uint8_t> buf = frames_.data_frame_buffer(f, staged + n);
            len = frames_.build_pdc_packet(peers_.at(p.peer), p, msgs_, e, false, ar, buf);
            if (copy_frames && len != 0 && !frames_.may_reference(m.length)) {
                first = buf.data();
                first_ip_sum = wire::ipv4_sum_rest(first);
                first_message = mi;
            }
            n += frames_.hand_out(f, buf, len);
        }
        p.inflight_bytes += seg.length;
        ++sent;
        bytes += len;
        payload_bytes += seg.length;
    }
    if (sent != 0) p.arm_timer(deadline, core_.timers);
    return end_tx_run(p, payload_bytes, sent, bytes, n);
}

}  // namespace uet
