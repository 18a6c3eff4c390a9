// The leave handshake of a memif port (no DPDK here, so it is unit-tested on its own).
//
// Why: DPDK's memif driver unmaps the shared rings from its interrupt thread as soon as the peer
// disconnects, while this process's poll loop may be inside a burst on those rings. A peer that
// simply closes can crash the other side (e.g. uet-perf's client, still polling after the
// server refused it and left).
//
// So a memif port leaves in two steps. It sends `leaving` and closes only once the peer has
// answered `ack`. A port that answered never bursts on its rings again until the link has gone
// down and come back up (a new connection, new rings): its frames are dropped and counted, as on
// a link that is down. Two ports leaving at once: the one with the lower MAC address answers and
// waits for the link to go down; the other closes on the answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "wire/eth.hpp"

namespace uet::dpdk::goodbye {

enum class kind : std::uint8_t { leaving = 1, ack = 2 };

inline constexpr std::uint16_t ethertype = 0x88b5;  // IEEE 802 local experimental ethertype 1
inline constexpr std::size_t frame_size = 60;       // the Ethernet minimum, without FCS

struct message {
    kind k;
    wire::mac_address sender;
};

// Writes the frame into out (at least frame_size bytes); returns its length, 0 if out is short.
std::size_t build(std::span<std::uint8_t> out, const wire::mac_address& sender, kind k) noexcept;

// The message a frame carries, or nothing when it is not one (any other frame, or a short or
// unknown one: remote input, so checked, never trusted).
std::optional<message> parse(std::span<const std::uint8_t> frame) noexcept;

// Cheap first test for the receive path: the ethertype only.
inline bool maybe(std::span<const std::uint8_t> frame) noexcept {
    return frame.size() >= 14 && frame[12] == (ethertype >> 8) && frame[13] == (ethertype & 0xff);
}

}  // namespace uet::dpdk::goodbye
