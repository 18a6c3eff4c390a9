// ICMP echo (RFC 792) over IPv4: just enough for a peer's kernel to ping the stack. lib/wire has
// no ICMP and its parse_l2l4 refuses IP protocols other than UDP, so the IPv4 framing around the
// ICMP message is parsed here as well.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "wire/eth.hpp"
#include "wire/ipv4.hpp"

namespace uet::host {

inline constexpr std::uint8_t ip_proto_icmp = 1;
inline constexpr std::uint8_t icmp_echo_reply = 0;
inline constexpr std::uint8_t icmp_echo_request = 8;
inline constexpr std::size_t icmp_echo_header_size = 8;

struct icmp_echo {
    std::uint8_t type = icmp_echo_request;
    std::uint16_t id = 0;
    std::uint16_t sequence = 0;
    std::span<const std::uint8_t> data;  // points into the parsed message
};

enum class icmp_error : std::uint8_t { none, truncated, bad_checksum, not_echo };
const char* to_string(icmp_error e) noexcept;

// Parses an ICMP echo request or reply (the IP payload), verifying the checksum over the message.
icmp_error parse_icmp_echo(std::span<const std::uint8_t> message, icmp_echo& out) noexcept;
// Writes the echo message (header, data, checksum) to out; returns its size, 0 if out is short.
std::size_t build_icmp_echo(const icmp_echo& e, std::span<std::uint8_t> out) noexcept;

// An untagged or 802.1Q-tagged Ethernet/IPv4 frame split into its headers and IP payload (bounded
// by the IP total length, so Ethernet padding is excluded). Fragments are refused: a ping that
// needs reassembly is not answered.
struct ipv4_frame_view {
    wire::eth_header eth;
    std::optional<wire::vlan_tag> vlan;
    wire::ipv4_header ip;
    std::span<const std::uint8_t> payload;
};
enum class ipv4_frame_error : std::uint8_t { none, truncated, not_ipv4, bad_ip_header, fragment };
ipv4_frame_error parse_ipv4_frame(std::span<const std::uint8_t> frame,
                                  ipv4_frame_view& out) noexcept;

// The echo reply frame answering an echo request frame addressed to (our_mac, our_ip): MACs and
// addresses swapped, same id, sequence and data. Returns its length, 0 if out is too small.
std::size_t build_echo_reply_frame(const ipv4_frame_view& request, const icmp_echo& echo,
                                   const wire::mac_address& our_mac, std::uint32_t our_ip,
                                   std::span<std::uint8_t> out) noexcept;

}  // namespace uet::host
