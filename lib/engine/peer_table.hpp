// The peers an engine knows: their addresses, the fixed headers of the frames to them, their
// message queues and the PDCs they use, found by UET address: IPv4 address (the fabric endpoint)
// and PIDonFEP (the process behind it; 0 where a FEP runs one). Entries are added by add_peer()
// or by a source that opens state here, and a learned entry holding nothing may be given back.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/flat_map.hpp"
#include "engine/engine.hpp"
#include "pds/rudi.hpp"
#include "ses/message.hpp"
#include "ses/reassembly.hpp"
#include "wire/frame.hpp"

namespace uet {

inline constexpr std::uint32_t none = 0xffffffffu;

// The peer id of a source that is not in the peer table: what is sent back to it without
// keeping state (a NACK, a RUDI response, the ACK of a stale CLOSE) goes through a scratch entry
// rebuilt for each such frame, so frames from forged sources never take a table entry.
inline constexpr std::uint32_t transient_peer = 0xfffffffeu;

// The initiator PDCs a peer can have, one per slot: slot 0 is RUD's first, slot 1 ROD's, slots
// 2.. the further RUD PDCs of engine_config::parallel_pdcs. Each slot queues its own messages.
inline constexpr std::size_t rod_slot = 1;
inline constexpr std::size_t pdc_slots = 1 + max_parallel_pdcs;

struct peer_state {
    wire::mac_address mac;
    std::uint32_t ip = 0;
    std::uint16_t pid = 0;  // PIDonFEP (12 bits): its SES requests name it
    // Ethernet/IPv4/UDP of the frames to this peer: data (ECN-capable) and control (ACK class).
    wire::udp_header_template data_header, control_header;
    // RUD/ROD ids keep the top bits they start with (our PIDonFEP, engine_config::fep_pids):
    // advance_message_id() counts below them.
    std::array<std::uint16_t, delivery_mode_count> next_message_id{};
    std::uint16_t message_id_prefix_mask = 0;
    std::uint32_t messages = 0;     // posted to it and not released
    std::uint32_t target_pdcs = 0;  // its target PDCs open here
    // Added by a packet it sent, not by add_peer() or keep_peer(): such an entry holding no
    // state may be given to a new source when the table is full.
    bool learned = false;
    std::array<ses::message_queue, pdc_slots> queue;  // messages not fully segmented
    std::array<std::uint32_t, pdc_slots> pdc = filled_with_none();
    std::array<bool, pdc_slots> waiting_for_pdc{};
    std::array<std::uint64_t, pdc_slots> queued_bytes{};  // not yet cut into packets
    std::uint32_t next_rud_lane = 0;                      // round robin over the RUD slots
    // RUDI has no PDC: its RTT estimator (RFC 6298, as a PDC's) lives with the peer.
    pds::rtt_estimate rudi_rtt;

    // The slot a new message of this mode goes to (RUD: the next of parallel_pdcs, in turn).
    std::size_t slot_for(delivery_mode m, std::uint32_t parallel_pdcs) noexcept {
        if (m == delivery_mode::rod) return rod_slot;
        const std::uint32_t lane = next_rud_lane;
        next_rud_lane = lane + 1 == parallel_pdcs ? 0 : lane + 1;
        return lane == 0 ? 0 : std::size_t{lane} + 1;
    }

    void advance_message_id(std::size_t mode) noexcept {
        std::uint16_t& id = next_message_id[mode];
        const std::uint16_t keep =
            mode <= static_cast<std::size_t>(delivery_mode::rod) ? message_id_prefix_mask : 0;
        id = static_cast<std::uint16_t>((id & keep) | ((id + 1) & ~keep));
    }

    static std::array<std::uint32_t, pdc_slots> filled_with_none() {
        std::array<std::uint32_t, pdc_slots> a;
        a.fill(none);
        return a;
    }
};

class peer_table {
  public:
    explicit peer_table(const engine_config& cfg);

    peer_state& operator[](std::uint32_t id) noexcept { return peers_[id]; }
    const peer_state& operator[](std::uint32_t id) const noexcept { return peers_[id]; }
    // An entry or, for transient_peer, the scratch entry.
    const peer_state& at(std::uint32_t id) const noexcept {
        return id == transient_peer ? transient_ : peers_[id];
    }
    // The entries made so far (ids below it are valid, forgotten ones included).
    std::uint32_t count() const noexcept { return count_; }
    std::uint32_t ip_of(std::uint32_t id) const noexcept { return id < count_ ? peers_[id].ip : 0; }
    // The caller refers to the peer from now on: it is not given back.
    void keep(std::uint32_t id) noexcept {
        if (id < count_) peers_[id].learned = false;
    }
    void set_mac(std::uint32_t id, const wire::mac_address& mac) {
        peers_[id].mac = mac;
        build_headers(peers_[id]);
    }
    peer_state& transient() noexcept { return transient_; }

    static std::uint64_t key(std::uint32_t ip, std::uint16_t pid) noexcept {
        return (std::uint64_t{pid} << 32) | ip;
    }
    std::uint32_t find(std::uint32_t ip, std::uint16_t pid) const {
        const auto found = by_address_.find(key(ip, pid));
        return found ? *found : none;
    }
    // find() with the last peer found tried first (frames come mostly from the one before).
    std::uint32_t find_source(std::uint32_t ip, std::uint16_t pid) {
        // An entry forgotten is set to address 0, which no frame comes from.
        if (last_ != none && peers_[last_].ip == ip && peers_[last_].pid == pid) [[likely]]
            return last_;
        if (const std::uint32_t p = find(ip, pid); p != none) return last_ = p;
        return none;
    }
    // The table's entry for a received frame's source, or transient_peer (the scratch entry
    // set to its addresses) when it has none: the receive paths look up, they do not add.
    std::uint32_t source(const wire::mac_address& mac, std::uint32_t ip, std::uint16_t pid);
    // Whether add_entry() finds an entry without one being given back first.
    bool has_room() const noexcept { return !free_.empty() || peers_.size() < max_peers_; }
    // A new entry (there is room): a free one or a new one.
    std::uint32_t add_entry(const wire::mac_address& mac, std::uint32_t ip, std::uint16_t pid);
    std::uint32_t evictable(const ses::reassembly& reassembly);
    // The entry goes back to the free list.
    void forget(std::uint32_t id);
    // The fixed headers of the peer's frames, rebuilt whenever its address changes.
    void build_headers(peer_state& to) const;

  private:
    std::vector<peer_state> peers_;
    // peers_.size(), which divides by sizeof(peer_state): asked at every post.
    std::uint32_t count_ = 0;
    peer_state transient_;             // transient_peer's entry
    std::vector<std::uint32_t> free_;  // entries given back by forget()
    std::uint32_t evict_cursor_ = 0;   // where evictable() looks next
    pds::flat_map by_address_;         // key(ip, pid)
    std::uint32_t last_ = none;        // the peer find_source() found last
    std::uint32_t max_peers_;
    // Our side of the peer headers.
    wire::mac_address mac_;
    std::uint32_t ip_;
    std::uint16_t udp_port_;
    std::uint16_t message_id_prefix_ = 0, message_id_prefix_mask_ = 0;
    std::uint8_t data_dscp_, ack_dscp_;
};

}  // namespace uet
