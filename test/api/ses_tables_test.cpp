// Unit tests of the SES tables under the API: the matching queues and the memory-region table.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "ses/matching.hpp"
#include "ses/mr_table.hpp"

namespace uet::ses {
namespace {

TEST(match_rule, exact_wildcard_untagged_and_source) {
    const match_rule exact{true, 0x105, 0, any_source};
    EXPECT_TRUE(exact.matches(true, 0x105, 3));
    EXPECT_FALSE(exact.matches(true, 0x104, 3));
    EXPECT_FALSE(exact.matches(false, 0x105, 3));  // untagged messages never match tagged receives
    const match_rule low_byte_ignored{true, 0x100, 0xff, 7};
    EXPECT_TRUE(low_byte_ignored.matches(true, 0x1ab, 7));
    EXPECT_FALSE(low_byte_ignored.matches(true, 0x2ab, 7));
    EXPECT_FALSE(low_byte_ignored.matches(true, 0x1ab, 8));  // another source
    const match_rule untagged{};
    EXPECT_TRUE(untagged.matches(false, 0, 1));
    EXPECT_FALSE(untagged.matches(true, 0, 1));
}

TEST(bounded_fifo, oldest_match_first_and_bounded) {
    bounded_fifo<int> q(3);
    EXPECT_TRUE(q.push(1));
    EXPECT_TRUE(q.push(2));
    EXPECT_TRUE(q.push(3));
    EXPECT_FALSE(q.push(4));  // full: the caller gets a clear error instead
    EXPECT_EQ(q.take_first([](int v) { return v % 2 == 1; }), 1);
    EXPECT_EQ(q.take_first([](int v) { return v % 2 == 1; }), 3);
    EXPECT_FALSE(q.take_first([](int v) { return v > 5; }));
    EXPECT_TRUE(q.push(5));
    std::vector<int> rest;
    q.drain([&](int v) { rest.push_back(v); });
    EXPECT_EQ(rest, (std::vector<int>{2, 5}));
    EXPECT_EQ(q.size(), 0u);
}

// Tagged and untagged receives apart: each kind keeps its order, a message looks only at its
// own kind, and the bound counts both kinds together.
TEST(receive_queues, each_kind_in_order_and_bounded_together) {
    receive_queues<int> q(4);
    EXPECT_TRUE(q.push(true, 10));  // tagged, posted first
    EXPECT_TRUE(q.push(false, 1));
    EXPECT_TRUE(q.push(true, 11));
    EXPECT_TRUE(q.push(false, 2));
    EXPECT_FALSE(q.push(false, 3));  // four of both kinds: full
    EXPECT_FALSE(q.push(true, 12));
    EXPECT_EQ(q.size(), 4u);
    std::vector<int> seen;
    const auto any = [&](int v) {
        seen.push_back(v);
        return true;
    };
    EXPECT_EQ(q.take_first(false, any), 1);  // the tagged receive before it is not looked at
    EXPECT_EQ(seen, (std::vector<int>{1}));
    EXPECT_EQ(q.take_first(true, [](int v) { return v == 11; }), 11);
    EXPECT_FALSE(q.take_first(false, [](int v) { return v > 5; }));
    EXPECT_TRUE(q.push(true, 12));
    EXPECT_TRUE(q.push(true, 13));
    EXPECT_FALSE(q.push(false, 4));
    std::vector<int> rest;
    q.drain([&](int v) { rest.push_back(v); });
    EXPECT_EQ(rest, (std::vector<int>{2, 10, 12, 13}));
    EXPECT_EQ(q.size(), 0u);
}

TEST(mr_table, keys_access_bounds_and_jobs) {
    mr_table t(2, 1);
    std::uint8_t mem[64] = {};
    const std::uint64_t key = t.add(mem, sizeof mem, mr_remote_write, 7);
    ASSERT_NE(key, 0u);
    std::uint8_t* where = nullptr;
    using rc = wire::ses_return_code;
    EXPECT_EQ(t.check(key, 7, 60, 4, mr_remote_write, where), rc::ok);
    EXPECT_EQ(where, mem + 60);
    EXPECT_EQ(t.check(key, 7, 61, 4, mr_remote_write, where), rc::bad_addr);
    EXPECT_EQ(t.check(key, 7, ~0ull, 2, mr_remote_write, where), rc::bad_addr);  // no wrap
    EXPECT_EQ(t.check(key, 7, 0, 4, mr_remote_read, where), rc::perm_violation);
    EXPECT_EQ(t.check(key, 8, 0, 4, mr_remote_write, where), rc::bad_mkey);  // another job
    EXPECT_EQ(t.check(key ^ (1ull << 50), 7, 0, 4, mr_remote_write, where), rc::bad_mkey);
    EXPECT_EQ(t.check(0, 7, 0, 4, mr_remote_write, where), rc::bad_mkey);
    EXPECT_NE(t.add(mem, 1, 0, 7), 0u);
    EXPECT_EQ(t.add(mem, 1, 0, 7), 0u);  // full
    EXPECT_TRUE(t.remove(key));
    EXPECT_FALSE(t.remove(key));
    EXPECT_EQ(t.check(key, 7, 0, 4, mr_remote_write, where), rc::bad_mkey);
    const std::uint64_t again = t.add(mem, sizeof mem, mr_remote_write, 7);
    EXPECT_NE(again, key);  // the same slot, another key
    EXPECT_EQ(t.check(key, 7, 0, 4, mr_remote_write, where), rc::bad_mkey);
}

// A region held by responses in flight: removed, no check finds it, but its slot (and so its
// memory, for the caller of remove()) is not given back until the last release.
TEST(mr_table, removal_waits_for_holds) {
    mr_table t(1, 3);
    std::uint8_t mem[64] = {};
    const std::uint64_t key = t.add(mem, sizeof mem, mr_remote_read, 7);
    ASSERT_NE(key, 0u);
    EXPECT_FALSE(t.still_read(key));
    const auto rkey = static_cast<std::uint32_t>(key);
    const std::uint32_t a = t.hold(key), b = t.hold_rkey(rkey);  // a RoCE READ's, by its rkey
    ASSERT_EQ(a, b);
    EXPECT_EQ(t.hold(key ^ 1), static_cast<std::uint32_t>(-1));  // no such region
    EXPECT_EQ(t.hold_rkey(rkey ^ 1), static_cast<std::uint32_t>(-1));
    EXPECT_TRUE(t.still_read(key));
    EXPECT_TRUE(t.remove(key));
    std::uint8_t* where = nullptr;
    EXPECT_EQ(t.check(key, 7, 0, 4, mr_remote_read, where), wire::ses_return_code::bad_mkey);
    EXPECT_EQ(t.hold(key), static_cast<std::uint32_t>(-1));  // removed: no new holds
    EXPECT_EQ(t.hold_rkey(rkey), static_cast<std::uint32_t>(-1));
    EXPECT_TRUE(t.still_read(key));
    EXPECT_EQ(t.add(mem, 1, 0, 7), 0u);  // its slot is still taken
    t.release(a);
    EXPECT_TRUE(t.still_read(key));
    t.release(b);
    EXPECT_FALSE(t.still_read(key));
    t.release(b);  // one too many: nothing happens
    EXPECT_NE(t.add(mem, 1, 0, 7), 0u);
}

// A key is the only secret between a peer of the job and a region: all 64 bits of it are random
// (none is a slot index), and a key with any one bit changed names nothing.
TEST(mr_table, keys_carry_64_random_bits) {
    mr_table t(256, 5);
    std::uint8_t mem[64] = {};
    std::uint64_t ones = 0, zeros = 0;
    std::vector<std::uint64_t> keys;
    for (int i = 0; i < 256; ++i) {
        const std::uint64_t key = t.add(mem, sizeof mem, mr_remote_write, 7);
        ASSERT_NE(key, 0u);
        ones |= key;
        zeros |= ~key;
        keys.push_back(key);
    }
    EXPECT_EQ(ones, ~0ull);   // every bit set in some key
    EXPECT_EQ(zeros, ~0ull);  // and clear in some other
    std::uint8_t* where = nullptr;
    for (int bit = 0; bit < 64; ++bit)
        EXPECT_EQ(t.check(keys[17] ^ (1ull << bit), 7, 0, 4, mr_remote_write, where),
                  wire::ses_return_code::bad_mkey)
            << "bit " << bit;
    for (const std::uint64_t key : keys)
        EXPECT_EQ(t.check(key, 7, 0, 4, mr_remote_write, where), wire::ses_return_code::ok);
}

// RoCE names a region by the low 32 bits of its key (the rkey): those are unique among live
// regions and never 0, and the same checks apply to them.
TEST(mr_table, rkeys_are_unique_and_checked_alike) {
    mr_table t(512, 9);
    std::uint8_t mem[64] = {};
    std::vector<std::uint64_t> keys;
    std::vector<std::uint32_t> rkeys;
    for (int round = 0; round < 4; ++round) {
        while (t.size() < 512) {
            const std::uint64_t key = t.add(mem, sizeof mem, mr_remote_read, 3);
            ASSERT_NE(static_cast<std::uint32_t>(key), 0u);
            keys.push_back(key);
        }
        rkeys.clear();
        for (const std::uint64_t key : keys)
            rkeys.push_back(static_cast<std::uint32_t>(key));
        std::sort(rkeys.begin(), rkeys.end());
        EXPECT_EQ(std::adjacent_find(rkeys.begin(), rkeys.end()), rkeys.end());
        // Free every other region, so the next round draws beside live ones.
        for (std::size_t i = 0; i < keys.size(); i += 2)
            EXPECT_TRUE(t.remove(keys[i]));
        std::vector<std::uint64_t> live;
        for (std::size_t i = 1; i < keys.size(); i += 2)
            live.push_back(keys[i]);
        keys = live;
    }
    std::uint8_t* where = nullptr;
    using rc = wire::ses_return_code;
    const std::uint32_t rkey = static_cast<std::uint32_t>(keys[0]);
    EXPECT_EQ(t.check_rkey(rkey, 3, 8, 8, mr_remote_read, where), rc::ok);
    EXPECT_EQ(where, mem + 8);
    EXPECT_EQ(t.check_rkey(rkey, 3, 60, 8, mr_remote_read, where), rc::bad_addr);
    EXPECT_EQ(t.check_rkey(rkey, 3, 0, 8, mr_remote_write, where), rc::perm_violation);
    EXPECT_EQ(t.check_rkey(rkey, 4, 0, 8, mr_remote_read, where), rc::bad_mkey);
    EXPECT_EQ(t.check_rkey(0, 3, 0, 8, mr_remote_read, where), rc::bad_mkey);
    EXPECT_TRUE(t.remove(keys[0]));
    EXPECT_EQ(t.check_rkey(rkey, 3, 0, 8, mr_remote_read, where), rc::bad_mkey);
}

}  // namespace
}  // namespace uet::ses
