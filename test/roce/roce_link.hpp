// Two RoCEv2 engines' frames carried between them in tests: a link that copies, loses, marks
// and filters frames, and the engines' addresses and configuration.
#pragma once

#include <array>
#include <functional>
#include <random>
#include <span>
#include <utility>
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

// Moves frames one way: every frame copied, some lost (at random or by drop_if), some marked,
// some delivered twice, some with a byte changed, some held back behind later frames.
struct wire_link {
    std::mt19937_64 rng{7};
    double loss = 0;
    double mark = 0;       // share of ECT frames a congested switch marks CE
    double duplicate = 0;  // share of frames delivered twice
    double corrupt = 0;    // share of frames with one byte after the Ethernet header changed
    double reorder = 0;    // share of frames held back behind 1..max_displacement later ones
    std::uint32_t max_displacement = 400;
    std::function<bool(std::span<const std::uint8_t>)> drop_if;  // a frame to lose on purpose
    std::vector<std::vector<std::uint8_t>>* capture = nullptr;   // every frame delivered
    std::vector<std::vector<std::uint8_t>> frames;
    struct held_frame {
        std::vector<std::uint8_t> bytes;
        std::uint32_t behind;  // frames still to pass it
    };
    std::vector<held_frame> held;

    bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < p; }

    // Carries what `from` transmits at `now` into `to`; the number of frames delivered. Frames
    // held back go once enough others passed them, or when the link has nothing else to carry.
    std::size_t carry(engine& from, engine& to, std::uint64_t now) {
        std::array<tx_frame, 32> out{};
        frames.clear();
        std::size_t sent = 0;
        for (;;) {
            const std::size_t n = from.transmit(now, out);
            for (std::size_t i = 0; i < n; ++i)
                if (!chance(loss) && !(drop_if && drop_if(out[i].data)))
                    pass(std::vector<std::uint8_t>(out[i].data.begin(), out[i].data.end()));
            sent += n;
            if (n < out.size()) break;
        }
        if (sent == 0)
            for (held_frame& h : held)
                frames.push_back(std::move(h.bytes));
        if (sent == 0) held.clear();
        if (capture != nullptr) capture->insert(capture->end(), frames.begin(), frames.end());
        std::vector<std::span<const std::uint8_t>> spans(frames.begin(), frames.end());
        to.receive_burst(spans, now);
        return frames.size();
    }

  private:
    void pass(std::vector<std::uint8_t> f) {
        if ((f[15] & 3) != 0 && chance(mark)) mark_ce(f);
        if (chance(corrupt) && f.size() > 14)
            f[14 + rng() % (f.size() - 14)] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        const bool twice = chance(duplicate);
        if (chance(reorder)) {
            held.push_back({f, 1 + static_cast<std::uint32_t>(rng() % max_displacement)});
        } else {
            deliver(f);
        }
        if (twice) deliver(std::move(f));
    }
    void deliver(std::vector<std::uint8_t> f) {
        frames.push_back(std::move(f));
        for (std::size_t i = 0; i < held.size();) {
            if (--held[i].behind == 0) {
                frames.push_back(std::move(held[i].bytes));
                held[i] = std::move(held.back());
                held.pop_back();
            } else {
                ++i;
            }
        }
    }
};

}  // namespace uet::roce::test
