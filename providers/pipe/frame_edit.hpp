// In-place frame edits the impairment pipe applies, as a switch on the path would: ECN CE
// marking, trimming, and a single bit flip. Each first locates the headers itself (Ethernet,
// one optional 802.1Q tag, IPv4, UDP) without verifying checksums, and leaves anything it does
// not understand untouched; malformed input never reads past the frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/rng.hpp"

namespace uet::pipe {

struct frame_layout {
    std::size_t ip = 0;      // offset of the IPv4 header; 0 if not IPv4
    std::size_t ip_end = 0;  // offset just past the IP packet (IPv4 total length)
    std::size_t udp = 0;     // offset of the UDP header; 0 if not UDP
    bool ipv4() const noexcept { return ip != 0; }
    bool is_udp() const noexcept { return udp != 0; }
};

// IPv4 when the header fits, IHL >= 5 and the total length fits in the frame; UDP when the
// protocol is 17 and the IP payload holds a UDP header.
frame_layout locate(std::span<const std::uint8_t> frame) noexcept;

// Re-marks an ECT(0)/ECT(1) IPv4 packet CE and updates the header checksum (RFC 1624). Returns
// false, leaving the frame alone, for Not-ECT, CE already, or non-IPv4 frames.
bool mark_ce(std::span<std::uint8_t> frame) noexcept;

// Writes id into an IPv4 packet's identification and updates the header checksum (RFC 1624),
// as a switch that stamps a path ID there does (the field means nothing to a datagram that is
// not fragmented, RFC 6864). Returns false, leaving the frame alone, if it is not IPv4.
bool set_ip_id(std::span<std::uint8_t> frame, std::uint16_t id) noexcept;

// Trims an IPv4/UDP frame as a packet-trimming switch does: UDP payload cut to keep bytes
// (clamped to what is there), DSCP set to dscp (ECN bits kept), IPv4 total length and header
// checksum fixed, UDP length fixed, UDP checksum set to 0 (the switch does not recompute it),
// Ethernet padding dropped. Returns the new frame length, or 0 (frame untouched) if the frame
// is not IPv4/UDP.
std::size_t trim_frame(std::span<std::uint8_t> frame, std::uint16_t keep,
                       std::uint8_t dscp) noexcept;

// Flips one uniformly chosen bit of the UDP payload, so that a non-zero UDP checksum catches
// it; frames with no UDP payload get the bit flipped anywhere after the Ethernet header (the
// IPv4 header checksum usually catches those). Returns false if there is nothing to flip.
bool flip_bit(std::span<std::uint8_t> frame, rng& r) noexcept;

}  // namespace uet::pipe
