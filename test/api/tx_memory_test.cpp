// The zero-copy registry of the dpdk provider: which registered range (and so which port
// region) holds a packet's payload, at the edges, with overlaps, after removal, under min_bytes.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "api/tx_memory.hpp"

namespace uet::detail {
namespace {

TEST(tx_memory, finds_the_range_holding_a_whole_payload) {
    std::vector<std::uint8_t> a(4096), b(8192);
    tx_memory m;
    const auto ha = m.add(a.data(), a.size(), 10);
    m.add(b.data(), b.size(), 20);
    EXPECT_EQ(m.find(a.data(), a.size()), 10u);
    EXPECT_EQ(m.find(a.data() + 4000, 96), 10u);  // ends on the last byte
    EXPECT_EQ(m.find(b.data() + 100, 1216), 20u);
    EXPECT_EQ(m.find(b.data() + 8000, 1216), no_payload_region);  // runs past the end
    std::array<std::uint8_t, 2048> other{};
    EXPECT_EQ(m.find(other.data(), 1216), no_payload_region);
    EXPECT_EQ(m.find(a.data(), 0), no_payload_region);
    EXPECT_TRUE(m.remove(ha));
    EXPECT_FALSE(m.remove(ha));
    EXPECT_EQ(m.find(a.data(), 100), no_payload_region);  // gone, even as the last one found
    EXPECT_EQ(m.find(b.data(), 100), 20u);
}

TEST(tx_memory, short_payloads_are_copied) {
    std::vector<std::uint8_t> a(4096);
    tx_memory m;
    m.set_min_bytes(1024);
    m.add(a.data(), a.size(), 1);
    EXPECT_EQ(m.find(a.data(), 1023), no_payload_region);
    EXPECT_EQ(m.find(a.data(), 1024), 1u);
}

TEST(tx_memory, nested_and_many_ranges) {
    std::vector<std::uint8_t> big(1 << 20);
    tx_memory m;
    m.add(big.data(), big.size(), 1);   // the whole buffer
    m.add(big.data() + 4096, 4096, 2);  // a small one inside it
    // Either range will do where both hold the payload; only the outer holds one that runs
    // past the inner's end, even right after the inner was the one found.
    const auto inner_or_outer = m.find(big.data() + 4096, 1000);
    EXPECT_TRUE(inner_or_outer == 1u || inner_or_outer == 2u);
    EXPECT_EQ(m.find(big.data() + 5000, 100), inner_or_outer == 2u ? 2u : 1u);
    EXPECT_EQ(m.find(big.data() + 6000, 4000), 1u);
    // Hundreds of separate registrations (a buffer per message): each found, handles reused.
    std::vector<std::vector<std::uint8_t>> bufs(300, std::vector<std::uint8_t>(2048));
    std::vector<std::uint32_t> handles;
    for (std::uint32_t i = 0; i < bufs.size(); ++i)
        handles.push_back(m.add(bufs[i].data(), bufs[i].size(), 100 + i));
    for (std::uint32_t i = 0; i < bufs.size(); i += 7)
        EXPECT_EQ(m.find(bufs[i].data() + 512, 1216), 100 + i);
    for (std::uint32_t i = 0; i < bufs.size(); i += 2)
        EXPECT_TRUE(m.remove(handles[i]));
    EXPECT_EQ(m.size(), 2u + 150u);
    EXPECT_EQ(m.find(bufs[4].data(), 1216), no_payload_region);
    EXPECT_EQ(m.find(bufs[5].data(), 1216), 105u);
    const auto again = m.add(bufs[4].data(), bufs[4].size(), 7);
    EXPECT_EQ(again, handles[0]);  // the first free handle
    EXPECT_EQ(m.find(bufs[4].data(), 1216), 7u);
}

}  // namespace
}  // namespace uet::detail
