// The posts of unsignaled sends, for endpoint.cpp (the posts of sends) only: they use its
// forced-inline check_post.
#pragma once

#include <algorithm>

#include "api/api_impl.hpp"

namespace uet::detail {

inline bool unsignaled_sends::post(endpoint_impl& ep, peer_addr to, std::span<const std::byte> buf,
                                   bool tagged, std::uint64_t tag, void* context) {
    // Behind a stalled operation it would overtake it.
    if (buf.size() >= limit_ || !ep.stalled.empty() || ep.ops.room() == 0 || !ep.records.spare())
        return false;
    std::uint32_t engine_peer = none;
    // Refused here (unknown peer, full queue), the ordinary post says why.
    if (ep.check_post(to, true, engine_peer) != errc{}) return false;
    const own_request_fields own{tagged ? tag : 0, token_field(0)};
    const auto data = std::span<const std::uint8_t>(
        reinterpret_cast<const std::uint8_t*>(buf.data()), buf.size());
    const status st =
        ep.eng->post_unsignaled_message(engine_peer, ep.mode, common_[tagged], own, data,
                                        reinterpret_cast<std::uintptr_t>(context));
    if (!st.ok()) {  // the engine is full: the ordinary post waits for room
        ep.cq->unreserve();
        return false;
    }
    took(ep, 1);
    return true;
}

inline void unsignaled_sends::took(endpoint_impl& ep, std::size_t n) noexcept {
    next_token_ += static_cast<std::uint32_t>(n);
    ep.ops.keep(n);
    ep.records.promise(n);
    ep.counters.unsignaled_sends += n;
}

inline std::size_t unsignaled_sends::post_list(endpoint_impl& ep, peer_addr to,
                                               std::span<const send_work> list, bool tagged) {
    // Sends go unsignaled in lists of up to this many (the requests are built on the stack).
    constexpr std::size_t chunk = 32;
    if (!ep.eng || !ep.stalled.empty()) return 0;
    std::size_t n = 0;
    const std::size_t most = std::min(list.size(), chunk);
    while (n < most && list[n].flags == op_flags::no_completion && list[n].buf.size() < limit_)
        ++n;
    if (n == 0) return 0;
    std::uint32_t engine_peer = none;
    // Refused here (unknown peer), the ordinary post says why.
    if (ep.check_post(to, false, engine_peer) != errc{}) return 0;
    // What post() keeps for each: an op slot, a record and a queue entry.
    n = ep.cq->reserve_up_to(std::min({n, ep.ops.room(), ep.records.room()}));
    if (n == 0) return 0;
    std::array<unsignaled_request, chunk> requests;
    for (std::size_t k = 0; k < n; ++k) {
        const send_work& w = list[k];
        requests[k] = {{tagged ? w.tag : 0, token_field(static_cast<std::uint32_t>(k))},
                       {reinterpret_cast<const std::uint8_t*>(w.buf.data()), w.buf.size()},
                       reinterpret_cast<std::uintptr_t>(w.context)};
    }
    const std::size_t got = ep.eng->post_unsignaled_messages(engine_peer, ep.mode, common_[tagged],
                                                             std::span(requests).first(n));
    ep.cq->unreserve(n - got);  // the engine is full: the ordinary post waits for room
    took(ep, got);
    return got;
}

}  // namespace uet::detail
