// The dpdk provider's attributes (fabric_attr::dpdk), checked and turned into values before any
// DPDK call: a bad address, neighbour or MTU is refused with a sentence saying what is wrong.
// DPDK-free, so the API tests check it without a port.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "uet/fabric.hpp"
#include "wire/eth.hpp"
#include "wire/ipv4.hpp"
#include "wire/uet_pds.hpp"
#include "wire/uet_ses.hpp"
#include "wire/uet_tss.hpp"

namespace uet::detail {

struct dpdk_settings {
    std::string device;
    std::vector<std::string> eal_args;
    std::uint32_t ip = 0;  // host order
    std::uint8_t prefix_len = 24;
    std::uint32_t gateway = 0;
    std::vector<std::pair<std::uint32_t, wire::mac_address>> neighbors;
    std::uint32_t port_mtu = 1500;
    bool trust_link_mtu = false, busy_poll = false;
    bool time_stages = false;  // dpdk_attr::time_stages
    std::uint64_t rto_ns = 0;
    std::uint32_t max_retransmits = 0;
    std::uint32_t ack_every = 0;      // dpdk_attr::ack_every; 0: the engine's default
    std::uint32_t zero_copy_min = 0;  // 0: off
    zero_copy_policy zero_copy = zero_copy_policy::automatic;
    checksum_policy udp_checksum = checksum_policy::automatic;
};

// Defaults of the real-port engine: an RTT there is tens of microseconds to milliseconds (two
// busy processes sharing cores, back-off sleeps), so a first RTO of a few ms keeps spurious
// retransmissions rare; with the doubling up to rto_max a dead peer is declared after ~1 s.
inline constexpr std::uint64_t dpdk_default_rto_ns = 5'000'000;
inline constexpr std::uint64_t dpdk_rto_max_ns = 50'000'000;
inline constexpr std::uint32_t dpdk_default_retransmits = 24;
// The window in packets (engine mpr): what the rings of af_packet (512 frames) and memif take at
// once. ACKs coalesced over more packets than that would come only when the window is full.
inline constexpr std::uint32_t dpdk_window_packets = 256;

// The most a UET frame adds to fabric_attr.mtu (SES payload bytes): Ethernet, IPv4, UDP, the
// entropy header, the largest PDS request header and the largest SES request header with its
// largest extension.
inline constexpr std::size_t frame_overhead =
    wire::eth_header::wire_size + wire::ipv4_header::wire_size + wire::udp_header::wire_size +
    wire::entropy_header::wire_size + wire::pds_rud_rod_cc_request::wire_size +
    wire::ses_standard_request::wire_size + wire::ses_cas_extension::wire_size;
static_assert(frame_overhead == dpdk_frame_overhead, "fabric.hpp announces the header bytes");

// Checks attr.dpdk (and attr.mtu as far as possible without the port). False with the reason in
// why.
bool parse_dpdk_settings(const fabric_attr& attr, dpdk_settings& out, std::string& why);

// "10.0.0.1" -> host order; false on anything else.
bool parse_ipv4(const std::string& text, std::uint32_t& out);

}  // namespace uet::detail
