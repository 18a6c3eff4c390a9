// CAST (lib/qp_sched) on the leaf-spine fabric model, in virtual time, with RoCE RC engines and
// DCQCN: the same all-gather for every scheduler. 16 hosts on 4 leaves of 4, 4 spines; the ring
// of ranks visits the leaves in turn (rank r is host r / 4 of leaf r % 4), so every hop crosses a
// spine, as the document's test topology sends all traffic through the spines. Each rank sends
// its successor 15 messages (one per step of a ring all-gather), each cut into requests (chunks)
// of up to 512 KiB with 4 in flight; a chunk of step s goes once the predecessor's chunk of step
// s - 1 has completed. A connection is 1 or 4 RC QPs between the same two hosts, each with a
// source port chosen so that the leaf's ECMP hash puts it on a planned spine; qp_sched splits
// each chunk into subchunks, posted as RDMA WRITEs, and hears each subchunk's RTT (post to
// completion). Three layouts of the QPs on the spines:
//  - collisions (2:1 and 1:1): on every leaf, each host has two or three of its four QPs on one
//    spine (the leaf's hot spine, spine l on leaf l), which carries 10 of the leaf's 16 QPs, the
//    three others 2 each (1 QP: three of the leaf's four flows share the hot spine);
//  - heavy collisions (1:2): each host has three of its four QPs on the hot spine, 13 of the
//    leaf's 16 (1 QP: as above). At 1:2 the spines carry twice what the hosts send, so a spine is
//    short only when most QPs hash onto it: with 10 of 16 its links were short by a fifth only,
//    and CAST's margin (-2% to +18% over four seeds) was within the spread; with 13 they are
//    short by two fifths (at 1:1 with 10 of 16: three fifths);
//  - spread: each host's QPs on four different spines (1 QP: one flow per spine), with one spine
//    at a quarter of its rate, so every 4-QP connection has one QP through the slow spine.
// Bus bandwidth is what each rank sent (15 messages) over the all-gather's time.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fabric/fabric.hpp"
#include "qp_sched/qp_sched.hpp"
#include "roce_engine/engine.hpp"
#include "roce_fabric.hpp"

namespace {

using namespace uet::roce;
using namespace uet::roce::test;
namespace nm = uet::netmodel;
namespace qs = uet::qp_sched;

constexpr std::uint32_t leaves = 4, hosts_per_leaf = 4, spines = 4, max_qps = 4;
constexpr std::uint32_t ranks = leaves * hosts_per_leaf, steps = ranks - 1;
constexpr std::uint32_t window = 4;              // chunks in flight per connection
constexpr std::uint64_t max_chunk = 512 * 1024;  // NCCL's net buffer / NCCL_STEPS
constexpr double host_gbps = 100;
constexpr std::uint64_t link_delay_ns = 1000;
constexpr std::uint64_t base_rtt_ns = 8 * link_delay_ns;  // 4 links each way
constexpr std::uint16_t roce_port = 4791;

struct scheme {
    const char* name;
    std::uint32_t qps;
    qs::scheduler kind;
};
constexpr scheme schemes[] = {
    {"1 QP (ECMP)", 1, qs::scheduler::round_robin},
    {"4 QPs RR", 4, qs::scheduler::round_robin},
    {"4 QPs stripe", 4, qs::scheduler::stripe},
    {"4 QPs CAST stripe", 4, qs::scheduler::cast_stripe},
    {"4 QPs CAST WRR", 4, qs::scheduler::cast_wrr},
};
constexpr std::size_t one_qp = 0, rr = 1, stripe = 2, cast = 3, cast_wrr = 4;
constexpr std::size_t scheme_count = std::size(schemes);
static_assert(schemes[one_qp].qps == 1 && schemes[cast_wrr].qps == 4,
              "the indexes name the schemes");

struct scenario {
    const char* name;
    double fabric_gbps;  // every leaf-spine link; 4 x 100 Gb/s hosts per leaf over 4 spines
    enum { spread, collisions, heavy_collisions } layout;  // see the top
    double slow_gbps;                                      // spine 0's links, 0: as the others
};

// The spine of QP q of the host with index i on leaf l, planned before the ports are chosen.
std::uint32_t planned_spine(const scenario& sc, std::uint32_t qps, std::uint32_t l, std::uint32_t i,
                            std::uint32_t q) {
    if (sc.layout == scenario::spread) return (i + q + l) % spines;
    static constexpr std::uint32_t four[hosts_per_leaf][max_qps] = {
        {0, 0, 0, 1}, {0, 0, 0, 2}, {0, 0, 3, 1}, {0, 0, 2, 3}};
    static constexpr std::uint32_t four_heavy[hosts_per_leaf][max_qps] = {
        {0, 0, 0, 1}, {0, 0, 0, 2}, {0, 0, 0, 3}, {0, 0, 0, 1}};
    static constexpr std::uint32_t one[hosts_per_leaf] = {0, 0, 0, 1};
    if (qps == 1) return (one[i] + l) % spines;
    return ((sc.layout == scenario::heavy_collisions ? four_heavy : four)[i][q] + l) % spines;
}

struct outcome {
    std::uint64_t done_ns = 0;  // the last chunk's completion
    double busbw_gbps = 0;
    std::uint64_t failed = 0, go_back_rounds = 0, timeouts = 0, fabric_drops = 0;
    // CAST: per connection, the QP through spine 0 and the weights at the end.
    std::vector<std::array<double, max_qps>> weights;
    std::vector<std::uint32_t> spine0_qp;
    std::vector<std::array<std::uint64_t, max_qps>> bytes;
};

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

// Each rank's message: 512 KiB (one chunk a step), fewer under the sanitizers.
std::uint64_t message_bytes() {
    return std::max<std::uint64_t>(env_or("CAST_MESSAGE_KIB", 512), 128) * 1024;
}

// One all-gather; with ports_only, the QPs' source ports and spines printed instead.
outcome run(const scenario& sc, const scheme& sh, std::uint64_t message, bool ports_only) {
    nm::topology t;
    t.leaves = leaves;
    t.hosts_per_leaf = hosts_per_leaf;
    t.spines = spines;
    t.host_link.rate_gbps = host_gbps;
    t.fabric_link.rate_gbps = sc.fabric_gbps;
    t.host_link.delay_ns = t.fabric_link.delay_ns = link_delay_ns;
    // RoCE runs lossless (PFC), which the model lacks: deep switch buffers (4 MB a port) stand
    // in for it, so that DCQCN, not go-back-N after drops, is what the schedulers meet. ECN as
    // DCQCN's switches mark: RED from 50 to 400 KB with a pmax of 5%.
    for (nm::link_params* lp : {&t.host_link, &t.fabric_link}) {
        lp->queue_bytes = 4'000'000;
        lp->ecn_kmin_bytes = 50'000;
        lp->ecn_kmax_bytes = 400'000;
        lp->ecn_pmax = 0.05;
    }
    t.seed = env_or("CAST_SEED", 11);  // ECMP hashes and ECN marking
    roce_fabric::options o;
    o.nic_backlog_bytes = 2 * 4200;  // the NIC's arbiter keeps about two frames queued
    o.timeout = 10;                  // 4 ms: a slow path is not a lost one
    roce_fabric net(
        t,
        [&](std::uint32_t h) {
            engine_config c = config_of(0, {}, retransmit_mode::go_back_n, 100 + h);
            c.max_qps = 2 * max_qps;  // its connection's and its predecessor's
            c.dcqcn = true;
            c.dcqcn_params.line_rate_gbps = host_gbps;
            // DCQCN's paper: at most one cut, and one CNP, per QP every 50 us.
            c.dcqcn_params.rate_reduce_monitor_period_ns = 50'000;
            c.dcqcn_params.min_time_between_cnps_ns = 50'000;
            return c;
        },
        o);
    if (sc.slow_gbps > 0) net.net().set_spine_rate(0, sc.slow_gbps, 0);

    const std::uint64_t chunk = std::min(message, max_chunk);
    const std::uint32_t chunks_per_step = static_cast<std::uint32_t>(message / chunk);
    const std::uint32_t requests = steps * chunks_per_step;

    // The document's defaults, or the NCCL variables that are set; the scheme picks the rest.
    qs::params p;
    const std::string bad = qs::read_environment(p);
    EXPECT_EQ(bad, "");
    p.set(sh.kind);
    p.qps_per_connection = sh.qps;
    struct rank_state {
        std::uint32_t host = 0, peer = 0;  // sends to peer (the next rank's host)
        std::array<qpn_t, max_qps> qpn{};
        std::array<std::uint32_t, max_qps> spine{};
        std::uint32_t rkey = 0;
        std::unique_ptr<qs::scheduler_state> sched;
        std::uint32_t posted = 0, in_flight = 0, completed = 0;
        std::vector<std::uint8_t> left;        // subchunks not yet complete, per request
        std::vector<std::uint64_t> post_ns;    // per (request, QP)
        std::vector<std::uint64_t> sub_bytes;  // per (request, QP)
        std::vector<bool> done;                // per request
    };
    std::vector<rank_state> rs(ranks);
    const auto host_of = [](std::uint32_t r) { return (r % leaves) * hosts_per_leaf + r / leaves; };
    for (std::uint32_t r = 0; r < ranks; ++r) {
        rank_state& x = rs[r];
        x.host = host_of(r);
        x.peer = host_of((r + 1) % ranks);
        x.sched = std::make_unique<qs::scheduler_state>(p, host_gbps, base_rtt_ns);
        x.left.assign(requests, 0);
        x.post_ns.assign(std::size_t{requests} * max_qps, 0);
        x.sub_bytes.assign(std::size_t{requests} * max_qps, 0);
        x.done.assign(requests, false);
    }
    for (std::uint32_t r = 0; r < ranks; ++r) {
        rank_state& x = rs[r];
        const std::uint32_t l = net.net().leaf_of(x.host), i = x.host % hosts_per_leaf;
        const std::uint32_t src = net.net().host_ip(x.host), dst = net.net().host_ip(x.peer);
        for (std::uint32_t q = 0; q < sh.qps; ++q) {
            const std::uint32_t want = planned_spine(sc, sh.qps, l, i, q);
            // The first source port from this QP's own range that the leaf hashes to `want`.
            auto sport = static_cast<std::uint16_t>(0xc000 + 64 * (x.host * max_qps + q));
            while (net.net().uplink_for_udp(l, src, dst, sport, roce_port) != want)
                ++sport;
            x.qpn[q] = net.connect(x.host, x.peer, sport).first;
            x.spine[q] = want;
            if (ports_only) {
                if (q == 0) std::printf("  rank %2u (host %2u -> %2u):", r, x.host, x.peer);
                std::printf(" port %u spine %u%s", sport, want, q + 1 == sh.qps ? "\n" : ",");
            }
        }
        x.rkey = net.mem(x.peer).add_region(window * chunk, access_remote_write);
    }
    if (ports_only) return {};

    std::vector<std::uint8_t> source(chunk, 0x5a);
    outcome out;
    const auto all_done = [&] {
        for (const rank_state& x : rs)
            if (x.completed < requests) return false;
        return true;
    };
    const auto top_up = [&] {
        for (std::uint32_t r = 0; r < ranks; ++r) {
            rank_state& x = rs[r];
            const rank_state& pred = rs[(r + ranks - 1) % ranks];
            while (x.posted < requests && x.in_flight < window) {
                const std::uint32_t k = x.posted;
                // Step s forwards what step s - 1 brought: the predecessor's chunk must be in.
                if (k >= chunks_per_step && !pred.done[k - chunks_per_step]) break;
                std::array<qs::subchunk, max_qps> sub{};
                const std::size_t n = x.sched->schedule(chunk, net.now(), sub);
                for (std::size_t j = 0; j < n; ++j) {
                    send_wr wr;
                    wr.wr_id = std::uint64_t{k} * max_qps + sub[j].qp;
                    wr.opcode = wr_opcode::write;
                    wr.local = source.data() + sub[j].offset;
                    wr.length = static_cast<std::uint32_t>(sub[j].length);
                    wr.remote_va = (k % window) * chunk + sub[j].offset;
                    wr.rkey = x.rkey;
                    ASSERT_EQ(net.eng(x.host).post_send(x.qpn[sub[j].qp], wr), post_error::none);
                    x.post_ns[wr.wr_id] = net.now();
                    x.sub_bytes[wr.wr_id] = sub[j].length;
                }
                x.left[k] = static_cast<std::uint8_t>(n);
                ++x.posted;
                ++x.in_flight;
            }
        }
    };
    std::vector<std::uint32_t> rank_of_host(ranks);
    for (std::uint32_t r = 0; r < ranks; ++r)
        rank_of_host[rs[r].host] = r;
    const auto on_completion = [&](std::uint32_t h, const work_completion& wc) {
        rank_state& x = rs[rank_of_host[h]];
        if (wc.status != wc_status::success) ++out.failed;
        const auto k = static_cast<std::uint32_t>(wc.wr_id / max_qps);
        const auto q = static_cast<std::uint32_t>(wc.wr_id % max_qps);
        x.sched->on_completion(q, x.sub_bytes[wc.wr_id], net.now() - x.post_ns[wc.wr_id],
                               net.now());
        if (--x.left[k] == 0) {
            x.done[k] = true;
            --x.in_flight;
            ++x.completed;
            out.done_ns = net.now();
        }
    };
    EXPECT_TRUE(net.run(all_done, on_completion, top_up))
        << sc.name << ", " << sh.name << ": the all-gather did not finish";
    out.busbw_gbps = out.done_ns ? double(steps) * double(message) * 8 / double(out.done_ns) : 0;
    for (const rank_state& x : rs) {
        std::array<double, max_qps> w{};
        std::array<std::uint64_t, max_qps> b{};
        std::uint32_t slow = max_qps;
        for (std::uint32_t q = 0; q < sh.qps; ++q) {
            w[q] = x.sched->stats(q).weight;
            b[q] = x.sched->stats(q).bytes;
            if (x.spine[q] == 0) slow = q;
            if (const qp* qq = net.eng(x.host).find(x.qpn[q])) {
                out.go_back_rounds += qq->counters.go_back_rounds;
                out.timeouts += qq->counters.timeouts;
            }
        }
        out.weights.push_back(w);
        out.bytes.push_back(b);
        out.spine0_qp.push_back(slow);
    }
    out.fabric_drops = net.net().counters().dropped;
    return out;
}

TEST(cast_scenarios, cast_beats_round_robin_and_stripe_under_collisions_and_a_slow_spine) {
    const scenario scenarios[] = {
        {"2:1 collisions", 50, scenario::collisions, 0},
        {"1:1 collisions", 100, scenario::collisions, 0},
        {"1:2 heavy collisions", 200, scenario::heavy_collisions, 0},
        {"1:1 spread, spine 0 at 1/4", 100, scenario::spread, 25},
    };
    const std::uint64_t message = message_bytes();
    std::printf(
        "the QPs' UDP source ports, chosen so that the leaf's ECMP hash puts them on the "
        "planned spine (collisions):\n");
    run(scenarios[1], schemes[cast], message, true);
    std::printf(
        "all-gather of %llu KiB per rank, 16 ranks on 4 leaves x 4 hosts, 4 spines, "
        "100 Gb/s hosts; bus bandwidth in Gb/s (completion in us)\n",
        static_cast<unsigned long long>(message / 1024));
    std::printf("%-28s", "scenario");
    for (const scheme& sh : schemes)
        std::printf(" | %-19s", sh.name);
    std::printf("\n");
    outcome o[std::size(scenarios)][scheme_count];
    const std::uint64_t only = env_or("CAST_SCENARIO", 0);  // 1..4: that row alone
    for (std::size_t s = 0; s < std::size(scenarios); ++s) {
        if (only != 0 && only != s + 1) continue;
        std::printf("%-28s", scenarios[s].name);
        for (std::size_t k = 0; k < scheme_count; ++k) {
            o[s][k] = run(scenarios[s], schemes[k], message, false);
            std::printf(" | %6.1f (%7.1f)    ", o[s][k].busbw_gbps, double(o[s][k].done_ns) / 1000);
            std::fflush(stdout);
            EXPECT_EQ(o[s][k].failed, 0u) << scenarios[s].name << ", " << schemes[k].name;
        }
        std::printf("\n");
    }
    for (std::size_t s = 0; s < std::size(scenarios); ++s)
        for (std::size_t k = 0; k < scheme_count; ++k)
            if (o[s][k].go_back_rounds + o[s][k].timeouts + o[s][k].fabric_drops != 0)
                std::printf("%s, %s: go-back-N rounds %llu, timeouts %llu, fabric drops %llu\n",
                            scenarios[s].name, schemes[k].name,
                            static_cast<unsigned long long>(o[s][k].go_back_rounds),
                            static_cast<unsigned long long>(o[s][k].timeouts),
                            static_cast<unsigned long long>(o[s][k].fabric_drops));
    if (only != 0) return;

    // What holds for the seeds tried (CAST_SEED 1, 2, 3 and 11, the default, and 4 to 8 at 1:2;
    // docs/results.md): CAST stripe ahead of round robin and stripe everywhere, by the
    // document's order of margin (+27% to +36% there) at 2:1 and with the slow spine, by a tenth
    // at 1:1 (its worst seed: +12%) and by 5% at 1:2 (its worst seed: +8%). CAST WRR ahead of
    // round robin everywhere and of stripe but at 1:2 (-9% to +15%). Smaller messages (the
    // sanitizer build) give the estimates fewer samples: the order is checked, not the margin.
    const bool full = message >= 512 * 1024;
    constexpr double margin[] = {1.2, 1.1, 1.05, 1.2};
    for (std::size_t s = 0; s < std::size(scenarios); ++s) {
        const double plain = std::max(o[s][rr].busbw_gbps, o[s][stripe].busbw_gbps);
        std::printf(
            "%-28s CAST stripe %+.0f%%, CAST WRR %+.0f%% over the better of RR and "
            "stripe\n",
            scenarios[s].name, 100 * (o[s][cast].busbw_gbps / plain - 1),
            100 * (o[s][cast_wrr].busbw_gbps / plain - 1));
        EXPECT_GT(o[s][cast_wrr].busbw_gbps, o[s][rr].busbw_gbps) << scenarios[s].name;
        EXPECT_GT(o[s][cast].busbw_gbps, (full ? margin[s] : 1.0) * plain) << scenarios[s].name;
        if (scenarios[s].layout != scenario::heavy_collisions) {
            EXPECT_GT(o[s][cast_wrr].busbw_gbps, o[s][stripe].busbw_gbps) << scenarios[s].name;
        }
    }

    // The slow spine: the weights move away from it. Over the connections, the QPs through
    // spine 0 end with under 2/3 of the others' mean weight and were given under 2/3 of their
    // mean bytes, for both CAST schemes. (Not every connection alone: a QP whose ACKs come back
    // through spine 0 measures a longer RTT too.)
    for (std::size_t k : {cast, cast_wrr}) {
        const outcome& x = o[3][k];
        std::printf("%s, spine 0 at 1/4: weights at the end, bytes sent (* through spine 0)\n",
                    schemes[k].name);
        double slow_w = 0, other_w = 0, slow_b = 0, other_b = 0;
        for (std::size_t c = 0; c < x.weights.size(); ++c) {
            std::printf("  rank %2zu:", c);
            const std::uint32_t q0 = x.spine0_qp[c];
            ASSERT_LT(q0, max_qps);
            for (std::uint32_t q = 0; q < max_qps; ++q) {
                std::printf(" %c%.3f (%4.2f MiB)", q == q0 ? '*' : ' ', x.weights[c][q],
                            double(x.bytes[c][q]) / (1 << 20));
                (q == q0 ? slow_w : other_w) += x.weights[c][q];
                (q == q0 ? slow_b : other_b) += double(x.bytes[c][q]);
            }
            std::printf("\n");
        }
        const double n = double(x.weights.size()), others = n * (max_qps - 1);
        std::printf(
            "  means: weight %.3f through spine 0, %.3f the others; bytes %.2f MiB, "
            "%.2f MiB\n",
            slow_w / n, other_w / others, slow_b / n / (1 << 20), other_b / others / (1 << 20));
        EXPECT_LT(slow_w / n, 2.0 / 3 * other_w / others) << schemes[k].name;
        EXPECT_LT(slow_b / n, 2.0 / 3 * other_b / others) << schemes[k].name;
    }
}

}  // namespace
