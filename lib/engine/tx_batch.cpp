// New data of one PDC, in batches (send_new, send_batch): the packets that may leave in one
// transmit() call, up to the rooms given (one when the PDCs take turns), with the work they share
// done once: the PDC's state and queue, the RTO deadline, the PSN span's limit and the counters;
// but for a credit PDC or a SYN (the Credit instantiation, whose controller is asked and told of
// each packet), the controller's window and the arming of the RTO timer too (see
// cc::controller::on_send). Per packet there remain the window check, its slot in the window, its
// entropy and ACK request, its headers, its payload and its timer. Two kinds of packets are
// built from the one before them: the packets inside a message (neither its first nor its last)
// from the frame template, and a stream of one-packet messages (small sends); without a UDP
// checksum, from the run's first frame with the changing fields written in. Any other packet is
// built by build_pdc_packet. Each is byte for byte what building it alone makes of it.
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

// Hot: the sender's bulk path, which GCC's guessed profile would take for cold enough to build
// the batches' header copies for size (a byte loop).
[[gnu::hot]] std::size_t tx_pipeline::send_new(engine_impl& eng, pds::pdc& p,
                                               std::span<tx_frame> out, std::size_t staged) {
    if (p.state == pds::pdc_state::closing) {
        if (!p.tx.empty()) return 0;
        // One round trip: CLOSE at the next PSN; its ACK (cumulative over it) ends the PDC.
        tx_entry& e = p.tx.push(tx_kind::close);
        e.entropy = p.lb.next_entropy(eng.core_.now);
        const std::span<std::uint8_t> buf = eng.frames_.data_frame_buffer(out[0], staged);
        const std::size_t len =
            eng.frames_.build_pdc_packet(eng.peers_.at(p.peer), p, eng.msgs_, e, false, true, buf);
        p.on_sent(e, eng.core_.now, eng.core_.timers, eng.core_.params);
        eng.core_.count_tx(&p, len, false);
        return eng.frames_.hand_out(out[0], buf, len);
    }
    eng.tx_.tx_stop_ = tx_stop::other;
    if (p.state != pds::pdc_state::syn_sent && p.state != pds::pdc_state::established) return 0;
    // Lost packets go first; new data waits while the controller holds them back.
    if (p.tx.peek_retransmit()) return 0;
    ses::message_queue& q = eng.peers_[p.peer].queue[p.slot];
    if (q.empty()) {
        eng.tx_.tx_stop_ = tx_stop::nothing_queued;
        return 0;
    }
    if (!p.credit_cc && p.state == pds::pdc_state::established) [[likely]]
        return send_batch<false>(eng, p, q, out, staged);
    return send_batch<true>(eng, p, q, out, staged);
}

template <bool Credit>
std::size_t tx_pipeline::send_batch(engine_impl& eng, pds::pdc& p, ses::message_queue& q,
                                    std::span<tx_frame> out, std::size_t staged) {
    const std::uint32_t mtu = eng.msgs_.mtu();
    const std::uint64_t now = eng.core_.now;
    const std::uint32_t limit = p.psn_limit(eng.core_.params);
    // No ACK is handled within the batch, so the RTO (back-off included) and the controller's
    // window stay what they are: one deadline (0 means none) and, but for a credit PDC (whose
    // controller hears of each packet), one window and one arming of the RTO timer.
    const std::uint64_t deadline =
        std::max<std::uint64_t>(now + p.current_rto(eng.core_.params), 1);
    std::uint64_t window = 0;
    if constexpr (!Credit) window = p.cc->window_bytes();
    // Without a UDP checksum to sum, the frames after the first of a run are that one's with
    // the changing fields written in (copy_run_frame, copy_single_packet_run_frame).
    const bool copy_frames = !eng.core_.cfg.udp_checksum;
    std::size_t n = 0, sent = 0, bytes = 0;
    std::uint64_t payload_bytes = 0;
    bool held = false;  // the window (packets, or the controller's) holds the next packet back
    while (n < out.size() && !q.empty()) {
        const std::uint32_t mi = q.head;
        ses::tx_message& m = eng.msgs_[mi];
        // The packets inside the message at the head of the queue: the template names it (the
        // template is set by a message's first packet inside it, build_pdc_packet, and dropped
        // when the message or PDC is freed), this is not its first packet and a full packet
        // follows this one's (not the last).
        if (!Credit && eng.frames_.template_names(p.index, mi, mtu) && m.next_offset != 0 &&
            m.length - m.next_offset > mtu) {
            // Where the first frame's payload stayed in registered memory (zero-copy transmit)
            // and so does the rest of the message, one lookup stands for the batch's other
            // payloads, left where they are too.
            const std::uint8_t* first = nullptr;
            std::uint32_t first_ip_sum = 0, run_region = no_payload_region, run = 0;
            while (n < out.size() && m.length - m.next_offset > mtu) {
                if (!p.run_may_send(mtu, window, limit)) {
                    held = true;
                    break;
                }
                tx_frame& f = out[n];
                const std::span<std::uint8_t> buf = eng.frames_.data_frame_buffer(f, staged + n);
                const std::uint32_t offset = m.next_offset;
                m.next_offset += mtu;
                tx_entry& e =
                    p.push_run_packet(mi, offset, mtu, p.lb.next_entropy(now), now, deadline);
                // The queue still holds this message, so only a full window (packets, or the
                // controller's bytes) makes the packet ask for an ACK at once.
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
                    wire::pds_rud_rod_request h =
                        frame_builder::request_pds_header(p, e, false, ar);
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
                ++run;
                bytes += len;
                n += eng.frames_.hand_out(f, buf, len);
            }
            sent += run;
            payload_bytes += std::uint64_t{run} * mtu;
        } else if (!Credit && single_packet_run_message(eng, m)) {
            // A stream of one-packet messages: the frames after the first built by
            // build_pdc_packet are that one's with the changing fields written in, where the
            // messages agree on all the rest (their length among it). A payload that may go by
            // reference (zero-copy) is built frame by frame.
            const std::uint8_t* first = nullptr;
            std::uint32_t first_ip_sum = 0, first_message = none;
            while (n < out.size() && !q.empty()) {
                const std::uint32_t si = q.head;
                ses::tx_message& s = eng.msgs_[si];
                if (!single_packet_run_message(eng, s)) break;
                if (!p.run_may_send(s.length, window, limit)) {
                    held = true;
                    break;
                }
                tx_frame& f = out[n];
                const ses::segment seg = eng.msgs_.next_segment(s);
                s.owner = p.index;
                tx_entry& e =
                    p.push_run_packet(si, 0, seg.length, p.lb.next_entropy(now), now, deadline);
                q.pop(eng.msgs_.pool());
                // As a packet of any message asks (below), for one in one packet.
                const bool ends_burst = q.empty() && p.tx.outstanding() <= 1;
                const bool ar = ends_burst || p.run_full_after(seg.length, mtu, window, limit);
                std::size_t len;
                if (first != nullptr &&
                    frame_builder::same_single_packet_headers(eng.msgs_[first_message], s)) {
                    // Its payload is copied (the first is built only where it may not go by
                    // reference).
                    const std::span<std::uint8_t> buf =
                        eng.frames_.copied_frame_buffer(f, staged + n);
                    len = eng.frames_.copy_single_packet_run_frame(first, first_ip_sum, e.entropy,
                                                                   e.psn, ar, s, buf);
                    if (len != 0) {
                        f.payload = {};
                        f.payload_region = no_payload_region;
                        f.data = buf.first(len);
                        ++n;
                    }
                } else {
                    const std::span<std::uint8_t> buf =
                        eng.frames_.data_frame_buffer(f, staged + n);
                    len = eng.frames_.build_pdc_packet(eng.peers_.at(p.peer), p, eng.msgs_, e,
                                                       false, ar, buf);
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
        } else {
            // Any other packet (a message's first or last, a response, extensions; a credit PDC's
            // or a SYN's), built by build_pdc_packet.
            const std::uint32_t next_len = std::min(mtu, m.length - m.next_offset);
            if (Credit ? !p.can_send_new(next_len, eng.core_.params)
                       : !p.run_may_send(next_len, window, limit)) {
                held = true;
                break;
            }
            const ses::segment seg = eng.msgs_.next_segment(m);
            m.owner = p.index;
            tx_frame& f = out[n];
            tx_entry* e;
            if constexpr (Credit) {
                e = &p.tx.push(tx_kind::data);
                e->message = mi;
                e->offset = seg.offset;
                e->length = seg.length;
                e->entropy = p.lb.next_entropy(now);
            } else {
                e = &p.push_run_packet(mi, seg.offset, seg.length, p.lb.next_entropy(now), now,
                                       deadline);
            }
            if (eng.msgs_.fully_segmented(m)) q.pop(eng.msgs_.pool());
            // Ask for an ACK at once when nothing follows for now and this packet ends a message of
            // several packets or is the only one in flight, or when the window is full: the
            // receiver would otherwise wait for 16 KiB that may never come. A stream of
            // single-packet messages that each empty the queue does not ask: its ACKs come every
            // ack_every_packets or after the receiver's ack_delay_ns, not one per message.
            const bool ends_burst = q.empty() && (!seg.som || p.tx.outstanding() <= 1);
            const bool ar =
                ends_burst ||
                (Credit ? p.tx.outstanding() >= limit || p.cc_full_after(seg.length, mtu)
                        : p.run_full_after(seg.length, mtu, window, limit));
            const std::span<std::uint8_t> buf = eng.frames_.data_frame_buffer(f, staged + n);
            const std::size_t len = eng.frames_.build_pdc_packet(eng.peers_.at(p.peer), p,
                                                                 eng.msgs_, *e, false, ar, buf);
            if constexpr (Credit)
                p.on_sent_until(*e, now, deadline, eng.core_.timers);
            else
                p.inflight_bytes += seg.length;
            ++sent;
            bytes += len;
            payload_bytes += seg.length;
            n += eng.frames_.hand_out(f, buf, len);
        }
        if (held) break;
    }
    if (!Credit && sent != 0) p.arm_timer(deadline, eng.core_.timers);
    // The counts of the batch's packets, as one packet would count them.
    auto& queued = eng.peers_[p.peer].queued_bytes[p.slot];
    queued -= std::min<std::uint64_t>(queued, payload_bytes);
    p.counters.tx_packets += sent;
    p.counters.tx_data_packets += sent;
    p.counters.tx_bytes += bytes;
    eng.core_.counters.frames_tx += sent;
    eng.core_.counters.bytes_tx += bytes;
    if (n >= 2) eng.core_.counters.frames_sent_in_runs += n;
    // Why the batch ended short of its rooms, as a send that finds nothing says it; a credit
    // sender asks for credit (with the queue's bytes counted down).
    if (held) {
        eng.tx_.tx_stop_ = tx_stop::window;
        if constexpr (Credit) maybe_request_credit(eng, p);
    } else if (n < out.size()) {
        eng.tx_.tx_stop_ = tx_stop::nothing_queued;
    }
    return n;
}

}  // namespace uet
