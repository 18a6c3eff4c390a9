// Posting: a message checked, taken from the pool and queued where it is sent from (its PDC
// slot's queue at its peer for RUD and ROD, the RUDI or UUD queue); and the engine's posting
// calls, here so that the flattened ones see the bodies.
#include "engine/send_queue.hpp"

#include <algorithm>

#include "engine/engine_impl.hpp"

namespace uet {

status send_queue::post_send(engine_impl& e, peer_id to, delivery_mode mode,
                             std::span<const std::uint8_t> data, std::uint64_t context) {
    return post_message(e, to, mode, ses_fields{}, data, context, nullptr);
}

status send_queue::post_message(engine_impl& e, peer_id to, delivery_mode mode,
                                const ses_fields& ses, std::span<const std::uint8_t> data,
                                std::uint64_t context, std::uint16_t* message_id) {
    std::uint32_t m = ses::no_index;
    if (const status st = e.admit_message(to, mode, ses, data, context, m); !st) return st;
    if (message_id) *message_id = e.msgs_[m].message_id;
    queue_message(e, m);
    return {};
}

void send_queue::queue_message(engine_impl& e, std::uint32_t m) {
    const ses::tx_message& msg = e.msgs_[m];
    const auto mode = static_cast<delivery_mode>(msg.mode);
    switch (mode) {
        case delivery_mode::rud:
        case delivery_mode::rod:
            queue_request(e, e.peers_[msg.peer], msg.peer, mode, m, msg.length);
            break;
        case delivery_mode::rudi:
        case delivery_mode::uud:
            e.connectionless_.queue(mode, m, e.msgs_);
            break;
    }
    e.core_.tx_ready = true;
}

// A RUD or ROD request's place in its peer's queue: the PDC slot's turn.
inline void send_queue::queue_request(engine_impl& e, peer_state& ps, peer_id to,
                                      delivery_mode mode, std::uint32_t m, std::size_t bytes) {
    const std::size_t slot = ps.slot_for(mode, e.core_.cfg.parallel_pdcs);
    ps.queue[slot].push(e.msgs_.pool(), m);
    ps.queued_bytes[slot] += bytes;
    // Only the slot's first message opens a PDC (a call per message cost ~24).
    if (ps.pdc[slot] == none) e.open_initiator_pdc(to, slot, e.core_.now);
}

// An unsignaled request (RUD or ROD, checked, with room in the pool) as post_message() would post
// it: allocated under the peer's next id with its own fields, tracked by id and queued. False when
// the pool had no entry after all.
inline bool send_queue::queue_unsignaled(engine_impl& e, peer_state& ps, peer_id to,
                                         delivery_mode mode, const ses_fields& common,
                                         const unsignaled_request& r) {
    const std::uint32_t m =
        e.msgs_.allocate_unsignaled(ps, to, mode, common, r, message_pool::may_end_counted(common));
    if (m == ses::no_index) return false;
    queue_request(e, ps, to, mode, m, r.data.size());
    return true;
}

status send_queue::post_unsignaled_message(engine_impl& e, peer_id to, delivery_mode mode,
                                           const ses_fields& common, const unsignaled_request& r) {
    if (to >= e.peers_.count()) return {status_code::unknown_peer};
    if (r.data.size() > e.core_.cfg.max_message_size) return {status_code::message_too_long};
    if (e.msgs_.room(e.answers_.unposted()) == 0 ||
        !queue_unsignaled(e, e.peers_[to], to, mode, common, r))
        return {status_code::too_many_pending};
    ++e.core_.counters.messages_posted;
    e.core_.tx_ready = true;
    return {};
}

// post_unsignaled_message() of each request in turn, with what they share looked at once: the peer,
// the room in the pool (for all of them), the counters and the transmit flag.
std::size_t send_queue::post_unsignaled_messages(engine_impl& e, peer_id to, delivery_mode mode,
                                                 const ses_fields& common,
                                                 std::span<const unsignaled_request> list) {
    if (to >= e.peers_.count()) return 0;
    peer_state& ps = e.peers_[to];
    const std::size_t n = std::min(list.size(), e.msgs_.room(e.answers_.unposted()));
    std::size_t i = 0;
    if (mode == delivery_mode::rod || e.core_.cfg.parallel_pdcs <= 1) {
        i = queue_unsignaled_list(e, ps, to, mode, common, list.first(n));
    } else {  // each request to the next of the parallel PDCs
        while (i < n && list[i].data.size() <= e.core_.cfg.max_message_size &&
               queue_unsignaled(e, ps, to, mode, common, list[i]))
            ++i;
    }
    e.core_.counters.messages_posted += i;
    if (i != 0) e.core_.tx_ready = true;
    return i;
}

// queue_unsignaled() of each request of a list whose requests all go to one PDC slot (ROD, or RUD
// over one PDC): the slot picked, its bytes counted and its PDC opened once for the list
// (per request they cost ~17 instructions).
inline std::size_t send_queue::queue_unsignaled_list(engine_impl& e, peer_state& ps, peer_id to,
                                                     delivery_mode mode, const ses_fields& common,
                                                     std::span<const unsignaled_request> list) {
    const std::size_t slot = ps.slot_for(mode, e.core_.cfg.parallel_pdcs);
    ses::message_queue& q = ps.queue[slot];
    const bool ends_counted = message_pool::may_end_counted(common);
    std::uint64_t bytes = 0;
    std::size_t i = 0;
    for (; i < list.size(); ++i) {
        const unsignaled_request& r = list[i];
        if (r.data.size() > e.core_.cfg.max_message_size) break;
        const std::uint32_t m = e.msgs_.allocate_unsignaled(ps, to, mode, common, r, ends_counted);
        if (m == ses::no_index) break;
        q.push(e.msgs_.pool(), m);
        bytes += r.data.size();
    }
    ps.queued_bytes[slot] += bytes;
    if (i != 0 && ps.pdc[slot] == none) e.open_initiator_pdc(to, slot, e.core_.now);
    return i;
}

// ---- engine: the posting calls ----

// Flattened: the post of nearly every send of a stream asked no completion of, one call from the
// API rather than two (the second cost ~20 instructions of register saves and arguments).
[[gnu::flatten]] status engine::post_unsignaled_message(peer_id to, delivery_mode mode,
                                                        const ses_fields& common,
                                                        own_request_fields own,
                                                        std::span<const std::uint8_t> data,
                                                        std::uint64_t context) {
    if ((mode != delivery_mode::rud && mode != delivery_mode::rod) || common.response)
        return {status_code::not_unsignaled};
    return send_queue::post_unsignaled_message(*impl_, to, mode, common,
                                               unsignaled_request{own, data, context});
}

std::size_t engine::post_unsignaled_messages(peer_id to, delivery_mode mode,
                                             const ses_fields& common,
                                             std::span<const unsignaled_request> list) {
    if ((mode != delivery_mode::rud && mode != delivery_mode::rod) || common.response) return 0;
    return send_queue::post_unsignaled_messages(*impl_, to, mode, common, list);
}

status engine::post_message(peer_id to, delivery_mode mode, const ses_fields& ses,
                            std::span<const std::uint8_t> data, std::uint64_t context,
                            std::uint16_t* message_id) {
    return send_queue::post_message(*impl_, to, mode, ses, data, context, message_id);
}

status engine::post_send(peer_id to, delivery_mode mode, std::span<const std::uint8_t> data,
                         std::uint64_t context) {
    return send_queue::post_send(*impl_, to, mode, data, context);
}

}  // namespace uet
