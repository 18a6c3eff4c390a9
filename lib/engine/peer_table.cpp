// The peer table: entries, the lookup by address, and what is given back.
#include "engine/peer_table.hpp"

#include <algorithm>

#include "wire/uet_fep.hpp"

namespace uet {

peer_table::peer_table(const engine_config& cfg)
    : by_address_(cfg.max_peers),
      max_peers_(cfg.max_peers),
      mac_(cfg.mac),
      ip_(cfg.ip),
      udp_port_(cfg.udp_port),
      data_dscp_(cfg.data_dscp),
      ack_dscp_(cfg.ack_dscp) {
    if (cfg.fep_pids) {
        message_id_prefix_mask_ = static_cast<std::uint16_t>(~wire::fep_id_low_mask);
        message_id_prefix_ =
            static_cast<std::uint16_t>(cfg.pid_on_fep << (16 - wire::fep_pid_bits));
    }
    peers_.reserve(cfg.max_peers);
    free_.reserve(cfg.max_peers);
}

std::uint32_t peer_table::add_entry(const wire::mac_address& mac, std::uint32_t ip,
                                    std::uint16_t pid) {
    std::uint32_t id;
    if (!free_.empty()) {
        id = free_.back();
        free_.pop_back();
    } else {
        id = count_++;
        peers_.emplace_back();
    }
    peer_state& s = peers_[id];
    s = peer_state{};
    s.mac = mac;
    s.ip = ip;
    s.pid = pid;
    s.message_id_prefix_mask = message_id_prefix_mask_;
    s.next_message_id[static_cast<std::size_t>(delivery_mode::rud)] = message_id_prefix_;
    s.next_message_id[static_cast<std::size_t>(delivery_mode::rod)] = message_id_prefix_;
    build_headers(s);
    by_address_.insert(key(ip, pid), id);
    return id;
}

std::uint32_t peer_table::source(const wire::mac_address& mac, std::uint32_t ip,
                                 std::uint16_t pid) {
    if (const std::uint32_t p = find_source(ip, pid); p != none) [[likely]]
        return p;
    transient_.pid = pid;
    if (transient_.ip != ip || transient_.mac != mac) {
        transient_.mac = mac;
        transient_.ip = ip;
        build_headers(transient_);
    }
    return transient_peer;
}

// A learned peer that holds nothing here: no PDC, nothing queued or posted to it, no message of
// its in reassembly. Looked for round the table from where the last search ended, a bounded
// number of entries per call, so that a flood of new sources costs little per frame.
std::uint32_t peer_table::evictable(const ses::reassembly& reassembly) {
    constexpr std::uint32_t max_looked_at = 64;
    for (std::uint32_t n = 0; n < std::min(max_looked_at, count_); ++n) {
        const std::uint32_t id = evict_cursor_;
        evict_cursor_ = evict_cursor_ + 1 >= count_ ? 0 : evict_cursor_ + 1;
        const peer_state& ps = peers_[id];
        if (!ps.learned || ps.ip == 0 || ps.messages != 0 || ps.target_pdcs != 0) continue;
        bool busy = false;
        for (std::size_t slot = 0; slot < pdc_slots && !busy; ++slot)
            busy = ps.pdc[slot] != none || !ps.queue[slot].empty() || ps.waiting_for_pdc[slot];
        if (busy || reassembly.holds_peer(id)) continue;
        return id;
    }
    return none;
}

void peer_table::forget(std::uint32_t id) {
    peer_state& ps = peers_[id];
    by_address_.erase(key(ps.ip, ps.pid));
    ps.ip = 0;
    ps.learned = false;
    if (last_ == id) last_ = none;
    free_.push_back(id);
}

void peer_table::build_headers(peer_state& to) const {
    wire::frame_spec fs;
    fs.src_mac = mac_;
    fs.dst_mac = to.mac;
    fs.src_ip = ip_;
    fs.dst_ip = to.ip;
    fs.dst_port = udp_port_;
    fs.dscp = data_dscp_;
    fs.ecn = static_cast<std::uint8_t>(wire::ecn_codepoint::ect0);
    to.data_header.build(fs);
    fs.dscp = ack_dscp_;
    fs.ecn = static_cast<std::uint8_t>(wire::ecn_codepoint::not_ect);
    to.control_header.build(fs);
}

}  // namespace uet
