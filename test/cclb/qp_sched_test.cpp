// The CAST multi-QP scheduler (lib/qp_sched) against the document's formulas on cases computed
// by hand: the metric, both estimators, the jitter-filtered weights, the four schedulers, the
// split threshold, and the environment variables by their NCCL names.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>

#include "qp_sched/qp_sched.hpp"

namespace {

using namespace uet::qp_sched;

struct environment {
    std::map<std::string, std::string> vars;
    std::function<const char*(const char*)> get() const {
        return [this](const char* name) -> const char* {
            auto it = vars.find(name);
            return it == vars.end() ? nullptr : it->second.c_str();
        };
    }
};

params with(scheduler s, std::uint32_t qps) {
    params p;
    p.set(s);
    p.qps_per_connection = qps;
    return p;
}

// QP i measured with the RTTs given: line rate 0 and no minimum latency, so metric = RTT.
void measure(scheduler_state& s, std::uint32_t qp, std::initializer_list<std::uint64_t> rtts) {
    for (std::uint64_t r : rtts)
        s.on_completion(qp, 0, r, 0);
}

TEST(qp_sched, weights_follow_the_documents_jitter_filter) {
    // Estimates 10, 20, 40; minimum metrics 5, 8, 9. The lowest estimate is QP 0's, so its
    // minimum metric, 5, is the floor: 1/5, 1/15, 1/35, normalised.
    const std::array<double, 3> estimate{10, 20, 40}, floor{5, 8, 9};
    const std::array<bool, 3> measured{true, true, true};
    std::array<double, 3> w{};
    cast_weights(estimate, floor, measured, w);
    const double sum = 1.0 / 5 + 1.0 / 15 + 1.0 / 35;
    EXPECT_NEAR(w[0], (1.0 / 5) / sum, 1e-12);
    EXPECT_NEAR(w[1], (1.0 / 15) / sum, 1e-12);
    EXPECT_NEAR(w[2], (1.0 / 35) / sum, 1e-12);
    EXPECT_NEAR(w[0], 0.677419, 1e-6);
    EXPECT_NEAR(w[1], 0.225806, 1e-6);
    EXPECT_NEAR(w[2], 0.096774, 1e-6);

    // A QP not measured yet counts as the best; none measured: equal weights.
    const std::array<bool, 3> two{true, false, true};
    cast_weights(estimate, floor, two, w);
    const double sum2 = 1.0 / 5 + 1.0 / 5 + 1.0 / 35;
    EXPECT_NEAR(w[1], (1.0 / 5) / sum2, 1e-12);
    const std::array<bool, 3> none{false, false, false};
    cast_weights(estimate, floor, none, w);
    for (double x : w)
        EXPECT_DOUBLE_EQ(x, 1.0 / 3);
}

TEST(qp_sched, the_metric_takes_the_payload_time_and_the_minimum_latency_off_the_rtt) {
    params p = with(scheduler::cast_stripe, 2);
    scheduler_state s(p, 100, 2000);
    // 64 KiB at 100 Gb/s take 5242.88 ns.
    EXPECT_NEAR(s.metric(65536, 10'000), 10'000 - 5242.88 - 2000, 1e-9);
    EXPECT_EQ(s.metric(65536, 3000), 1.0);  // never below 1 ns
}

TEST(qp_sched, the_filters_floor_gives_the_minimum_latency_back_so_weights_ignore_it) {
    // RTTs of 10 and 30 us on two QPs (line rate 0: no transmission time). Whatever minimum
    // latency is taken off the metric, the floor is the lowest RTT, 10 us, as in RCCL's
    // plugin: weights 1/10 and 1/(20 + 10), 0.75 and 0.25. With the metric's own floor, a
    // latency of 8 us would give 1/2 against 1/22 (0.917), and one of 10 us, where the best
    // QP's metric is clamped to 1 ns, all but 0.005% to QP 0.
    for (std::uint64_t latency : {0u, 8000u, 10'000u}) {
        scheduler_state s(with(scheduler::cast_stripe, 2), 0, latency);
        s.on_completion(0, 0, 10'000, 0);
        s.on_completion(1, 0, 30'000, 0);
        s.update_weights();
        EXPECT_NEAR(s.stats(0).weight,
                    latency == 10'000 ? 1.0 / 10'001 / (1.0 / 10'001 + 1.0 / 30'000) : 0.75, 1e-12)
            << "latency " << latency;
        EXPECT_NEAR(s.stats(0).weight + s.stats(1).weight, 1.0, 1e-12);
    }
    // The metric itself, and so stats(), keeps the document's definition.
    scheduler_state s(with(scheduler::cast_stripe, 2), 0, 8000);
    s.on_completion(0, 0, 10'000, 0);
    EXPECT_DOUBLE_EQ(s.stats(0).estimate_ns, 2000);
    EXPECT_DOUBLE_EQ(s.stats(0).min_metric_ns, 2000);
}

TEST(qp_sched, the_average_estimator_restarts_its_history_every_reset_interval) {
    params p = with(scheduler::cast_stripe, 2);
    p.reset_interval_ms = 1;
    scheduler_state s(p, 0, 0);
    s.on_completion(0, 0, 100, 10);
    s.on_completion(0, 0, 300, 20);
    EXPECT_DOUBLE_EQ(s.stats(0).estimate_ns, 200);
    EXPECT_DOUBLE_EQ(s.stats(0).min_metric_ns, 100);
    s.on_completion(0, 0, 50, 1'000'000);  // the interval has passed: history reset
    EXPECT_DOUBLE_EQ(s.stats(0).estimate_ns, 50);
    EXPECT_DOUBLE_EQ(s.stats(0).min_metric_ns, 50);
    s.on_completion(0, 0, 150, 1'500'000);
    EXPECT_DOUBLE_EQ(s.stats(0).estimate_ns, 100);

    p.reset_interval_ms = 0;  // never
    scheduler_state never(p, 0, 0);
    never.on_completion(0, 0, 100, 0);
    never.on_completion(0, 0, 300, 3'600'000'000'000);
    EXPECT_DOUBLE_EQ(never.stats(0).estimate_ns, 200);
}

TEST(qp_sched, the_weighted_average_weighs_each_sample_by_the_weight) {
    params p = with(scheduler::cast_stripe, 1);
    p.weight = 0.25;
    scheduler_state s(p, 0, 0);
    s.on_completion(0, 0, 400, 0);
    EXPECT_DOUBLE_EQ(s.stats(0).estimate_ns, 400);
    s.on_completion(0, 0, 800, 0);
    EXPECT_DOUBLE_EQ(s.stats(0).estimate_ns, 0.25 * 800 + 0.75 * 400);
    s.on_completion(0, 0, 100, 0);
    EXPECT_DOUBLE_EQ(s.stats(0).estimate_ns, 0.25 * 100 + 0.75 * 500);
}

TEST(qp_sched, round_robin_and_stripe_split_as_nccl_does) {
    std::array<subchunk, 8> out{};
    scheduler_state rr(with(scheduler::round_robin, 3), 100, 0);
    for (std::uint32_t i = 0; i < 6; ++i) {
        ASSERT_EQ(rr.schedule(1 << 20, 0, out), 1u);
        EXPECT_EQ(out[0].qp, i % 3);
        EXPECT_EQ(out[0].length, 1u << 20);
    }
    // Equal subchunks, rounded down to 128 bytes; the rest to the last QP.
    scheduler_state st(with(scheduler::stripe, 3), 100, 0);
    ASSERT_EQ(st.schedule(1'000'000, 0, out), 3u);
    EXPECT_EQ(out[0].length, 333'312u);
    EXPECT_EQ(out[1].length, 333'312u);
    EXPECT_EQ(out[2].length, 333'376u);
    EXPECT_EQ(out[1].offset, 333'312u);
    EXPECT_EQ(out[2].offset, 666'624u);
    EXPECT_EQ(st.stats(2).bytes, 333'376u);
    EXPECT_EQ(st.stats(2).requests, 1u);
}

TEST(qp_sched, cast_stripe_sizes_subchunks_by_the_weights) {
    params p = with(scheduler::cast_stripe, 3);
    scheduler_state s(p, 0, 0);
    measure(s, 0, {5, 15});  // estimate 10, minimum 5
    measure(s, 1, {8, 32});  // 20, 8
    measure(s, 2, {9, 71});  // 40, 9
    std::array<subchunk, 8> out{};
    ASSERT_EQ(s.schedule(1 << 20, 50'000, out), 3u);  // the weights are refreshed first
    EXPECT_NEAR(s.stats(0).weight, 0.677419, 1e-6);
    // 1 MiB x weight, rounded down to 128: 710,272, 236,672 and 101,376; the 256 bytes left go
    // to the QP of the largest weight.
    EXPECT_EQ(out[0].length, 710'272u + 256);
    EXPECT_EQ(out[1].length, 236'672u);
    EXPECT_EQ(out[2].length, 101'376u);
    EXPECT_EQ(out[1].offset, out[0].length);
    EXPECT_EQ(out[2].offset + out[2].length, 1u << 20);
}

TEST(qp_sched, below_the_split_threshold_a_request_goes_to_one_qp_by_rr_or_wrr) {
    params p = with(scheduler::cast_stripe, 4);  // split_data_min 64 KiB
    std::array<subchunk, 8> out{};
    scheduler_state rr(p, 0, 0);
    for (std::uint32_t i = 0; i < 8; ++i) {
        ASSERT_EQ(rr.schedule(128 * 1024, 0, out), 1u);  // 32 KiB a QP < 64 KiB
        EXPECT_EQ(out[0].qp, i % 4);
    }
    ASSERT_EQ(rr.schedule(256 * 1024, 0, out), 4u);  // 64 KiB a QP: split

    p.wrr_enable = true;
    scheduler_state wrr(p, 0, 0);
    measure(wrr, 0, {10});
    measure(wrr, 1, {10});
    measure(wrr, 2, {20});
    measure(wrr, 3, {40});  // weights 1/10, 1/10, 1/20, 1/40 normalised: 4:4:2:1
    std::array<int, 4> picks{};
    for (int i = 0; i < 110; ++i) {
        ASSERT_EQ(wrr.schedule(1024, 50'000, out), 1u);
        ++picks[out[0].qp];
    }
    EXPECT_EQ(picks[0], 40);
    EXPECT_EQ(picks[1], 40);
    EXPECT_EQ(picks[2], 20);
    EXPECT_EQ(picks[3], 10);
}

TEST(qp_sched, cast_wrr_gives_each_qp_its_weights_share_of_requests) {
    scheduler_state s(with(scheduler::cast_wrr, 3), 0, 0);
    measure(s, 0, {5, 15});
    measure(s, 1, {8, 32});
    measure(s, 2, {9, 71});
    std::array<subchunk, 4> out{};
    std::array<int, 3> picks{};
    for (int i = 0; i < 310; ++i) {
        ASSERT_EQ(s.schedule(1 << 20, 50'000, out), 1u);  // never split, whatever the size
        ++picks[out[0].qp];
    }
    // 310 x (0.6774, 0.2258, 0.0968) = 210, 70, 30: within one pick.
    EXPECT_NEAR(picks[0], 210, 1);
    EXPECT_NEAR(picks[1], 70, 1);
    EXPECT_NEAR(picks[2], 30, 1);
}

TEST(qp_sched, weights_are_refreshed_only_every_update_interval) {
    params p = with(scheduler::cast_wrr, 2);
    p.update_interval_us = 100;
    scheduler_state s(p, 0, 0);
    measure(s, 0, {10});
    measure(s, 1, {30});
    std::array<subchunk, 2> out{};
    s.schedule(1, 50'000, out);  // before the first update: equal weights
    EXPECT_DOUBLE_EQ(s.stats(0).weight, 0.5);
    s.schedule(1, 100'000, out);
    EXPECT_NEAR(s.stats(0).weight, (1.0 / 10) / (1.0 / 10 + 1.0 / 30), 1e-12);
}

TEST(qp_sched, the_environment_is_read_by_the_nccl_names_with_the_documents_defaults) {
    params p;
    EXPECT_EQ(read_environment(p, environment{}.get()), "");
    EXPECT_FALSE(p.enable);
    EXPECT_EQ(p.reset_interval_ms, 60000u);
    EXPECT_EQ(p.update_interval_us, 50u);
    EXPECT_EQ(p.weight, 0);
    EXPECT_EQ(p.split_data_min, 65536u);
    EXPECT_FALSE(p.wrr_enable);
    EXPECT_EQ(p.kind(), scheduler::round_robin);

    environment env{{{"NCCL_IB_QP_SCHED_ENABLE", "1"},
                     {"NCCL_IB_QP_SCHED_RESET_INTERVAL", "0"},
                     {"NCCL_IB_QP_SCHED_UPDATE_INTERVAL", "200"},
                     {"NCCL_IB_QP_SCHED_WEIGHT", "0.1"},
                     {"NCCL_IB_QP_SCHED_SPLIT_DATA_MIN", "32768"},
                     {"NCCL_IB_QP_SCHED_WRR_ENABLE", "1"},
                     {"NCCL_IB_SPLIT_DATA_ON_QPS", "1"},
                     {"NCCL_IB_QPS_PER_CONNECTION", "4"}}};
    params q;
    EXPECT_EQ(read_environment(q, env.get()), "");
    EXPECT_EQ(q.kind(), scheduler::cast_stripe);
    EXPECT_EQ(q.reset_interval_ms, 0u);
    EXPECT_EQ(q.update_interval_us, 200u);
    EXPECT_DOUBLE_EQ(q.weight, 0.1);
    EXPECT_EQ(q.split_data_min, 32768u);
    EXPECT_TRUE(q.wrr_enable);
    EXPECT_EQ(q.qps_per_connection, 4u);

    const auto error_of = [](const char* name, const char* value) {
        params r;
        return read_environment(r, environment{{{name, value}}}.get());
    };
    EXPECT_NE(error_of("NCCL_IB_QP_SCHED_ENABLE", "yes").find("NCCL_IB_QP_SCHED_ENABLE"),
              std::string::npos);
    EXPECT_NE(error_of("NCCL_IB_QP_SCHED_WEIGHT", "1.5").find("NCCL_IB_QP_SCHED_WEIGHT"),
              std::string::npos);
    EXPECT_NE(error_of("NCCL_IB_QP_SCHED_WEIGHT", "x").find("NCCL_IB_QP_SCHED_WEIGHT"),
              std::string::npos);
    EXPECT_NE(error_of("NCCL_IB_QPS_PER_CONNECTION", "0").find("NCCL_IB_QPS_PER_CONNECTION"),
              std::string::npos);
    EXPECT_NE(error_of("NCCL_IB_QPS_PER_CONNECTION", "-2").find("NCCL_IB_QPS_PER_CONNECTION"),
              std::string::npos);
    EXPECT_NE(
        error_of("NCCL_IB_QP_SCHED_SPLIT_DATA_MIN", "64k").find("NCCL_IB_QP_SCHED_SPLIT_DATA_MIN"),
        std::string::npos);

    scheduler k;
    EXPECT_TRUE(parse("cast-wrr", k));
    EXPECT_EQ(k, scheduler::cast_wrr);
    EXPECT_FALSE(parse("weighted", k));
}

}  // namespace
