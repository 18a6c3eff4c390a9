// Transmit batches: the packets of one PDC that may leave in one transmit() call are built in one
// batch (send_batch) when they are of one of two kinds: the packets inside a message (neither its
// first nor its last), or a stream of one-packet messages (small sends). Each is what
// send_new_from() and build_pdc_packet() would make of it, byte for byte and in the same state,
// but the work they share is done once: the PDC's state and queue, the RTO deadline, the
// controller's window (asked once: batches are never a credit PDC's, see
// cc::controller::on_send), the PSN span's limit, the arming of the RTO timer and the counters.
// Per packet there remain the window check, its slot in the window, its entropy, its headers
// (inside a message from the frame template; without a UDP checksum, the batch's first frame's
// with the changing fields written in), its payload and its timer; per one-packet message also
// taking it from the queue and its ACK request. The first packet of a message, its last,
// retransmissions and anything unusual go packet by packet.
#include "engine/tx_pipeline.hpp"

#include <algorithm>

#include "engine/engine_impl.hpp"
#include "engine/frame_builder_inline.hpp"

namespace uet {

inline bool tx_pipeline::single_packet_run_message(const engine_impl& eng,
                                                   const ses::tx_message& m) noexcept {
    return m.next_offset == 0 && m.length <= eng.msgs_.mtu() && !m.fields.response &&
           !ses::has_extensions(m.fields);
}

std::size_t tx_pipeline::send_batch(engine_impl& eng, pds::pdc& p, std::span<tx_frame> out,
                                    std::size_t staged) {
    // A batch of one is the packet-by-packet path.
    if (out.size() < 2 || p.state != pds::pdc_state::established || p.credit_cc ||
        p.tx.has_retransmit())
        return 0;
    ses::message_queue& q = eng.peers_[p.peer].queue[p.slot];
    if (q.empty()) return 0;
    // The batch's kind, from the message at the head of the queue. Inside it: the template
    // names it (the template is set by a message's first packet inside it, build_pdc_packet,
    // and dropped when the message or PDC is freed), this is not its first packet and a full
    // packet follows this one's (not the last). Else one-packet messages, or no batch.
    const std::uint32_t mtu = eng.msgs_.mtu();
    const std::uint32_t mi = q.head;
    ses::tx_message& m = eng.msgs_[mi];
    const bool inside = eng.frames_.template_names(p.index, mi, mtu) && m.next_offset != 0 &&
                        m.length - m.next_offset > mtu;
    if (!inside && !single_packet_run_message(eng, m)) return 0;
    const std::uint32_t limit = p.psn_limit(eng.core_.params);
    // No ACK is handled within the batch, so the RTO (back-off included) and the controller's
    // window stay what they are: one deadline (0 means none) and one arming of the RTO timer.
    const std::uint64_t deadline =
        std::max<std::uint64_t>(eng.core_.now + p.current_rto(eng.core_.params), 1);
    const std::uint64_t window = p.cc->window_bytes();
    // Without a UDP checksum to sum, the batch's frames after its first are that one's with the
    // changing fields written in (copy_run_frame, copy_single_packet_run_frame).
    const bool copy_frames = !eng.core_.cfg.udp_checksum;
    const std::uint8_t* first = nullptr;
    std::uint32_t first_ip_sum = 0;
    std::size_t n = 0, sent = 0, bytes = 0;
    std::uint64_t payload_bytes = 0;
    if (inside) {
        // Where the first frame's payload stayed in registered memory (zero-copy transmit) and
        // so does the rest of the message, one lookup stands for the batch's other payloads,
        // left where they are too.
        std::uint32_t run_region = no_payload_region;
        while (n < out.size() && m.length - m.next_offset > mtu) {
            if (!p.run_may_send(mtu, window, limit)) break;  // send_new_from says why
            tx_frame& f = out[n];
            const std::span<std::uint8_t> buf = eng.frames_.data_frame_buffer(f, staged + n);
            const std::uint32_t offset = m.next_offset;
            m.next_offset += mtu;
            tx_entry& e = p.push_run_packet(mi, offset, mtu, p.lb.next_entropy(eng.core_.now),
                                            eng.core_.now, deadline);
            // As send_new_from asks: the queue still holds this message, so only a full window
            // (packets, or the controller's bytes) makes the packet ask for an ACK at once.
            const bool ar = p.run_full_after(mtu, mtu, window, limit);
            const std::span<const std::uint8_t> payload{m.data + offset, mtu};
            std::size_t len;
            if (first != nullptr) {
                const bool by_reference =
                    run_region != no_payload_region && eng.frames_.by_reference();
                len = eng.frames_.copy_run_frame(
                    first, first_ip_sum, e.entropy, e.psn, ar, offset,
                    by_reference ? std::span<const std::uint8_t>{} : payload, buf);
                if (by_reference) eng.frames_.set_referenced(payload, run_region);
            } else {
                wire::pds_rud_rod_request h = frame_builder::request_pds_header(p, e, false, ar);
                h.next_hdr = wire::pds_next_hdr::request_std;
                len = eng.frames_.build_next_request_frame(eng.peers_.at(p.peer), e.entropy, h,
                                                           offset, payload, buf);
                if (copy_frames && len != 0) {
                    first = buf.data();
                    first_ip_sum = wire::ipv4_sum_rest(first);
                    if (eng.frames_.referenced_region() != no_payload_region)
                        run_region =
                            eng.core_.cfg.zero_copy->find(payload.data(), m.length - offset);
                }
            }
            p.inflight_bytes += mtu;
            ++sent;
            bytes += len;
            n += eng.frames_.hand_out(f, buf, len);
        }
        payload_bytes = std::uint64_t{sent} * mtu;
    } else {
        // The frames after the first built by build_pdc_packet are that one's with the changing
        // fields written in, where the messages agree on all the rest (their length among it).
        // A payload that may go by reference (zero-copy) is built frame by frame.
        std::uint32_t first_message = none;
        while (n < out.size() && !q.empty()) {
            const std::uint32_t si = q.head;
            ses::tx_message& s = eng.msgs_[si];
            // Anything else, and a full window, are send_new_from's to decide (and count).
            if (!single_packet_run_message(eng, s) || !p.run_may_send(s.length, window, limit))
                break;
            tx_frame& f = out[n];
            const ses::segment seg = eng.msgs_.next_segment(s);
            s.owner = p.index;
            tx_entry& e = p.push_run_packet(si, 0, seg.length, p.lb.next_entropy(eng.core_.now),
                                            eng.core_.now, deadline);
            q.pop(eng.msgs_.pool());
            // As send_new_from asks for an ACK of a one-packet message (see there).
            const bool ends_burst = q.empty() && p.tx.outstanding() <= 1;
            const bool ar = ends_burst || p.run_full_after(seg.length, mtu, window, limit);
            std::size_t len;
            if (first != nullptr &&
                frame_builder::same_single_packet_headers(eng.msgs_[first_message], s)) {
                // Its payload is copied (the first is built only where it may not go by
                // reference).
                const std::span<std::uint8_t> buf = eng.frames_.copied_frame_buffer(f, staged + n);
                len = eng.frames_.copy_single_packet_run_frame(first, first_ip_sum, e.entropy,
                                                               e.psn, ar, s, buf);
                if (len != 0) {
                    f.payload = {};
                    f.payload_region = no_payload_region;
                    f.data = buf.first(len);
                    ++n;
                }
            } else {
                const std::span<std::uint8_t> buf = eng.frames_.data_frame_buffer(f, staged + n);
                len = eng.frames_.build_pdc_packet(eng.peers_.at(p.peer), p, eng.msgs_, e, false,
                                                   ar, buf);
                if (copy_frames && len != 0 && !eng.frames_.may_reference(s.length)) {
                    first = buf.data();
                    first_ip_sum = wire::ipv4_sum_rest(first);
                    first_message = si;
                }
                n += eng.frames_.hand_out(f, buf, len);
            }
            p.inflight_bytes += seg.length;
            ++sent;
            bytes += len;
            payload_bytes += seg.length;
        }
    }
    if (sent != 0) p.arm_timer(deadline, eng.core_.timers);
    return end_tx_run(eng, p, payload_bytes, sent, bytes, n);
}

// What a batch of `sent` packets (`n` handed out, `bytes` on the wire, `payload_bytes` of the
// queue's) counts once, as send_new_from() counts each: returns n.
std::size_t tx_pipeline::end_tx_run(engine_impl& eng, pds::pdc& p, std::uint64_t payload_bytes,
                                    std::size_t sent, std::size_t bytes, std::size_t n) {
    auto& queued = eng.peers_[p.peer].queued_bytes[p.slot];
    queued -= std::min<std::uint64_t>(queued, payload_bytes);
    p.counters.tx_packets += sent;
    p.counters.tx_data_packets += sent;
    p.counters.tx_bytes += bytes;
    eng.core_.counters.frames_tx += sent;
    eng.core_.counters.bytes_tx += bytes;
    eng.core_.counters.frames_sent_in_runs += n;
    return n;
}

}  // namespace uet
