// New RUDI and UUD requests, and RUDI retransmissions: what transmit() sends once no PDC has
// anything to send (connectionless: no PDC).
#include <algorithm>

#include "engine/engine_impl.hpp"
#include "engine/frame_builder_inline.hpp"

namespace uet {

bool engine_impl::next_connectionless_frame(std::uint64_t now, std::span<std::uint8_t> buf,
                                            std::size_t& len) {
    return (!rudi_queue_.empty() && send_rudi(now, buf, len, false)) ||
           (!uud_queue_.empty() && send_uud(now, buf, len));
}

// ---- RUDI: no PDC; every request packet has its own id, timer and response ----

bool engine_impl::send_rudi(std::uint64_t now, std::span<std::uint8_t> buf, std::size_t& len,
                            bool retransmissions_only) {
    std::uint32_t index = rudi_.pop_retransmit();
    const bool retx = index != pds::rudi_window::no_packet;
    if (retx) {
        ++core_.connectionless.retransmits[static_cast<std::size_t>(rudi_[index].cause)];
    } else {
        if (retransmissions_only || rudi_queue_.empty() || !rudi_.has_room()) return false;
        const std::uint32_t mi = rudi_queue_.head;
        ses::tx_message& m = msgs_[mi];
        const ses::segment seg = msgs_.next_segment(m);
        if (msgs_.fully_segmented(m)) rudi_queue_.pop(msgs_.pool());
        index = rudi_.take(mi, seg.offset, seg.length);
    }
    pds::rudi_packet& r = rudi_[index];
    r.st = pds::rudi_packet::state::in_flight;
    r.sent_ns = now;
    r.resent = retx;
    len = frames_.build_rudi_request(peers_, msgs_, core_.rng, r, retx, buf);
    core_.timers.schedule(r.timer, now + rudi_rto(msgs_[r.message].peer, r.retries));
    ++core_.counters.rudi_requests_tx;
    core_.count_tx(nullptr, len, true);
    return true;
}

bool engine_impl::send_uud(std::uint64_t, std::span<std::uint8_t> buf, std::size_t& len) {
    if (uud_queue_.empty()) return false;
    const std::uint32_t mi = uud_queue_.pop(msgs_.pool());
    ses::tx_message& m = msgs_[mi];
    const ses::segment seg = msgs_.next_segment(m);
    const wire::ses_header ses = ses::packet_header(m, seg);
    wire::pds_uud h;
    h.next_hdr = wire::next_hdr_for(ses);
    wire::uet_packet_spec spec;
    spec.pds = h;
    spec.ses = ses;
    spec.payload = std::span<const std::uint8_t>(m.data, seg.length);
    const auto entropy = static_cast<std::uint16_t>(core_.rng.next_u64() | 0xc000);
    len = frames_.build_frame(peers_.at(m.peer), entropy, true, spec, buf);
    ++core_.counters.uud_tx;
    core_.count_tx(nullptr, len, true);
    // Best effort: done once it is on its way.
    complete_message(mi, status{});
    return true;
}

}  // namespace uet
