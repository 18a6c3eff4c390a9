// Whole Ethernet frames: Ethernet [+ 802.1Q] + IPv4 [+ UDP] + payload, or ARP; build and parse.
// Builders do not pad short frames to 60 bytes (the NIC or kernel does), and parse_l2l4 ignores
// any Ethernet padding after the IP packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "wire/eth.hpp"
#include "wire/ipv4.hpp"
#include "wire/reject.hpp"

namespace uet::wire {

struct frame_spec {
    mac_address src_mac, dst_mac;
    std::optional<vlan_tag> vlan;          // its ethertype is ignored: the builder sets it
    std::uint32_t src_ip = 0, dst_ip = 0;  // host order
    std::uint8_t dscp = 0, ecn = 0, ttl = 64;
    std::uint16_t ip_id = 0;
    bool df = true;                            // don't fragment; the stack never fragments
    std::uint16_t src_port = 0, dst_port = 0;  // UDP only; dst_port e.g. uet_udp_port
    // false: send UDP checksum 0 (none), as RoCEv2 NICs usually do; the ICRC covers the data.
    bool udp_checksum = true;
};

// Bytes before the UDP payload (udp = true) or the IP payload (udp = false).
std::size_t frame_header_size(const frame_spec& s, bool udp) noexcept;

// Eth[+VLAN]+IPv4+UDP+payload with IP and UDP checksums filled. Returns the frame length, or 0
// if out is too small or the payload does not fit in one IP packet.
std::size_t build_udp_frame(const frame_spec& s, std::span<const std::uint8_t> udp_payload,
                            std::span<std::uint8_t> out) noexcept;
// Eth[+VLAN]+IPv4+payload with the given protocol (UET over IP uses ip_proto_uet).
std::size_t build_ip_frame(const frame_spec& s, std::uint8_t ip_protocol,
                           std::span<const std::uint8_t> ip_payload,
                           std::span<std::uint8_t> out) noexcept;
// Eth[+VLAN]+ARP, from s.src_mac, s.dst_mac and s.vlan only.
std::size_t build_arp_frame(const frame_spec& s, const arp_packet& arp,
                            std::span<std::uint8_t> out) noexcept;

// Zero-copy form of build_udp_frame: the caller has already written udp_payload_len bytes at
// out[frame_header_size(s, true)]; this writes every header in front and the checksums.
std::size_t finish_udp_frame(const frame_spec& s, std::size_t udp_payload_len,
                             std::span<std::uint8_t> out) noexcept;
// The same, when the UDP payload bytes from payload_summed_from to its end were written by
// checksum_copy, whose result is payload_sum: the checksum reads only the bytes before them.
std::size_t finish_udp_frame(const frame_spec& s, std::size_t udp_payload_len,
                             std::span<std::uint8_t> out, std::size_t payload_summed_from,
                             std::uint32_t payload_sum) noexcept;
// Same for an IP frame without UDP.
std::size_t finish_ip_frame(const frame_spec& s, std::uint8_t ip_protocol,
                            std::size_t ip_payload_len, std::span<std::uint8_t> out) noexcept;
// Recomputes the UDP checksum of a frame finish_udp_frame produced (after the caller changed
// the payload, e.g. to store a RoCE ICRC). A no-op when s.udp_checksum is false.
void refresh_udp_checksum(const frame_spec& s, std::span<std::uint8_t> frame) noexcept;

// The Ethernet + IPv4 + UDP headers (no VLAN tag) of every frame from this host to one peer in
// one traffic class, built once from a frame_spec: per frame only the lengths, the IP ID, the
// IP checksum and the UDP source port change, and write() stores just those over a copy of the
// rest. The bytes are finish_udp_frame's with a zero UDP checksum (wire_l2l4_test compares
// them); a caller that wants the checksum fills it in after.
class udp_header_template {
  public:
    static constexpr std::size_t size =
        eth_header::wire_size + ipv4_header::wire_size + udp_header::wire_size;  // 42
    // Largest UDP payload one IPv4 packet carries.
    static constexpr std::size_t max_udp_payload =
        0xffff - ipv4_header::wire_size - udp_header::wire_size;

    // From s's addresses, DSCP/ECN, TTL, DF and destination port; s.vlan must be empty (false
    // otherwise, and the template is left unbuilt).
    bool build(const frame_spec& s) noexcept;
    // The 42 bytes at out (which must hold them) for udp_payload_len (<= max_udp_payload)
    // bytes after them.
    void write(std::uint8_t* out, std::uint16_t ip_id, std::uint16_t src_port,
               std::size_t udp_payload_len) const noexcept;

  private:
    std::uint8_t bytes_[size] = {};
    std::uint32_t fixed_sum_ = 0;  // the IPv4 header's words but its length, ID and checksum
};

struct l2l4_view {
    eth_header eth;
    std::optional<vlan_tag> vlan;
    enum class l3_kind { arp, ipv4 } l3 = l3_kind::ipv4;
    arp_packet arp;
    ipv4_header ip;
    std::optional<udp_header> udp;             // set when ip.protocol == 17
    std::span<const std::uint8_t> ip_packet;   // IP header start .. IP total_length (for the ICRC)
    std::span<const std::uint8_t> l4_payload;  // UDP payload, or the IP payload when not UDP
};

// Accepts ARP and IPv4 (optionally behind one 802.1Q tag) carrying UDP or IP protocol 253.
// Verifies the IPv4 header checksum and a non-zero UDP checksum, refuses fragments, requires
// the UDP length to equal the IP payload length, and ignores Ethernet padding beyond the IP
// total length. The spans in out point into frame. On an error out is left partly written: use
// it only when none is returned.
reject_reason parse_l2l4(std::span<const std::uint8_t> frame, l2l4_view& out) noexcept;

}  // namespace uet::wire
