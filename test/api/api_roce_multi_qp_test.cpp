// api_roce_multi_qp: a roce_rc endpoint with several queue pairs per peer (qp_sched_attr), over
// the pipe provider. Writes and reads are split over the QPs or spread among them by the
// scheduler and merge back into one completion each, in posting order; a write's immediate data
// comes after all of its bytes; the settings come from the attributes over the NCCL variables;
// one QP that fails fails the requests it carried, and nothing else is lost.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api_helpers.hpp"

namespace uet::test {
namespace {

constexpr std::uint32_t job = 6;

endpoint_attr multi_qp(std::uint32_t qps, qp_scheduler s, std::uint64_t split_min = 4096) {
    endpoint_attr a;
    a.job_id = job;
    a.transport = transport::roce_rc;
    a.qp_sched.qps = qps;
    a.qp_sched.scheduler = s;
    a.qp_sched.split_data_min = split_min;
    a.qp_sched.update_interval_us = 1;
    return a;
}

fabric_attr clean_fabric() {
    fabric_attr a;
    a.mtu = 4096;
    return a;
}

struct pair_world {
    explicit pair_world(const endpoint_attr& a, const fabric_attr& fa = clean_fabric())
        : w(fa, 2, a) {
        mr = w.dom.register_memory(region, access::remote_read | access::remote_write, job).value();
    }
    world w;
    std::vector<std::byte> region = std::vector<std::byte>(1 << 20);
    memory_region mr;
};

TEST(roce_multi_qp, a_striped_write_and_read_use_every_qp_and_complete_once) {
    pair_world p(multi_qp(4, qp_scheduler::stripe));
    auto& w = p.w;
    const auto data = pattern(256 * 1024, 1);
    int ctx = 0;
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 4096, p.mr.key(), &ctx));
    const completion c = wait_ok(w.cqs[0]);
    EXPECT_EQ(c.context, &ctx);
    EXPECT_EQ(c.len, data.size());
    EXPECT_TRUE(std::equal(data.begin(), data.end(), p.region.begin() + 4096));
    completion extra;
    EXPECT_EQ(w.cqs[0].read({&extra, 1}), 0u) << "one completion for the request";

    const std::vector<qp_counters> qps = w.eps[0].queue_pairs(w.peers[1]);
    ASSERT_EQ(qps.size(), 4u);
    for (const qp_counters& q : qps) {
        EXPECT_NE(q.qp_num, 0u);
        EXPECT_EQ(q.requests, 1u);
        EXPECT_EQ(q.bytes, data.size() / 4);
        EXPECT_EQ(q.rtt_samples, 1u);
    }
    EXPECT_NE(qps[0].qp_num, qps[1].qp_num);

    std::vector<std::byte> back(data.size());
    ASSERT_FALSE(w.eps[0].read(w.peers[1], back, 4096, p.mr.key(), &ctx));
    wait_ok(w.cqs[0]);
    EXPECT_EQ(back, data);
    EXPECT_EQ(w.eps[0].queue_pairs(w.peers[1])[3].requests, 2u);
    EXPECT_TRUE(w.eps[1].queue_pairs(w.peers[0]).empty()) << "the target posted nothing";
}

TEST(roce_multi_qp, round_robin_gives_each_request_to_the_next_qp) {
    pair_world p(multi_qp(4, qp_scheduler::round_robin));
    auto& w = p.w;
    const auto data = pattern(64 * 1024, 2);
    for (int i = 0; i < 8; ++i)
        ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, p.mr.key(), nullptr));
    for (int i = 0; i < 8; ++i)
        wait_ok(w.cqs[0]);
    for (const qp_counters& q : w.eps[0].queue_pairs(w.peers[1])) {
        EXPECT_EQ(q.requests, 2u);
        EXPECT_EQ(q.bytes, 2 * data.size());
    }
}

TEST(roce_multi_qp, cast_weights_sum_to_one_after_measurements) {
    for (const qp_scheduler s : {qp_scheduler::cast_stripe, qp_scheduler::cast_wrr}) {
        pair_world p(multi_qp(4, s));
        auto& w = p.w;
        const auto data = pattern(128 * 1024, 3);
        for (int i = 0; i < 32; ++i) {
            ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, p.mr.key(), nullptr));
            wait_ok(w.cqs[0]);
        }
        EXPECT_EQ(p.region[data.size() - 1], data.back());
        double sum = 0;
        std::uint64_t requests = 0, samples = 0;
        for (const qp_counters& q : w.eps[0].queue_pairs(w.peers[1])) {
            sum += q.weight;
            requests += q.requests;
            samples += q.rtt_samples;
            EXPECT_GT(q.weight, 0);
        }
        EXPECT_NEAR(sum, 1.0, 1e-9);
        // Striping puts a subchunk on every QP; WRR gives each request to one.
        EXPECT_EQ(requests, s == qp_scheduler::cast_wrr ? 32u : 128u);
        EXPECT_EQ(samples, requests);
    }
}

// A request refused for want of room (errc::again) leaves no trace in the scheduler: only the
// requests that went are counted, and striping still gives each QP its share of each of them.
TEST(roce_multi_qp, a_request_refused_for_room_is_not_counted) {
    endpoint_attr a = multi_qp(4, qp_scheduler::stripe);
    a.tx_depth = 8;
    a.rx_depth = 8;
    pair_world p(a);
    auto& w = p.w;
    const auto data = pattern(64 * 1024, 5);
    int posted = 0, refused = 0;
    for (int i = 0; i < 12; ++i) {
        const std::error_code ec =
            w.eps[0].write(w.peers[1], as_bytes_of(data), 0, p.mr.key(), nullptr);
        if (ec == errc::again)
            ++refused;
        else if (!ec)
            ++posted;
    }
    ASSERT_GT(refused, 0) << "the pool of 16 operations takes fewer than 12 requests of 5";
    for (int i = 0; i < posted; ++i)
        wait_ok(w.cqs[0]);
    for (const qp_counters& q : w.eps[0].queue_pairs(w.peers[1]))
        EXPECT_EQ(q.requests, static_cast<std::uint64_t>(posted));
}

// The target's completion of a split WRITE with immediate data comes after every byte of it is
// in place, whichever QP carried them.
TEST(roce_multi_qp, immediate_data_of_a_split_write_follows_all_its_bytes) {
    pair_world p(multi_qp(4, qp_scheduler::stripe), lossy_fabric(5));
    auto& w = p.w;
    for (int i = 0; i < 6; ++i) {
        const auto data = pattern(200 * 1024 + 128 * i, 10 + i);
        ASSERT_FALSE(
            w.eps[0].write_data(w.peers[1], as_bytes_of(data), 0, p.mr.key(), 0x1000 + i, nullptr));
        const completion t = wait_ok(w.cqs[1]);
        EXPECT_TRUE(has(t.flags, completion_flags::remote_cq_data));
        EXPECT_EQ(t.data, 0x1000u + i);
        EXPECT_EQ(t.len, 0u) << "the immediate came in a zero-length write of its own";
        EXPECT_TRUE(std::equal(data.begin(), data.end(), p.region.begin())) << i;
        wait_ok(w.cqs[0]);
    }
}

// Requests to a peer complete in the order they were posted, as on one QP, however their
// subchunks and QPs finish.
TEST(roce_multi_qp, completions_come_in_posting_order) {
    pair_world p(multi_qp(4, qp_scheduler::cast_stripe), lossy_fabric(9));
    auto& w = p.w;
    std::vector<std::byte> got(100);
    ASSERT_FALSE(w.eps[1].recv(got, nullptr));
    constexpr int n = 40;
    int ctx[n];
    std::vector<std::vector<std::byte>> data;
    for (int i = 0; i < n; ++i)
        data.push_back(pattern(1000 + 3989 * (i % 17) * (i % 3 == 0 ? 8 : 1), i));
    for (int i = 0; i < n; ++i) {
        if (i == n / 2) {
            ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data[0]).first(100), &ctx[i]));
            continue;
        }
        ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data[i]), 0, p.mr.key(), &ctx[i]));
    }
    for (int i = 0; i < n; ++i) {
        const completion c = wait_ok(w.cqs[0]);
        EXPECT_EQ(c.context, &ctx[i]) << i;
    }
    wait_ok(w.cqs[1]);
}

// Part of a request beyond the region: the subchunks there fail on their QPs (remote access
// error, their QPs to ERR), the others land; the request reports the error once, the requests
// after it are not lost, and the next post connects fresh QPs where the failed ones were.
TEST(roce_multi_qp, one_failing_qp_fails_its_request_and_nothing_else_is_lost) {
    pair_world p(multi_qp(4, qp_scheduler::stripe));
    auto& w = p.w;
    const auto data = pattern(256 * 1024, 4);
    int bad = 0, good[4] = {};
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, p.mr.key(), &good[0]));
    // The last quarter of this one lies past the end of the 1 MiB region.
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), p.region.size() - 200 * 1024,
                                p.mr.key(), &bad));
    const completion first = wait_ok(w.cqs[0]);
    EXPECT_EQ(first.context, &good[0]);
    const completion failed = wait_error(w.cqs[0]);
    EXPECT_EQ(failed.context, &bad);
    EXPECT_EQ(failed.error, errc::access_denied) << failed.detail;
    // The first three quarters were placed by their QPs.
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + 192 * 1024, p.region.end() - 200 * 1024));
    completion none_left;
    EXPECT_EQ(w.cqs[0].read({&none_left, 1}), 0u);
    EXPECT_FALSE(w.cqs[0].read_error(none_left));

    const std::uint32_t failed_qpn = w.eps[0].queue_pairs(w.peers[1])[3].qp_num;
    std::fill(p.region.begin(), p.region.begin() + 768 * 1024, std::byte{0});
    for (int i = 1; i < 4; ++i)
        ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), data.size() * (i - 1),
                                    p.mr.key(), &good[i]));
    for (int i = 1; i < 4; ++i)
        EXPECT_EQ(wait_ok(w.cqs[0]).context, &good[i]);
    const std::vector<qp_counters> qps = w.eps[0].queue_pairs(w.peers[1]);
    EXPECT_NE(qps[3].qp_num, 0u);
    EXPECT_NE(qps[3].qp_num, failed_qpn) << "a fresh QP took the failed one's place";
    for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(std::equal(data.begin(), data.end(), p.region.begin() + data.size() * i)) << i;
}

// One path of the connection fails (the pipe loses every frame of one QP's UDP source port, as
// on an ECMP path through a failed link): that QP runs out of retries, the requests it carried
// end in retry_limit, the other QPs' subchunks are placed, and once the path is back a fresh QP
// takes the failed one's place.
TEST(roce_multi_qp, retry_exceeded_on_one_path_fails_its_requests_and_nothing_else_is_lost) {
    endpoint_attr a = multi_qp(4, qp_scheduler::stripe);
    a.roce.ack_timeout = 8;  // 1 ms, in virtual time
    a.roce.retry_cnt = 2;
    pair_world p(a);
    auto& w = p.w;
    const auto data = pattern(256 * 1024, 5);
    int warm = 0;
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, p.mr.key(), &warm));
    EXPECT_EQ(wait_ok(w.cqs[0]).context, &warm);
    const std::vector<qp_counters> before = w.eps[0].queue_pairs(w.peers[1]);
    ASSERT_EQ(before.size(), 4u);
    for (std::size_t i = 0; i < before.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            ASSERT_NE(before[i].udp_source_port, before[j].udp_source_port) << i << " " << j;

    link_impairments failed = w.fab.attr().impairments;
    failed.failed_paths = {before[1].udp_source_port};
    ASSERT_FALSE(w.fab.set_impairments(failed));
    EXPECT_EQ(w.fab.attr().impairments.failed_paths, failed.failed_paths);
    std::fill(p.region.begin(), p.region.end(), std::byte{0});
    int first = 0, second = 0;
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, p.mr.key(), &first));
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), data.size(), p.mr.key(), &second));
    // The first runs out of retries; the second, queued behind it on the failed QP, is flushed.
    const completion c1 = wait_error(w.cqs[0]);
    EXPECT_EQ(c1.context, &first);
    EXPECT_EQ(c1.error, errc::retry_limit) << c1.detail;
    const completion c2 = wait_error(w.cqs[0]);
    EXPECT_EQ(c2.context, &second);
    EXPECT_EQ(c2.error, errc::canceled) << c2.detail;
    completion none_left;
    EXPECT_EQ(w.cqs[0].read({&none_left, 1}), 0u);
    EXPECT_FALSE(w.cqs[0].read_error(none_left));
    EXPECT_GT(w.fab.stats().path_failed, 0u);
    EXPECT_EQ(w.eps[0].queue_pairs(w.peers[1])[1].qp_num, 0u) << "the failed QP left its place";
    // Subchunks 0, 2 and 3 of both requests went on the working paths and were placed.
    for (std::size_t base : {std::size_t{0}, data.size()})
        for (std::size_t quarter : {0u, 2u, 3u}) {
            const std::size_t at = quarter * data.size() / 4;
            EXPECT_TRUE(std::equal(data.begin() + at, data.begin() + at + data.size() / 4,
                                   p.region.begin() + base + at))
                << "request at " << base << ", quarter " << quarter;
        }

    failed.failed_paths.clear();
    ASSERT_FALSE(w.fab.set_impairments(failed));
    int again[3] = {};
    for (int i = 0; i < 3; ++i)
        ASSERT_FALSE(
            w.eps[0].write(w.peers[1], as_bytes_of(data), data.size() * i, p.mr.key(), &again[i]));
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(wait_ok(w.cqs[0]).context, &again[i]);
    for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(std::equal(data.begin(), data.end(), p.region.begin() + data.size() * i)) << i;
    // A fresh QP took the failed one's place (its number may be the one freed); the others
    // stayed.
    const std::vector<qp_counters> after = w.eps[0].queue_pairs(w.peers[1]);
    EXPECT_NE(after[1].qp_num, 0u);
    EXPECT_GT(after[1].requests, 0u);
    for (std::size_t i : {0u, 2u, 3u})
        EXPECT_EQ(after[i].qp_num, before[i].qp_num) << i;
}

// The NCCL variables fill what the attributes leave empty; a variable whose field is set is
// not read; a bad one is refused by name.
TEST(roce_multi_qp, attributes_win_over_the_nccl_environment) {
    struct env_var {
        env_var(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
        ~env_var() { ::unsetenv(name); }
        const char* name;
    };
    auto f = fabric::open(clean_fabric()).value();
    auto d = f.open_domain().value();
    auto av = d.open_av().value();
    auto cq = d.open_cq(16).value();
    endpoint_attr a;
    a.transport = transport::roce_rc;
    {
        env_var qps("NCCL_IB_QPS_PER_CONNECTION", "3");
        env_var on("NCCL_IB_QP_SCHED_ENABLE", "1");
        env_var split("NCCL_IB_SPLIT_DATA_ON_QPS", "1");
        env_var min("NCCL_IB_QP_SCHED_SPLIT_DATA_MIN", "8192");
        auto ep = d.open_endpoint(a, cq, av).value();
        EXPECT_EQ(ep.attr().qp_sched.qps, 3u);
        EXPECT_EQ(ep.attr().qp_sched.scheduler, qp_scheduler::cast_stripe);
        EXPECT_EQ(ep.attr().qp_sched.split_data_min, 8192u);
        EXPECT_EQ(ep.attr().qp_sched.update_interval_us, 50u);
        EXPECT_EQ(ep.attr().qp_sched.reset_interval_ms, 60000u);
        endpoint_attr b = a;
        b.qp_sched.qps = 2;
        b.qp_sched.scheduler = qp_scheduler::round_robin;
        auto ep2 = d.open_endpoint(b, cq, av).value();
        EXPECT_EQ(ep2.attr().qp_sched.qps, 2u);
        EXPECT_EQ(ep2.attr().qp_sched.scheduler, qp_scheduler::round_robin);
    }
    {
        env_var weight("NCCL_IB_QP_SCHED_WEIGHT", "heavy");
        EXPECT_FALSE(d.open_endpoint(a, cq, av));
        EXPECT_NE(fabric::last_error().find("NCCL_IB_QP_SCHED_WEIGHT"), std::string::npos)
            << fabric::last_error();
        endpoint_attr b = a;
        b.qp_sched.weight = 0.25;
        EXPECT_TRUE(d.open_endpoint(b, cq, av)) << fabric::last_error();
    }
    endpoint_attr bad = a;
    bad.qp_sched.qps = 0;
    EXPECT_FALSE(d.open_endpoint(bad, cq, av));
    EXPECT_NE(fabric::last_error().find("endpoint_attr.qp_sched.qps"), std::string::npos)
        << fabric::last_error();
}

}  // namespace
}  // namespace uet::test
