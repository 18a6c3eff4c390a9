// The PDC table: slots, ids, lookups, and the lists kept over them.
#include "engine/pdc_table.hpp"

#include <algorithm>
#include <bit>

#include "engine/engine_core.hpp"
#include "wire/uet_fep.hpp"

namespace uet {

pdc_table::pdc_table(const engine_config& cfg, rng& r) : by_syn_(cfg.max_pdcs) {
    pdcs_.resize(cfg.max_pdcs);
    // Each slot's first generation, and the order slots are handed out in, drawn from the
    // seed: the first PDC ids of a run are not the same in every run.
    generation_.resize(cfg.max_pdcs);
    for (std::uint16_t& g : generation_)
        g = static_cast<std::uint16_t>(r.next_u64());
    index_bits_ = static_cast<unsigned>(std::bit_width(cfg.max_pdcs));
    if (cfg.fep_pids) {
        id_bits_ = 16 - wire::fep_pid_bits;
        id_prefix_ = static_cast<std::uint16_t>(cfg.pid_on_fep << id_bits_);
    }
    tx_ring_size_ = std::bit_ceil(cfg.mpr);
    rx_ring_words_ = std::max<std::uint32_t>(tx_ring_size_ / 64, 1);
    tx_entries_.resize(std::size_t{cfg.max_pdcs} * tx_ring_size_);
    due_slots_.resize(tx_ring_size_);
    rx_bits_.resize(std::size_t{cfg.max_pdcs} * rx_ring_words_);
    free_.reserve(cfg.max_pdcs);
    for (std::uint32_t i = cfg.max_pdcs; i-- > 0;) {
        pdcs_[i].index = i;
        pdcs_[i].idle_timer.cookie = make_cookie(timer_kind::pdc_idle, i);
        pdcs_[i].ack_timer.cookie = make_cookie(timer_kind::ack, i);
        pdcs_[i].rto_timer.cookie = make_cookie(timer_kind::packet, i);
        free_.push_back(i);
    }
    for (std::size_t i = free_.size(); i > 1; --i)
        std::swap(free_[i - 1], free_[r.next_u64() % i]);
    initiators_.reserve(cfg.max_pdcs);
    closed_.resize(1024);
    waiting_.reserve(std::size_t{cfg.max_peers} * pdc_slots);
}

pds::pdc* pdc_table::allocate() {
    if (free_.empty()) return nullptr;
    const std::uint32_t i = free_.back();
    free_.pop_back();
    pds::pdc& p = pdcs_[i];
    // PDCIDs carry the slot (never 0) and a generation, so packets of a closed PDC do not
    // reach the next user of its slot; above them, our PIDonFEP where several share the FEP.
    const std::uint16_t gen_mask = static_cast<std::uint16_t>((1u << (id_bits_ - index_bits_)) - 1);
    generation_[i] = static_cast<std::uint16_t>((generation_[i] + 1) & gen_mask);
    p.local_id = static_cast<std::uint16_t>(id_prefix_ | (generation_[i] << index_bits_) | (i + 1));
    p.remote_id = 0;
    return &p;
}

pds::pdc* pdc_table::first_lingering_target() noexcept {
    if (lingering_ == 0) return nullptr;
    for (pds::pdc& p : pdcs_) {
        if (p.state == pds::pdc_state::free || p.role != pds::pdc_role::target || !p.close_heard)
            continue;
        return &p;
    }
    return nullptr;
}

void pdc_table::remove_initiator(std::uint32_t index) {
    auto it = std::find(initiators_.begin(), initiators_.end(), index);
    if (it != initiators_.end()) initiators_.erase(it);
}

bool pdc_table::recently_closed(std::uint32_t peer, std::uint16_t spdcid, psn_t start) const {
    return std::any_of(closed_.begin(), closed_.end(), [&](const closed_pdc& c) {
        return c.peer == peer && c.spdcid == spdcid && c.start_psn == start;
    });
}

void pdc_table::remember_closed(const pds::pdc& p) {
    closed_[closed_head_] = closed_pdc{p.peer, p.remote_id, p.start_psn};
    closed_head_ = (closed_head_ + 1) % closed_.size();
}

void pdc_table::forget_peer(std::uint32_t id) {
    for (closed_pdc& c : closed_)
        if (c.peer == id) c = closed_pdc{};
}

}  // namespace uet
