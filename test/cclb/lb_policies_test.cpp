// Path selectors: static, oblivious, bitmap and REPS, alone and on an 8-path model with one bad
// path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

#include "core/rng.hpp"
#include "lb/lb_factory.hpp"

namespace {

using namespace uet::lb;

struct fixture : ::testing::Test {
    uet::rng rng{42};
    lb_context ctx{&rng, lb_params{}, {}};
    void bits(std::uint8_t k) { ctx.params.path_bits = k; }
};

using lb_static_path = fixture;
using lb_oblivious = fixture;
using lb_bitmap = fixture;
using lb_reps = fixture;

TEST_F(lb_static_path, sticks) {
    static_path s(0x1234);
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(s.next_entropy(), 0x1234);
        EXPECT_EQ(s.next_entropy(std::uint64_t(i) * 1000), 0x1234);
        s.on_ack(0x1234, true);
        s.on_nack(0x1234);
        s.on_timeout(0x1234, 5);
        s.on_path_switch(0x1234);
    }
    auto any = make_selector(algorithm::static_path, ctx, 77);
    EXPECT_EQ(any->next_entropy(), 77);
}

TEST_F(lb_oblivious, every_wrap_visits_every_value_once_in_a_fresh_order) {
    bits(4);
    oblivious o(ctx);
    const std::uint16_t upper = o.upper_bits();
    EXPECT_EQ(upper & 0xF, 0);
    std::set<std::vector<std::uint16_t>> orders;
    std::vector<int> count(16, 0);
    for (int wrap = 0; wrap < 200; ++wrap) {
        std::vector<std::uint16_t> seen;
        for (int i = 0; i < 16; ++i) {
            const std::uint16_t e = o.next_entropy();
            ASSERT_EQ(e & ~0xF, upper);  // the upper bits are fixed per PDC
            seen.push_back(e & 0xF);
            ++count[e & 0xF];
        }
        std::vector<std::uint16_t> sorted = seen;
        std::sort(sorted.begin(), sorted.end());
        for (int v = 0; v < 16; ++v)
            ASSERT_EQ(sorted[v], v) << "wrap " << wrap;
        orders.insert(seen);
    }
    for (int c : count)
        EXPECT_EQ(c, 200);         // exactly uniform
    EXPECT_GT(orders.size(), 8u);  // the XOR mask is redrawn on each wrap
}

TEST_F(lb_oblivious, pdcs_get_different_upper_bits) {
    std::set<std::uint16_t> uppers;
    for (int i = 0; i < 20; ++i)
        uppers.insert(oblivious(ctx).upper_bits());
    EXPECT_GT(uppers.size(), 15u);
}

TEST_F(lb_bitmap, skips_penalised_values_and_decays_them) {
    bits(3);
    bitmap b(ctx);
    // Learn the walk's values, then penalise one.
    std::vector<std::uint16_t> wrap1;
    for (int i = 0; i < 8; ++i)
        wrap1.push_back(b.next_entropy());
    const std::uint16_t bad = wrap1[3];
    b.on_ack(bad, true);
    EXPECT_EQ(b.penalty(bad), bitmap::ecn_penalty);
    b.on_ack(bad, false);  // a clean ACK neither adds nor clears
    EXPECT_EQ(b.penalty(bad), 1);
    int used = 0;
    for (int i = 0; i < 7; ++i)
        used += b.next_entropy() == bad;
    EXPECT_EQ(used, 0);            // one round skipped...
    EXPECT_EQ(b.penalty(bad), 0);  // ...and the penalty decremented on the way
    for (int i = 0; i < 8; ++i)
        used += b.next_entropy() == bad;
    EXPECT_EQ(used, 1);  // back in use the round after
}

TEST_F(lb_bitmap, nack_and_timeout_penalties_and_the_cap) {
    bits(3);
    bitmap b(ctx);
    const std::uint16_t e = b.next_entropy();
    b.on_nack(e);
    EXPECT_EQ(b.penalty(e), bitmap::nack_penalty);
    b.on_nack(e);
    b.on_nack(e);
    b.on_nack(e);
    EXPECT_EQ(b.penalty(e), bitmap::max_penalty);  // capped at 15
    const std::uint16_t f = b.next_entropy();
    b.on_timeout(f, 0);
    EXPECT_EQ(b.penalty(f), bitmap::max_penalty);
    // A NACKed value sits out four rounds.
    bitmap n(ctx);
    const std::uint16_t g = n.next_entropy();
    n.on_nack(g);
    int used = 0, picks = 0;
    while (n.penalty(g) > 0) {
        used += n.next_entropy() == g;
        ++picks;
    }
    EXPECT_EQ(used, 0);
    EXPECT_GE(picks, 4 * 7);
}

TEST_F(lb_bitmap, all_paths_penalised_still_sends) {
    bits(2);
    bitmap b(ctx);
    for (int i = 0; i < 4; ++i)
        b.on_timeout(b.next_entropy());
    std::set<std::uint16_t> got;
    for (int i = 0; i < 100; ++i)
        got.insert(b.next_entropy());
    EXPECT_EQ(got.size(), 4u);
}

TEST_F(lb_reps, reuses_only_unmarked_values_oldest_first) {
    reps r(ctx);
    EXPECT_EQ(r.cached(), 0);
    r.on_ack(11, false);
    r.on_ack(22, true);  // marked: not remembered
    r.on_nack(33);       // lost: not remembered
    r.on_ack(44, false);
    r.on_ack(55, false);
    EXPECT_EQ(r.cached(), 3);
    EXPECT_EQ(r.next_entropy(1), 11);
    EXPECT_EQ(r.next_entropy(2), 44);
    EXPECT_EQ(r.next_entropy(3), 55);
    EXPECT_EQ(r.cached(), 0);
}

TEST_F(lb_reps, ring_keeps_the_eight_newest) {
    reps r(ctx);
    for (std::uint16_t v = 1; v <= 10; ++v)
        r.on_ack(v, false);
    EXPECT_EQ(r.cached(), 8);
    for (std::uint16_t v = 3; v <= 10; ++v)
        EXPECT_EQ(r.next_entropy(0), v);  // 1 and 2 were overwritten; oldest first
}

TEST_F(lb_reps, explores_at_random_when_empty) {
    bits(8);
    reps r(ctx);
    std::set<std::uint16_t> low;
    for (int i = 0; i < 1000; ++i)
        low.insert(r.next_entropy(i) & 0xFF);
    EXPECT_GT(low.size(), 200u);  // random over the 256 values
}

TEST_F(lb_reps, path_switch_forgets_a_value) {
    reps r(ctx);
    r.on_ack(5, false);
    r.on_ack(6, false);
    r.on_path_switch(5);
    EXPECT_EQ(r.next_entropy(0), 6);
}

TEST_F(lb_reps, timeout_freezes_on_cached_values_then_clears_and_explores) {
    bits(8);
    reps r(ctx);
    const std::vector<std::uint16_t> good = {0x101, 0x102, 0x103};
    for (auto v : good)
        r.on_ack(v, false);
    EXPECT_EQ(r.next_entropy(1000), 0x101);  // one reused before the failure
    r.on_timeout(0x1FF, 2000);
    EXPECT_TRUE(r.frozen());
    r.on_timeout(0x1FE, 2500);  // already frozen: not a second freeze
    EXPECT_EQ(ctx.stats.reps_freezes, 1u);
    EXPECT_EQ(ctx.stats.reps_freezes_ended, 0u);
    r.on_ack(0x1AA, false);  // the ring is a snapshot while frozen
    const std::uint64_t freeze = ctx.params.reps_freeze_ns;
    std::uint64_t t = 2000;
    for (int i = 0; i < 3000; ++i, t += 3000) {
        if (t >= 2000 + freeze - 2000) break;
        const std::uint16_t e = r.next_entropy(t);
        ASSERT_TRUE(std::find(good.begin(), good.end(), e) != good.end()) << e;
    }
    EXPECT_TRUE(r.frozen());
    const std::uint64_t after = 2000 + freeze + 2048;
    (void)r.next_entropy(after);  // ends the freeze: the ring is cleared, exploring starts
    EXPECT_FALSE(r.frozen());
    EXPECT_EQ(ctx.stats.reps_freezes_ended, 1u);
    EXPECT_EQ(r.cached(), 0);
    EXPECT_EQ(r.explore_left(), ctx.params.reps_explore - 1);
    r.on_ack(0x177, false);  // a value learned while exploring waits for the exploring to end
    std::set<std::uint16_t> explored;
    for (int i = 1; i < ctx.params.reps_explore; ++i)
        explored.insert(r.next_entropy(after + i));
    EXPECT_GT(explored.size(), 10u);
    EXPECT_EQ(r.explore_left(), 0);
    EXPECT_EQ(r.next_entropy(after + 100), 0x177);
}

TEST_F(lb_reps, timeout_without_time_freezes_at_the_next_timed_call) {
    reps r(ctx);
    r.on_ack(9, false);
    r.on_timeout(1);
    EXPECT_FALSE(r.frozen());
    EXPECT_EQ(r.next_entropy(50'000), 9);
    EXPECT_TRUE(r.frozen());
    EXPECT_EQ(r.next_entropy(50'000 + ctx.params.reps_freeze_ns - 5000), 9);
    (void)r.next_entropy(50'000 + ctx.params.reps_freeze_ns + 2000);
    EXPECT_FALSE(r.frozen());
}

TEST_F(lb_reps, timeout_with_an_empty_ring_does_not_freeze) {
    reps r(ctx);
    r.on_timeout(3, 100);
    EXPECT_FALSE(r.frozen());
    EXPECT_EQ(ctx.stats.reps_freezes, 0u);
}

TEST(lb_factory, parses_and_builds) {
    uet::rng rng(1);
    lb_context ctx{&rng, {}, {}};
    for (auto a :
         {algorithm::static_path, algorithm::oblivious, algorithm::bitmap, algorithm::reps}) {
        EXPECT_EQ(parse_algorithm(algorithm_name(a)), a);
        auto s = make_selector(a, ctx, 3);
        EXPECT_EQ(s.kind(), a);
        (void)s->next_entropy(0);
    }
    EXPECT_FALSE(parse_algorithm("flowlet").has_value());
    lb_context no_rng{};
    EXPECT_EQ(make_selector(algorithm::reps, no_rng, 3).kind(), algorithm::static_path);
    std::printf("sizeof static_path %zu, oblivious %zu, bitmap %zu, reps %zu, any_selector %zu\n",
                sizeof(static_path), sizeof(oblivious), sizeof(bitmap), sizeof(reps),
                sizeof(any_selector));
}

// any_selector::next_entropy answers a static path without the general dispatch: every
// selector must give through it what its path_selector gives (two of each, fed the same).
TEST(lb_factory, next_entropy_is_the_selectors_own) {
    for (auto a :
         {algorithm::static_path, algorithm::oblivious, algorithm::bitmap, algorithm::reps}) {
        uet::rng rng_a(7), rng_b(7);
        lb_context ca{&rng_a, {}, {}}, cb{&rng_b, {}, {}};
        auto fast = make_selector(a, ca, 0xc123);
        auto general = make_selector(a, cb, 0xc123);
        for (std::uint64_t now = 1; now < 2000; now += 7) {
            const std::uint16_t e = fast.next_entropy(now);
            ASSERT_EQ(e, general->next_entropy(now)) << algorithm_name(a) << " at " << now;
            if (a == algorithm::static_path) {
                ASSERT_EQ(e, 0xc123);
            }
        }
    }
}

// ---- 8-path model ----
//
// The fabric hashes an entropy value to path (value mod 8). A sender keeps `lag` packets in
// flight: each packet's feedback (ACK, ECN-marked or not, or NACK) reaches the selector `lag`
// packets after it was sent. Path 5 is bad: it either ECN-marks or trims (NACK) every packet.
enum class fault { ecn, nack };

std::vector<double> path_shares(algorithm algo, fault f, bool pass_switch = false) {
    constexpr int paths = 8, bad = 5, lag = 16, packets = 200'000;
    uet::rng rng(99);
    lb_context ctx{&rng, {}, {}};
    auto sel = make_selector(algo, ctx, 0);
    std::vector<std::uint16_t> ring(lag);
    std::vector<int> count(paths, 0);
    for (int i = 0; i < packets; ++i) {
        const std::uint64_t now = std::uint64_t(i) * 330;  // ~4 KB packets at 100 Gb/s
        if (i >= lag) {
            const std::uint16_t e = ring[i % lag];
            const bool on_bad = e % paths == bad;
            if (on_bad && f == fault::nack) {
                sel->on_nack(e);
            } else {
                sel->on_ack(e, on_bad);
                // NSCC says "switch path" for a mark without queueing delay.
                if (on_bad && pass_switch) sel->on_path_switch(e);
            }
        }
        const std::uint16_t e = sel->next_entropy(now);
        ring[i % lag] = e;
        ++count[e % paths];
    }
    std::vector<double> share(paths);
    for (int p = 0; p < paths; ++p)
        share[p] = count[p] * double(paths) / packets;  // 1.0 = an even share
    return share;
}

void print_shares(const char* name, const std::vector<double>& s) {
    std::printf("  %-28s", name);
    for (double v : s)
        std::printf(" %.3f", v);
    std::printf("\n");
}

TEST(lb_model, bad_path_gets_less_than_half_an_even_share_with_bitmap_and_reps) {
    std::printf("share of packets per path (1.000 = even), path 5 bad:\n");
    for (fault f : {fault::ecn, fault::nack}) {
        const char* how = f == fault::ecn ? "ECN" : "NACK";
        const auto obl = path_shares(algorithm::oblivious, f);
        const auto bmp = path_shares(algorithm::bitmap, f);
        const auto rps = path_shares(algorithm::reps, f);
        const auto bmp_sw = path_shares(algorithm::bitmap, f, true);
        char label[64];
        std::snprintf(label, sizeof label, "oblivious (%s)", how);
        print_shares(label, obl);
        std::snprintf(label, sizeof label, "bitmap (%s)", how);
        print_shares(label, bmp);
        if (f == fault::ecn) print_shares("bitmap (ECN, + NSCC switch)", bmp_sw);
        std::snprintf(label, sizeof label, "reps (%s)", how);
        print_shares(label, rps);
        EXPECT_NEAR(obl[5], 1.0, 0.02) << how;
        EXPECT_LT(rps[5], 0.5) << how;
        if (f == fault::nack) {
            EXPECT_LT(bmp[5], 0.5) << how;
        } else {
            // +1 per mark alone: the marked values sit out every other round, about half.
            EXPECT_LE(bmp[5], 0.55) << how;
            // With the engine passing NSCC's path-switch signal (a mark without delay), under.
            EXPECT_LT(bmp_sw[5], 0.5) << how;
        }
    }
}

}  // namespace
