// RCCC: credit arithmetic, the sender's credit gate, the receiver's targets and the per-port
// pull pacer, then a 16:1 incast model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <vector>

#include "cc/cc_factory.hpp"
#include "cc/rccc.hpp"

namespace {

using namespace uet::cc;

constexpr std::uint32_t mtu = 4096;
constexpr std::uint64_t base_rtt = 12000;

rccc_params params_100g() {
    return rccc_params::from_link(100, base_rtt, mtu);
}

TEST(rccc_credit, serial_arithmetic_wraps_at_24_bits) {
    EXPECT_EQ(credit::distance(5, 3), 2);
    EXPECT_EQ(credit::distance(3, 5), -2);
    EXPECT_EQ(credit::distance(2, 0xFFFFFE), 4);  // across the wrap
    EXPECT_EQ(credit::advance(0xFFFFFF, 2), 1u);
    EXPECT_EQ(credit::quanta_ceil(1), 1u);
    EXPECT_EQ(credit::quanta_ceil(256), 1u);
    EXPECT_EQ(credit::quanta_ceil(257), 2u);
}

TEST(rccc_params, from_link) {
    const auto p = params_100g();
    EXPECT_DOUBLE_EQ(p.pace_fraction, 0.99);
    EXPECT_EQ(p.credit_per_pull, 4 * mtu);
    EXPECT_EQ(p.speculative_bytes, 150000u);  // 1 BDP
    EXPECT_EQ(p.max_credit, 225000u);
}

TEST(rccc_sender, speculates_about_one_bdp_then_needs_credit) {
    const auto p = params_100g();
    rccc_sender s(p);
    EXPECT_TRUE(s.uses_credit());
    EXPECT_TRUE(s.speculating());
    std::uint64_t sent = 0;
    while (s.may_send(sent, mtu)) {
        s.on_send(mtu, 0);
        sent += mtu;
    }
    EXPECT_LE(sent, p.speculative_bytes);
    EXPECT_GT(sent, p.speculative_bytes - mtu);
    EXPECT_LT(s.window_bytes(), std::uint64_t{mtu});
}

TEST(rccc_sender, first_feedback_drops_leftover_speculative_credit) {
    const auto p = params_100g();
    rccc_sender s(p);
    s.on_send(mtu, 0);
    s.on_ack(mtu, 0, false, 100);
    EXPECT_FALSE(s.speculating());
    EXPECT_EQ(s.window_bytes(), 0u);
    EXPECT_FALSE(s.may_send(0, mtu));  // an empty pipe is no licence without credit
}

TEST(rccc_sender, cumulative_grants_count_once_and_survive_loss_and_wrap) {
    const auto p = params_100g();
    rccc_sender s(p);
    s.on_credit(0, 0);  // nothing granted yet: stops speculating, adds nothing
    EXPECT_EQ(s.window_bytes(), 0u);
    s.on_credit(64, 0);  // 64 quanta = 16 KiB
    EXPECT_EQ(s.window_bytes(), 64u * 256);
    s.on_credit(64, 0);  // duplicate
    s.on_credit(10, 0);  // stale, reordered
    EXPECT_EQ(s.window_bytes(), 64u * 256);
    s.on_credit(192, 0);  // the grant at 128 was lost: 192 covers it
    EXPECT_EQ(s.window_bytes(), 192u * 256);
    for (int i = 0; i < 12; ++i)
        s.on_send(mtu, 0);
    EXPECT_EQ(s.window_bytes(), 0u);

    // A long-lived PDC walks its counter to the wrap in steps (each under half the space;
    // a jump of more than 2^23 quanta reads as stale and is ignored).
    rccc_sender w(p);
    for (std::uint32_t field : {0x600000u, 0xC00000u, 0xFFFFF0u}) {
        w.on_credit(field, 0);
        while (w.may_send(0, mtu))
            w.on_send(mtu, 0);
    }
    const auto before = w.credit_bytes();
    w.on_credit(0x10, 0);  // 0x20 quanta later, across the wrap
    EXPECT_EQ(w.credit_bytes() - before, 0x20 * 256);
    w.on_credit(0xFFFFF8, 0);  // behind 0x10 across the wrap: stale
    EXPECT_EQ(w.credit_bytes() - before, 0x20 * 256);
}

TEST(rccc_sender, credit_is_capped_at_max_credit) {
    const auto p = params_100g();
    rccc_sender s(p);
    s.on_credit(0x100000, 0);
    EXPECT_EQ(s.window_bytes(), p.max_credit);
}

TEST(rccc_sender, credit_target_asks_for_the_backlog_beyond_credit_in_hand) {
    const auto p = params_100g();
    rccc_sender s(p);
    // Speculating with a 1 BDP credit: a small backlog still asks for an MTU so the receiver
    // learns about the sender.
    EXPECT_EQ(s.credit_target(1000), credit::quanta_ceil(mtu));
    EXPECT_EQ(s.credit_target(0), 0u);
    s.on_credit(0, 0);
    EXPECT_EQ(s.credit_target(10000), credit::quanta_ceil(10000));
    EXPECT_EQ(s.credit_target(10'000'000), credit::quanta_ceil(p.max_credit));  // capped
    s.on_credit(40, 0);                      // 10240 bytes in hand
    EXPECT_EQ(s.credit_target(10000), 40u);  // covered: target stays at what was granted
    EXPECT_EQ(s.credit_target(20480), 80u);
}

TEST(rccc_receiver, targets_only_move_forward) {
    rccc_receiver r(7);
    EXPECT_EQ(r.cookie(), 7u);
    EXPECT_EQ(r.demand_quanta(), 0u);
    r.on_credit_target(100);
    EXPECT_EQ(r.demand_quanta(), 100u);
    r.on_credit_target(50);  // an older request overtaken on another path
    EXPECT_EQ(r.demand_quanta(), 100u);
    EXPECT_EQ(r.credit_field(), 0u);
}

TEST(rccc_pacer, grants_four_mtu_per_pull_at_ninety_nine_percent_of_line_rate) {
    const auto p = params_100g();
    rccc_pacer pacer(p);
    rccc_receiver r;
    EXPECT_EQ(pacer.next_deadline(), rccc_pacer::idle);
    r.on_credit_target(credit::quanta_ceil(10 * mtu));  // 2.5 pulls
    pacer.on_demand(r, 1000);
    EXPECT_TRUE(r.queued());
    EXPECT_EQ(pacer.next_deadline(), 1000u);

    auto g = pacer.poll(1000);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->receiver, &r);
    EXPECT_EQ(g->bytes, 4 * mtu);
    EXPECT_EQ(g->credit_field, 64u);
    EXPECT_FALSE(pacer.poll(1000));  // the next one waits a pull's time
    const double pull_ns = 4.0 * mtu / (12.5 * 0.99);
    EXPECT_EQ(pacer.next_deadline(), static_cast<std::uint64_t>(1000 + pull_ns) + 1);
    EXPECT_FALSE(pacer.poll(pacer.next_deadline() - 1));
    g = pacer.poll(pacer.next_deadline());
    ASSERT_TRUE(g);
    EXPECT_EQ(g->credit_field, 128u);
    g = pacer.poll(pacer.next_deadline());
    ASSERT_TRUE(g);
    EXPECT_EQ(g->bytes, 2 * mtu);  // the remainder
    EXPECT_EQ(g->credit_field, 160u);
    EXPECT_FALSE(r.queued());
    EXPECT_EQ(pacer.next_deadline(), rccc_pacer::idle);
    EXPECT_EQ(pacer.granted_bytes(), 10u * mtu);
}

TEST(rccc_pacer, forget_unlinks_a_receiver) {
    const auto p = params_100g();
    rccc_pacer pacer(p);
    rccc_receiver a(1), b(2), c(3);
    for (auto* r : {&a, &b, &c}) {
        r->on_credit_target(1000);
        pacer.on_demand(*r, 0);
    }
    pacer.forget(b);
    EXPECT_FALSE(b.queued());
    std::vector<std::uint32_t> order;
    for (int i = 0; i < 4; ++i) {
        auto g = pacer.poll(pacer.next_deadline());
        ASSERT_TRUE(g);
        order.push_back(g->receiver->cookie());
    }
    EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 3, 1, 3}));  // round robin without b
    pacer.forget(c);
    pacer.forget(a);
    EXPECT_EQ(pacer.next_deadline(), rccc_pacer::idle);
}

TEST(rccc_factory, builds_the_credit_sender) {
    const auto p = params_100g();
    cc_config cfg;
    cfg.algo = algorithm::rccc;
    cfg.rccc = &p;
    auto c = make_controller(cfg);
    EXPECT_EQ(c.kind(), algorithm::rccc);
    EXPECT_TRUE(c->uses_credit());
    EXPECT_EQ(c->window_bytes(), p.speculative_bytes);
    cfg.rccc = nullptr;  // missing parameters: a fixed window, never a crash
    c.reset(cfg);
    EXPECT_EQ(c.kind(), algorithm::none);
}

// ---- 16:1 incast ----
//
// Sixteen senders with unbounded backlogs, each on its own line-rate NIC, send to one receiver
// port. One-way delay is half the base RTT for data (carrying the credit target), for credit
// and for ACKs. The receiver's pacer grants round robin; the receiver's downlink drains at line
// rate. Time advances in 8 ns ticks.
struct incast_model {
    struct msg {
        std::uint64_t at;
        int who;
        std::uint32_t value;
    };
    static constexpr int n = 16;
    static constexpr double c = 12.5;
    static constexpr std::uint64_t tick = 8;
    static constexpr std::uint64_t one_way = base_rtt / 2;

    rccc_params params = params_100g();
    rccc_pacer pacer{params};
    std::vector<rccc_sender> senders;
    std::vector<rccc_receiver> receivers;
    std::vector<std::uint64_t> sent, granted_to, spec_sent;
    std::vector<double> nic;
    std::deque<msg> data, credits, acks;
    double downlink = 0, drain = 0;

    incast_model() {
        for (int i = 0; i < n; ++i) {
            senders.emplace_back(params);
            receivers.emplace_back(i);
        }
        sent.assign(n, 0);
        granted_to.assign(n, 0);
        spec_sent.assign(n, 0);
        nic.assign(n, 0);
    }

    void step(std::uint64_t now) {
        while (!credits.empty() && credits.front().at <= now) {
            senders[credits.front().who].on_credit(credits.front().value, now);
            credits.pop_front();
        }
        while (!acks.empty() && acks.front().at <= now) {
            senders[acks.front().who].on_ack(mtu, 0, false, now);
            acks.pop_front();
        }
        for (int i = 0; i < n; ++i)
            send(i, now);
        while (!data.empty() && data.front().at <= now) {
            const msg d = data.front();
            data.pop_front();
            downlink += mtu;
            receivers[d.who].on_credit_target(d.value);
            pacer.on_demand(receivers[d.who], now);
            acks.push_back({now + one_way, d.who, 0});
        }
        while (pacer.next_deadline() <= now) {
            const auto g = pacer.poll(now);
            const int who = static_cast<int>(g->receiver->cookie());
            granted_to[who] += g->bytes;
            credits.push_back({now + one_way, who, g->credit_field});
        }
        drain = std::min(drain + c * tick, double(mtu));
        const double out = std::min(drain, downlink);
        downlink -= out;
        drain -= out;
    }

    void send(int i, std::uint64_t now) {
        nic[i] = std::min(nic[i] + c * tick, c * tick + mtu);
        auto& s = senders[i];
        while (nic[i] >= mtu && s.may_send(0, mtu)) {
            nic[i] -= mtu;
            if (s.speculating()) spec_sent[i] += mtu;
            s.on_send(mtu, now);
            sent[i] += mtu;
            // The sender never sends more than its speculative start plus what was granted.
            ASSERT_LE(sent[i], params.speculative_bytes + granted_to[i]);
            data.push_back({now + one_way, i, s.credit_target(~std::uint64_t{0} >> 1)});
        }
    }
};

TEST(rccc_model, incast_16_to_1_paces_at_ninety_nine_percent_and_shares_fairly) {
    incast_model m;
    const std::uint64_t warm = 200'000, end = 2'200'000;
    std::vector<std::uint64_t> granted_at_warm;
    std::uint64_t pacer_at_warm = 0;
    double downlink_at_warm = 0, downlink_peak = 0;
    for (std::uint64_t now = 0; now <= end; now += incast_model::tick) {
        m.step(now);
        if (now == warm) {
            granted_at_warm = m.granted_to;
            pacer_at_warm = m.pacer.granted_bytes();
            downlink_at_warm = m.downlink;
        }
        downlink_peak = std::max(downlink_peak, m.downlink);
    }
    const double secs_ns = double(end - warm);
    const double rate = double(m.pacer.granted_bytes() - pacer_at_warm) / secs_ns;
    const double target = 0.99 * incast_model::c;
    double lo = 1e18, hi = 0;
    for (int i = 0; i < incast_model::n; ++i) {
        const double r = double(m.granted_to[i] - granted_at_warm[i]) / secs_ns;
        lo = std::min(lo, r);
        hi = std::max(hi, r);
        EXPECT_LE(m.spec_sent[i], m.params.speculative_bytes);  // speculation bounded by ~1 BDP
    }
    std::printf(
        "RCCC 16:1 incast: granted %.4f B/ns = %.4f of line rate (target 0.99); per "
        "sender %.4f..%.4f B/ns (fair %.4f); downlink backlog peak %.0f KB, at %.1f ms "
        "%.0f KB, at end %.0f KB\n",
        rate, rate / incast_model::c, lo, hi, rate / incast_model::n, downlink_peak / 1000,
        warm / 1e6, downlink_at_warm / 1000, m.downlink / 1000);
    EXPECT_NEAR(rate, target, 0.01 * target);
    EXPECT_LE(rate, target * 1.0001);  // never over the paced rate
    EXPECT_GT(lo, 0.97 * rate / incast_model::n);
    EXPECT_LT(hi, 1.03 * rate / incast_model::n);
    // Once the speculative burst has arrived, granted data comes in below line rate and the
    // receiver's backlog only shrinks.
    EXPECT_LT(m.downlink, downlink_at_warm);
}

}  // namespace
