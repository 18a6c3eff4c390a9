// The host side of one interface, as a frame_handler wrapped around the engine's: it answers ARP
// and ICMP echo for our address, resolves next-hop MACs (holding frames until ARP answers), fills
// the Ethernet addresses of every frame the inner handler sends, and passes UET and RoCEv2
// frames addressed to us up to the inner handler. So the engine works at the IP level and never
// sees ARP. Sans-I/O like the engine: testable without DPDK.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/byte_pattern.hpp"
#include "host/frame_handler.hpp"
#include "host/neighbor.hpp"
#include "host/steering.hpp"

namespace uet::host {

struct host_config {
    interface_config iface;
    neighbor_config neighbors;
    steering_config steering;
    bool answer_ping = true;
    std::size_t icmp_slots = 8;  // echo replies waiting for transmit
    // Frames the inner handler sends to our own address (an endpoint talking to itself, as MPI
    // ranks do) come back to it as received frames, as Linux's loopback route does: they never
    // reach the port, where no host would answer for them. Slots of frames waiting to come back.
    std::size_t loopback_slots = 64;
};

enum class host_drop : std::uint8_t {
    not_our_mac,      // unicast to another MAC (promiscuous ports such as af_packet)
    not_our_ip,       // IPv4 to another address
    other_ethertype,  // see traffic_class
    other_ip,
    other_udp,
    runt,
    bad_arp,  // ARP that does not decode as Ethernet/IPv4
    bad_ip,   // ICMP frame whose IPv4 header does not check
    icmp_truncated,
    icmp_bad_checksum,
    icmp_not_echo_request,
    icmp_queue_full,
    icmp_too_large,
    tx_not_ipv4,           // the inner handler produced a frame without an IPv4 header
    tx_too_large_to_hold,  // a frame waiting for ARP is larger than a hold slot
    count_
};
inline constexpr std::size_t host_drop_count = static_cast<std::size_t>(host_drop::count_);
const char* to_string(host_drop d) noexcept;

struct host_stats {
    std::array<std::uint64_t, host_drop_count> drops{};
    steering_counters received;  // every frame by class, before any drop
    std::uint64_t to_inner = 0, from_inner = 0, held = 0, echo_replies = 0;
    // Frames to our own address turned back to the inner handler, and those dropped because
    // every loopback slot was taken (or, larger than max_frame, none could hold them).
    std::uint64_t looped_back = 0, loopback_dropped = 0;
    std::uint64_t operator[](host_drop d) const noexcept {
        return drops[static_cast<std::size_t>(d)];
    }
};

class host_stack final : public frame_handler {
  public:
    host_stack(const host_config& cfg, frame_handler& inner);

    void on_start(const io_caps& caps) override;
    void on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) override;
    void on_receive_classified(std::span<const std::uint8_t> frame, const classification& c,
                               const steering_config& by, std::uint64_t now) override;
    void on_receive_burst(std::span<const rx_frame> frames, const steering_config* by,
                          std::uint64_t now) override;
    // As the inner handler does: a frame in two pieces goes on as it is where it is the
    // inner handler's (a UET frame to us), and is joined where this stack reads it.
    bool takes_split_frames() const noexcept override { return inner_.takes_split_frames(); }
    std::size_t on_transmit(std::uint64_t now, std::span<tx_frame> frames) override;
    std::uint64_t next_deadline() const override;

    neighbor_table& neighbors() noexcept { return neighbors_; }
    const neighbor_table& neighbors() const noexcept { return neighbors_; }
    const host_stats& stats() const noexcept { return stats_; }
    const host_config& config() const noexcept { return cfg_; }

  private:
    // Whole frames in preallocated slots of max_frame bytes, oldest first: echo replies waiting
    // to go, frames to our own address waiting to come back.
    struct frame_ring {
        frame_ring(std::size_t slots, std::size_t max_frame);
        bool full() const noexcept { return count == len.size(); }
        std::span<std::uint8_t> room() noexcept;  // the slot push() fills
        void push(std::size_t length) noexcept;
        std::span<const std::uint8_t> front() const noexcept;
        void pop() noexcept;
        std::size_t max_frame;
        std::vector<std::uint8_t> bytes;
        std::vector<std::uint32_t> len;
        std::size_t head = 0, count = 0;
    };
    void dispatch(std::span<const std::uint8_t> frame, const classification& c, std::uint64_t now);
    // Counts the frame and takes what is the stack's own (ARP, ICMP) or dropped; true for a frame
    // the inner handler is to have.
    bool admit(std::span<const std::uint8_t> frame, const classification& c, std::uint64_t now);
    void drop(host_drop d) noexcept { ++stats_.drops[static_cast<std::size_t>(d)]; }
    void receive_arp(std::span<const std::uint8_t> frame, std::uint64_t now) noexcept;
    void receive_icmp(std::span<const std::uint8_t> frame) noexcept;
    std::size_t emit_control(std::uint64_t now, std::span<tx_frame> frames) noexcept;
    // The next hop the last frame of one on_transmit() call went to: the table cannot change
    // within a call, and most frames of a burst go where the one before went.
    struct burst_route {
        bool valid = false;
        std::uint32_t dst_ip = 0;
        wire::mac_address mac;
    };
    bool address(tx_frame& f, std::uint64_t now, burst_route& last) noexcept;
    // address() of a frame to last's destination (true), without a lookup.
    bool address_again(tx_frame& f, const burst_route& last) noexcept;
    // A frame of the inner handler to our own address: copied (external payload joined) into a
    // loopback slot, its checksums completed where the port was to compute them.
    void loop_back(const tx_frame& f, const classification& c) noexcept;
    // The looped frames queued before the call, to the inner handler as received frames.
    void deliver_looped(std::uint64_t now);

    host_config cfg_;
    // What nearly every received frame is, recognised at once: untagged IPv4 without options,
    // not a fragment, UDP to the UET port, to our MAC and IP (classify() and admit()'s answer
    // for it is uet, to the inner handler). The first 48 bytes hold every field it names.
    byte_pattern<48> uet_to_us_;
    frame_handler& inner_;
    neighbor_table neighbors_;
    frame_ring icmp_;                    // echo replies
    frame_ring loop_;                    // frames to our own address
    std::vector<std::uint8_t> scratch_;  // a held frame with its external payload joined
    std::vector<std::uint8_t> joined_;   // a received frame in two pieces, joined (max_frame)
    host_stats stats_;
};

}  // namespace uet::host
