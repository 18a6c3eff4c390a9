// What goes out: control frames first (ACK, NACK, RUDI responses), then retransmissions, then
// new data round-robin over the PDCs, then RUDI and UUD requests.
#include "engine/tx_pipeline.hpp"

#include <algorithm>

#include "engine/engine_impl.hpp"
#include "engine/frame_builder_inline.hpp"

namespace uet {

std::size_t tx_pipeline::transmit(engine_impl& eng, std::uint64_t now, std::span<tx_frame> out) {
    eng.advance(now);
    // Frames handed out by the previous call are on the wire by now: reclaim their slots.
    eng.control_.reclaim();
    std::size_t n = 0;
    // With no control frame waiting, the due ACKs are built where they leave (in order: any
    // that wait are older than these).
    if (eng.control_.empty())
        eng.acks_.flush_into(eng, out, n);
    else
        eng.acks_.flush(eng);
    // Control frames were built when their cause arrived; a small copy into the room.
    eng.control_.hand_out(out, n);
    std::size_t built = 0;
    bool exhausted = false;
    // The usual bulk case, one initiator PDC with nothing to resend (nor RUDI resends): its new
    // data leaves in one batch as large as the rooms. Sending queues no retransmission, so this
    // holds for the whole call. With more, the PDCs take turns one frame each (the batch's limit
    // is 1), behind the retransmissions, as fairness asks.
    const bool sole = eng.pdcs_.initiators().size() == 1 &&
                      !eng.connectionless_.retransmit_pending() &&
                      !eng.pdcs_[eng.pdcs_.initiators()[0]].tx.has_retransmit();
    bool sole_done = false;  // the sole PDC has no more for this call
    while (!eng.core_.data_stopped && n < out.size() && built < eng.core_.cfg.tx_burst) {
        const auto room = out.subspan(n, std::min(out.size() - n, eng.core_.cfg.tx_burst - built));
        std::size_t k = 0, len = 0;
        bool got = false;
        if (!sole) {
            const std::span<std::uint8_t> buf = eng.frames_.data_frame_buffer(room[0], built);
            got = resend_frame(eng, buf, len);
            if (got) k = eng.frames_.hand_out(room[0], buf, len);
        }
        if (!got && !sole_done) {
            const std::size_t limit = sole ? room.size() : 1;
            k = next_source(eng, room.first(limit), built);
            got = k != 0;
            sole_done = sole && k < limit;
        }
        if (!got) {
            // New RUDI and UUD requests, once no PDC has new data.
            const std::span<std::uint8_t> buf = eng.frames_.data_frame_buffer(room[0], built);
            got = eng.connectionless_.next_frame(eng, eng.core_.now, buf, len);
            if (!got) {
                exhausted = true;
                break;
            }
            k = eng.frames_.hand_out(room[0], buf, len);
        }
        n += k;
        built += k;
    }
    eng.frames_.end_call();
    eng.core_.tx_ready = !exhausted;
    count_tx_call(eng, exhausted, built);
    return n;
}

// Why this call's data frames ended (a call that found no data frame to build counts too, the
// idle polls of a sender; one with only control frames and no data pending does not).
void tx_pipeline::count_tx_call(engine_impl& eng, bool exhausted, std::size_t built) {
    if (!exhausted) {
        if (built != 0) ++eng.core_.counters.tx_calls_full;
        return;
    }
    switch (eng.tx_.tx_stop_) {
        case tx_stop::window:
            ++eng.core_.counters.tx_calls_held_by_window;
            break;
        case tx_stop::nothing_queued:
            if (built != 0 || !eng.pdcs_.initiators().empty())
                ++eng.core_.counters.tx_calls_nothing_queued;
            break;
        case tx_stop::other:
            break;
    }
    eng.tx_.tx_stop_ = tx_stop::nothing_queued;
}

bool tx_pipeline::resend_frame(engine_impl& eng, std::span<std::uint8_t> buf, std::size_t& len) {
    // Retransmissions go ahead of any new data (trimmed packets come back at once).
    for (const std::uint32_t i : eng.pdcs_.initiators())
        if (eng.pdcs_[i].tx.has_retransmit() &&
            retransmit_from(eng, eng.pdcs_[i], eng.core_.now, buf, len))
            return true;
    // The RUDI and UUD queues are checked here, not in their senders: this runs once per frame,
    // and a PDC's stream of data frames must not pay two calls that find nothing.
    return eng.connectionless_.retransmit_pending() &&
           eng.connectionless_.send_rudi(eng, eng.core_.now, buf, len, true);
}

inline std::size_t tx_pipeline::next_source(engine_impl& eng, std::span<tx_frame> out,
                                            std::size_t staged) {
    const std::size_t count = eng.pdcs_.initiators().size();
    std::size_t at = eng.tx_.rr_cursor_ < count ? eng.tx_.rr_cursor_ : 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (const std::size_t k = send_new(eng, eng.pdcs_[eng.pdcs_.initiators()[at]], out, staged);
            k != 0) {
            eng.tx_.rr_cursor_ = at + 1;
            return k;
        }
        if (++at == count) at = 0;  // round robin without a division per frame
    }
    return 0;
}

std::uint64_t tx_pipeline::credit_backlog(const engine_impl& eng, const pds::pdc& p) {
    return eng.peers_[p.peer].queued_bytes[p.slot] + p.retx_bytes;
}

// A credit sender that cannot send has no data packet to carry its credit target; when what it
// wants grew since it last said (a retransmission queued after its last packet left), it says so
// in a CTRL CREDIT_REQ, once per new target.
void tx_pipeline::maybe_request_credit(engine_impl& eng, pds::pdc& p) {
    if (!p.credit_cc || p.state != pds::pdc_state::established) return;
    const std::uint32_t target =
        p.cc->credit_target(credit_backlog(eng, p)) & cc::credit::field_mask;
    if (cc::credit::distance(target, p.credit_target_sent) <= 0) return;
    if (!eng.acks_.send_ctrl(eng, p, wire::ctrl_type::credit_req, p.tx.next(), target,
                             p.lb.next_entropy(eng.core_.now)))
        return;
    p.credit_target_sent = target;
}

bool tx_pipeline::retransmit_from(engine_impl& eng, pds::pdc& p, std::uint64_t now,
                                  std::span<std::uint8_t> buf, std::size_t& len) {
    tx_entry* e = p.tx.peek_retransmit();
    if (!e) return false;
    // Retransmissions spend window (or credit) like new data; a CLOSE is never held back. One
    // exception: a credit sender whose first packets all came back trimmed before the target
    // held the PDC (their NACKs name none) can ask for no credit, and none would come: while
    // nothing is in flight it resends one packet without, to open the PDC.
    const bool syn_probe =
        p.credit_cc && p.state == pds::pdc_state::syn_sent && p.inflight_bytes == 0;
    if (e->kind == tx_kind::data && !p.cc_allows(e->length) && !syn_probe) {
        maybe_request_credit(eng, p);
        return false;
    }
    p.tx.pop_retransmit();
    p.on_retransmit_popped(*e);
    ++p.counters.retransmits[static_cast<std::size_t>(e->cause)];
    // A fresh path for the resend: the one the packet took may be the reason it was lost.
    e->entropy = p.lb.next_entropy(now);
    len = eng.frames_.build_pdc_packet(eng.peers_.at(p.peer), p, eng.msgs_, *e, true, true, buf);
    p.on_sent(*e, now, eng.core_.timers, eng.core_.params);
    eng.core_.count_tx(&p, len, e->kind == tx_kind::data);
    return true;
}

std::size_t engine::transmit(std::uint64_t now, std::span<tx_frame> out) {
    return tx_pipeline::transmit(*impl_, now, out);
}

}  // namespace uet
