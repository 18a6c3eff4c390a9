// The leaf-spine fabric model: timing arithmetic, ECMP, queues with ECN, trimming and priority,
// slowed and failed links, the fixed-entropy vs spraying gap, and a 1,024-host smoke run. All
// in virtual time with fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "core/rng.hpp"
#include "fabric/fabric.hpp"
#include "wire/bytes.hpp"
#include "wire/frame.hpp"
#include "wire/ipv4.hpp"

namespace {

using namespace uet;
namespace fb = uet::netmodel;
using fb::fabric;
using frame_bytes = std::vector<std::uint8_t>;

constexpr std::size_t l2l4_header = 14 + 20 + 8;  // Ethernet + IPv4 + UDP

struct frame_args {
    std::uint32_t from = 0, to = 1;
    std::uint16_t sport = 0xc000;
    std::size_t size = 1000;  // whole frame
    std::uint32_t seq = 0;
    std::uint8_t dscp = 0;
    wire::ecn_codepoint ecn = wire::ecn_codepoint::not_ect;
};

// A UDP frame to the UET port whose payload starts with (from, seq), so a receiver can tell
// frames apart even after trimming.
frame_bytes make_frame(const fabric& f, const frame_args& a) {
    wire::frame_spec spec;
    spec.src_mac = f.host_mac(a.from);
    spec.dst_mac = f.host_mac(a.to);
    spec.src_ip = f.host_ip(a.from);
    spec.dst_ip = f.host_ip(a.to);
    spec.dscp = a.dscp;
    spec.ecn = static_cast<std::uint8_t>(a.ecn);
    spec.src_port = a.sport;
    spec.dst_port = wire::uet_udp_port;
    frame_bytes payload(a.size - l2l4_header, 0x5a);
    wire::store_be32(&payload[0], a.from);
    wire::store_be32(&payload[4], a.seq);
    frame_bytes out(a.size + 64);
    out.resize(wire::build_udp_frame(spec, payload, out));
    return out;
}

struct arrival {
    std::uint32_t host;
    std::uint64_t time_ns;
    frame_bytes frame;
};

// Runs the fabric until nothing is pending and returns every delivery.
std::vector<arrival> drain(fabric& f) {
    std::vector<arrival> got;
    for (std::uint64_t t; (t = f.next_event()) != fabric::none;) {
        f.deliver(t, [&](std::uint32_t h, std::span<const std::uint8_t> fr, std::uint64_t at) {
            got.push_back({h, at, frame_bytes(fr.begin(), fr.end())});
        });
    }
    return got;
}

std::uint32_t payload_word(const frame_bytes& fr, std::size_t index) {
    return wire::load_be32(&fr[l2l4_header + 4 * index]);
}

wire::l2l4_view parse(const frame_bytes& fr) {
    wire::l2l4_view v;
    EXPECT_EQ(wire::parse_l2l4(fr, v), wire::reject_reason::none);
    return v;
}

fb::topology small(std::uint32_t leaves, std::uint32_t hosts, std::uint32_t spines) {
    fb::topology t;
    t.leaves = leaves;
    t.hosts_per_leaf = hosts;
    t.spines = spines;
    return t;
}

// ---- 1. timing ----

TEST(fabric_model, serialisation_and_propagation_add_up_exactly) {
    auto t = small(2, 2, 2);
    t.host_link.rate_gbps = 100;  // 1000 B: 80 ns
    t.host_link.delay_ns = 1000;
    t.fabric_link.rate_gbps = 400;  // 1000 B: 20 ns
    t.fabric_link.delay_ns = 300;
    fabric f(t);
    ASSERT_EQ(f.host_count(), 4u);
    EXPECT_EQ(f.host_ip(3), 0x0a010101u);  // 10.1.1.1
    EXPECT_EQ(f.host_of_ip(0x0a010101u), 3u);
    EXPECT_EQ(f.host_of_ip(0x0a020001u), fabric::no_host);

    const frame_bytes across = make_frame(f, {.from = 0, .to = 2});
    f.send(0, across, 100);
    EXPECT_EQ(f.next_event(), 100u + 80);  // end of serialisation on the NIC
    EXPECT_EQ(f.deliver(100 + 2799, [](auto, auto) {}), 0u);
    std::vector<arrival> got = drain(f);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].host, 2u);
    // NIC 80 + 1000, leaf->spine 20 + 300, spine->leaf 20 + 300, leaf->host 80 + 1000.
    EXPECT_EQ(got[0].time_ns, 100u + 2800);
    EXPECT_EQ(got[0].frame, across);  // unchanged on the way

    // Same leaf: host->leaf->host. Two back to back: the second is one serialisation later.
    const frame_bytes local = make_frame(f, {.from = 0, .to = 1});
    f.send(0, local, 10'000);
    f.send(0, local, 10'000);
    got = drain(f);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].time_ns, 10'000u + 2160);
    EXPECT_EQ(got[1].time_ns, 10'000u + 2240);

    // An odd rate keeps picoseconds: 3 x 1000 B at 30 Gb/s is 800 ns, not 3 x 267.
    f.set_host_link_rate(0, 30, 20'000);
    f.set_host_link_rate(1, 30, 20'000);
    for (int i = 0; i < 3; ++i)
        f.send(0, local, 20'000);
    got = drain(f);
    ASSERT_EQ(got.size(), 3u);
    // Last frame: leaves the NIC at 800 ns, then 1000 + 266.667 + 1000, rounded up.
    EXPECT_EQ(got[2].time_ns, 20'000u + 800 + 1000 + 267 + 1000);
    EXPECT_EQ(f.counters().hops, 1u * 4 + 2 * 2 + 3 * 2);  // hops: ports crossed
}

// ---- 1b. three tiers: a k = 4 fat tree ----

// A k-ary fat tree: k pods of k/2 edges and k/2 aggregation switches, (k/2)^2 cores, k/2 hosts
// an edge (k = 4: 16 hosts, 8 edges, 4 cores).
fb::topology fat_tree(std::uint32_t k) {
    fb::topology t;
    t.pods = k;
    t.leaves = k * k / 2;
    t.hosts_per_leaf = t.spines = t.cores_per_agg = k / 2;
    t.host_link.rate_gbps = t.fabric_link.rate_gbps = 100;  // 1000 B: 80 ns
    t.host_link.delay_ns = t.fabric_link.delay_ns = 1000;
    return t;
}

TEST(fabric_model, fat_tree_paths_cross_two_four_or_six_links) {
    fb::topology t = fat_tree(4);
    fabric f(t);
    ASSERT_EQ(f.host_count(), 16u);
    ASSERT_EQ(f.port_count(), 2u * 16 + 2 * 8 * 2 + 2 * 4 * 2 * 2);
    EXPECT_EQ(f.path_links(0, 1), 2u);   // one edge
    EXPECT_EQ(f.path_links(0, 2), 4u);   // edges 0 and 1: pod 0
    EXPECT_EQ(f.path_links(0, 15), 6u);  // pod 0 to pod 3
    // Each host pair's frames arrive after its links' serialisation and delay, and only the
    // cross-pod one climbs to a core.
    const std::pair<std::uint32_t, std::uint32_t> pairs[] = {{0, 1}, {0, 2}, {0, 15}};
    for (const auto& [from, to] : pairs) {
        const std::uint64_t cores_before = [&] {
            std::uint64_t n = 0;
            for (std::uint32_t p = 0; p < f.port_count(); ++p)
                if (f.kind(p) == fb::port_kind::core_down) n += f.port_counters(p).tx_packets;
            return n;
        }();
        const std::uint64_t t0 = f.now() + 10'000;
        f.send(from, make_frame(f, {.from = from, .to = to}), t0);
        const std::vector<arrival> got = drain(f);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].host, to);
        EXPECT_EQ(got[0].time_ns, t0 + f.path_links(from, to) * 1080);
        std::uint64_t cores = 0;
        for (std::uint32_t p = 0; p < f.port_count(); ++p)
            if (f.kind(p) == fb::port_kind::core_down) cores += f.port_counters(p).tx_packets;
        EXPECT_EQ(cores - cores_before, f.path_links(from, to) == 6 ? 1u : 0u);
    }
    // Names: edges, aggregation switches numbered over the pods, cores above them.
    std::set<std::string> names;
    for (std::uint32_t p = 0; p < f.port_count(); ++p)
        names.insert(f.port_name(p));
    EXPECT_EQ(names.size(), f.port_count());
    for (const char* n : {"h3->edge1", "edge1->h3", "edge7->agg7", "agg7->edge7", "agg0->core1",
                          "core1->agg6", "agg7->core3", "core3->agg1"})
        EXPECT_TRUE(names.count(n)) << n;
    // A frame to pod 3 from varied source ports spreads over all four cores.
    std::set<std::uint32_t> used;
    for (std::uint16_t sport = 0xc000; sport < 0xc000 + 64; ++sport)
        f.send(0, make_frame(f, {.from = 0, .to = 15, .sport = sport}), f.now());
    drain(f);
    for (std::uint32_t p = 0; p < f.port_count(); ++p)
        if (f.kind(p) == fb::port_kind::agg_up && f.port_counters(p).tx_packets > 0) used.insert(p);
    EXPECT_EQ(used.size(), 4u);  // agg0 and agg1 of pod 0, two cores each
}

// An oversubscribed aggregation tier: core links at their own rate (topology::core_link), the
// other links unchanged; a cross-pod frame is serialised at it on its two core hops only.
TEST(fabric_model, core_links_take_their_own_rate) {
    fb::topology t = fat_tree(4);
    t.core_link = t.fabric_link;
    t.core_link->rate_gbps = 50;  // 160 ns
    fabric f(t);
    const std::uint64_t t0 = 10'000;
    f.send(0, make_frame(f, {.from = 0, .to = 15}), t0);
    f.send(1, make_frame(f, {.from = 1, .to = 2}), t0);  // within pod 0: no core
    const std::vector<arrival> got = drain(f);
    ASSERT_EQ(got.size(), 2u);
    for (const arrival& a : got)
        EXPECT_EQ(a.time_ns, a.host == 15 ? t0 + 6 * 1000 + 4 * 80 + 2 * 160 : t0 + 4 * 1080)
            << "host " << a.host;
}

// Past 256 edges (k = 32: 512 edges of 16 hosts, 8,192 hosts) every host keeps an address and
// a MAC of its own, each address names its host, and frames cross from pod to pod.
TEST(fabric_model, fat_tree_of_8192_hosts_names_and_reaches_every_host) {
    fabric f(fat_tree(32));
    ASSERT_EQ(f.host_count(), 8192u);
    std::set<std::uint32_t> ips;
    std::set<std::array<std::uint8_t, 6>> macs;
    for (std::uint32_t h = 0; h < f.host_count(); ++h) {
        ASSERT_EQ(f.host_of_ip(f.host_ip(h)), h);
        ips.insert(f.host_ip(h));
        macs.insert(f.host_mac(h).octets);
    }
    EXPECT_EQ(ips.size(), 8192u);
    EXPECT_EQ(macs.size(), 8192u);
    EXPECT_EQ(f.host_ip(0), 0x0a000001u);     // 10.0.0.1, as on small fabrics
    EXPECT_EQ(f.host_ip(8191), 0x0aff0f02u);  // edge 511 (1 x 256 + 255), index 15
    EXPECT_EQ(f.host_of_ip(0x0a000000u), fabric::no_host);
    EXPECT_EQ(f.host_of_ip(0x0a000003u), fabric::no_host);  // no edge 512
    const std::pair<std::uint32_t, std::uint32_t> pairs[] = {{0, 8191}, {300 * 16 + 3, 5}};
    for (const auto& [from, to] : pairs) {
        f.send(from, make_frame(f, {.from = from, .to = to}), f.now());
        const std::vector<arrival> got = drain(f);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].host, to);
    }
    EXPECT_EQ(f.counters().unroutable, 0u);
}

// ---- 2. ECMP ----

TEST(fabric_model, fixed_tuple_sticks_to_one_spine_and_varied_entropy_spreads) {
    fabric f(small(2, 1, 8));
    frame_bytes fr = make_frame(f, {.from = 0, .to = 1, .sport = 1234});
    const std::uint32_t spine = f.uplink_for(0, fr);
    EXPECT_EQ(f.uplink_for_udp(0, f.host_ip(0), f.host_ip(1), 1234, wire::uet_udp_port), spine);
    for (int i = 0; i < 1000; ++i)
        f.send(0, fr, 0);
    drain(f);
    for (std::uint32_t s = 0; s < 8; ++s)
        EXPECT_EQ(f.spine_packets(s), s == spine ? 1000u : 0u) << "spine " << s;

    fabric g(small(2, 1, 8));
    constexpr int n = 8192;
    for (int i = 0; i < n; ++i) {
        g.send(0, make_frame(g, {.from = 0, .to = 1, .sport = static_cast<std::uint16_t>(i)}), 0);
    }
    EXPECT_EQ(drain(g).size(), static_cast<std::size_t>(n));
    std::printf("spine packets with %d source ports:", n);
    for (std::uint32_t s = 0; s < 8; ++s) {
        std::printf(" %llu", static_cast<unsigned long long>(g.spine_packets(s)));
        EXPECT_GT(g.spine_packets(s), n / 8 * 8 / 10) << "spine " << s;
        EXPECT_LT(g.spine_packets(s), n / 8 * 12 / 10) << "spine " << s;
    }
    std::printf("\n");
}

TEST(fabric_model, leaf_spray_spreads_a_fixed_tuple_evenly_and_keeps_local_traffic_local) {
    auto t = small(2, 2, 8);
    t.leaf_spray = true;
    fabric f(t);
    frame_bytes across = make_frame(f, {.from = 0, .to = 2, .sport = 1234});
    frame_bytes local = make_frame(f, {.from = 1, .to = 0, .sport = 1234});
    for (int i = 0; i < 800; ++i) {
        f.send(0, across, 0);
        f.send(1, local, 0);
    }
    EXPECT_EQ(drain(f).size(), 1600u);
    for (std::uint32_t s = 0; s < 8; ++s)
        EXPECT_EQ(f.spine_packets(s), 100u) << "spine " << s;
}

// Path IDs (topology::stamp_path_id): a frame sent up to spine s arrives with s + 1 in its IPv4
// identification and a header checksum that still adds up; a frame that stays on its leaf, and
// every frame without the option, arrives as sent.
TEST(fabric_model, stamp_path_id_writes_the_spine_into_the_ip_identification) {
    for (const bool stamp : {true, false}) {
        auto t = small(2, 2, 8);
        t.leaf_spray = true;
        t.stamp_path_id = stamp;
        t.carried_bytes = 256;  // stamped in the carried headers
        fabric f(t);
        frame_bytes across = make_frame(f, {.from = 0, .to = 2, .size = 1500});
        frame_bytes local = make_frame(f, {.from = 1, .to = 0, .size = 1500});
        for (int i = 0; i < 16; ++i) {
            f.send(0, across, 0);
            f.send(1, local, 0);
        }
        std::map<std::uint16_t, int> ids;  // identification of the frames that crossed: count
        for (const arrival& a : drain(f)) {
            const std::uint8_t* ip = &a.frame[14];
            EXPECT_EQ(wire::ipv4_header_checksum(ip), 0);
            const auto& sent = a.host == 2 ? across : local;
            if (!stamp || a.host == 0) {
                EXPECT_TRUE(std::equal(a.frame.begin(), a.frame.begin() + 256, sent.begin()));
                continue;
            }
            ++ids[wire::load_be16(ip + 4)];
            // Nothing else changed.
            EXPECT_TRUE(std::equal(a.frame.begin(), a.frame.begin() + 18, sent.begin()));
            EXPECT_TRUE(std::equal(a.frame.begin() + 20, a.frame.begin() + 24, sent.begin() + 20));
            EXPECT_TRUE(std::equal(a.frame.begin() + 26, a.frame.begin() + 256, sent.begin() + 26));
        }
        if (stamp) {
            ASSERT_EQ(ids.size(), 8u);  // sprayed round robin: IDs 1..8, twice each
            for (const auto& [id, n] : ids) {
                EXPECT_GE(id, 1);
                EXPECT_LE(id, 8);
                EXPECT_EQ(n, 2);
            }
        }
    }
}

// ---- 3. queueing, ECN, trimming, priority ----

struct incast_result {
    fb::port_stats port;
    fb::fabric_stats totals;
    std::vector<arrival> got;
};

// Hosts 0 and 1 push 400 frames of 1500 B each at line rate into host 2 on the same leaf.
incast_result incast(bool trimming, std::uint32_t carried_bytes = 0) {
    auto t = small(1, 3, 1);
    t.host_link.trimming = trimming;
    t.carried_bytes = carried_bytes;
    fabric f(t);
    for (std::uint32_t seq = 0; seq < 400; ++seq) {
        for (std::uint32_t from = 0; from < 2; ++from) {
            f.send(from,
                   make_frame(f, {.from = from,
                                  .to = 2,
                                  .size = 1500,
                                  .seq = seq,
                                  .ecn = wire::ecn_codepoint::ect0}),
                   0);
        }
    }
    incast_result r;
    r.got = drain(f);
    r.port = f.port_counters(f.to_host_port(2));
    r.totals = f.counters();
    return r;
}

TEST(fabric_model, incast_builds_queue_marks_above_kmin_and_tail_drops) {
    const incast_result r = incast(false);
    const fb::link_params lp;
    EXPECT_GT(r.port.dropped, 0u);
    EXPECT_EQ(r.port.trimmed, 0u);
    EXPECT_EQ(r.got.size() + r.port.dropped, 800u);
    EXPECT_LE(r.port.peak_queue_bytes, lp.queue_bytes);
    EXPECT_GT(r.port.peak_queue_bytes, lp.ecn_kmax_bytes);
    EXPECT_GT(r.port.ecn_marked, 0u);
    EXPECT_GT(r.port.min_marked_queue_bytes, lp.ecn_kmin_bytes);  // never at or below kmin
    std::size_t ce = 0;
    for (const auto& a : r.got) {
        const wire::l2l4_view v = parse(a.frame);  // CE marking kept the IP checksum right
        ce += v.ip.ecn == static_cast<std::uint8_t>(wire::ecn_codepoint::ce);
    }
    EXPECT_EQ(ce, r.port.ecn_marked);
    // The first frames meet an empty queue and are not marked.
    EXPECT_EQ(parse(r.got.front().frame).ip.ecn,
              static_cast<std::uint8_t>(wire::ecn_codepoint::ect0));
}

TEST(fabric_model, trimming_replaces_drops_and_trimmed_headers_overtake_data) {
    const incast_result r = incast(true);
    const fb::link_params lp;
    EXPECT_EQ(r.totals.dropped, 0u);
    EXPECT_GT(r.port.trimmed, 0u);
    EXPECT_EQ(r.got.size(), 800u);
    EXPECT_LE(r.port.peak_queue_bytes, lp.queue_bytes);
    std::size_t trimmed = 0;
    bool overtook = false;
    std::uint32_t first_trim_seq[2] = {UINT32_MAX, UINT32_MAX};
    for (const auto& a : r.got) {
        const wire::l2l4_view v = parse(a.frame);
        const std::uint32_t from = payload_word(a.frame, 0), seq = payload_word(a.frame, 1);
        if (v.ip.dscp == lp.trim_dscp) {
            ++trimmed;
            EXPECT_LE(a.frame.size(), l2l4_header + lp.trim_to);
            first_trim_seq[from] = std::min(first_trim_seq[from], seq);
        } else {
            EXPECT_EQ(a.frame.size(), 1500u);
            // A data frame older than a header already delivered: the header jumped the queue.
            overtook |= seq < first_trim_seq[from];
        }
    }
    EXPECT_EQ(trimmed, r.port.trimmed);
    EXPECT_TRUE(overtook);
}

// Carrying only the headers: the same deliveries (times, lengths, ECN marks, trims), with the
// payload after the carried bytes filled with 0x5a, which is what these frames hold anyway.
TEST(fabric_model, carrying_headers_only_changes_no_delivery) {
    const incast_result whole = incast(true), headers = incast(true, 64);
    ASSERT_EQ(whole.got.size(), headers.got.size());
    EXPECT_GT(headers.port.trimmed, 0u);
    EXPECT_GT(headers.port.ecn_marked, 0u);
    EXPECT_EQ(whole.port.trimmed, headers.port.trimmed);
    EXPECT_EQ(whole.port.ecn_marked, headers.port.ecn_marked);
    for (std::size_t i = 0; i < whole.got.size(); ++i) {
        EXPECT_EQ(whole.got[i].time_ns, headers.got[i].time_ns) << i;
        EXPECT_EQ(whole.got[i].frame, headers.got[i].frame) << i;
    }
}

TEST(fabric_model, priority_dscp_skips_the_data_queue) {
    fabric f(small(1, 3, 1));
    for (std::uint32_t seq = 0; seq < 100; ++seq) {
        f.send(0, make_frame(f, {.from = 0, .to = 2, .size = 1500, .seq = seq}), 0);
        f.send(1, make_frame(f, {.from = 1, .to = 2, .size = 1500, .seq = seq}), 0);
    }
    f.advance(8'000);  // about 50 frames (75 KB) are queued towards host 2 by now
    const std::uint64_t queued = f.port_counters(f.to_host_port(2)).queue_bytes;
    EXPECT_GT(queued, 50'000u);
    const fb::link_params lp;
    f.send(0, make_frame(f, {.from = 0, .to = 2, .size = 64, .seq = 999, .dscp = lp.priority_dscp}),
           8'000);
    std::uint64_t ack_at = 0;
    for (const auto& a : drain(f))
        if (payload_word(a.frame, 1) == 999) ack_at = a.time_ns;
    // Behind the NIC's frame in service and the leaf port's frame in service, not the queue.
    EXPECT_GT(ack_at, 8'000u);
    EXPECT_LT(ack_at - 8'000, 2'000u + 2 * 120 + 2 * 6);
}

// ---- 4. slowed and failed spine links ----

TEST(fabric_model, slowed_spine_link_queues_and_carries_less_on_that_spine_only) {
    auto t = small(2, 2, 4);
    fabric f(t);
    rng r(7);
    // Hosts 0 and 1 spray at line rate towards hosts 2 and 3: 50 Gb/s offered per spine.
    for (std::uint32_t seq = 0; seq < 5000; ++seq) {
        for (std::uint32_t from = 0; from < 2; ++from) {
            const auto sport = static_cast<std::uint16_t>(r.next_u64());
            f.send(from, make_frame(f, {.from = from, .to = from + 2, .sport = sport, .seq = seq}),
                   0);
        }
    }
    f.set_spine_link_rate(0, 1, 25, 100'000);
    f.advance(150'000);
    std::vector<std::uint64_t> before(4);
    for (std::uint32_t s = 0; s < 4; ++s)
        before[s] = f.spine_bytes(s);
    f.advance(350'000);
    for (std::uint32_t s = 0; s < 4; ++s) {
        const double gbps = static_cast<double>(f.spine_bytes(s) - before[s]) * 8 / 200'000;
        const fb::port_stats up = f.port_counters(f.up_port(0, s));
        std::printf("spine%u: %.1f Gb/s, peak queue %llu B, mean queue %.0f B, drops %llu\n", s,
                    gbps, static_cast<unsigned long long>(up.peak_queue_bytes), up.mean_queue_bytes,
                    static_cast<unsigned long long>(up.dropped));
        if (s == 1) {
            EXPECT_NEAR(gbps, 25, 1);
            EXPECT_GT(up.peak_queue_bytes, 100'000u);
            EXPECT_GT(up.mean_queue_bytes, 50'000);
            EXPECT_GT(up.dropped, 0u);
        } else {
            EXPECT_NEAR(gbps, 50, 5);
            EXPECT_LT(up.peak_queue_bytes, 30'000u);
            EXPECT_LT(up.mean_queue_bytes, 5'000);
            EXPECT_EQ(up.dropped, 0u);
        }
    }
    drain(f);
    EXPECT_EQ(f.in_flight(), 0u);
}

TEST(fabric_model, a_slowed_spine_serialises_at_its_new_rate_both_ways) {
    auto t = small(2, 1, 2);
    t.host_link.rate_gbps = 100;  // 1000 B: 80 ns
    t.fabric_link.rate_gbps = 100;
    t.host_link.delay_ns = t.fabric_link.delay_ns = 1000;
    fabric f(t);
    f.set_spine_rate(0, 25, 0);  // 1000 B: 320 ns on both of spine 0's links, up and down
    std::uint16_t sport = 1;
    while (f.uplink_for_udp(0, f.host_ip(0), f.host_ip(1), sport, wire::uet_udp_port) != 0)
        ++sport;
    f.send(0, make_frame(f, {.from = 0, .to = 1, .sport = sport}), 0);
    std::vector<arrival> got = drain(f);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].time_ns, 80u + 320 + 320 + 80 + 4 * 1000);
}

TEST(fabric_model, failed_spine_link_black_holes_exactly_its_packets_until_restored) {
    fabric f(small(2, 1, 4));
    constexpr std::uint64_t fail_at = 1'008'500, restore_at = 2'008'500;
    f.fail_spine_link(0, 2, fail_at);
    f.restore_spine_link(0, 2, restore_at);
    rng r(11);
    std::set<std::pair<std::uint32_t, std::uint32_t>> expected;
    std::size_t lost = 0;
    // One frame each way every 10 us: nothing is in flight when the link fails or comes back.
    for (std::uint32_t seq = 0; seq < 300; ++seq) {
        for (std::uint32_t from = 0; from < 2; ++from) {
            const std::uint64_t at = std::uint64_t{seq} * 10'000 + from * 3'000;
            const auto sport = static_cast<std::uint16_t>(r.next_u64());
            const frame_bytes fr =
                make_frame(f, {.from = from, .to = 1 - from, .sport = sport, .seq = seq});
            const bool dark = at > fail_at && at < restore_at && f.uplink_for(from, fr) == 2;
            if (dark) {
                ++lost;
            } else {
                expected.insert({from, seq});
            }
            f.send(from, fr, at);
        }
    }
    std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
    for (const auto& a : drain(f))
        seen.insert({payload_word(a.frame, 0), payload_word(a.frame, 1)});
    EXPECT_GT(lost, 10u);
    EXPECT_EQ(seen, expected);
    EXPECT_EQ(f.counters().blackholed, lost);
    // Leaf 0 -> spine 2 loses the forward ones; spine 2 -> leaf 0 the reverse ones.
    EXPECT_EQ(
        f.port_counters(f.up_port(0, 2)).blackholed + f.port_counters(f.down_port(2, 0)).blackholed,
        lost);
    EXPECT_GT(f.port_counters(f.down_port(2, 0)).blackholed, 0u);
}

// ---- 5. permutation: fixed entropy vs spraying ----

// 16 hosts on 4 leaves, 4 spines, every host sends 2 MB to the host one leaf over, pushed at
// line rate with no congestion control. Returns the mean per-flow goodput in Gb/s.
double permutation_goodput(bool spray, std::uint64_t seed) {
    auto t = small(4, 4, 4);
    t.seed = seed;
    fabric f(t);
    rng r(seed);
    constexpr std::uint32_t hosts = 16, frames = 500;
    std::vector<std::uint16_t> flow_port(hosts);
    for (auto& p : flow_port)
        p = static_cast<std::uint16_t>(r.next_u64());
    for (std::uint32_t seq = 0; seq < frames; ++seq) {
        for (std::uint32_t h = 0; h < hosts; ++h) {
            const auto sport = spray ? static_cast<std::uint16_t>(r.next_u64()) : flow_port[h];
            f.send(
                h,
                make_frame(
                    f,
                    {.from = h, .to = (h + 4) % hosts, .sport = sport, .size = 4096, .seq = seq}),
                0);
        }
    }
    std::vector<std::uint64_t> bytes(hosts), last(hosts);
    for (const auto& a : drain(f)) {
        const std::uint32_t from = payload_word(a.frame, 0);
        bytes[from] += a.frame.size();
        last[from] = std::max(last[from], a.time_ns);
    }
    double sum = 0;
    for (std::uint32_t h = 0; h < hosts; ++h)
        sum += last[h] ? static_cast<double>(bytes[h]) * 8 / static_cast<double>(last[h]) : 0;
    return sum / hosts;
}

// Averaged over four seeds (hash seeds and entropy draws), so that the result reflects ECMP
// collisions in general rather than one lucky or unlucky hash.
TEST(fabric_model, permutation_fixed_entropy_is_slower_than_spraying) {
    double fixed = 0, sprayed = 0;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        const double a = permutation_goodput(false, seed), b = permutation_goodput(true, seed);
        std::printf("  seed %llu: fixed entropy %.1f Gb/s, spraying %.1f Gb/s\n",
                    static_cast<unsigned long long>(seed), a, b);
        fixed += a / 4;
        sprayed += b / 4;
    }
    std::printf(
        "permutation 16 hosts / 4 spines, mean per-flow goodput: fixed entropy %.1f Gb/s,"
        " per-packet spraying %.1f Gb/s\n",
        fixed, sprayed);
    EXPECT_GT(sprayed, 85.0);
    EXPECT_LT(fixed, 0.85 * sprayed);
}

// ---- 6. scale ----

TEST(fabric_model, thousand_hosts_move_hundred_thousand_packets_in_bounded_memory) {
    auto t = small(32, 32, 32);
    t.max_frame_bytes = 1024;
    fabric f(t);
    ASSERT_EQ(f.host_count(), 1024u);
    EXPECT_LT(f.memory_bytes(), 4u << 20);  // empty fabric: ports only
    rng r(99);
    frame_bytes fr = make_frame(f, {.from = 0, .to = 1});
    const std::size_t ip = 14;
    std::uint64_t delivered = 0;
    for (std::uint32_t round = 0; round < 98; ++round) {
        const std::uint64_t now = std::uint64_t{round} * 1000;
        for (std::uint32_t h = 0; h < 1024; ++h) {
            // Patch the addresses and entropy in place: the fabric reads only those.
            const auto to = static_cast<std::uint32_t>((h + 1 + r.uniform(1023)) % 1024);
            wire::store_be32(&fr[ip + 12], f.host_ip(h));
            wire::store_be32(&fr[ip + 16], f.host_ip(to));
            wire::store_be16(&fr[ip + 20], static_cast<std::uint16_t>(r.next_u64()));
            f.send(h, fr, now);
        }
        delivered += f.deliver(now, [](auto, auto) {});
    }
    for (std::uint64_t t2; (t2 = f.next_event()) != fabric::none;)
        delivered += f.deliver(t2, [](auto, auto) {});
    const fb::fabric_stats& s = f.counters();
    EXPECT_EQ(s.sent, 98u * 1024);
    EXPECT_EQ(delivered + s.dropped, s.sent);
    EXPECT_EQ(f.in_flight(), 0u);
    EXPECT_LT(f.pool_high_water(), 20'000u);
    EXPECT_LT(f.memory_bytes(), 32u << 20);
    std::printf("1024 hosts: %llu frames, %llu hops, pool high water %zu, memory %zu KiB\n",
                static_cast<unsigned long long>(s.sent), static_cast<unsigned long long>(s.hops),
                f.pool_high_water(), f.memory_bytes() >> 10);
}

// ---- determinism and bookkeeping ----

TEST(fabric_model, same_seed_same_deliveries_and_every_frame_accounted_for) {
    auto run = [](std::uint64_t seed) {
        auto t = small(2, 4, 4);
        t.seed = seed;
        t.fabric_link.queue_bytes = 20'000;
        t.fabric_link.ecn_kmin_bytes = 2'000;
        t.fabric_link.ecn_kmax_bytes = 15'000;
        fabric f(t);
        rng r(5);
        for (std::uint32_t seq = 0; seq < 500; ++seq) {
            for (std::uint32_t h = 0; h < 4; ++h) {
                const auto sport = static_cast<std::uint16_t>(r.next_u64());
                f.send(h,
                       make_frame(f, {.from = h,
                                      .to = 4 + (h + seq) % 4,
                                      .sport = sport,
                                      .seq = seq,
                                      .ecn = wire::ecn_codepoint::ect1}),
                       seq * 40);
            }
        }
        frame_bytes junk = make_frame(f, {.from = 0, .to = 1});
        wire::store_be32(&junk[14 + 16], 0xc0a80001);  // 192.168.0.1: nobody
        f.send(0, junk, 30'000);
        auto got = drain(f);
        const fb::fabric_stats& s = f.counters();
        EXPECT_EQ(s.unroutable, 1u);
        EXPECT_EQ(s.sent, s.delivered + s.dropped + s.unroutable + s.blackholed);
        EXPECT_GT(s.dropped, 0u);
        EXPECT_GT(s.ecn_marked, 0u);
        return got;
    };
    const auto a = run(3), b = run(3), c = run(4);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].time_ns, b[i].time_ns);
        EXPECT_EQ(a[i].frame, b[i].frame);
    }
    bool differs = a.size() != c.size();
    for (std::size_t i = 0; !differs && i < a.size(); ++i)
        differs = a[i].frame != c[i].frame || a[i].time_ns != c[i].time_ns;
    EXPECT_TRUE(differs);  // the seed drives ECMP and marking
}

TEST(fabric_model, summary_names_ports_and_spines) {
    fabric f(small(2, 2, 2));
    f.send(0, make_frame(f, {.from = 0, .to = 3}), 0);
    drain(f);
    EXPECT_EQ(f.port_name(f.nic_port(1)), "h1->leaf0");
    EXPECT_EQ(f.port_name(f.to_host_port(3)), "leaf1->h3");
    EXPECT_EQ(f.port_name(f.up_port(1, 0)), "leaf1->spine0");
    EXPECT_EQ(f.port_name(f.down_port(1, 0)), "spine1->leaf0");
    const std::string s = f.summary(true);
    EXPECT_NE(s.find("delivered 1"), std::string::npos) << s;
    EXPECT_NE(s.find("spine1"), std::string::npos) << s;
    EXPECT_NE(s.find("h0->leaf0"), std::string::npos) << s;
}

TEST(fabric_model, rejects_bad_topologies_and_oversized_frames) {
    auto t = small(0, 1, 1);
    EXPECT_THROW(fabric{t}, std::invalid_argument);
    t = small(1, 1, 1);
    t.fabric_link.rate_gbps = 0;
    EXPECT_THROW(fabric{t}, std::invalid_argument);
    t = small(1, 2, 1);
    t.max_frame_bytes = 256;
    fabric f(t);
    f.send(0, make_frame(f, {.from = 0, .to = 1, .size = 300}), 0);
    EXPECT_EQ(f.counters().oversized, 1u);
    EXPECT_EQ(f.next_event(), fabric::none);
    EXPECT_THROW(f.send(2, make_frame(f, {.from = 0, .to = 1}), 0), std::out_of_range);
}

}  // namespace
