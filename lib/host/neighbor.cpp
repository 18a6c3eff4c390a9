#include "host/neighbor.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "wire/frame.hpp"

namespace uet::host {

namespace {

std::uint32_t subnet_mask(std::uint8_t prefix_len) noexcept {
    if (prefix_len == 0) return 0;
    if (prefix_len >= 32) return 0xffffffffu;
    return ~((1u << (32 - prefix_len)) - 1);
}

}  // namespace

const char* to_string(neighbor_drop d) noexcept {
    switch (d) {
        case neighbor_drop::arp_not_for_us:
            return "arp_not_for_us";
        case neighbor_drop::arp_bad_sender:
            return "arp_bad_sender";
        case neighbor_drop::arp_unsolicited:
            return "arp_unsolicited";
        case neighbor_drop::static_protected:
            return "static_protected";
        case neighbor_drop::table_full:
            return "table_full";
        case neighbor_drop::pending_full:
            return "pending_full";
        case neighbor_drop::frame_too_large:
            return "frame_too_large";
        case neighbor_drop::no_route:
            return "no_route";
        case neighbor_drop::unresolved:
            return "unresolved";
        case neighbor_drop::output_full:
            return "output_full";
        case neighbor_drop::count_:
            break;
    }
    return "unknown";
}

neighbor_table::neighbor_table(const interface_config& iface, const neighbor_config& cfg)
    : iface_(iface),
      cfg_(cfg),
      entries_(std::max<std::size_t>(cfg.max_neighbors, 1)),
      held_(cfg.pending_total),
      held_bytes_(cfg.pending_total * cfg.max_frame),
      replies_(std::max<std::size_t>(cfg.output_slots, 1)) {}

bool neighbor_table::on_link(std::uint32_t ip) const noexcept {
    const std::uint32_t mask = subnet_mask(iface_.prefix_len);
    return (ip & mask) == (iface_.ip & mask);
}

std::uint32_t neighbor_table::next_hop(std::uint32_t dst) const noexcept {
    return on_link(dst) ? dst : iface_.gateway;
}

neighbor_table::entry* neighbor_table::find(std::uint32_t ip) noexcept {
    // Frames go to few next hops (usually one): try the last one found before the walk.
    if (entry& last = entries_[last_found_]; last.st != state::free && last.ip == ip) return &last;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (entries_[i].st != state::free && entries_[i].ip == ip) {
            last_found_ = i;
            return &entries_[i];
        }
    }
    return nullptr;
}

const neighbor_table::entry* neighbor_table::find(std::uint32_t ip) const noexcept {
    return const_cast<neighbor_table*>(this)->find(ip);
}

std::size_t neighbor_table::size() const noexcept {
    return static_cast<std::size_t>(std::count_if(
        entries_.begin(), entries_.end(), [](const entry& e) { return e.st != state::free; }));
}

// A free slot, or else the reachable entry closest to expiry (never a static one, never one
// with frames waiting on it).
neighbor_table::entry* neighbor_table::allocate(std::uint32_t ip, std::uint64_t now) noexcept {
    entry* victim = nullptr;
    for (auto& e : entries_) {
        if (e.st == state::free) {
            victim = &e;
            break;
        }
        if (e.st == state::reachable && (victim == nullptr || e.expires < victim->expires)) {
            victim = &e;
        }
    }
    if (victim == nullptr) {
        drop(neighbor_drop::table_full);
        return nullptr;
    }
    *victim = entry{};
    victim->ip = ip;
    victim->st = state::incomplete;
    victim->expires = now;
    return victim;
}

void neighbor_table::add_static(std::uint32_t ip, const wire::mac_address& mac) {
    entry* e = find(ip);
    if (e == nullptr) e = allocate(ip, 0);
    if (e == nullptr) return;
    e->mac = mac;
    e->st = state::permanent;
    e->request_due = false;
}

const wire::mac_address* neighbor_table::usable(std::uint32_t ip,
                                                std::uint64_t now) const noexcept {
    const entry* e = find(ip);
    if (e == nullptr) return nullptr;
    if (e->st == state::permanent || (e->st == state::reachable && now < e->expires))
        return &e->mac;
    return nullptr;
}

std::optional<wire::mac_address> neighbor_table::lookup(std::uint32_t ip,
                                                        std::uint64_t now) const noexcept {
    if (const wire::mac_address* mac = usable(ip, now)) return *mac;
    return std::nullopt;
}

neighbor_table::state neighbor_table::state_of(std::uint32_t ip) const noexcept {
    const entry* e = find(ip);
    return e == nullptr ? state::free : e->st;
}

bool neighbor_table::resolve(std::uint32_t ip, std::uint64_t now) noexcept {
    entry* e = find(ip);
    if (e != nullptr) {
        if (e->st == state::permanent || (e->st == state::reachable && now < e->expires)) {
            return true;
        }
        if (e->st == state::incomplete) return false;
        // Expired: resolve again, keeping the slot.
        e->st = state::incomplete;
        e->requests = 0;
        mark_request_due(*e);
        e->expires = now;
        return false;
    }
    e = allocate(ip, now);
    if (e != nullptr) mark_request_due(*e);
    return false;
}

neighbor_table::send_result neighbor_table::send_or_hold(std::uint32_t hop,
                                                         std::span<const std::uint8_t> frame,
                                                         std::uint64_t now,
                                                         wire::mac_address& mac) noexcept {
    if (hop == 0) {
        drop(neighbor_drop::no_route);
        return send_result::dropped;
    }
    if (const wire::mac_address* known = usable(hop, now)) {
        mac = *known;
        return send_result::ready;
    }
    resolve(hop, now);
    entry* e = find(hop);
    if (e == nullptr) return send_result::dropped;  // table_full already counted
    if (frame.size() > cfg_.max_frame) {
        drop(neighbor_drop::frame_too_large);
        return send_result::dropped;
    }
    if (e->pending >= cfg_.pending_per_neighbor || held_count_ >= held_.size()) {
        drop(neighbor_drop::pending_full);
        return send_result::dropped;
    }
    for (std::size_t i = 0; i < held_.size(); ++i) {
        if (held_[i].length != 0) continue;
        std::memcpy(&held_bytes_[i * cfg_.max_frame], frame.data(), frame.size());
        held_[i] = {hop, static_cast<std::uint32_t>(frame.size()), held_seq_++};
        ++held_count_;
        ++e->pending;
        return send_result::queued;
    }
    drop(neighbor_drop::pending_full);
    return send_result::dropped;
}

void neighbor_table::learn(entry& e, const wire::mac_address& mac, std::uint64_t now) noexcept {
    if (e.st == state::permanent) {
        if (e.mac != mac) drop(neighbor_drop::static_protected);
        return;
    }
    e.mac = mac;
    e.st = state::reachable;
    e.expires = now + cfg_.reachable_ns;
    note_expiry(e.expires);
    e.requests = 0;
    e.request_due = false;
    ++stats_.learned;
}

void neighbor_table::on_arp(const wire::arp_packet& arp, std::uint64_t now) noexcept {
    const bool for_us = arp.tpa == iface_.ip;
    // A sender we must never believe: a group MAC, no address (an RFC 5227 probe: still
    // answered), or our own address claimed by another host.
    const bool bad_sender = arp.sha.is_multicast() || arp.spa == iface_.ip || arp.sha == iface_.mac;
    if (bad_sender && arp.spa != 0) {
        drop(neighbor_drop::arp_bad_sender);
        return;
    }
    if (arp.spa != 0) {
        // RFC 826 merge: update a sender we know; add it only if the packet is for us.
        entry* e = find(arp.spa);
        if (e != nullptr) {
            learn(*e, arp.sha, now);
        } else if (for_us && arp.op == wire::arp_op_request) {
            if (entry* n = allocate(arp.spa, now)) learn(*n, arp.sha, now);
        } else if (arp.op == wire::arp_op_reply) {
            drop(neighbor_drop::arp_unsolicited);
        }
    }
    if (arp.op != wire::arp_op_request) return;
    if (!for_us) {
        drop(neighbor_drop::arp_not_for_us);
        return;
    }
    if (arp.sha.is_multicast()) {
        drop(neighbor_drop::arp_bad_sender);
        return;
    }
    if (reply_count_ == replies_.size()) {
        drop(neighbor_drop::output_full);
        return;
    }
    replies_[(reply_head_ + reply_count_) % replies_.size()] = {arp.sha, arp.spa};
    ++reply_count_;
}

std::size_t neighbor_table::write_arp(std::uint16_t op, const wire::mac_address& dst_mac,
                                      std::uint32_t tpa, const wire::mac_address& tha,
                                      std::span<std::uint8_t> out) noexcept {
    wire::frame_spec spec;
    spec.src_mac = iface_.mac;
    spec.dst_mac = dst_mac;
    wire::arp_packet arp;
    arp.op = op;
    arp.sha = iface_.mac;
    arp.spa = iface_.ip;
    arp.tha = tha;
    arp.tpa = tpa;
    return wire::build_arp_frame(spec, arp, out);
}

void neighbor_table::drop_held(std::uint32_t hop) noexcept {
    for (auto& h : held_) {
        if (h.length == 0 || h.hop != hop) continue;
        h.length = 0;
        --held_count_;
        drop(neighbor_drop::unresolved);
    }
}

void neighbor_table::age(std::uint64_t now) noexcept {
    if (now < age_at_) return;
    std::uint64_t next = std::numeric_limits<std::uint64_t>::max();
    for (auto& e : entries_) {
        if (e.st == state::reachable && now >= e.expires && e.pending == 0) {
            e.st = state::free;
            ++stats_.expired;
        } else if (e.st == state::incomplete && !e.request_due && now >= e.expires) {
            if (e.requests >= cfg_.max_requests) {
                drop_held(e.ip);
                e.st = state::free;
            } else {
                mark_request_due(e);
            }
        } else if (e.st == state::reachable || (e.st == state::incomplete && !e.request_due)) {
            // Not due yet (or held by pending frames: release_held notes it again).
            if (e.expires > now) next = std::min(next, e.expires);
        }
    }
    age_at_ = next;
}

std::size_t neighbor_table::release_held(std::uint64_t now, std::span<std::uint8_t> out) noexcept {
    if (held_count_ == 0) return 0;
    held_frame* oldest = nullptr;
    wire::mac_address mac;
    for (auto& h : held_) {
        if (h.length == 0 || (oldest != nullptr && h.seq > oldest->seq)) continue;
        if (auto known = lookup(h.hop, now)) {
            oldest = &h;
            mac = *known;
        }
    }
    if (oldest == nullptr || out.size() < oldest->length) return 0;
    const std::size_t index = static_cast<std::size_t>(oldest - held_.data());
    std::memcpy(out.data(), &held_bytes_[index * cfg_.max_frame], oldest->length);
    std::memcpy(out.data(), mac.octets.data(), mac.octets.size());
    std::memcpy(out.data() + 6, iface_.mac.octets.data(), iface_.mac.octets.size());
    const std::size_t n = oldest->length;
    if (entry* e = find(oldest->hop); e != nullptr && e->pending > 0) {
        // An expired entry kept for its held frames may go once the last one has left.
        if (--e->pending == 0) note_expiry(e->expires);
    }
    oldest->length = 0;
    --held_count_;
    ++stats_.released;
    return n;
}

std::size_t neighbor_table::poll_output(std::uint64_t now, std::span<std::uint8_t> out) noexcept {
    if (reply_count_ > 0) {
        const reply r = replies_[reply_head_];
        reply_head_ = (reply_head_ + 1) % replies_.size();
        --reply_count_;
        const std::size_t n = write_arp(wire::arp_op_reply, r.mac, r.ip, r.mac, out);
        if (n != 0) ++stats_.replies_sent;
        return n;
    }
    age(now);
    if (requests_due_) {
        for (auto& e : entries_) {
            if (e.st != state::incomplete || !e.request_due) continue;
            const std::size_t n =
                write_arp(wire::arp_op_request, wire::mac_address::broadcast(), e.ip, {}, out);
            if (n == 0) return 0;
            e.request_due = false;
            ++e.requests;
            e.expires = now + cfg_.retry_ns;
            note_expiry(e.expires);
            ++stats_.requests_sent;
            return n;
        }
        requests_due_ = false;  // none left
    }
    return release_held(now, out);
}

std::uint64_t neighbor_table::next_deadline() const noexcept {
    if (reply_count_ > 0 || requests_due_) return 0;
    // age_at_ may be early (an entry it counted was freed since): that costs one idle poll.
    std::uint64_t t = age_at_;
    if (held_count_ == 0) return t;
    for (const auto& e : entries_) {
        if (e.st == state::reachable && e.pending > 0) return 0;
    }
    return t;
}

}  // namespace uet::host
