// Receive bursts: the data packets of one message that follow one another in a burst are taken
// as a run. Header prediction (read_batch) already reads each against the one before it; here
// the work that is the same for all of them is done once: the peer and PDC lookups, the message's
// reassembly slot, the target region's check, the counters. Per packet there remain its reading,
// its copy, and its PSN in the window and the ACK policy. Anything that would not simply be
// accepted and placed (a duplicate, a message not yet opened, a full table...) leaves the run to
// the packet-by-packet path, which decides and counts as it would for a frame alone.
// A stream of one-packet messages (small sends) makes runs too: consecutive packets of one PDC,
// each a message of its own with its own segment and slot; shared are the peer and PDC lookups,
// the window's checks, the ACK policy's bookkeeping and the counters.
#include <algorithm>

#include "core/small_copy.hpp"
#include "engine/answer_tracker_inline.hpp"
#include "engine/engine_impl.hpp"

namespace uet {

// The open target PDC whose window takes every packet of the run as new, for ROD the first being
// the expected one: then each is accepted in turn as it would be alone (accepting one never
// makes another a duplicate or puts it beyond the window). nullptr otherwise.
pds::pdc* rx_pipeline::batch_target(engine_impl& e, const rx_context& rx, std::size_t n) {
    const wire::pds_rud_rod_request& h = run_[0].pds;
    pds::pdc* p = established_target(e, rx, h);
    const bool rod = h.type == wire::pds_type::rod;
    if (!p || p->ordered != rod || (rod && h.psn != p->rx.expected())) return nullptr;
    // The run's PSNs follow one another (read_batch).
    return p->rx.all_fresh(h.psn, static_cast<std::uint32_t>(n)) ? p : nullptr;
}

// The batch accepted and placed as a whole; false, with nothing changed, when any packet of it
// would not simply be accepted and placed.
bool rx_pipeline::take_batch(engine_impl& e, const rx_context& rx, rx_batch b) {
    const std::size_t n = b.n;
    // Without room to owe answers, each request is dropped until an answer goes (on_request):
    // then so is the batch, one packet at a time. Answers owed are announced only when an ACK
    // leaves, and none leaves while a batch is placed: the room it starts with is the room each
    // of its packets finds.
    pds::pdc* p = e.answers_.owed_room() ? batch_target(e, rx, n) : nullptr;
    if (!p) return false;
    const delivery_mode mode = p->ordered ? delivery_mode::rod : delivery_mode::rud;
    if (b.kind == batch_kind::single_packet) {
        if (!e.reassembly_.can_place_single_packet(n) || !e.acks_.has_room_for(*p)) return false;
        place_batch_single(e, rx, *p, mode, n);
    } else if (!place_batch_message(e, rx, *p, mode, n)) {
        return false;
    }
    accept_batch(e, *p, rx, n);
    return true;
}

// The packets of one message: one reassembly place_run (all or nothing), one check of a WRITE's
// target range; false, with nothing placed, when place_run refuses.
inline bool rx_pipeline::place_batch_message(engine_impl& e, const rx_context& rx, pds::pdc& p,
                                             delivery_mode mode, std::size_t n) {
    const ses::rx_segment& seg = rx_segment_;  // all but the offsets: the same in every packet
    const ses::message_key key = message_key_of(rx, mode, seg);
    const bool external = placed_externally(e.core_, seg);
    ses::place_result result = ses::place_result::placed;
    std::uint32_t slot = ses::no_index;
    if (!e.reassembly_.place_run(key, seg.total, run_[0].seg.offset, run_[0].seg.length,
                                 std::span(run_payloads_.data(), n), seg.fields, external, rx.now,
                                 result, slot))
        return false;
    if (external) write_batch(e, rx, slot, n);
    if (result == ses::place_result::completed)
        e.answers_.on_message_placed(e, rx.peer, mode, seg, slot, &p);
    return true;
}

// One-packet messages: each placed as on_request() would place it (its own slot, its answer
// owed). take_batch() takes them only when nothing can stop a packet on the way: a free
// reassembly slot for each, no partial message whose key a packet could share, and room in the
// list of deferred ACKs (none leaves inside the batch, so the ACKs carry what they would: they
// are built at the next transmit()).
inline void rx_pipeline::place_batch_single(engine_impl& e, const rx_context& rx, pds::pdc& p,
                                            delivery_mode mode, std::size_t n) {
    // The segment's opcode is the batch's: a WRITE goes where the hook says (place_checked), any
    // other message into its slot, each completed as place() would complete it.
    const bool external = placed_externally(e.core_, single_packet_segment_);
    // Direct delivery (delivery_target::take_single_packet_messages): only while nothing earlier
    // waits to be polled, so that no message overtakes another.
    const bool offer = e.core_.takes_single_packet_messages && e.core_.cfg.answers_in_acks &&
                       !external && !single_packet_segment_.fields.response &&
                       !ses::answer_needs_message(single_packet_segment_.fields.opcode);
    for (std::size_t i = 0; i < n; ++i) {
        if (offer && e.reassembly_.nothing_delivered()) {
            const std::size_t taken = e.core_.cfg.deliver_to->take_single_packet_messages(
                rx.peer, single_packet_segment_.fields, run_[0].bytes,
                std::span(batch_fields_.data() + i, n - i));
            // Answered RC_OK at once: the ACK counts them as answered, nothing is owed.
            e.core_.counters.messages_delivered += taken;
            e.core_.counters.answers_in_acks += taken;
            e.core_.counters.taken_single_packet += taken;
            i += taken;
            if (i == n) break;
        }
        const ses::rx_segment& seg = batch_segment(i);
        const std::span<const std::uint8_t> payload{run_payloads_[i], run_[i].bytes};
        if (external) {
            ses::place_result placed;
            place_checked(e, run_context(rx, i), mode, seg, payload, false, false, placed, &p);
            continue;
        }
        const std::uint32_t slot = e.reassembly_.place_new_single_packet(
            message_key_of(rx, mode, seg), seg.seg, payload, rx.now, seg.fields);
        e.answers_.on_message_placed(e, rx.peer, mode, seg, slot, &p);
    }
}

// on_request()'s counting and on_accepted() for each packet of the run in turn, the counting
// once for the run. Its packets share the CE mark (the
// template's); the ACK policy is asked packet by packet, and the ACK is deferred at the last
// packet that asked for one, as each deferral by the one before it would leave it. No ACK can go
// out within the run (ack_coalescer::defer sends at once only when its list is full: then the
// packets go one by one), so whether an ACK was ever sent, and the ACK timer, stay as they were;
// the packets may be accepted after the message is placed, which involves no PDS state.
void rx_pipeline::accept_batch(engine_impl& e, pds::pdc& p, const rx_context& rx, std::size_t n) {
    p.last_activity_ns = rx.now;
    p.counters.rx_packets += n;
    p.counters.rx_data_packets += n;
    p.counters.rx_bytes += n * rx.frame_bytes;
    const bool ce = run_[0].ce;
    if (!e.acks_.has_room_for(p)) {
        for (std::size_t i = 0; i < n; ++i)
            on_accepted(e, p, run_[i].pds, run_[i].bytes, false, run_[i].seg.eom,
                        run_context(rx, i));
        return;
    }
    p.rx.accept_run(run_[0].pds.psn, static_cast<std::uint32_t>(n));
    if (e.paths_.on())
        for (std::size_t i = 0; i < n; ++i)
            e.paths_.on_accepted(e, p, run_[i].pds.psn, run_context(rx, i));
    if (ce) p.ce_since_ack = true;
    const bool first = p.counters.acks_sent == 0;
    std::size_t trigger = n;
    bool ack_unasked = false;  // a packet that asked for no ACK: it wants the ACK timer running
    for (std::size_t i = 0; i < n; ++i) {
        const bool ar = run_[i].pds.ar || (i == n - 1 && run_[i].seg.eom);
        if (p.acks.on_packet(first, ar, ce, false, run_[i].bytes) != pds::ack_reason::none)
            trigger = i;
        else
            ack_unasked = true;
    }
    if (ack_unasked && !p.ack_timer.scheduled())
        e.core_.timers.schedule(p.ack_timer, rx.now + e.core_.cfg.ack_delay_ns);
    if (trigger == n) return;
    e.acks_.defer(e, p, run_[trigger].pds.psn, run_context(rx, trigger));
}

// A run of a WRITE into the target region: one check of its whole range. Refused, nothing of it
// is copied and the message fails (as it does when any one packet is refused).
void rx_pipeline::write_batch(engine_impl& e, const rx_context& rx, std::uint32_t slot,
                              std::size_t n) {
    const std::uint32_t length = run_[0].seg.length;
    if (length == 0) return;
    std::uint8_t* where = e.core_.cfg.deliver_to->place_write(
        rx.peer, rx_segment_.fields, run_[0].seg.offset, static_cast<std::uint32_t>(n) * length);
    if (!where) return e.reassembly_.mark_failed(slot);
    copy_payload_run(where, run_payloads_.data(), n, length);
}

// Each packet of the run as it would be taken alone.
void rx_pipeline::receive_run_one_by_one(engine_impl& e, const rx_context& rx, rx_batch b) {
    for (std::size_t i = 0; i < b.n; ++i) {
        const run_packet& r = run_[i];
        const ses::rx_segment* seg = &rx_segment_;
        if (b.kind == batch_kind::single_packet)
            seg = &batch_segment(i);
        else
            rx_segment_.seg = r.seg;
        on_request(e, run_context(rx, i), r.pds, rx_ses{nullptr, seg, {run_payloads_[i], r.bytes}});
    }
}

}  // namespace uet
