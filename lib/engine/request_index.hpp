// The sender's requests in flight by (peer, mode, message id): how an answer that comes as a
// message finds its request. A peer's ids of one mode are handed out in sequence and its requests
// complete in about that order, so each (peer, mode) of the two tracked modes has a ring of
// ring_size entries at id % ring_size: a stream of requests costs a store at each post and one at
// each completion, no hashing. A request whose entry a newer one takes while it is still in
// flight (more than ring_size in flight at once to one peer) moves to the overflow map, which
// lookups read only when it holds anything. A peer's rings are made at its first request.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/flat_map.hpp"
#include "ses/reassembly.hpp"

namespace uet {

class request_index {
  public:
    static constexpr std::uint32_t ring_size = 256;  // a power of two, above usual TX depths
    static constexpr std::uint32_t none = 0xffffffffu;
    static_assert(none == ses::no_index, "a tx_message keeps insert()'s slot as it is");

    // capacity: how many requests may be in flight at once (all of them could overflow).
    explicit request_index(std::size_t capacity) : overflow_(capacity) {}

    // Where insert() put a request: inserted is false only when the overflow map is full (it
    // never is when capacity bounds the requests in flight); slot is the ring entry it took, for
    // erase's hint, or none (the overflow map, or not inserted).
    struct placed {
        bool inserted;
        std::uint32_t slot;
    };
    // key was not in flight. Once per request posted.
    placed insert(const ses::message_key& key, std::uint32_t index) {
        if (key.mode > 1) return {overflow_.insert(key.packed(), index), none};  // rings: RUD, ROD
        if (key.peer >= ring_of_peer_.size() || ring_of_peer_[key.peer] == none)
            make_rings(key.peer);
        const auto slot = static_cast<std::uint32_t>(at(key));
        entry& e = entries_[slot];
        if (e.index != none) {
            // Still in flight (completion clears its entry): it moves aside, under its own key.
            const ses::message_key older{key.peer, key.mode, e.id};
            if (!overflow_.insert(older.packed(), e.index)) return {false, none};
        }
        e = entry{index, key.message_id};
        return {true, slot};
    }

    std::optional<std::uint32_t> find(const ses::message_key& key) const noexcept {
        if (has_ring(key)) {
            const entry& e = entries_[at(key)];
            if (e.index != none && e.id == key.message_id) return e.index;
        }
        if (overflow_.size() == 0) return std::nullopt;
        return overflow_.find(key.packed());
    }

    // The request `index` under key is no longer in flight; slot: what insert() gave it. Forced
    // inline: once per message sent, and out of line once the message's end around it grew
    // (~30 instructions a call). With the slot, no ring is looked up (~20 instructions less): a
    // request pushed out of its entry since finds another index there and goes to the map.
    void erase(const ses::message_key& key, std::uint32_t index, std::uint32_t slot) noexcept {
        if (slot != none) {
            entry& e = entries_[slot];
            if (e.index == index && e.id == key.message_id) {
                e.index = none;
                return;
            }
        }
        if (overflow_.size() != 0) overflow_.erase(key.packed());
    }

    std::size_t overflowed() const noexcept { return overflow_.size(); }

  private:
    struct entry {
        std::uint32_t index = none;
        std::uint16_t id = 0;
    };

    bool has_ring(const ses::message_key& key) const noexcept {
        return key.mode <= 1 && key.peer < ring_of_peer_.size() && ring_of_peer_[key.peer] != none;
    }
    std::size_t at(const ses::message_key& key) const noexcept {
        return ring_of_peer_[key.peer] + std::size_t{key.mode} * ring_size +
               (key.message_id & (ring_size - 1));
    }
    // Once per peer, at its first request: not per packet.
    void make_rings(std::uint32_t peer) {
        if (peer >= ring_of_peer_.size()) ring_of_peer_.resize(std::size_t{peer} + 1, none);
        ring_of_peer_[peer] = static_cast<std::uint32_t>(entries_.size());
        entries_.resize(entries_.size() + 2 * ring_size);
    }

    std::vector<std::uint32_t> ring_of_peer_;  // peer -> its rings' first entry, or none
    std::vector<entry> entries_;
    pds::flat_map overflow_;
};

}  // namespace uet
