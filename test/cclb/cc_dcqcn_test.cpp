// DCQCN: the reaction point's cut, alpha, the three increase stages and the pacer; the
// notification point's CNP spacing; then two QPs through one ECN-marking bottleneck.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <random>

#include "cc/dcqcn.hpp"

namespace {

using namespace uet::cc;
using action = dcqcn_rp::action;

constexpr std::uint64_t us = 1000;

TEST(dcqcn_rp, runs_at_line_rate_unpaced_until_a_cnp) {
    const dcqcn_params p;
    dcqcn_rp rp(p);
    for (int i = 0; i < 100; ++i)
        rp.on_sent(4096, 10 * us);
    EXPECT_EQ(rp.rate_gbps(), 100);
    EXPECT_FALSE(rp.limited());
    EXPECT_EQ(rp.next_send_ns(10 * us), 0u);
}

TEST(dcqcn_rp, a_cnp_cuts_by_half_alpha_and_restarts_the_stages) {
    const dcqcn_params p;
    dcqcn_rp rp(p);
    rp.on_cnp(100 * us);
    EXPECT_EQ(rp.last_action(), action::cut);
    EXPECT_DOUBLE_EQ(rp.rate_gbps(), 50);  // alpha starts at 1: half
    EXPECT_DOUBLE_EQ(rp.target_gbps(), 100);
    EXPECT_DOUBLE_EQ(rp.alpha(), 1);  // (1 - g) + g
    EXPECT_TRUE(rp.limited());
    // A second CNP within rate_reduce_monitor_period does nothing.
    rp.on_cnp(102 * us);
    EXPECT_EQ(rp.last_action(), action::cnp_ignored);
    EXPECT_DOUBLE_EQ(rp.rate_gbps(), 50);
    // After it: cut again, from the rate the QP has now.
    rp.on_cnp(105 * us);
    EXPECT_EQ(rp.last_action(), action::cut);
    EXPECT_DOUBLE_EQ(rp.rate_gbps(), 25);
}

TEST(dcqcn_rp, alpha_decays_each_period_without_a_cnp_and_softens_the_next_cut) {
    const dcqcn_params p;
    dcqcn_rp rp(p);
    rp.on_cnp(0);
    rp.advance(10 * p.alpha_update_period_ns);
    EXPECT_NEAR(rp.alpha(), std::pow(1 - p.g, 10), 1e-12);
    rp.advance(200 * p.alpha_update_period_ns);
    const double a = std::pow(1 - p.g, 200);
    EXPECT_NEAR(rp.alpha(), a, 1e-12);
    const double before = rp.rate_gbps();
    rp.on_cnp(200 * p.alpha_update_period_ns);
    EXPECT_NEAR(rp.rate_gbps(), before * (1 - a / 2), 1e-9);
}

TEST(dcqcn_rp, min_dec_factor_bounds_one_cut) {
    dcqcn_params p;
    p.min_dec_factor = 0.9;
    dcqcn_rp rp(p);
    rp.on_cnp(0);
    EXPECT_DOUBLE_EQ(rp.rate_gbps(), 90);
    p.first_cnp_rate_gbps = 10;
    dcqcn_rp first(p);
    first.on_cnp(0);
    EXPECT_DOUBLE_EQ(first.rate_gbps(), 10);
}

TEST(dcqcn_rp, fast_recovery_halves_the_distance_to_the_target_per_event) {
    const dcqcn_params p;
    dcqcn_rp rp(p);
    rp.on_cnp(0);  // RC 50, RT 100
    for (std::uint32_t k = 1; k < p.threshold; ++k) {
        rp.advance(k * p.time_reset_ns);
        EXPECT_EQ(rp.last_action(), action::fast_recovery);
        EXPECT_EQ(rp.time_stage(), k);
        EXPECT_NEAR(rp.rate_gbps(), 100 - 50 / std::pow(2, k), 1e-9);
        EXPECT_DOUBLE_EQ(rp.target_gbps(), 100);
    }
}

TEST(dcqcn_rp, additive_then_hyper_increase_raise_the_target) {
    dcqcn_params p;
    p.byte_reset = 10'000;
    p.min_dec_factor = 0.9;      // cut 10%: room to climb before line rate
    p.clamp_target_rate = true;  // RT = RC at every cut
    dcqcn_rp rp(p);
    rp.on_cnp(0);
    rp.on_cnp(10 * us);  // RT 90, RC 81
    ASSERT_DOUBLE_EQ(rp.target_gbps(), 90);
    // Time-driven events alone: T reaches the threshold, B does not: additive.
    std::uint64_t t = 10 * us;
    for (std::uint32_t k = 0; k < p.threshold; ++k)
        rp.advance(t += p.time_reset_ns);
    EXPECT_EQ(rp.last_action(), action::additive_increase);
    EXPECT_NEAR(rp.target_gbps(), 90 + p.ai_rate_gbps, 1e-9);
    // Bytes too: once B reaches the threshold, min(T, B) >= threshold: hyper.
    const double rt = rp.target_gbps();
    for (std::uint32_t k = 0; k < p.threshold; ++k)
        rp.on_sent(10'000, t);
    EXPECT_EQ(rp.byte_stage(), p.threshold);
    EXPECT_EQ(rp.last_action(), action::hyper_increase);
    EXPECT_NEAR(rp.target_gbps(), rt + 4 * p.ai_rate_gbps + p.hai_rate_gbps, 1e-9);
}

TEST(dcqcn_rp, a_target_reached_by_bytes_alone_survives_the_next_cnp) {
    dcqcn_params p;
    p.byte_reset = 10'000;
    dcqcn_rp rp(p);
    rp.on_cnp(0);                // RC 50, RT 100
    rp.on_sent(10'000, 1 * us);  // a byte-driven increase: RC 75
    rp.on_cnp(10 * us);
    EXPECT_DOUBLE_EQ(rp.target_gbps(), 100);  // kept
    rp.advance(10 * us + p.time_reset_ns);    // a time-driven increase
    const double rc = rp.rate_gbps();
    rp.on_cnp(20 * us + p.time_reset_ns);
    EXPECT_DOUBLE_EQ(rp.target_gbps(), rc);  // clamped to the rate at the CNP
    p.clamp_target_rate = true;
    dcqcn_rp clamped(p);
    clamped.on_cnp(0);
    clamped.on_sent(10'000, 1 * us);
    clamped.on_cnp(10 * us);
    EXPECT_DOUBLE_EQ(clamped.target_gbps(), 75);
}

TEST(dcqcn_rp, paces_packets_at_the_current_rate_and_returns_to_line_rate) {
    const dcqcn_params p;
    dcqcn_rp rp(p);
    rp.on_cnp(0);  // 50 Gb/s: 1000 bytes every 160 ns
    rp.on_sent(1000, 1000);
    EXPECT_EQ(rp.next_send_ns(1000), 1160u);
    rp.on_sent(1000, 1160);
    EXPECT_EQ(rp.next_send_ns(1160), 1320u);
    rp.on_sent(1000, 5000);  // idle in between: no credit saved up
    EXPECT_EQ(rp.next_send_ns(5000), 5160u);
    // Left alone, the rate climbs back to line rate and pacing stops.
    rp.advance(1'000'000'000);
    EXPECT_FALSE(rp.limited());
    EXPECT_EQ(rp.rate_gbps(), 100);
    EXPECT_EQ(rp.next_send_ns(1'000'000'000), 0u);
}

TEST(dcqcn_rp, never_below_min_rate) {
    const dcqcn_params p;
    dcqcn_rp rp(p);
    for (int i = 0; i < 100; ++i)
        rp.on_cnp(static_cast<std::uint64_t>(i) * 5 * us);
    EXPECT_DOUBLE_EQ(rp.rate_gbps(), p.min_rate_gbps);
}

TEST(dcqcn_np, one_cnp_per_min_time_between_cnps_and_only_for_ce) {
    const dcqcn_params p;
    dcqcn_np np(p);
    EXPECT_FALSE(np.on_packet(false, 0));
    EXPECT_TRUE(np.on_packet(true, 1 * us));
    EXPECT_FALSE(np.on_packet(true, 2 * us));
    EXPECT_FALSE(np.on_packet(true, 4 * us + 999));
    EXPECT_TRUE(np.on_packet(true, 5 * us));
    EXPECT_FALSE(np.on_packet(false, 20 * us));
}

// Two QPs into one 100 Gb/s link (1 us steps). The switch marks ECN-CE RED-style on the queue
// (none under 5 KB, then rising to 1% at 200 KB, all above); each receiver's notification point
// sends CNPs that reach the sender 4 us later. QP 1 starts alone at line rate; QP 2 joins at
// 5 ms. By the end both have about the same rate, the link is busy and the queue is bounded.
TEST(dcqcn_model, two_qps_share_a_bottleneck) {
    const dcqcn_params p;
    struct flow {
        dcqcn_rp rp;
        dcqcn_np np;
        std::deque<std::uint64_t> cnps;  // arrival times at the sender
        double sent = 0;                 // bytes, last 20 ms
        std::uint64_t start;
    };
    flow f[2] = {{dcqcn_rp(p), dcqcn_np(p), {}, 0, 0},
                 {dcqcn_rp(p), dcqcn_np(p), {}, 0, 5000 * us}};
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0, 1);
    double queue = 0, max_queue = 0, delivered = 0;
    constexpr std::uint64_t end = 100'000 * us, window = 20'000 * us;
    constexpr double mtu = 1000;
    for (std::uint64_t now = 0; now < end; now += us) {
        const double mark = queue < 5'000     ? 0
                            : queue > 200'000 ? 1
                                              : (queue - 5'000) / 195'000 * 0.01;
        for (flow& x : f) {
            while (!x.cnps.empty() && x.cnps.front() <= now) {
                x.rp.on_cnp(x.cnps.front());
                x.cnps.pop_front();
            }
            if (now < x.start) continue;
            x.rp.advance(now);
            const double bytes = x.rp.rate_gbps() * 1000 / 8;  // in this microsecond
            const auto packets = static_cast<int>(bytes / mtu);
            for (int i = 0; i < packets; ++i) {
                x.rp.on_sent(static_cast<std::uint32_t>(mtu), now);
                if (x.np.on_packet(u(rng) < mark, now)) x.cnps.push_back(now + 4 * us);
            }
            queue += packets * mtu;
            if (now >= end - window) x.sent += packets * mtu;
        }
        const double drained = std::min(queue, 100.0 * 1000 / 8);
        queue -= drained;
        if (now >= end - window) delivered += drained;
        max_queue = std::max(max_queue, queue);
    }
    const double r0 = f[0].sent * 8 / window, r1 = f[1].sent * 8 / window;  // Gb/s
    const double jain = (r0 + r1) * (r0 + r1) / (2 * (r0 * r0 + r1 * r1));
    const double utilisation = delivered * 8 / window / 100;
    std::printf(
        "last 20 ms: QP1 %.1f Gb/s, QP2 %.1f Gb/s, Jain %.3f, link %.1f%%, max queue %.0f KB\n", r0,
        r1, jain, utilisation * 100, max_queue / 1000);
    EXPECT_GT(jain, 0.95);
    EXPECT_GT(utilisation, 0.9);
    EXPECT_LT(max_queue, 2'000'000);
}

}  // namespace
