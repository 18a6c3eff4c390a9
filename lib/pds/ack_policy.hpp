// When a receiver acknowledges (uet-htsim's policy): at once for the first packet of a PDC, a
// packet with AR set, an ECN-CE mark, a duplicate; otherwise once ack_every_bytes of payload
// (16 KiB) or ack_every_packets packets have arrived since the last ACK. The packet count is
// ours: with one-byte messages 16 KiB would be thousands of packets, far beyond a SACK's reach.
#pragma once

#include <cstdint>

namespace uet::pds {

enum class ack_reason : std::uint8_t {
    none,  // coalesce: no ACK now
    first,
    ack_request,
    ecn,
    duplicate,
    bytes,
    packets,
};

class ack_policy {
  public:
    void configure(std::uint32_t every_bytes, std::uint32_t every_packets) noexcept {
        every_bytes_ = every_bytes;
        every_packets_ = every_packets;
        reset();
    }
    void reset() noexcept { bytes_ = packets_ = 0; }

    ack_reason on_packet(bool first, bool ar, bool ce, bool duplicate,
                         std::uint32_t bytes) noexcept {
        bytes_ += bytes;
        ++packets_;
        if (first) return ack_reason::first;
        if (ar) return ack_reason::ack_request;
        if (ce) return ack_reason::ecn;
        if (duplicate) return ack_reason::duplicate;
        if (bytes_ >= every_bytes_) return ack_reason::bytes;
        if (packets_ >= every_packets_) return ack_reason::packets;
        return ack_reason::none;
    }
    // Packets arrived since the last ACK.
    bool pending() const noexcept { return packets_ > 0; }
    // An ACK went out: start counting afresh.
    void on_ack_sent() noexcept { reset(); }

  private:
    std::uint32_t every_bytes_ = 16384;
    std::uint32_t every_packets_ = 16;
    std::uint32_t bytes_ = 0;
    std::uint32_t packets_ = 0;
};

}  // namespace uet::pds
