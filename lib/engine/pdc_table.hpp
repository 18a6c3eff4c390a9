// The PDC table: every PDC slot with its transmit and receive rings, the ids handed out, the
// lookups of a received packet's PDC, the initiators in round-robin order, the flows waiting
// for a free slot and the target PDCs closed lately.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/flat_map.hpp"
#include "core/rng.hpp"
#include "engine/engine.hpp"
#include "engine/peer_table.hpp"
#include "pds/pdc.hpp"

namespace uet {

// A closed target PDC remembered so a late SYN packet of it does not open it again.
struct closed_pdc {
    std::uint32_t peer = none;
    std::uint16_t spdcid = 0;
    psn_t start_psn = 0;
};

class pdc_table {
  public:
    // Draws each slot's first generation and the order slots are handed out in from r.
    pdc_table(const engine_config& cfg, rng& r);

    pds::pdc& operator[](std::uint32_t i) noexcept { return pdcs_[i]; }
    const pds::pdc& operator[](std::uint32_t i) const noexcept { return pdcs_[i]; }
    std::size_t size() const noexcept { return pdcs_.size(); }
    auto begin() noexcept { return pdcs_.begin(); }
    auto end() noexcept { return pdcs_.end(); }
    auto begin() const noexcept { return pdcs_.begin(); }
    auto end() const noexcept { return pdcs_.end(); }

    bool has_free() const noexcept { return !free_.empty(); }
    // A free slot with a new local id, or nullptr when none is free.
    pds::pdc* allocate();
    // A freed PDC's slot goes back to the free list.
    void release_slot(const pds::pdc& p) { free_.push_back(p.index); }
    // The open PDC with this local id, or nullptr.
    pds::pdc* by_local_id(std::uint16_t id) noexcept {
        const std::uint32_t slot = id & ((1u << index_bits_) - 1);
        if (slot == 0 || slot > pdcs_.size()) return nullptr;
        pds::pdc& p = pdcs_[slot - 1];
        return p.state != pds::pdc_state::free && p.local_id == id ? &p : nullptr;
    }
    std::span<tx_entry> tx_ring_of(std::uint32_t pdc_index) noexcept {
        return {&tx_entries_[std::size_t{pdc_index} * tx_ring_size_], tx_ring_size_};
    }
    std::span<std::uint64_t> rx_ring_of(std::uint32_t pdc_index) noexcept {
        return {&rx_bits_[std::size_t{pdc_index} * rx_ring_words_], rx_ring_words_};
    }
    // One tx ring: packets due when a PDC's timer fires.
    std::vector<std::uint32_t>& due_slots() noexcept { return due_slots_; }

    // Target PDCs by (peer, remote spdcid), the key of a SYN packet.
    std::optional<std::uint32_t> find_syn(std::uint32_t peer, std::uint16_t spdcid) const noexcept {
        return by_syn_.find((std::uint64_t{peer} << 16) | spdcid);
    }
    void insert_syn(std::uint32_t peer, std::uint16_t spdcid, std::uint32_t index) {
        by_syn_.insert((std::uint64_t{peer} << 16) | spdcid, index);
    }
    void erase_syn(std::uint32_t peer, std::uint16_t spdcid) {
        by_syn_.erase((std::uint64_t{peer} << 16) | spdcid);
    }

    bool recently_closed(std::uint32_t peer, std::uint16_t spdcid, psn_t start) const;
    void remember_closed(const pds::pdc& p);
    // A peer's entry is given back: the closed PDCs remembered no longer name it.
    void forget_peer(std::uint32_t id);

    // Target PDCs with close_heard.
    void add_lingering() noexcept { ++lingering_; }
    void drop_lingering() noexcept { --lingering_; }
    // A lingering target PDC, or nullptr when there is none.
    pds::pdc* first_lingering_target() noexcept;

    // The initiator PDCs, in round-robin order.
    const std::vector<std::uint32_t>& initiators() const noexcept { return initiators_; }
    void add_initiator(std::uint32_t index) { initiators_.push_back(index); }
    void remove_initiator(std::uint32_t index);

    // Flows (peer, mode slot) that found the table full, in the order they asked.
    bool has_waiting() const noexcept { return !waiting_.empty(); }
    void wait(std::uint32_t peer, std::size_t slot) { waiting_.emplace_back(peer, slot); }
    std::pair<std::uint32_t, std::size_t> pop_waiting() {
        const auto w = waiting_.front();
        waiting_.erase(waiting_.begin());
        return w;
    }

  private:
    std::vector<pds::pdc> pdcs_;
    std::vector<std::uint32_t> free_;
    std::uint32_t lingering_ = 0;  // target PDCs with close_heard
    std::vector<std::uint16_t> generation_;
    unsigned index_bits_ = 0;
    unsigned id_bits_ = 16;  // below the PIDonFEP prefix (engine_config::fep_pids)
    std::uint16_t id_prefix_ = 0;
    std::vector<tx_entry> tx_entries_;    // max_pdcs x tx ring
    std::vector<std::uint64_t> rx_bits_;  // max_pdcs x rx ring words
    std::uint32_t tx_ring_size_ = 0, rx_ring_words_ = 0;
    std::vector<std::uint32_t> due_slots_;
    std::vector<std::uint32_t> initiators_;
    pds::flat_map by_syn_;  // (peer, remote spdcid) -> target PDC
    std::vector<closed_pdc> closed_;
    std::size_t closed_head_ = 0;
    std::vector<std::pair<std::uint32_t, std::size_t>> waiting_;  // (peer, mode slot)
};

}  // namespace uet
