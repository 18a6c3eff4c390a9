// IPv4 neighbour resolution, sans-I/O: an ARP cache with expiry and static entries, ARP requests
// with retry, a bounded queue of frames waiting for a neighbour's MAC, and one route ("not on my
// subnet" goes via the gateway). Time is passed in (ns); the table never sends anything itself:
// the host stack pulls the frames it produces (poll_output) and transmits them.
// All memory is reserved at construction; nothing is allocated afterwards.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "wire/eth.hpp"

namespace uet::host {

struct interface_config {
    wire::mac_address mac;
    std::uint32_t ip = 0;          // host order
    std::uint8_t prefix_len = 24;  // on-link subnet
    std::uint32_t gateway = 0;     // 0: no route off the subnet
};

struct neighbor_config {
    std::size_t max_neighbors = 256;
    std::uint64_t reachable_ns = 60'000'000'000;  // a learned entry is trusted this long
    std::uint64_t retry_ns = 100'000'000;         // between ARP requests for one address
    std::uint32_t max_requests = 10;              // then the resolution fails (pending dropped)
    std::size_t pending_per_neighbor = 8;         // frames held while resolving one address
    std::size_t pending_total = 64;               // frames held over all addresses
    std::size_t max_frame = 9216;                 // largest frame that can be held
    std::size_t output_slots = 32;                // ARP replies queued before transmit
};

enum class neighbor_drop : std::uint8_t {
    arp_not_for_us,    // request for another address: not answered, sender not learned
    arp_bad_sender,    // sender MAC multicast/broadcast, or sender IP 0/ours (conflict)
    arp_unsolicited,   // reply for an address we did not ask about
    static_protected,  // ARP tried to change a static entry
    table_full,        // no free or evictable entry
    pending_full,      // the per-neighbour or total pending bound was reached
    frame_too_large,   // a frame to hold exceeded max_frame
    no_route,          // off-subnet destination without a gateway
    unresolved,        // pending frames dropped when resolution gave up
    output_full,       // no room for an ARP reply
    count_
};
inline constexpr std::size_t neighbor_drop_count = static_cast<std::size_t>(neighbor_drop::count_);
const char* to_string(neighbor_drop d) noexcept;

struct neighbor_stats {
    std::array<std::uint64_t, neighbor_drop_count> drops{};
    std::uint64_t requests_sent = 0, replies_sent = 0, learned = 0, expired = 0, released = 0;
    std::uint64_t operator[](neighbor_drop d) const noexcept {
        return drops[static_cast<std::size_t>(d)];
    }
};

class neighbor_table {
  public:
    enum class state : std::uint8_t { free, incomplete, reachable, permanent };
    enum class send_result : std::uint8_t { ready, queued, dropped };

    neighbor_table(const interface_config& iface, const neighbor_config& cfg = {});

    const interface_config& interface() const noexcept { return iface_; }
    bool on_link(std::uint32_t ip) const noexcept;
    // The address whose MAC a frame to dst needs: dst on the subnet, else the gateway; 0 if none.
    std::uint32_t next_hop(std::uint32_t dst) const noexcept;

    void add_static(std::uint32_t ip, const wire::mac_address& mac);
    // A usable MAC for ip (reachable and not expired, or static).
    std::optional<wire::mac_address> lookup(std::uint32_t ip, std::uint64_t now) const noexcept;
    // The same, for the per-frame path: a pointer into the table (nullptr if none), valid until
    // the table changes. Returning the 6-byte MAC in an optional goes through the stack and
    // stalls the load that reads it back (store forwarding across mismatched widths).
    const wire::mac_address* usable(std::uint32_t ip, std::uint64_t now) const noexcept;
    state state_of(std::uint32_t ip) const noexcept;
    // Starts resolving ip unless it is already known or being resolved. Returns true if known.
    bool resolve(std::uint32_t ip, std::uint64_t now) noexcept;

    // A frame for next hop `hop` that has no MAC yet: held (a copy) until the ARP reply arrives,
    // then released by poll_output with its Ethernet destination filled. With a MAC known,
    // returns ready and sets mac; the caller sends the frame itself.
    send_result send_or_hold(std::uint32_t hop, std::span<const std::uint8_t> frame,
                             std::uint64_t now, wire::mac_address& mac) noexcept;

    // A received ARP packet (already decoded). Learns the sender where RFC 826 says to and queues
    // a reply to a request for our address.
    void on_arp(const wire::arp_packet& arp, std::uint64_t now) noexcept;

    // Writes the next frame to send (an ARP reply, a due ARP request, or a held frame whose
    // neighbour resolved) into out and returns its length; 0 when nothing is due. Also expires
    // entries and gives up on resolutions past max_requests.
    std::size_t poll_output(std::uint64_t now, std::span<std::uint8_t> out) noexcept;
    // When poll_output next has work without new input: 0 = now, UINT64_MAX = never.
    std::uint64_t next_deadline() const noexcept;

    const neighbor_stats& stats() const noexcept { return stats_; }
    std::size_t size() const noexcept;

  private:
    struct entry {
        std::uint32_t ip = 0;
        wire::mac_address mac;
        state st = state::free;
        std::uint64_t expires = 0;   // reachable: until when; incomplete: next request
        std::uint32_t requests = 0;  // ARP requests sent in this resolution
        std::uint32_t pending = 0;   // frames held for this entry
        bool request_due = false;    // send a request on the next poll_output
    };
    struct held_frame {
        std::uint32_t hop = 0;
        std::uint32_t length = 0;  // 0 = slot free
        std::uint64_t seq = 0;     // keeps release in arrival order
    };

    entry* find(std::uint32_t ip) noexcept;
    const entry* find(std::uint32_t ip) const noexcept;
    entry* allocate(std::uint32_t ip, std::uint64_t now) noexcept;
    void learn(entry& e, const wire::mac_address& mac, std::uint64_t now) noexcept;
    void drop(neighbor_drop d, std::uint64_t n = 1) noexcept {
        stats_.drops[static_cast<std::size_t>(d)] += n;
    }
    void drop_held(std::uint32_t hop) noexcept;
    std::size_t write_arp(std::uint16_t op, const wire::mac_address& dst_mac, std::uint32_t tpa,
                          const wire::mac_address& tha, std::span<std::uint8_t> out) noexcept;
    std::size_t release_held(std::uint64_t now, std::span<std::uint8_t> out) noexcept;
    void age(std::uint64_t now) noexcept;
    // Bookkeeping that lets the per-poll paths skip the table walk: an entry's expiry was set
    // (age() has work at that time), or a request became due.
    void note_expiry(std::uint64_t t) noexcept { age_at_ = std::min(age_at_, t); }
    void mark_request_due(entry& e) noexcept {
        e.request_due = true;
        requests_due_ = true;
    }

    interface_config iface_;
    neighbor_config cfg_;
    std::vector<entry> entries_;
    std::vector<held_frame> held_;
    std::vector<std::uint8_t> held_bytes_;  // held_.size() * max_frame
    std::uint64_t held_seq_ = 0;
    std::size_t held_count_ = 0;
    struct reply {
        wire::mac_address mac;
        std::uint32_t ip = 0;
    };
    std::vector<reply> replies_;  // ring of ARP replies to send
    std::size_t reply_head_ = 0, reply_count_ = 0;
    // poll_output runs on every transmit burst: age() walks the table only once the earliest
    // expiry it tracks is due, and the request scan only when a request may be due.
    std::uint64_t age_at_ = std::numeric_limits<std::uint64_t>::max();
    bool requests_due_ = false;
    mutable std::size_t last_found_ = 0;  // the entry find() returned last (usually the peer)
    neighbor_stats stats_;
};

}  // namespace uet::host
