// Receive bursts: the data packets of one message that follow one another in a burst are taken
// as a run. Header prediction (receive_plain) already reads each against the one before it; here
// the work that is the same for all of them is done once: the peer and PDC lookups, the message's
// reassembly slot, the target region's check, the counters. Per packet there remain its reading,
// its copy, and its PSN in the window and the ACK policy. Anything that would not simply be
// accepted and placed (a duplicate, a message not yet opened, a full table...) leaves the run to
// the packet-by-packet path, which decides and counts as receive() would.
// A stream of one-packet messages (small sends) makes runs too: consecutive packets of one PDC,
// each a message of its own with its own segment and slot; shared are the peer and PDC lookups,
// the window's checks, the ACK policy's bookkeeping and the counters.
#include <algorithm>

#include "core/small_copy.hpp"
#include "engine/answer_tracker_inline.hpp"
#include "engine/engine_impl.hpp"

namespace uet {

void engine_impl::receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                                const wire::frame_rest* rests, std::uint64_t now) {
    core_.tick(now);
    for (std::size_t i = 0; i < frames.size();) {
        const std::size_t taken = receive_run(frames.subspan(i), rests ? rests + i : nullptr);
        if (taken != 0) {
            i += taken;
            continue;
        }
        // Outside a run a frame is read whole: one in two pieces is joined first.
        receive(rests ? rests[i].join(frames[i], joined_) : frames[i], core_.now);
        ++i;
    }
}

// The run at the front of frames: how many frames it took (0: the first is no part of one).
std::size_t engine_impl::receive_run(std::span<const std::span<const std::uint8_t>> frames,
                                     const wire::frame_rest* rests) {
    const std::size_t n = read_run(frames, rests);
    if (n == 0) return 0;
    const std::size_t frame_bytes = frames[0].size();  // prediction: all of one length
    core_.counters.frames_rx += n;
    core_.counters.bytes_rx += n * frame_bytes;
    core_.counters.frames_predicted += n;
    const wire::plain_request& f = rx_template_.reading;  // addresses: the same in every packet
    rx_context rx;
    rx.peer = peers_.source(f.src_mac, f.src_ip);
    rx.frame_bytes = frame_bytes;
    rx.now = core_.now;
    // A source not yet in the table: each packet decides alone whether it may add it.
    if (rx.peer != transient_peer &&
        (run_single_packet_ ? take_single_packet_run(rx, n) : take_run(rx, n)))
        core_.counters.frames_in_runs += n;
    else
        receive_run_one_by_one(rx, n);
    return n;
}

// Reads the predicted data packets at the front of frames into run_ while each follows the one
// before it (the next PSN, the next message offset). What receive_plain() would refuse ends the
// run; receive() then takes that frame as it would alone.
std::size_t engine_impl::read_run(std::span<const std::span<const std::uint8_t>> frames,
                                  const wire::frame_rest* rests) {
    run_single_packet_ = !rx_segment_of_template_;
    if (run_single_packet_) return read_single_packet_run(frames, rests);
    if (rx_template_.single_packet_messages) return 0;
    const std::size_t limit = std::min(frames.size(), max_run);
    std::array<wire::next_request_fields, max_run> next;
    const std::size_t predicted =
        wire::read_next_plain_requests(frames.first(limit), rx_template_, next.data(), rests);
    // Whether the packets are ours: fields that prediction found the same in all of them.
    wire::plain_request& f = rx_template_.reading;
    if (predicted == 0 || !takes_plain(f)) return 0;
    const auto bytes = static_cast<std::uint32_t>(f.payload.size());
    const bool ce = f.ecn == static_cast<std::uint8_t>(wire::ecn_codepoint::ce);
    std::size_t n = 0;
    for (; n < predicted; ++n) {
        const wire::next_request_fields& x = next[n];
        run_packet& r = run_[n];
        // The SES header differs from the one checked before only in its message_offset: the
        // first packet's segment is checked as receive_plain() checks it, each next one only
        // where it lies (it must follow the one before).
        if (n == 0) {
            f.ses.message_offset = x.message_offset;
            if (!ses::check_next_plain_request(f.ses, bytes, core_.cfg.mtu_payload,
                                               core_.cfg.max_message_size, rx_segment_))
                break;
            r.seg = rx_segment_.seg;
        } else if (!ses::check_following_segment(run_[n - 1].seg, x.message_offset,
                                                 f.ses.request_length, r.seg)) {
            break;
        }
        r.pds = f.pds;
        wire::load_request_changes(x.pds_at, r.pds);
        if (n != 0 && r.pds.psn != run_[n - 1].pds.psn + 1) break;
        r.bytes = bytes;
        r.entropy = x.src_port;
        r.ce = ce;
        run_payloads_[n] = x.payload;
    }
    return n;
}

// read_run() for a stream of one-packet messages: each packet is a new message. Every frame
// predicted from the template has the template's SES header but for the message's own fields
// (id, buffer_offset, memory_key, header data), none of which check_plain_request looks at: its
// verdict on the template's reading, made once, is each frame's, and each frame's segment is that
// one with its own fields put in (single_packet_run_segment()).
std::size_t engine_impl::read_single_packet_run(
    std::span<const std::span<const std::uint8_t>> frames, const wire::frame_rest* rests) {
    const wire::plain_request& f = rx_template_.reading;
    if (rx_template_.frame_size == 0 || !rx_template_.single_packet_messages || !takes_plain(f))
        return 0;
    ses::rx_segment& common = single_packet_run_segment_;
    common = {};
    if (!ses::check_plain_request(f.ses, f.payload.size(), core_.cfg.mtu_payload,
                                  core_.cfg.max_message_size, common))
        return 0;
    const std::size_t limit = std::min(frames.size(), max_run);
    const std::size_t predicted = wire::read_next_plain_requests(
        frames.first(limit), rx_template_, single_packet_run_fields_.data(), rests);
    const auto bytes = static_cast<std::uint32_t>(f.payload.size());
    const bool ce = f.ecn == static_cast<std::uint8_t>(wire::ecn_codepoint::ce);
    std::size_t n = 0;
    for (; n < predicted; ++n) {
        const wire::next_request_fields& x = single_packet_run_fields_[n];
        run_packet& r = run_[n];
        r.pds = f.pds;
        wire::load_request_changes(x.pds_at, r.pds);
        if (n != 0 && r.pds.psn != run_[n - 1].pds.psn + 1) break;
        r.seg = common.seg;
        r.bytes = bytes;
        r.entropy = x.src_port;
        r.ce = ce;
        run_payloads_[n] = x.payload;
    }
    return n;
}

// Packet i's checked segment in a run of one-packet messages: the run's, with the message's own
// fields. Valid until the next call.
const ses::rx_segment& engine_impl::single_packet_run_segment(std::size_t i) noexcept {
    const wire::next_request_fields& x = single_packet_run_fields_[i];
    ses::rx_segment& s = single_packet_run_segment_;
    s.message_id = x.message_id;
    s.fields.buffer_offset = x.buffer_offset;
    s.fields.memory_key = x.memory_key;
    s.fields.header_data = x.header_data;  // a one-packet message is its first packet
    return s;
}

// The open target PDC whose window takes every packet of the run as new, for ROD the first being
// the expected one: then each is accepted in turn as it would be alone (accepting one never
// makes another a duplicate or puts it beyond the window). nullptr otherwise.
pds::pdc* engine_impl::run_target(const rx_context& rx, std::size_t n) {
    const wire::pds_rud_rod_request& h = run_[0].pds;
    pds::pdc* p = established_target(rx, h);
    const bool rod = h.type == wire::pds_type::rod;
    if (!p || p->ordered != rod || (rod && h.psn != p->rx.expected())) return nullptr;
    // The run's PSNs follow one another (read_run, read_single_packet_run).
    return p->rx.all_fresh(h.psn, static_cast<std::uint32_t>(n)) ? p : nullptr;
}

// The run accepted and placed as a whole; false, with nothing changed, when any packet of it
// would not simply be accepted and placed.
bool engine_impl::take_run(const rx_context& rx, std::size_t n) {
    pds::pdc* p = answers_.owed_room() ? run_target(rx, n) : nullptr;
    if (!p) return false;
    const ses::rx_segment& seg = rx_segment_;  // all but the offsets: the same in every packet
    const delivery_mode mode = p->ordered ? delivery_mode::rod : delivery_mode::rud;
    const ses::message_key key = message_key_of(rx, mode, seg);
    const bool external = placed_externally(seg);
    ses::place_result result = ses::place_result::placed;
    std::uint32_t slot = ses::no_index;
    if (!reassembly_.place_run(key, seg.total, run_[0].seg.offset, run_[0].seg.length,
                               std::span(run_payloads_.data(), n), seg.fields, external, rx.now,
                               result, slot))
        return false;
    if (external) write_run(rx, slot, n);
    if (result == ses::place_result::completed)
        answers_.on_message_placed(*this, rx.peer, mode, seg, slot, p);
    accept_run(*p, rx, n);
    return true;
}

// take_run() for one-packet messages: each is placed as on_request() would place it (its own
// slot, its answer owed), and the run is accepted as one. Taken only when nothing can stop a
// packet on the way: a free reassembly slot for each, no partial message whose key a packet
// could share, and room in the list of deferred ACKs (none leaves inside the run, so the ACKs
// carry what they would: they are built at the next transmit()).
bool engine_impl::take_single_packet_run(const rx_context& rx, std::size_t n) {
    pds::pdc* p = run_target(rx, n);
    if (!p || !reassembly_.can_place_single_packet(n) || !acks_.has_room_for(*p)) return false;
    const delivery_mode mode = p->ordered ? delivery_mode::rod : delivery_mode::rud;
    // The segment's opcode is the run's: a WRITE goes where the hook says (place_checked), any
    // other message into its slot, each completed as place() would complete it.
    const bool external = placed_externally(single_packet_run_segment_);
    // Direct delivery (delivery_target::take_single_packet_messages): only while nothing earlier
    // waits to be polled, so that no message overtakes another.
    const bool offer = core_.takes_single_packet_messages && core_.cfg.answers_in_acks &&
                       !external && !single_packet_run_segment_.fields.response &&
                       !ses::answer_needs_message(single_packet_run_segment_.fields.opcode);
    for (std::size_t i = 0; i < n; ++i) {
        if (offer && reassembly_.nothing_delivered()) {
            const std::size_t taken = core_.cfg.deliver_to->take_single_packet_messages(
                rx.peer, single_packet_run_segment_.fields, run_[0].bytes,
                std::span(single_packet_run_fields_.data() + i, n - i));
            // Answered RC_OK at once: the ACK counts them as answered, nothing is owed.
            core_.counters.messages_delivered += taken;
            core_.counters.answers_in_acks += taken;
            core_.counters.taken_single_packet += taken;
            i += taken;
            if (i == n) break;
        }
        const ses::rx_segment& seg = single_packet_run_segment(i);
        const std::span<const std::uint8_t> payload{run_payloads_[i], run_[i].bytes};
        if (external) {
            ses::place_result placed;
            place_checked(run_context(rx, i), mode, seg, payload, false, false, placed, p);
            continue;
        }
        const std::uint32_t slot = reassembly_.place_new_single_packet(
            message_key_of(rx, mode, seg), seg.seg, payload, rx.now, seg.fields);
        answers_.on_message_placed(*this, rx.peer, mode, seg, slot, p);
    }
    accept_run(*p, rx, n);
    return true;
}

// on_request()'s counting and on_accepted() for each packet of the run in turn, the counting
// once for the run. Its packets share the CE mark (the
// template's); the ACK policy is asked packet by packet, and the ACK is deferred at the last
// packet that asked for one, as each deferral by the one before it would leave it. No ACK can go
// out within the run (ack_coalescer::defer sends at once only when its list is full: then the
// packets go one by one), so whether an ACK was ever sent, and the ACK timer, stay as they were;
// the packets may be accepted after the message is placed, which involves no PDS state.
void engine_impl::accept_run(pds::pdc& p, const rx_context& rx, std::size_t n) {
    p.last_activity_ns = rx.now;
    p.counters.rx_packets += n;
    p.counters.rx_data_packets += n;
    p.counters.rx_bytes += n * rx.frame_bytes;
    const bool ce = run_[0].ce;
    if (!acks_.has_room_for(p)) {
        for (std::size_t i = 0; i < n; ++i)
            on_accepted(p, run_[i].pds, run_[i].bytes, false, run_context(rx, i));
        return;
    }
    p.rx.accept_run(run_[0].pds.psn, static_cast<std::uint32_t>(n));
    if (ce) p.ce_since_ack = true;
    const bool first = p.counters.acks_sent == 0;
    std::size_t trigger = n;
    bool ack_unasked = false;  // a packet that asked for no ACK: it wants the ACK timer running
    for (std::size_t i = 0; i < n; ++i) {
        if (p.acks.on_packet(first, run_[i].pds.ar, ce, false, run_[i].bytes) !=
            pds::ack_reason::none)
            trigger = i;
        else
            ack_unasked = true;
    }
    if (ack_unasked && !p.ack_timer.scheduled())
        core_.timers.schedule(p.ack_timer, rx.now + core_.cfg.ack_delay_ns);
    if (trigger == n) return;
    acks_.defer(*this, p, run_[trigger].pds.psn, run_context(rx, trigger));
}

// A run of a WRITE into the target region: one check of its whole range. Refused, nothing of it
// is copied and the message fails (as it does when any one packet is refused).
void engine_impl::write_run(const rx_context& rx, std::uint32_t slot, std::size_t n) {
    const std::uint32_t length = run_[0].seg.length;
    if (length == 0) return;
    std::uint8_t* where = core_.cfg.deliver_to->place_write(
        rx.peer, rx_segment_.fields, run_[0].seg.offset, static_cast<std::uint32_t>(n) * length);
    if (!where) return reassembly_.mark_failed(slot);
    copy_payload_run(where, run_payloads_.data(), n, length);
}

// Each packet of the run as receive() would take it alone.
void engine_impl::receive_run_one_by_one(const rx_context& rx, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const run_packet& r = run_[i];
        const ses::rx_segment* seg = &rx_segment_;
        if (run_single_packet_)
            seg = &single_packet_run_segment(i);
        else
            rx_segment_.seg = r.seg;
        on_request(run_context(rx, i), r.pds, rx_ses{nullptr, seg, {run_payloads_[i], r.bytes}});
    }
}

}  // namespace uet
