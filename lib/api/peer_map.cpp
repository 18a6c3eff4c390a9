#include "api/peer_map.hpp"

#include "api/api_impl.hpp"

namespace uet::detail {

errc peer_map::add(endpoint_impl& ep, std::uint64_t index, std::uint32_t& engine_peer) {
    if (index >= ep.av->addresses.size()) return errc::unknown_peer;
    if (engine_peer_of_.size() < ep.av->addresses.size())
        engine_peer_of_.resize(ep.av->addresses.size(), none);
    if (engine_peer_of_[index] == none) {
        const endpoint_address& a = ep.av->addresses[index];
        const std::uint32_t ip = a.ip;
        const peer_id p = ep.eng->add_peer(mac_of(ip), ip, a.pid);
        if (p == invalid_peer) return errc::again;
        ep.domain->fabric->net->on_new_peer(ip);
        engine_peer_of_[index] = p;
    }
    engine_peer = engine_peer_of_[index];
    return {};
}

// Address-vector entries are never removed or renumbered, and an engine peer found in the
// vector is kept by the engine from then on (engine::keep_peer), so an answer found once holds:
// it is cached by engine peer (peer_of), looked up here the first time.
peer_addr peer_map::find_peer_of(endpoint_impl& ep, std::uint32_t engine_peer) {
    const std::uint64_t key =
        ep.eng ? av_impl::key(ep.eng->peer_ip(engine_peer), ep.eng->peer_pid(engine_peer)) : 0;
    const auto it = ep.av->by_address.find(key);
    if (it == ep.av->by_address.end()) return any_peer;  // may be inserted later: not cached
    ep.eng->keep_peer(engine_peer);
    const auto found = static_cast<peer_addr>(it->second);
    if (engine_peer >= av_peer_of_.size())
        av_peer_of_.resize(std::size_t{engine_peer} + 1, any_peer);
    av_peer_of_[engine_peer] = found;
    return found;
}

}  // namespace uet::detail
