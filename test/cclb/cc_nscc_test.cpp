// NSCC driven by synthetic ACK/NACK sequences, then a single-bottleneck model with four flows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <vector>

#include "cc/cc_factory.hpp"
#include "cc/nscc.hpp"
#include "core/rng.hpp"

namespace {

using uet::cc::nscc;
using uet::cc::nscc_params;
using action = nscc::action;

constexpr std::uint32_t mtu = 4096;
constexpr std::uint64_t base_rtt = 12000;  // ns

nscc_params params_100g() {
    return nscc_params::from_link(100, base_rtt, mtu);
}

// A params set whose flows start mid-window, so both directions of change are visible.
nscc_params params_mid(std::uint64_t window = 60000) {
    auto p = params_100g();
    p.initial_window = window;
    return p;
}

TEST(nscc_params, from_link_scales_from_the_reference_network) {
    const auto p = params_100g();  // 100 Gb/s x 12 us is the reference: scale factor 1
    EXPECT_DOUBLE_EQ(p.bytes_per_ns, 12.5);
    EXPECT_EQ(p.target_delay_ns, 9000u);  // 0.75 x RTT with trimming
    EXPECT_EQ(p.quick_adapt_delay_ns, 36000u);
    EXPECT_DOUBLE_EQ(p.gamma, 0.8);
    EXPECT_DOUBLE_EQ(p.delay_ewma, 0.0125);
    EXPECT_DOUBLE_EQ(p.fair_inc, 5.0 * mtu);
    EXPECT_DOUBLE_EQ(p.eta, 0.15 * mtu);
    EXPECT_DOUBLE_EQ(p.fast_inc_scale, 0.25);
    EXPECT_DOUBLE_EQ(p.prop_alpha, 4.0 * mtu * 0.75 / 9000.0);
    EXPECT_EQ(p.adjust_bytes, 8u * mtu);

    const auto no_trim = nscc_params::from_link(100, base_rtt, mtu, false);
    EXPECT_EQ(no_trim.target_delay_ns, base_rtt);

    const auto p400 = nscc_params::from_link(400, base_rtt, mtu);  // 4x the reference BDP
    EXPECT_DOUBLE_EQ(p400.fair_inc, 4 * 5.0 * mtu);
    EXPECT_DOUBLE_EQ(p400.fast_inc_scale, 1.0);
}

TEST(nscc, starts_at_line_rate_capped_at_one_and_a_half_bdp) {
    const auto p = params_100g();
    nscc cc(p);
    EXPECT_EQ(cc.max_window(), 225000u);  // 1.5 x 12.5 B/ns x 12 us
    EXPECT_EQ(cc.window_bytes(), cc.max_window());
    EXPECT_EQ(cc.min_window(), mtu);
}

// Feeds `n` ACKs of one MTU, one every `gap` ns from `t`; returns the time after the last.
std::uint64_t feed(nscc& cc, int n, std::uint64_t rtt, bool ecn, std::uint64_t t,
                   std::uint64_t gap = 300) {
    for (int i = 0; i < n; ++i, t += gap)
        cc.on_ack(mtu, rtt, ecn, t);
    return t;
}

TEST(nscc, fair_increase_when_delayed_but_unmarked) {
    const auto p = params_mid();
    nscc cc(p);
    const auto before = cc.window_bytes();
    feed(cc, 40, base_rtt + p.target_delay_ns + 1000, false, 1000);
    EXPECT_GT(cc.window_bytes(), before);
    EXPECT_EQ(cc.last_action(), action::fair_increase);
    EXPECT_FALSE(cc.take_path_switch());
}

TEST(nscc, proportional_increase_is_larger_further_below_target) {
    const auto p = params_mid();
    nscc near_target(p), far_below(p);
    feed(near_target, 40, base_rtt + 8000, false, 1000);
    feed(far_below, 40, base_rtt + 2000, false, 1000);
    EXPECT_EQ(near_target.last_action(), action::proportional_increase);
    EXPECT_EQ(far_below.last_action(), action::proportional_increase);
    EXPECT_GT(near_target.window_bytes(), 60000u);
    EXPECT_GT(far_below.window_bytes(), near_target.window_bytes());
}

TEST(nscc, fast_increase_after_a_window_at_zero_delay) {
    const auto p = params_mid(20000);
    nscc cc(p);
    std::uint64_t t = feed(cc, 6, base_rtt, false, 1000);  // 24 KB > 20 KB window acked
    EXPECT_EQ(cc.last_action(), action::fast_increase);
    const auto w = cc.window_bytes();
    feed(cc, 4, base_rtt, false, t);
    EXPECT_GE(cc.window_bytes(), w + 4 * mtu / 4);  // +0.25 of each acked byte at scale 1
}

TEST(nscc, multiplicative_decrease_on_marked_long_delay_at_most_once_per_rtt) {
    const auto p = params_mid(200000);
    nscc cc(p);
    const std::uint64_t rtt = base_rtt + 30000;  // 30 us queueing: over target, under QA level
    std::uint64_t t = 1000;
    int decreases = 0;
    std::uint64_t last_decrease_at = 0;
    for (int i = 0; i < 400; ++i, t += 300) {  // 10 base RTTs
        const auto w = cc.window_bytes();
        cc.on_ack(mtu, rtt, true, t);
        if (cc.last_action() != action::decrease) continue;
        if (w > 4 * mtu) {  // above the floor, where the once-per-period eta may outweigh a cut
            EXPECT_LT(cc.window_bytes(), w);
        }
        EXPECT_GE(cc.window_bytes(), w / 2);  // never more than half per cut
        if (decreases++ > 0) {
            EXPECT_GT(t - last_decrease_at, cc.base_rtt_ns());
        }
        last_decrease_at = t;
    }
    EXPECT_GT(decreases, 3);
    EXPECT_GT(cc.avg_delay_ns(), double(p.target_delay_ns));
    EXPECT_LT(cc.window_bytes(), 200000u);
}

TEST(nscc, marked_short_delay_holds_the_window_and_asks_for_another_path) {
    const auto p = params_mid();
    nscc cc(p);
    const auto before = cc.window_bytes();
    cc.on_ack(mtu, base_rtt + 2000, true, 1000);
    EXPECT_EQ(cc.last_action(), action::switch_path);
    EXPECT_TRUE(cc.take_path_switch());
    EXPECT_FALSE(cc.take_path_switch());  // reported once
    // Only the once-per-period eta may move it, no quadrant increase or decrease.
    EXPECT_LE(cc.window_bytes(), before + static_cast<std::uint64_t>(p.eta) + 1);
    EXPECT_GE(cc.window_bytes(), before);
}

TEST(nscc, window_stays_within_one_mtu_and_one_and_a_half_bdp) {
    const auto p = params_100g();
    nscc cc(p);
    std::uint64_t t = 1000;
    for (int i = 0; i < 20000; ++i, t += 50) {
        cc.on_ack(mtu, base_rtt, false, t);  // idle network: fast increase all the way
        ASSERT_LE(cc.window_bytes(), cc.max_window());
    }
    EXPECT_EQ(cc.window_bytes(), cc.max_window());
    for (int i = 0; i < 2000; ++i, t += 50) {
        cc.on_nack(mtu, true, t);
        ASSERT_GE(cc.window_bytes(), std::uint64_t{mtu});
        cc.on_timeout(t);
        ASSERT_GE(cc.window_bytes(), std::uint64_t{mtu});
        cc.on_ack(mtu, base_rtt + 200000, true, t);
        ASSERT_GE(cc.window_bytes(), std::uint64_t{mtu});
    }
    EXPECT_EQ(cc.window_bytes(), std::uint64_t{mtu});
}

TEST(nscc, smaller_measured_rtt_lowers_the_cap) {
    const auto p = params_100g();
    nscc cc(p);
    cc.on_ack(mtu, 8000, false, 1000);
    EXPECT_EQ(cc.base_rtt_ns(), 8000u);
    EXPECT_EQ(cc.max_window(), 150000u);
    EXPECT_LE(cc.window_bytes(), 150000u);
}

TEST(nscc, nack_subtracts_its_bytes_when_quick_adapt_does_not_fire) {
    const auto p = params_mid(100000);
    nscc cc(p);
    cc.on_nack(mtu, true, 1000);  // first epoch not over: no quick adapt
    EXPECT_EQ(cc.last_action(), action::nack);
    EXPECT_EQ(cc.window_bytes(), 100000u - mtu);
}

// Starts an epoch at t0 and delivers `bytes` within it; returns the first time past the epoch.
std::uint64_t epoch_with(nscc& cc, const nscc_params& p, std::uint64_t bytes, std::uint64_t t0) {
    cc.on_ack(mtu, base_rtt + 500, false, t0);  // opens the quick-adapt epoch
    for (std::uint64_t b = 0; b < bytes; b += mtu)
        cc.on_ack(mtu, base_rtt + 500, false, t0 + 100);
    return t0 + base_rtt + p.target_delay_ns + 1;
}

TEST(nscc, quick_adapt_on_nack_cuts_to_what_got_through) {
    const auto p = params_mid(200000);
    nscc cc(p);
    const auto t = epoch_with(cc, p, 2 * mtu, 1000);
    cc.on_nack(mtu, true, t);
    EXPECT_EQ(cc.last_action(), action::quick_adapt);
    EXPECT_EQ(cc.window_bytes(), 2u * mtu);
}

TEST(nscc, quick_adapt_on_delay_over_four_times_target) {
    const auto p = params_mid(200000);
    nscc cc(p);
    const auto t = epoch_with(cc, p, 3 * mtu, 1000);
    cc.on_ack(mtu, base_rtt + 4 * p.target_delay_ns + 1000, false, t);
    EXPECT_EQ(cc.last_action(), action::quick_adapt);
    EXPECT_EQ(cc.window_bytes(), 4u * mtu);  // the triggering ACK's bytes got through too
}

TEST(nscc, no_quick_adapt_below_four_times_target_or_for_a_flow_that_delivers) {
    const auto p = params_mid(200000);
    nscc slow_but_ok(p);
    auto t = epoch_with(slow_but_ok, p, 2 * mtu, 1000);
    slow_but_ok.on_ack(mtu, base_rtt + 4 * p.target_delay_ns - 1000, false, t);
    EXPECT_NE(slow_but_ok.last_action(), action::quick_adapt);

    nscc busy(p);  // delivered more than max_window / 8 in the epoch
    t = epoch_with(busy, p, 40 * mtu, 1000);
    busy.on_nack(mtu, true, t);
    EXPECT_EQ(busy.last_action(), action::nack);
    EXPECT_GT(busy.window_bytes(), 100000u);
}

TEST(nscc, marks_from_before_a_quick_adapt_are_ignored) {
    const auto p = params_mid(200000);
    nscc cc(p);
    auto t = epoch_with(cc, p, 2 * mtu, 1000);
    cc.on_nack(mtu, true, t);
    ASSERT_EQ(cc.window_bytes(), 2u * mtu);
    cc.on_ack(mtu, base_rtt + 30000, true, t + 10);
    EXPECT_EQ(cc.last_action(), action::ignored);
    EXPECT_EQ(cc.window_bytes(), 2u * mtu);
}

TEST(nscc, factory_builds_in_place) {
    const auto p = params_100g();
    uet::cc::cc_config cfg;
    cfg.algo = uet::cc::algorithm::nscc;
    cfg.nscc = &p;
    auto c = uet::cc::make_controller(cfg);
    EXPECT_EQ(c.kind(), uet::cc::algorithm::nscc);
    EXPECT_EQ(c->window_bytes(), 225000u);
    ASSERT_NE(c.as<nscc>(), nullptr);
    cfg.algo = uet::cc::algorithm::none;
    cfg.fixed_window = 5000;
    c.reset(cfg);
    EXPECT_EQ(c.kind(), uet::cc::algorithm::none);
    EXPECT_EQ(c->window_bytes(), 5000u);
    EXPECT_TRUE(c->may_send(0, 9000));  // window rule: one packet always fits an empty pipe
    EXPECT_EQ(uet::cc::parse_algorithm("rccc"), uet::cc::algorithm::rccc);
    EXPECT_FALSE(uet::cc::parse_algorithm("cubic").has_value());
    std::printf("sizeof fixed_window %zu, nscc %zu, rccc_sender %zu, any_controller %zu\n",
                sizeof(uet::cc::fixed_window), sizeof(nscc), sizeof(uet::cc::rccc_sender),
                sizeof(uet::cc::any_controller));
}

// ---- single-bottleneck model ----
//
// N senders share one link of capacity C behind a FIFO of 1 BDP with trimming. Queueing delay
// is backlog / C; ECN marks with a probability rising from 0 at 20% to 1 at 80% of a BDP (the
// switch defaults of the htsim studies). Every packet is ACKed one base RTT after it leaves the
// queue; a trimmed packet is NACKed one base RTT after it arrived. Time advances in 64 ns ticks.
struct fluid_model {
    struct pkt {
        int flow;
        std::uint64_t sent;
        bool ecn;
    };
    struct event {
        std::uint64_t at;
        int flow;
        std::uint64_t sent;
        bool ecn;
    };

    static constexpr double c = 12.5;  // bytes/ns
    static constexpr std::uint64_t tick = 64;
    static constexpr double bdp = c * base_rtt;

    nscc_params params = params_100g();
    std::vector<nscc> cc;
    std::vector<std::uint64_t> start, inflight, delivered;
    std::vector<double> nic_budget;
    std::deque<pkt> queue;
    std::deque<event> acks, nacks;
    double backlog = 0, service = 0;
    std::uint64_t trims = 0;
    uet::rng rng{7};

    explicit fluid_model(std::vector<std::uint64_t> starts) : start(std::move(starts)) {
        for (std::size_t i = 0; i < start.size(); ++i)
            cc.emplace_back(params);
        inflight.assign(start.size(), 0);
        delivered.assign(start.size(), 0);
        nic_budget.assign(start.size(), 0);
    }

    bool mark() {
        const double lo = 0.2 * bdp, hi = 0.8 * bdp;
        if (backlog <= lo) return false;
        return rng.bernoulli((backlog - lo) / (hi - lo));
    }

    void send(std::uint64_t now) {
        for (std::size_t i = 0; i < cc.size(); ++i) {
            if (now < start[i]) continue;
            nic_budget[i] = std::min(nic_budget[i] + c * tick, c * tick + mtu);
            while (nic_budget[i] >= mtu && cc[i].may_send(inflight[i], mtu)) {
                nic_budget[i] -= mtu;
                inflight[i] += mtu;
                cc[i].on_send(mtu, now);
                if (backlog + mtu > bdp) {
                    ++trims;
                    nacks.push_back({now + base_rtt, int(i), now, false});
                    continue;
                }
                queue.push_back({int(i), now, mark()});
                backlog += mtu;
            }
        }
    }

    void serve(std::uint64_t now) {
        service = std::min(service + c * tick, c * tick + mtu);
        while (!queue.empty() && service >= mtu) {
            const pkt p = queue.front();
            queue.pop_front();
            service -= mtu;
            backlog -= mtu;
            delivered[p.flow] += mtu;
            acks.push_back({now + base_rtt, p.flow, p.sent, p.ecn});
        }
        if (queue.empty()) service = std::min(service, double(mtu));
    }

    void feedback(std::uint64_t now) {
        while (!acks.empty() && acks.front().at <= now) {
            const event e = acks.front();
            acks.pop_front();
            inflight[e.flow] -= mtu;
            cc[e.flow].on_ack(mtu, now - e.sent, e.ecn, now);
        }
        while (!nacks.empty() && nacks.front().at <= now) {
            const event e = nacks.front();
            nacks.pop_front();
            inflight[e.flow] -= mtu;
            cc[e.flow].on_nack(mtu, true, now);
        }
    }

    void step(std::uint64_t now) {
        feedback(now);
        send(now);
        serve(now);
    }
};

double jain(const std::vector<double>& x) {
    double sum = 0, sq = 0;
    for (double v : x) {
        sum += v;
        sq += v * v;
    }
    return sq > 0 ? sum * sum / (double(x.size()) * sq) : 0;
}

TEST(nscc_model, four_flows_share_one_bottleneck_fairly_and_fully) {
    // Flows join 1 ms apart, each starting at line rate (1.5 BDP), so the first joins find the
    // queue full and the later ones must take bandwidth from flows already running.
    fluid_model m({0, 1'000'000, 2'000'000, 3'000'000});
    const std::uint64_t end = 40'000'000, measure_from = 20'000'000;
    const std::size_t n = m.cc.size();
    std::vector<std::uint64_t> at_measure(n), last_ms(n, 0);
    double queue_sum = 0, queue_max = 0;
    std::uint64_t samples = 0;
    std::printf("  t(ms)  util   queue(KB)  windows(KB)\n");
    for (std::uint64_t now = 0; now < end; now += fluid_model::tick) {
        m.step(now);
        if (now == measure_from) at_measure = m.delivered;
        if (now >= measure_from) {
            queue_sum += m.backlog;
            queue_max = std::max(queue_max, m.backlog);
            ++samples;
        }
        if (now % 2'000'000 != 0 || now == 0) continue;
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < n; ++i) {
            total += m.delivered[i] - last_ms[i];
            last_ms[i] = m.delivered[i];
        }
        std::printf("  %5.1f  %.3f  %8.1f   ", double(now) / 1e6,
                    double(total) / (fluid_model::c * 2e6), m.backlog / 1000);
        for (auto& cc : m.cc)
            std::printf(" %6.1f", double(cc.window_bytes()) / 1000);
        std::printf("\n");
    }
    std::vector<double> share(n);
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        share[i] = double(m.delivered[i] - at_measure[i]);
        total += share[i];
    }
    const double util = total / (fluid_model::c * double(end - measure_from));
    const double fairness = jain(share);
    const double avg_queue = queue_sum / double(samples);
    std::printf(
        "NSCC 4 flows, %0.f-%0.f ms: Jain %.4f, utilisation %.4f, queue avg %.1f KB "
        "(%.2f us) max %.1f KB, trims %llu\n",
        measure_from / 1e6, end / 1e6, fairness, util, avg_queue / 1000,
        avg_queue / fluid_model::c / 1000, queue_max / 1000,
        static_cast<unsigned long long>(m.trims));
    std::printf("  shares:");
    for (double s : share)
        std::printf(" %.3f", s / total);
    std::printf("\n");
    EXPECT_GT(fairness, 0.95);
    EXPECT_GT(util, 0.9);
    // Bounded: the standing queue sits near the target delay, not at the trimming threshold.
    EXPECT_LT(avg_queue, fluid_model::bdp);
    for (auto& cc : m.cc)
        EXPECT_LE(cc.window_bytes(), cc.max_window());
}

}  // namespace
