// The impairment pipe: each impairment alone at its configured rate, frame edits that parse
// (or fail to parse) as they should, exact serialisation arithmetic, determinism.
#include "pipe/pipe.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "pipe/frame_edit.hpp"
#include "wire/bytes.hpp"
#include "wire/frame.hpp"

namespace {

using namespace uet;
using pipe::impairments;
using pipe::link;
using wire::l2l4_view;
using wire::reject_reason;

constexpr std::uint64_t us = 1000, ms = 1000 * us;

wire::frame_spec spec(std::uint8_t ecn = 0) {
    wire::frame_spec s;
    s.src_mac = {{0x02, 0, 0, 0, 0, 1}};
    s.dst_mac = {{0x02, 0, 0, 0, 0, 2}};
    s.src_ip = 0x0a000001;
    s.dst_ip = 0x0a000002;
    s.src_port = 50000;
    s.dst_port = wire::uet_udp_port;
    s.dscp = 10;
    s.ecn = ecn;
    return s;
}

// A UDP frame whose payload starts with its 64-bit sequence number.
std::vector<std::uint8_t> make_frame(std::uint64_t seq, std::size_t payload_len = 200,
                                     std::uint8_t ecn = 0) {
    std::vector<std::uint8_t> payload(std::max<std::size_t>(payload_len, 8));
    wire::store_be64(payload.data(), seq);
    for (std::size_t i = 8; i < payload.size(); ++i)
        payload[i] = static_cast<std::uint8_t>(i * 7 + seq);
    std::vector<std::uint8_t> out(payload.size() + 64);
    out.resize(wire::build_udp_frame(spec(ecn), payload, out));
    return out;
}

std::uint64_t seq_of(std::span<const std::uint8_t> frame) {
    l2l4_view v;
    EXPECT_EQ(wire::parse_l2l4(frame, v), reject_reason::none);
    return v.l4_payload.size() >= 8 ? wire::load_be64(v.l4_payload.data()) : ~0ull;
}

struct delivery {
    std::uint64_t at;
    std::vector<std::uint8_t> bytes;
};

// Sends n frames one per `gap` ns and receives as it goes; returns every delivery.
std::vector<delivery> run(link& l, std::uint64_t n, std::uint64_t gap = 100,
                          std::size_t payload = 200, std::uint8_t ecn = 0) {
    std::vector<delivery> out;
    std::uint64_t now = 0;
    auto take = [&](std::span<const std::uint8_t> f) {
        out.push_back({now, std::vector<std::uint8_t>(f.begin(), f.end())});
    };
    for (std::uint64_t i = 0; i < n; ++i, now += gap) {
        l.send(make_frame(i, payload, ecn), now);
        l.receive(now, take);
    }
    while (!l.idle()) {
        now = std::max(now, l.next_arrival());
        l.receive(now, take);
    }
    return out;
}

void expect_balanced(const link& l) {
    const pipe::stats& s = l.counters();
    EXPECT_TRUE(l.idle());
    EXPECT_EQ(s.sent + s.duplicated, s.delivered + s.lost + s.queue_dropped + s.oversized);
}

double frac(std::uint64_t a, std::uint64_t b) {
    return static_cast<double>(a) / static_cast<double>(b);
}

constexpr std::size_t pool = 4096;
constexpr std::size_t frame_max = 2048;

TEST(pipe, no_impairment_delivers_everything_in_order_byte_exact) {
    link l({}, 1, pool, frame_max);
    const auto got = run(l, 20000);
    ASSERT_EQ(got.size(), 20000u);
    for (std::uint64_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].bytes, make_frame(i));
        EXPECT_EQ(got[i].at, i * 100);  // no delay, infinite rate: arrives when sent
    }
    const auto& s = l.counters();
    EXPECT_EQ(s.sent, 20000u);
    EXPECT_EQ(s.delivered, 20000u);
    EXPECT_EQ(s.lost + s.duplicated + s.reordered + s.corrupted + s.trimmed + s.ecn_marked +
                  s.queue_dropped + s.burst_lost,
              0u);
    EXPECT_EQ(l.next_arrival(), link::none);
}

TEST(pipe, independent_loss_rate) {
    impairments imp;
    imp.loss = 0.1;
    link l(imp, 2, pool, frame_max);
    const auto got = run(l, 100000);
    const auto& s = l.counters();
    EXPECT_NEAR(frac(s.lost, s.sent), 0.1, 0.01);
    EXPECT_EQ(s.burst_lost, 0u);
    EXPECT_EQ(got.size(), s.sent - s.lost);
    std::uint64_t prev = 0;
    for (const auto& d : got) {  // survivors stay in order
        const std::uint64_t q = seq_of(d.bytes);
        EXPECT_TRUE(q >= prev);
        prev = q;
    }
    expect_balanced(l);
}

TEST(pipe, gilbert_elliott_burst_loss) {
    impairments imp;
    imp.burst_enter = 0.01;
    imp.burst_exit = 0.2;
    link l(imp, 3, pool, frame_max);
    const auto got = run(l, 200000);
    const auto& s = l.counters();
    // Stationary P(bad) = enter / (enter + exit); mean burst = 1 / exit.
    EXPECT_NEAR(frac(s.lost, s.sent), 0.01 / 0.21, 0.01);
    EXPECT_EQ(s.burst_lost, s.lost);
    std::uint64_t bursts = 0, expect_seq = 0;
    for (const auto& d : got) {
        const std::uint64_t q = seq_of(d.bytes);
        if (q != expect_seq) ++bursts;
        expect_seq = q + 1;
    }
    ASSERT_GT(bursts, 0u);
    EXPECT_NEAR(frac(s.lost, bursts), 5.0, 1.0);
    expect_balanced(l);
}

TEST(pipe, duplicate_rate_and_copy_follows_original) {
    impairments imp;
    imp.duplicate = 0.05;
    link l(imp, 4, pool, frame_max);
    const auto got = run(l, 100000);
    const auto& s = l.counters();
    EXPECT_NEAR(frac(s.duplicated, s.sent), 0.05, 0.005);
    EXPECT_EQ(got.size(), s.sent + s.duplicated);
    std::uint64_t copies = 0;
    for (std::size_t i = 1; i < got.size(); ++i) {
        if (got[i].bytes == got[i - 1].bytes) ++copies;
    }
    EXPECT_EQ(copies, s.duplicated);
    expect_balanced(l);
}

// For every delivered frame, how many frames sent after it were delivered before it.
std::vector<std::uint64_t> reorder_distances(const std::vector<delivery>& got) {
    std::vector<std::uint64_t> seqs;
    for (const auto& d : got)
        seqs.push_back(seq_of(d.bytes));
    std::vector<std::uint64_t> dist(seqs.size());
    std::uint64_t max_seen = 0;
    for (std::size_t i = 0; i < seqs.size(); ++i) {
        if (i > 0 && seqs[i] < max_seen) {
            std::uint64_t k = 0;
            for (std::size_t j = i; j-- > 0 && k < 100000;) {
                if (seqs[j] > seqs[i]) ++k;
                if (seqs[i] > 1000 && seqs[j] + 5000 < seqs[i]) break;  // far enough back
            }
            dist[i] = k;
        }
        max_seen = std::max(max_seen, seqs[i]);
    }
    return dist;
}

TEST(pipe, reorder_rate_and_distance_reaches_400) {
    impairments imp;
    imp.reorder = 0.01;
    imp.reorder_max_distance = 400;
    imp.reorder_max_hold_ns = 10 * ms;  // longer than 400 frames at 100 ns: count decides
    link l(imp, 5, pool, frame_max);
    const auto got = run(l, 200000);
    const auto& s = l.counters();
    ASSERT_EQ(got.size(), 200000u);  // nothing lost, each once
    std::vector<bool> seen(got.size());
    for (const auto& d : got) {
        const std::uint64_t q = seq_of(d.bytes);
        ASSERT_LT(q, seen.size());
        EXPECT_FALSE(seen[q]);
        seen[q] = true;
    }
    EXPECT_NEAR(frac(s.reordered, s.sent), 0.01, 0.002);
    const auto dist = reorder_distances(got);
    std::uint64_t late = 0, total = 0, max = 0, at_least_390 = 0;
    for (std::uint64_t k : dist) {
        if (!k) continue;
        ++late;
        total += k;
        max = std::max(max, k);
        at_least_390 += k >= 390;
    }
    EXPECT_EQ(late, s.reordered);
    EXPECT_GE(max, 400u);
    EXPECT_LE(max, 420u);  // overlapping holds may add a few
    EXPECT_GT(at_least_390, 20u);
    EXPECT_NEAR(frac(total, late), 200.0, 20.0);  // uniform in [1, 400]
    expect_balanced(l);
}

TEST(pipe, single_held_frame_moves_exactly_k_places) {
    std::map<std::uint64_t, int> ks;
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
        impairments imp;
        imp.reorder = 1;
        imp.reorder_max_distance = 450;
        link l(imp, seed, pool, frame_max);
        l.send(make_frame(0), 0);
        l.set_impairments({});
        std::vector<std::uint64_t> order;
        for (std::uint64_t i = 1; i <= 500; ++i) {
            l.send(make_frame(i), i);
            l.receive(i, [&](std::span<const std::uint8_t> f) { order.push_back(seq_of(f)); });
        }
        l.receive(link::none - 1,
                  [&](std::span<const std::uint8_t> f) { order.push_back(seq_of(f)); });
        ASSERT_EQ(order.size(), 501u);
        const auto k =
            static_cast<std::uint64_t>(std::find(order.begin(), order.end(), 0) - order.begin());
        EXPECT_GE(k, 1u);
        EXPECT_LE(k, 450u);
        ++ks[k];
    }
    EXPECT_GT(ks.size(), 150u);  // spread over the range
    EXPECT_GT(ks.rbegin()->first, 400u);
}

TEST(pipe, held_tail_released_by_hold_limit) {
    impairments imp;
    imp.reorder = 1;
    imp.reorder_max_distance = 400;
    imp.reorder_max_hold_ns = 50 * us;
    imp.delay_ns = 2 * us;
    link l(imp, 6, pool, frame_max);
    l.send(make_frame(0), 1000);
    EXPECT_FALSE(l.idle());
    EXPECT_EQ(l.next_arrival(), 1000 + 2 * us + 50 * us);
    int n = 0;
    auto count = [&](std::span<const std::uint8_t>) { ++n; };
    EXPECT_EQ(l.receive(1000 + 52 * us - 1, count), 0u);
    EXPECT_EQ(l.receive(1000 + 52 * us, count), 1u);
    EXPECT_TRUE(l.idle());
    expect_balanced(l);
}

TEST(pipe, trimmed_frames_parse_with_trim_dscp_and_cut_length) {
    impairments imp;
    imp.trim = 1;
    imp.trim_to = 64;
    imp.trim_dscp = 0x2e;
    link l(imp, 7, pool, frame_max);
    const auto got = run(l, 100, 100, 1000, 2 /* ECT(0) */);
    ASSERT_EQ(got.size(), 100u);
    EXPECT_EQ(l.counters().trimmed, 100u);
    for (std::uint64_t i = 0; i < got.size(); ++i) {
        l2l4_view v;
        ASSERT_EQ(wire::parse_l2l4(got[i].bytes, v), reject_reason::none);
        EXPECT_EQ(v.ip.dscp, 0x2e);
        EXPECT_EQ(v.ip.ecn, 2);  // ECN bits kept
        ASSERT_TRUE(v.udp);
        EXPECT_EQ(v.udp->checksum, 0);
        EXPECT_EQ(v.udp->length, 8 + 64);
        EXPECT_EQ(v.ip.total_length, 20 + 8 + 64);
        ASSERT_EQ(v.l4_payload.size(), 64u);
        const auto orig = make_frame(i, 1000, 2);
        l2l4_view ov;
        ASSERT_EQ(wire::parse_l2l4(orig, ov), reject_reason::none);
        EXPECT_TRUE(std::equal(v.l4_payload.begin(), v.l4_payload.end(), ov.l4_payload.begin()));
        EXPECT_EQ(got[i].bytes.size(), 14u + 20 + 8 + 64);
    }
}

TEST(pipe, trim_clamps_to_payload_and_skips_non_udp) {
    impairments imp;
    imp.trim = 1;
    imp.trim_to = 500;
    link l(imp, 8, pool, frame_max);
    // Short UDP frame: nothing to cut, still marked as trimmed.
    l.send(make_frame(1, 100), 0);
    // UET directly over IP, and ARP: never trimmed.
    std::vector<std::uint8_t> ip_payload(300, 0xab), buf(512);
    buf.resize(wire::build_ip_frame(spec(), wire::ip_proto_uet, ip_payload, buf));
    l.send(buf, 0);
    std::vector<std::uint8_t> arp(64);
    arp.resize(wire::build_arp_frame(spec(), wire::arp_packet{}, arp));
    l.send(arp, 0);
    std::vector<std::vector<std::uint8_t>> got;
    l.receive(0, [&](std::span<const std::uint8_t> f) { got.emplace_back(f.begin(), f.end()); });
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(l.counters().trimmed, 1u);
    l2l4_view v;
    ASSERT_EQ(wire::parse_l2l4(got[0], v), reject_reason::none);
    EXPECT_EQ(v.l4_payload.size(), 100u);
    EXPECT_EQ(v.ip.dscp, 0x3b);
    EXPECT_EQ(got[1], buf);
    EXPECT_EQ(got[2], arp);
}

TEST(pipe, trim_rate) {
    impairments imp;
    imp.trim = 0.2;
    link l(imp, 9, pool, frame_max);
    run(l, 50000);
    EXPECT_NEAR(frac(l.counters().trimmed, l.counters().sent), 0.2, 0.01);
}

TEST(pipe, corrupted_frames_fail_udp_checksum_by_one_bit) {
    impairments imp;
    imp.corrupt = 1;
    link l(imp, 10, pool, frame_max);
    const auto got = run(l, 2000);
    ASSERT_EQ(got.size(), 2000u);
    EXPECT_EQ(l.counters().corrupted, 2000u);
    for (std::uint64_t i = 0; i < got.size(); ++i) {
        l2l4_view v;
        EXPECT_EQ(wire::parse_l2l4(got[i].bytes, v), reject_reason::bad_udp_checksum);
        const auto orig = make_frame(i);
        ASSERT_EQ(orig.size(), got[i].bytes.size());
        int bits = 0;
        for (std::size_t j = 0; j < orig.size(); ++j) {
            bits += std::popcount(static_cast<unsigned>(orig[j] ^ got[i].bytes[j]));
            if (orig[j] != got[i].bytes[j]) {
                EXPECT_GE(j, 14u + 20 + 8);  // in the UDP payload
            }
        }
        EXPECT_EQ(bits, 1);
    }
}

TEST(pipe, corrupt_rate_and_trimmed_frames_are_not_corrupted) {
    impairments imp;
    imp.corrupt = 0.05;
    link a(imp, 11, pool, frame_max);
    run(a, 50000);
    EXPECT_NEAR(frac(a.counters().corrupted, a.counters().sent), 0.05, 0.005);
    imp.corrupt = 1;
    imp.trim = 1;
    link b(imp, 12, pool, frame_max);
    for (const auto& d : run(b, 100)) {
        l2l4_view v;
        EXPECT_EQ(wire::parse_l2l4(d.bytes, v), reject_reason::none);
    }
    EXPECT_EQ(b.counters().corrupted, 0u);
}

TEST(pipe, ecn_marks_ect_as_ce_with_valid_checksum) {
    impairments imp;
    imp.ecn_mark = 1;
    link l(imp, 13, pool, frame_max);
    for (const auto& d : run(l, 500, 100, 200, 1 /* ECT(1) */)) {
        l2l4_view v;
        ASSERT_EQ(wire::parse_l2l4(d.bytes, v), reject_reason::none);
        EXPECT_EQ(v.ip.ecn, 3);
        EXPECT_EQ(v.ip.dscp, 10);
    }
    EXPECT_EQ(l.counters().ecn_marked, 500u);
    // Not-ECT is never marked.
    link n(imp, 14, pool, frame_max);
    const auto plain = run(n, 100, 100, 200, 0);
    for (std::uint64_t i = 0; i < plain.size(); ++i)
        EXPECT_EQ(plain[i].bytes, make_frame(i));
    EXPECT_EQ(n.counters().ecn_marked, 0u);
}

TEST(pipe, ecn_mark_rate) {
    impairments imp;
    imp.ecn_mark = 0.3;
    link l(imp, 15, pool, frame_max);
    std::uint64_t ce = 0;
    for (const auto& d : run(l, 50000, 100, 100, 2)) {
        l2l4_view v;
        ASSERT_EQ(wire::parse_l2l4(d.bytes, v), reject_reason::none);
        ce += v.ip.ecn == 3;
    }
    EXPECT_EQ(ce, l.counters().ecn_marked);
    EXPECT_NEAR(frac(ce, 50000), 0.3, 0.01);
}

TEST(pipe, rate_and_delay_arithmetic_is_exact) {
    impairments imp;
    imp.rate_gbps = 100;  // 1000 bytes = 80 ns
    imp.delay_ns = 1000;
    link l(imp, 16, pool, frame_max);
    std::vector<std::uint8_t> f(1000, 0);
    std::vector<std::uint64_t> at;
    auto take = [&](std::uint64_t now) {
        l.receive(now, [&](std::span<const std::uint8_t>) { at.push_back(now); });
    };
    for (int i = 0; i < 3; ++i)
        l.send(f, 0);
    EXPECT_EQ(l.next_arrival(), 1080u);
    for (std::uint64_t t : {1079, 1080, 1159, 1160, 1239, 1240})
        take(t);
    EXPECT_EQ(at, (std::vector<std::uint64_t>{1080, 1160, 1240}));
    l.send(f, 5000);  // link idle again: starts at now
    EXPECT_EQ(l.next_arrival(), 5000u + 80 + 1000);

    // 64 bytes at 400 Gb/s is 1.28 ns: 100 back-to-back frames take exactly 128 ns, no drift.
    imp.rate_gbps = 400;
    imp.delay_ns = 0;
    link fast(imp, 17, pool, frame_max);
    std::vector<std::uint8_t> small(64, 0);
    for (int i = 0; i < 100; ++i)
        fast.send(small, 0);
    EXPECT_EQ(fast.next_arrival(), 2u);  // 1.28 ns, rounded up
    std::uint64_t last = 0;
    std::size_t n = 0;
    for (std::uint64_t t = 0; t <= 200; ++t) {
        n += fast.receive(t, [&](std::span<const std::uint8_t>) { last = t; });
    }
    EXPECT_EQ(n, 100u);
    EXPECT_EQ(last, 128u);
}

TEST(pipe, queue_limit_tail_drops) {
    impairments imp;
    imp.rate_gbps = 10;  // 1250 bytes = 1000 ns
    imp.queue_limit = 4;
    link l(imp, 18, pool, frame_max);
    std::vector<std::uint8_t> f(1250, 0);
    for (int i = 0; i < 10; ++i)
        l.send(f, 0);
    EXPECT_EQ(l.counters().queue_dropped, 6u);
    EXPECT_EQ(l.in_flight(), 4u);
    l.send(f, 999);  // first still on the wire
    EXPECT_EQ(l.counters().queue_dropped, 7u);
    l.send(f, 1000);  // first done: room for one, queued behind the other three
    EXPECT_EQ(l.counters().queue_dropped, 7u);
    std::vector<std::uint64_t> at;
    for (std::uint64_t t = 0; t <= 6000; t += 1) {
        l.receive(t, [&](std::span<const std::uint8_t>) { at.push_back(t); });
    }
    EXPECT_EQ(at, (std::vector<std::uint64_t>{1000, 2000, 3000, 4000, 5000}));
    expect_balanced(l);
}

TEST(pipe, same_seed_same_deliveries_different_seed_differs) {
    impairments imp;
    imp.loss = 0.05;
    imp.burst_enter = 0.005;
    imp.burst_exit = 0.3;
    imp.reorder = 0.02;
    imp.reorder_max_distance = 50;
    imp.duplicate = 0.02;
    imp.corrupt = 0.02;
    imp.trim = 0.05;
    imp.ecn_mark = 0.1;
    imp.delay_ns = 3 * us;
    imp.rate_gbps = 25;
    imp.queue_limit = 64;
    link a(imp, 99, pool, frame_max), b(imp, 99, pool, frame_max), c(imp, 100, pool, frame_max);
    const auto ra = run(a, 20000, 50, 300, 2);
    const auto rb = run(b, 20000, 50, 300, 2);
    const auto rc = run(c, 20000, 50, 300, 2);
    ASSERT_EQ(ra.size(), rb.size());
    for (std::size_t i = 0; i < ra.size(); ++i) {
        EXPECT_EQ(ra[i].at, rb[i].at);
        EXPECT_EQ(ra[i].bytes, rb[i].bytes);
    }
    bool differs = ra.size() != rc.size();
    for (std::size_t i = 0; !differs && i < ra.size(); ++i)
        differs = ra[i].bytes != rc[i].bytes;
    EXPECT_TRUE(differs);
    for (const link* l : {&a, &b, &c}) {
        const auto& s = l->counters();
        EXPECT_GT(s.lost, 0u);
        EXPECT_GT(s.burst_lost, 0u);
        EXPECT_GT(s.reordered, 0u);
        EXPECT_GT(s.duplicated, 0u);
        EXPECT_GT(s.corrupted, 0u);
        EXPECT_GT(s.trimmed, 0u);
        EXPECT_GT(s.ecn_marked, 0u);
        EXPECT_GT(s.queue_dropped, 0u);
        expect_balanced(*l);
    }
}

TEST(pipe, impairments_draw_from_independent_streams) {
    impairments imp;
    imp.loss = 0.1;
    link a(imp, 21, pool, frame_max);
    imp.ecn_mark = 0.5;
    imp.duplicate = 0.1;
    link b(imp, 21, pool, frame_max);
    auto survivors = [](const std::vector<delivery>& got) {
        std::vector<std::uint64_t> s;
        for (const auto& d : got) {
            const std::uint64_t q = seq_of(d.bytes);
            if (s.empty() || s.back() != q) s.push_back(q);
        }
        return s;
    };
    EXPECT_EQ(survivors(run(a, 10000, 100, 100, 2)), survivors(run(b, 10000, 100, 100, 2)));
}

TEST(pipe, pool_exhaustion_is_counted_not_fatal) {
    link l({}, 22, 8, 256);
    for (std::uint64_t i = 0; i < 20; ++i)
        l.send(make_frame(i, 100), 0);
    EXPECT_EQ(l.counters().queue_dropped, 12u);
    EXPECT_EQ(l.receive(0, [](std::span<const std::uint8_t>) {}), 8u);
    for (std::uint64_t i = 0; i < 8; ++i)
        l.send(make_frame(i, 100), 1);  // slots reused
    EXPECT_EQ(l.receive(1, [](std::span<const std::uint8_t>) {}), 8u);
    l.send(std::vector<std::uint8_t>(257, 0), 2);
    EXPECT_EQ(l.counters().oversized, 1u);
    expect_balanced(l);
}

TEST(pipe, set_impairments_mid_run) {
    link l({}, 23, pool, frame_max);
    std::size_t n = 0;
    auto count = [&](std::span<const std::uint8_t>) { ++n; };
    for (std::uint64_t t = 0; t < 100; ++t)
        l.send(make_frame(t), t);
    l.receive(100, count);
    impairments down;
    down.loss = 1;  // the link fails at t = 100
    l.set_impairments(down);
    for (std::uint64_t t = 100; t < 200; ++t)
        l.send(make_frame(t), t);
    l.receive(200, count);
    EXPECT_EQ(n, 100u);
    EXPECT_EQ(l.counters().lost, 100u);
    impairments slow;
    slow.delay_ns = 1 * ms;
    l.set_impairments(slow);
    l.send(make_frame(0), 300);
    EXPECT_EQ(l.next_arrival(), 300 + 1 * ms);
}

TEST(pipe, deliver_may_send_on_the_same_link) {
    impairments imp;
    imp.delay_ns = 10;
    link l(imp, 24, 4, 256);
    l.send(make_frame(0, 50), 0);
    std::vector<std::uint64_t> seqs;
    for (std::uint64_t t = 0; t <= 100; ++t) {
        l.receive(t, [&](std::span<const std::uint8_t> f) {
            seqs.push_back(seq_of(f));
            if (seqs.size() < 5) l.send(make_frame(seqs.size(), 50), t);
        });
    }
    EXPECT_EQ(seqs, (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
}

TEST(pipe, duplex_directions_are_independent) {
    impairments imp;
    imp.loss = 0.5;
    pipe::duplex d(imp, 25, 1024, 512);
    std::size_t ab = 0, ba = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
        d.a_to_b.send(make_frame(i, 50), i);
        d.b_to_a.send(make_frame(i, 50), i);
        d.a_to_b.receive(i, [&](std::span<const std::uint8_t>) { ++ab; });
        d.b_to_a.receive(i, [&](std::span<const std::uint8_t>) { ++ba; });
    }
    EXPECT_NEAR(static_cast<double>(ab), 500, 60);
    EXPECT_NEAR(static_cast<double>(ba), 500, 60);
    EXPECT_NE(ab, ba);  // different streams (fixed seeds: deterministic)
}

TEST(frame_edit, malformed_frames_are_left_alone) {
    rng r(1);
    for (std::size_t len = 0; len < 60; ++len) {
        std::vector<std::uint8_t> f(len, 0x45);
        auto copy = f;
        EXPECT_FALSE(pipe::mark_ce(f));
        EXPECT_EQ(pipe::trim_frame(f, 10, 1), 0u);
        EXPECT_EQ(f, copy);
        pipe::flip_bit(f, r);  // may flip after byte 14, never out of bounds
    }
    // IPv4 whose total length claims more than the frame holds.
    auto f = make_frame(1, 100, 2);
    wire::store_be16(&f[14 + 2], 2000);
    EXPECT_FALSE(pipe::locate(f).ipv4());
    EXPECT_FALSE(pipe::mark_ce(f));
    EXPECT_EQ(pipe::trim_frame(f, 10, 1), 0u);
}

TEST(frame_edit, vlan_tagged_frames_are_trimmed_and_marked) {
    auto s = spec(2);
    s.vlan = wire::vlan_tag{3, false, 100, 0};
    std::vector<std::uint8_t> payload(500, 0x11), f(600);
    f.resize(wire::build_udp_frame(s, payload, f));
    ASSERT_TRUE(pipe::mark_ce(f));
    const std::size_t n = pipe::trim_frame(f, 32, 0x3b);
    ASSERT_EQ(n, 18u + 20 + 8 + 32);
    f.resize(n);
    l2l4_view v;
    ASSERT_EQ(wire::parse_l2l4(f, v), reject_reason::none);
    ASSERT_TRUE(v.vlan);
    EXPECT_EQ(v.ip.ecn, 3);
    EXPECT_EQ(v.ip.dscp, 0x3b);
    EXPECT_EQ(v.l4_payload.size(), 32u);
}

}  // namespace
