// pds_long_run: 1,000,000 RUD data packets at 5% loss with reordering up to distance 400 (both
// directions): zero lost, zero duplicated, zero corrupted.
#include <gtest/gtest.h>

#include <cstdio>

#include "workload.hpp"

namespace uet::test {
namespace {

TEST(pds_long_run, million_rud_packets_at_5pct_loss_and_reordering) {
    constexpr std::uint32_t mtu = 1024;
    constexpr std::uint32_t packets_per_message = 16;
    constexpr std::size_t packets = 1'000'000;
    workload w;
    w.mode = delivery_mode::rud;
    w.imp.delay_ns = 2'000;
    w.imp.loss = 0.05;
    w.imp.reorder = 0.05;
    w.imp.reorder_max_distance = 400;
    w.seed = 4242;
    w.a_cfg.mtu_payload = w.b_cfg.mtu_payload = mtu;
    w.a_cfg.mpr = w.b_cfg.mpr = 1024;  // high-BDP window: the receive side tracks all of it
    w.sizes.assign(packets / packets_per_message, mtu * packets_per_message);
    w.wave = 512;
    w.max_outstanding = 2048;
    w.deadline_ns = 600'000'000'000ull;
    const outcome o = run(w);
    const auto& p = o.a.pds;
    std::printf(
        "long run: %zu messages, %llu data packets sent (%llu original), delivered %zu, "
        "duplicates %zu, corrupted %zu, failed %zu\n"
        "  retransmits sack %llu timeout %llu nack %llu; timeouts %llu; rtt samples %llu "
        "min %llu ns mean %llu ns\n"
        "  pipe a->b: sent %llu lost %llu reordered %llu; receiver duplicates suppressed %llu\n"
        "  virtual %.3f ms, wall %.1f ms\n",
        o.expected, (unsigned long long)p.tx_data_packets,
        (unsigned long long)(o.expected * packets_per_message), o.delivered, o.duplicates,
        o.corrupted, o.failed, (unsigned long long)p.retransmitted(uet::retx_cause::sack),
        (unsigned long long)p.retransmitted(uet::retx_cause::timeout),
        (unsigned long long)p.retransmitted(uet::retx_cause::nack), (unsigned long long)p.timeouts,
        (unsigned long long)p.rtt.count, (unsigned long long)p.rtt.min_ns,
        (unsigned long long)p.rtt.mean_ns(), (unsigned long long)o.ab.sent,
        (unsigned long long)o.ab.lost, (unsigned long long)o.ab.reordered,
        (unsigned long long)o.b.pds.duplicates, o.virtual_ns / 1e6, o.wall_ms);
    EXPECT_TRUE(o.finished);
    EXPECT_EQ(o.delivered, o.expected);
    EXPECT_EQ(o.duplicates, 0u);
    EXPECT_EQ(o.corrupted, 0u);
    EXPECT_EQ(o.failed, 0u);
    EXPECT_EQ(o.completed, o.expected);
    EXPECT_GE(p.tx_data_packets, packets);
    EXPECT_TRUE(o.quiescent);
}

}  // namespace
}  // namespace uet::test
