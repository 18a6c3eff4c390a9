// Ethernet II, 802.1Q VLAN tag and Ethernet/IPv4 ARP.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "wire/fields.hpp"
#include "wire/reject.hpp"

namespace uet::wire {

inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ethertype_arp = 0x0806;
inline constexpr std::uint16_t ethertype_vlan = 0x8100;

// "IPv4", "ARP", "802.1Q", or nullptr for anything else.
const char* ethertype_name(std::uint16_t ethertype) noexcept;

struct mac_address {
    std::array<std::uint8_t, 6> octets{};

    static constexpr mac_address broadcast() noexcept {
        return {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
    }
    bool is_broadcast() const noexcept { return *this == broadcast(); }
    bool is_multicast() const noexcept { return (octets[0] & 1) != 0; }
    // "02:00:00:00:00:01", lower case.
    std::string to_string() const;
    // Accepts "aa:bb:cc:dd:ee:ff" or "aa-bb-cc-dd-ee-ff" (either case).
    static std::optional<mac_address> parse(std::string_view text) noexcept;

    // Two loads and a compare each, not a call to memcmp: the frame's bytes were often just
    // copied onto the stack in pieces, which a wide vector load of them cannot forward from.
    friend bool operator==(const mac_address& a, const mac_address& b) noexcept {
        std::uint32_t a4, b4;
        std::uint16_t a2, b2;
        std::memcpy(&a4, a.octets.data(), 4);
        std::memcpy(&b4, b.octets.data(), 4);
        std::memcpy(&a2, a.octets.data() + 4, 2);
        std::memcpy(&b2, b.octets.data() + 4, 2);
        return a4 == b4 && a2 == b2;
    }
};

struct eth_header {
    static constexpr std::size_t wire_size = 14;
    mac_address dst;
    mac_address src;
    std::uint16_t ethertype = 0;
};

// The 4 bytes after the source MAC when the outer ethertype is 0x8100: TCI and the inner ethertype.
struct vlan_tag {
    static constexpr std::size_t wire_size = 4;
    std::uint8_t pcp = 0;  // 3 bits
    bool dei = false;
    std::uint16_t vid = 0;        // 12 bits
    std::uint16_t ethertype = 0;  // of what follows the tag
};

inline constexpr std::uint16_t arp_op_request = 1;
inline constexpr std::uint16_t arp_op_reply = 2;

// ARP for IPv4 over Ethernet only (htype 1, ptype 0x0800, hlen 6, plen 4); addresses host order.
struct arp_packet {
    static constexpr std::size_t wire_size = 28;
    std::uint16_t op = arp_op_request;
    mac_address sha;
    std::uint32_t spa = 0;
    mac_address tha;
    std::uint32_t tpa = 0;
};

std::size_t encode(const eth_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, eth_header& out) noexcept;
void visit(const eth_header& h, field_visitor& v);

std::size_t encode(const vlan_tag& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, vlan_tag& out) noexcept;
void visit(const vlan_tag& h, field_visitor& v);

// decode rejects other hardware/protocol types, address sizes and operations with bad_arp.
std::size_t encode(const arp_packet& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, arp_packet& out) noexcept;
void visit(const arp_packet& h, field_visitor& v);

}  // namespace uet::wire
