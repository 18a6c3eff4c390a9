#include "roce_engine/cm.hpp"

#include <algorithm>

namespace uet::roce {

connection_manager::connection_manager(std::size_t entries, std::uint64_t seed)
    : entries_(entries), rng_(seed ^ 0x636d636d636d636dull) {}

cm_entry* connection_manager::allocate() noexcept {
    for (cm_entry& e : entries_) {
        if (e.state != cm_state::free) continue;
        e = cm_entry{};
        // Nonzero and unique among live entries: a REP, RTU or DREQ names the entry by it.
        do {
            e.local_comm_id = static_cast<std::uint32_t>(rng_.next_u64());
        } while (e.local_comm_id == 0 ||
                 std::count_if(entries_.begin(), entries_.end(), [&](const cm_entry& x) {
                     return x.state != cm_state::free && x.local_comm_id == e.local_comm_id;
                 }) != 0);
        return &e;
    }
    return nullptr;
}

cm_entry* connection_manager::by_local_id(std::uint32_t peer_ip, std::uint32_t id) noexcept {
    for (cm_entry& e : entries_)
        if (e.state != cm_state::free && e.local_comm_id == id && e.peer_ip == peer_ip) return &e;
    return nullptr;
}

cm_entry* connection_manager::by_remote_id(std::uint32_t peer_ip, std::uint32_t id) noexcept {
    for (cm_entry& e : entries_)
        if (e.state != cm_state::free && e.remote_comm_id == id && e.peer_ip == peer_ip) return &e;
    return nullptr;
}

cm_entry* connection_manager::by_qpn(qpn_t qpn) noexcept {
    if (qpn == 0) return nullptr;
    for (cm_entry& e : entries_)
        if (e.state != cm_state::free && e.qpn == qpn) return &e;
    return nullptr;
}

bool connection_manager::send_to(std::uint32_t peer_ip, const wire::mac_address& mac,
                                 std::uint16_t sport, const wire::cm_message& m) noexcept {
    if (tail_ - head_ == queue_.size()) {
        ++counters.tx_dropped;
        return false;
    }
    cm_datagram& d = queue_[tail_ % queue_.size()];
    d.peer_ip = peer_ip;
    d.peer_mac = mac;
    d.udp_sport = sport;
    if (wire::encode(m, d.mad) != wire::mad_size) return false;
    ++tail_;
    ++counters.sent;
    return true;
}

bool connection_manager::send(const cm_entry& e, const wire::cm_message& m) noexcept {
    return send_to(e.peer_ip, e.peer_mac, e.udp_sport, m);
}

void connection_manager::send_kept(cm_entry& e, const wire::cm_message& m, const cm_config& c,
                                   std::uint64_t now) noexcept {
    e.last = m;
    set_deadline(e, now + c.timeout_ns);
    e.retries_left = c.retries;
    send(e, m);
}

std::uint64_t connection_manager::next_deadline() const noexcept {
    std::uint64_t earliest = 0;
    if (armed_ == 0) return 0;
    for (const cm_entry& e : entries_)
        if (e.state != cm_state::free && e.deadline != 0 &&
            (earliest == 0 || e.deadline < earliest))
            earliest = e.deadline;
    return earliest;
}

}  // namespace uet::roce
