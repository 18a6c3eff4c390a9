// Software steering: a cheap look at the first header bytes of a received frame that decides
// where it goes (the engine for UET and RoCEv2, the host stack for ARP and ICMP, nowhere for the
// rest). Used in the receive path of ports whose NIC refused rte_flow rules; checksums are left
// to whoever consumes the frame.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "wire/bytes.hpp"
#include "wire/ipv4.hpp"

namespace uet::host {

enum class traffic_class : std::uint8_t {
    uet,   // IPv4/UDP to the UET port
    roce,  // IPv4/UDP to the RoCEv2 port
    arp,
    icmp,             // IPv4 ICMP (unfragmented)
    other_udp,        // UDP to another port
    other_ip,         // another IP protocol, a non-first fragment, or a bad IP version/IHL
    other_ethertype,  // neither IPv4 nor ARP (IPv6, LLDP, ...)
    runt,             // shorter than the headers it announces
    count_
};
inline constexpr std::size_t traffic_class_count = static_cast<std::size_t>(traffic_class::count_);
const char* to_string(traffic_class c) noexcept;

struct steering_config {
    std::uint16_t uet_port = wire::uet_udp_port;
    std::uint16_t roce_port = wire::roce_udp_port;
};

struct classification {
    traffic_class cls = traffic_class::runt;
    std::uint16_t l3_offset = 0;  // where the IPv4 header or ARP packet starts
    std::uint32_t dst_ip = 0;     // host order; IPv4 classes only
};

// Any frame, every case.
classification classify_general(std::span<const std::uint8_t> frame,
                                const steering_config& cfg) noexcept;

// The same answer. The frame nearly all traffic arrives in (untagged IPv4 without options, not a
// fragment, UDP to the UET port) is recognised inline in a few loads, without the general
// function's call and its branches for every other case (steering_test compares the two).
inline classification classify(std::span<const std::uint8_t> frame,
                               const steering_config& cfg) noexcept {
    constexpr std::size_t eth = 14, udp_end = eth + 20 + 8;
    const std::uint8_t* f = frame.data();
    if (frame.size() >= udp_end && wire::load_be16(f + 12) == 0x0800 && f[eth] == 0x45 &&
        f[eth + 9] == 17 && (wire::load_be16(f + eth + 6) & 0x3fff) == 0 &&
        wire::load_be16(f + eth + 22) == cfg.uet_port)
        return {traffic_class::uet, eth, wire::load_be32(f + eth + 16)};
    return classify_general(frame, cfg);
}

// Per-class counters of a receive path.
struct steering_counters {
    std::array<std::uint64_t, traffic_class_count> frames{};
    void count(traffic_class c, std::uint64_t n = 1) noexcept {
        frames[static_cast<std::size_t>(c)] += n;
    }
    std::uint64_t operator[](traffic_class c) const noexcept {
        return frames[static_cast<std::size_t>(c)];
    }
};

// True for the classes a port running software steering hands to the stack (engine traffic and
// what the host stack answers); false for traffic that is "left alone", i.e. dropped and counted.
inline bool steer_to_stack(traffic_class c) noexcept {
    return c == traffic_class::uet || c == traffic_class::roce || c == traffic_class::arp ||
           c == traffic_class::icmp;
}

}  // namespace uet::host
