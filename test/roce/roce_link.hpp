// Two RoCEv2 engines' frames carried between them in tests: a link that copies, loses, marks
// and filters frames, and the engines' addresses and configuration.
#pragma once

#include <array>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "roce_engine/engine.hpp"
#include "wire/frame.hpp"
#include "wire/ipv4.hpp"

namespace uet::roce::test {

using uet::tx_frame;
using uet::wire::mac_address;

constexpr std::uint32_t ip_a = 0x0a000001, ip_b = 0x0a000002;
const mac_address mac_a{{2, 0, 0, 0, 0, 1}}, mac_b{{2, 0, 0, 0, 0, 2}};

inline engine_config config_of(std::uint32_t ip, mac_address mac, retransmit_mode mode,
                               std::uint64_t seed) {
    engine_config c;
    c.ip = ip;
    c.mac = mac;
    c.seed = seed;
    c.qp.mode = mode;
    c.qp.max_outstanding = 128;
    c.qp.reorder_window_ns = 5000;
    c.qp.nak_repeat_ns = 20000;
    return c;
}

// Sets ECN to CE and the IPv4 checksum again, as a switch does; the ICRC leaves the TOS out.
inline void mark_ce(std::vector<std::uint8_t>& f) {
    f[15] |= 3;
    f[24] = f[25] = 0;
    const std::uint16_t sum = uet::wire::internet_checksum(std::span(f).subspan(14, 20));
    f[24] = static_cast<std::uint8_t>(sum >> 8);
    f[25] = static_cast<std::uint8_t>(sum);
}

// Moves frames one way: every frame copied, some lost (at random or by drop_if), some marked.
struct wire_link {
    std::mt19937_64 rng{7};
    double loss = 0;
    double mark = 0;  // share of ECT frames a congested switch marks CE
    std::function<bool(std::span<const std::uint8_t>)> drop_if;  // a frame to lose on purpose
    std::vector<std::vector<std::uint8_t>>* capture = nullptr;   // every frame delivered
    std::vector<std::vector<std::uint8_t>> frames;

    void carry(engine& from, engine& to, std::uint64_t now) {
        std::array<tx_frame, 32> out{};
        frames.clear();
        for (;;) {
            const std::size_t n = from.transmit(now, out);
            for (std::size_t i = 0; i < n; ++i)
                if (std::uniform_real_distribution<double>(0, 1)(rng) >= loss &&
                    !(drop_if && drop_if(out[i].data))) {
                    auto& f = frames.emplace_back(out[i].data.begin(), out[i].data.end());
                    if ((f[15] & 3) != 0 &&
                        std::uniform_real_distribution<double>(0, 1)(rng) < mark)
                        mark_ce(f);
                    if (capture != nullptr) capture->push_back(f);
                }
            if (n < out.size()) break;
        }
        std::vector<std::span<const std::uint8_t>> spans(frames.begin(), frames.end());
        to.receive_burst(spans, now);
    }
};

}  // namespace uet::roce::test
