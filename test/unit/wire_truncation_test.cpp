// Whole-frame robustness: every truncation of every golden frame is rejected with a reason,
// single-bit corruption past the Ethernet addresses is caught by a checksum or the ICRC, and
// random bytes never crash the dissector (ASan/UBSan run this too).
#include <gtest/gtest.h>

#include <random>

#include "golden.hpp"
#include "wire/dissect.hpp"

namespace uet::wire {
namespace {

std::vector<golden::named_bytes> all_frames() {
    auto frames = golden::uet_frames();
    for (auto& f : golden::roce_frames())
        frames.push_back(std::move(f));
    return frames;
}

TEST(dissect, every_golden_frame_decodes) {
    auto frames = all_frames();
    ASSERT_GE(frames.size(), 30u);
    for (const auto& f : frames) {
        dissection d;
        EXPECT_EQ(dissect(f.bytes, d), reject_reason::none)
            << f.name << ": " << to_string(dissect(f.bytes, d)) << " in "
            << (d.failed_layer ? d.failed_layer : "?");
        EXPECT_NE(d.kind, frame_kind::unknown) << f.name;
        EXPECT_NE(d.kind, frame_kind::other_udp) << f.name;
        EXPECT_NE(d.kind, frame_kind::other_ip) << f.name;
    }
}

TEST(dissect, every_truncation_is_rejected_with_a_reason) {
    for (const auto& f : all_frames()) {
        for (std::size_t len = 0; len < f.bytes.size(); ++len) {
            std::vector<std::uint8_t> cut(f.bytes.begin(),
                                          f.bytes.begin() + len);  // exact size for ASan
            dissection d;
            reject_reason r = dissect(cut, d);
            EXPECT_NE(r, reject_reason::none) << f.name << " cut to " << len;
            EXPECT_NE(d.failed_layer, nullptr) << f.name << " cut to " << len;
        }
    }
}

// Frames whose every byte from the ethertype on is covered by the IPv4 checksum plus the UDP
// checksum or the ICRC. (VLAN tags, ARP and UET over IP protocol 253 have no such cover.)
bool fully_covered(const golden::named_bytes& f) {
    dissection d;
    if (dissect(f.bytes, d) != reject_reason::none || d.l2l4.vlan) return false;
    return d.kind == frame_kind::roce ||
           (d.kind == frame_kind::uet_udp && d.l2l4.udp && d.l2l4.udp->checksum != 0);
}

TEST(dissect, single_bit_corruption_is_caught) {
    std::size_t covered = 0;
    for (const auto& f : all_frames()) {
        if (!fully_covered(f)) continue;
        ++covered;
        for (std::size_t byte = 12; byte < f.bytes.size(); ++byte) {
            for (int bit = 0; bit < 8; ++bit) {
                auto bad = f.bytes;
                bad[byte] ^= static_cast<std::uint8_t>(1u << bit);
                dissection d;
                // Caught, or no longer addressed to us (a flipped ethertype, protocol or port
                // makes it someone else's traffic): never accepted as UET or RoCEv2.
                bool caught = dissect(bad, d) != reject_reason::none ||
                              d.kind == frame_kind::other_l2 || d.kind == frame_kind::other_ip ||
                              d.kind == frame_kind::other_udp;
                EXPECT_TRUE(caught) << f.name << " byte " << byte << " bit " << bit;
            }
        }
    }
    EXPECT_GE(covered, 20u);
}

TEST(dissect, random_bytes_never_crash) {
    std::mt19937 rng(20261122);
    std::size_t accepted = 0;
    for (int i = 0; i < 20000; ++i) {
        std::vector<std::uint8_t> buf(rng() % 200);
        for (auto& b : buf)
            b = static_cast<std::uint8_t>(rng());
        dissection d;
        if (dissect(buf, d) == reject_reason::none) ++accepted;
        std::string line;
        summarize(d, line);  // printing a half-decoded frame must be safe too
    }
    EXPECT_LT(accepted, 20000u);
}

// Random mutations of real frames reach deeper layers than random bytes do.
TEST(dissect, mutated_golden_frames_never_crash) {
    std::mt19937 rng(4793);
    auto frames = all_frames();
    for (int i = 0; i < 20000; ++i) {
        auto buf = frames[rng() % frames.size()].bytes;
        int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !buf.empty(); ++e)
            buf[rng() % buf.size()] = static_cast<std::uint8_t>(rng());
        if (rng() % 4 == 0) buf.resize(rng() % (buf.size() + 1));
        dissection d;
        dissect(buf, d);
        std::string line;
        summarize(d, line);
    }
}

}  // namespace
}  // namespace uet::wire
