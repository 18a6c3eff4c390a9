// tss::secure_engine around a stand-in engine: frames built into the caller's rooms are sealed
// where they lie, frames without room are sealed into the wrapper's buffers, each transmission
// takes the next TSC, and only authentic received frames reach the engine, joined when they
// arrive in two pieces.
#include <gtest/gtest.h>

#include <vector>

#include "tss/secure_engine.hpp"
#include "tss_helpers.hpp"

namespace {

using namespace uet;
using namespace uet::tss;
using uet::tss::test::counting_key;
using uet::tss::test::stand_in;
using uet::tss::test::udp_frame;

std::vector<std::uint8_t> payload(std::size_t n) {
    std::vector<std::uint8_t> p(n);
    for (std::size_t i = 0; i < n; ++i)
        p[i] = static_cast<std::uint8_t>(i * 7);
    return p;
}

TEST(tss_secure_engine, seals_in_the_callers_room_or_its_own_buffer) {
    stand_in inner, peer_inner;
    inner.frame = udp_frame(payload(1000));
    const domain_config cfg{.sdi = 5};
    secure_engine tx(inner, cfg, counting_key(), 1200), rx(peer_inner, cfg, counting_key(), 1200);
    std::vector<std::uint8_t> big(2000), small(100);
    std::vector<tx_frame> out(2);
    out[0].room = big;    // room for the frame, its TSS header and ICV: sealed in place
    out[1].room = small;  // too small: sealed into the wrapper's buffer
    ASSERT_EQ(tx.transmit(0, out), 2u);
    EXPECT_EQ(inner.built_in_room, 1u);  // the TSS header's length into big
    EXPECT_EQ(out[0].data.data(), big.data());
    EXPECT_NE(out[1].data.data(), small.data());
    for (const auto& f : out)
        EXPECT_EQ(f.data.size(), inner.frame.size() + 28);
    // Two transmissions of the same frame: two TSCs, two different ciphertexts.
    EXPECT_NE(std::vector(out[0].data.begin(), out[0].data.end()),
              std::vector(out[1].data.begin(), out[1].data.end()));
    EXPECT_EQ(tx.domain().next_tsc(), 3u);

    // The first arrives whole; then the second altered (dropped: a window moves only for
    // authentic frames), the second in two pieces, and the first again (a replay). Only the
    // first two reach the engine, as they were built.
    std::vector<std::uint8_t> altered(out[1].data.begin(), out[1].data.end());
    altered[60] ^= 1;
    std::vector<std::uint8_t> rest(out[1].data.begin() + 100, out[1].data.end());
    std::vector<std::uint8_t> head(out[1].data.begin(), out[1].data.end());
    std::fill(head.begin() + 100, head.end(), 0);  // the bytes past `from` are not there
    const std::vector<std::span<const std::uint8_t>> frames{out[0].data, altered, head,
                                                            out[0].data};
    const std::vector<wire::frame_rest> rests{{}, {}, {rest.data(), 100}, {}};
    rx.receive_burst(frames, rests.data(), 0);
    ASSERT_EQ(peer_inner.received.size(), 2u);
    auto want = inner.frame;
    for (const auto& got : peer_inner.received)
        EXPECT_EQ(got, want);
    const counters c = rx.stats();
    EXPECT_EQ(c.opened, 2u);
    EXPECT_EQ(c.drop(drop_reason::replay), 1u);
    EXPECT_EQ(c.drop(drop_reason::bad_icv), 1u);
}

TEST(tss_secure_engine, a_frame_longer_than_its_mtu_allows_is_dropped_unread) {
    stand_in inner;
    secure_engine rx(inner, {.sdi = 5}, counting_key(), 200);
    const std::vector<std::uint8_t> huge(2000, 0x45);
    const std::vector<std::span<const std::uint8_t>> frames{huge};
    rx.receive_burst(frames, nullptr, 0);
    EXPECT_TRUE(inner.received.empty());
    EXPECT_EQ(rx.stats().drop(drop_reason::malformed), 1u);
}

}  // namespace
