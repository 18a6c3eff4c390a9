// The endpoint's two maps between address-vector entries and engine peers.
#pragma once

#include <cstdint>
#include <vector>

#include "api/op_pool.hpp"
#include "uet/uet.hpp"

namespace uet::detail {

struct endpoint_impl;

class peer_map {
  public:
    // The engine peer of address-vector entry `index`, or none before a post to it added one.
    std::uint32_t engine_peer(std::uint64_t index) const noexcept {
        return index < engine_peer_of_.size() ? engine_peer_of_[index] : none;
    }
    // The engine's peer for address-vector entry `index`, added at its first post.
    errc add(endpoint_impl& ep, std::uint64_t index, std::uint32_t& engine_peer);
    // Inline: a message's sender is nearly always a peer seen before (a hash lookup otherwise).
    peer_addr peer_of(endpoint_impl& ep, std::uint32_t engine_peer) {
        if (engine_peer < av_peer_of_.size() && av_peer_of_[engine_peer] != any_peer) [[likely]]
            return av_peer_of_[engine_peer];
        return find_peer_of(ep, engine_peer);
    }
    peer_addr find_peer_of(endpoint_impl& ep, std::uint32_t engine_peer);

  private:
    std::vector<std::uint32_t> engine_peer_of_;  // av index -> engine peer id
    std::vector<peer_addr> av_peer_of_;          // engine peer id -> av index (peer_of)
};

}  // namespace uet::detail
