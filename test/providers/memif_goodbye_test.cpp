// The memif leave handshake's frames (providers/dpdk/goodbye.hpp): what a port sends, and that
// nothing else is taken for it — the receive path acts on these frames, so a look-alike must not
// make a port stop bursting.
#include "dpdk/goodbye.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace uet::dpdk {
namespace {

const wire::mac_address sender{{0x02, 0, 0, 0, 0, 0x2a}};

std::vector<std::uint8_t> frame_of(goodbye::kind k) {
    std::vector<std::uint8_t> f(goodbye::frame_size);
    EXPECT_EQ(goodbye::build(f, sender, k), goodbye::frame_size);
    return f;
}

TEST(memif_goodbye, both_kinds_round_trip_with_the_sender) {
    for (const auto k : {goodbye::kind::leaving, goodbye::kind::ack}) {
        const auto f = frame_of(k);
        EXPECT_TRUE(goodbye::maybe(f));
        const auto m = goodbye::parse(f);
        ASSERT_TRUE(m.has_value());
        EXPECT_EQ(m->k, k);
        EXPECT_EQ(m->sender, sender);
        EXPECT_EQ(f[12], 0x88);  // the IEEE local experimental ethertype, broadcast
        EXPECT_EQ(f[13], 0xb5);
        const wire::mac_address dst{{f[0], f[1], f[2], f[3], f[4], f[5]}};
        EXPECT_TRUE(dst.is_broadcast());
    }
}

TEST(memif_goodbye, build_refuses_a_short_buffer) {
    std::array<std::uint8_t, goodbye::frame_size - 1> small{};
    EXPECT_EQ(goodbye::build(small, sender, goodbye::kind::leaving), 0u);
}

TEST(memif_goodbye, every_truncation_is_refused_until_the_kind_byte) {
    const auto f = frame_of(goodbye::kind::leaving);
    // Ethernet (14) + magic (8) + kind (1): anything shorter carries no message.
    for (std::size_t len = 0; len < 23; ++len)
        EXPECT_FALSE(goodbye::parse({f.data(), len}).has_value()) << len;
    EXPECT_TRUE(goodbye::parse({f.data(), 23}).has_value());
}

TEST(memif_goodbye, other_frames_are_not_messages) {
    auto f = frame_of(goodbye::kind::leaving);
    for (std::size_t i = 14; i < 22; ++i) {  // any magic byte changed
        auto g = f;
        g[i] ^= 0x20;
        EXPECT_FALSE(goodbye::parse(g).has_value()) << i;
    }
    for (const std::uint8_t k : {0, 3, 0x81, 0xff}) {  // unknown kinds
        auto g = f;
        g[22] = k;
        EXPECT_FALSE(goodbye::parse(g).has_value()) << int(k);
    }
    auto ipv4 = f;  // another ethertype with the same bytes after it
    ipv4[12] = 0x08;
    ipv4[13] = 0x00;
    EXPECT_FALSE(goodbye::maybe(ipv4));
    EXPECT_FALSE(goodbye::parse(ipv4).has_value());
}

}  // namespace
}  // namespace uet::dpdk
