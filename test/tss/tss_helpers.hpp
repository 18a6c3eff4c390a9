// Frames and domains for the TSS tests and benchmark.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tss/sublayer.hpp"
#include "wire/frame.hpp"
#include "wire/frame_engine.hpp"

namespace uet::tss::test {

inline std::vector<std::uint8_t> from_hex(std::string_view hex) {
    std::vector<std::uint8_t> out;
    auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<std::uint8_t>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
    return out;
}

// 10.0.0.1:sport -> 10.0.0.2:4793, MACs 02:..:01 -> 02:..:02, IP ID 0, DF, TTL 64.
inline std::vector<std::uint8_t> udp_frame(std::span<const std::uint8_t> payload,
                                           std::uint16_t sport = 0x1234, bool checksum = false,
                                           std::uint32_t src_ip = 0x0a000001) {
    wire::frame_spec s;
    s.src_mac = {{2, 0, 0, 0, 0, 1}};
    s.dst_mac = {{2, 0, 0, 0, 0, 2}};
    s.src_ip = src_ip;
    s.dst_ip = 0x0a000002;
    s.src_port = sport;
    s.dst_port = wire::uet_udp_port;
    s.udp_checksum = checksum;
    std::vector<std::uint8_t> f(64 + payload.size());
    f.resize(wire::build_udp_frame(s, payload, f));
    return f;
}

// The same addresses, UET over IP (protocol 253): the entropy header (entropy, 16 zero bits)
// then payload.
inline std::vector<std::uint8_t> ip_frame(std::span<const std::uint8_t> payload,
                                          std::uint16_t entropy = 0x1234) {
    wire::frame_spec s;
    s.src_mac = {{2, 0, 0, 0, 0, 1}};
    s.dst_mac = {{2, 0, 0, 0, 0, 2}};
    s.src_ip = 0x0a000001;
    s.dst_ip = 0x0a000002;
    std::vector<std::uint8_t> body{static_cast<std::uint8_t>(entropy >> 8),
                                   static_cast<std::uint8_t>(entropy), 0, 0};
    body.insert(body.end(), payload.begin(), payload.end());
    std::vector<std::uint8_t> f(64 + body.size());
    f.resize(wire::build_ip_frame(s, wire::ip_proto_uet, body, f));
    return f;
}

// The domain key of the hand-built frame: bytes 00..1f.
inline std::array<std::uint8_t, key_size> counting_key(std::uint8_t first = 0) {
    std::array<std::uint8_t, key_size> k;
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::uint8_t>(first + i);
    return k;
}

// Hands out `frame` once per transmit slot, built into the slot's room when it has one; keeps
// what it receives.
class stand_in final : public uet::frame_engine {
  public:
    std::vector<std::uint8_t> frame;
    std::size_t per_call = 2;
    std::size_t built_in_room = 0;
    std::vector<std::vector<std::uint8_t>> received;

    void receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                       const uet::wire::frame_rest*, std::uint64_t) override {
        for (auto f : frames)
            received.emplace_back(f.begin(), f.end());
    }
    std::size_t transmit(std::uint64_t, std::span<uet::tx_frame> out) override {
        const std::size_t n = std::min(per_call, out.size());
        for (std::size_t k = 0; k < n; ++k) {
            if (out[k].room.size() >= frame.size()) {
                std::copy(frame.begin(), frame.end(), out[k].room.begin());
                out[k].data = out[k].room.first(frame.size());
                ++built_in_room;
            } else {
                out[k].data = frame;
            }
        }
        return n;
    }
    std::uint64_t next_deadline() const override { return 0; }
    void stop_data() noexcept override {}
};

}  // namespace uet::tss::test
