// api_roce: the public API on transport::roce_rc over the pipe provider. Every call maps to work
// requests on a queue pair connected on the first post; tagged matching, unexpected messages,
// inject, post lists, unsignaled operations, the wc_status table, and the attributes refused.
#include <sys/mman.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "api_helpers.hpp"

namespace uet::test {
namespace {

constexpr std::uint32_t job = 5;

endpoint_attr roce_rc(endpoint_attr a = {}) {
    a.job_id = job;
    a.transport = transport::roce_rc;
    return a;
}

fabric_attr clean_fabric() {
    fabric_attr a;
    a.mtu = 4096;
    return a;
}

class roce : public ::testing::Test {
  protected:
    void SetUp() override {
        fill(region, 1);
        mr =
            w.dom
                .register_memory(
                    region, access::remote_read | access::remote_write | access::remote_atomic, job)
                .value();
    }
    world w{clean_fabric(), 2, roce_rc()};
    std::vector<std::byte> region = std::vector<std::byte>(256 * 1024);
    memory_region mr;
};

TEST_F(roce, opens_on_the_roce_port) {
    EXPECT_TRUE(w.eps[0].is_open());
    EXPECT_EQ(w.eps[0].address().port, 4791);
    EXPECT_EQ(w.eps[0].attr().transport, transport::roce_rc);
}

TEST_F(roce, send_and_recv_of_every_size_both_ways) {
    for (const std::size_t n : {0u, 1u, 100u, 4080u, 4081u, 20000u, 300000u}) {
        for (int dir = 0; dir < 2; ++dir) {
            const int from = dir, to = 1 - dir;
            auto data = pattern(n, n + dir);
            std::vector<std::byte> got(n + 8);
            int rctx = 0, sctx = 0;
            ASSERT_FALSE(w.eps[to].recv(got, &rctx));
            ASSERT_FALSE(w.eps[from].send(w.peers[to], as_bytes_of(data), &sctx));
            const completion s = wait_ok(w.cqs[from]);
            EXPECT_EQ(s.context, &sctx);
            EXPECT_TRUE(has(s.flags, completion_flags::send));
            EXPECT_EQ(s.len, n);
            const completion r = wait_ok(w.cqs[to]);
            EXPECT_EQ(r.context, &rctx);
            EXPECT_TRUE(has(r.flags, completion_flags::recv));
            EXPECT_EQ(r.len, n);
            EXPECT_EQ(r.from, w.peers[from]);
            EXPECT_TRUE(std::equal(data.begin(), data.end(), got.begin())) << n;
        }
    }
    EXPECT_EQ(w.eps[0].counters().pdcs_opened, 1u);  // one QP each way is enough
}

TEST_F(roce, tagged_receives_match_by_tag_and_ignore_mask) {
    std::array<std::vector<std::byte>, 3> got;
    for (auto& g : got)
        g.resize(64);
    int ctx[3];
    ASSERT_FALSE(w.eps[1].trecv(got[0], 0x100, 0, &ctx[0]));
    ASSERT_FALSE(w.eps[1].trecv(got[1], 0x200, 0xff, &ctx[1]));
    ASSERT_FALSE(w.eps[1].recv(got[2], &ctx[2]));  // untagged: no tagged send matches it
    auto a = pattern(64, 1), b = pattern(64, 2), c = pattern(64, 3);
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(a), 0x2ab, nullptr));
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(b), 0x100, nullptr));
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(c), nullptr));
    for (int i = 0; i < 3; ++i)
        wait_ok(w.cqs[0]);
    for (int i = 0; i < 3; ++i) {
        const completion r = wait_ok(w.cqs[1]);
        if (r.context == &ctx[0]) {
            EXPECT_EQ(r.tag, 0x100u);
            EXPECT_EQ(got[0], b);
        } else if (r.context == &ctx[1]) {
            EXPECT_EQ(r.tag, 0x2abu);
            EXPECT_TRUE(has(r.flags, completion_flags::tagged));
            EXPECT_EQ(got[1], a);
        } else {
            EXPECT_EQ(r.context, &ctx[2]);
            EXPECT_EQ(got[2], c);
        }
    }
}

TEST_F(roce, unexpected_messages_wait_for_their_receive) {
    auto a = pattern(3000, 4), b = pattern(10, 5);
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(a), 9, nullptr));
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(b), nullptr));
    wait_ok(w.cqs[0]);
    wait_ok(w.cqs[0]);
    EXPECT_EQ(w.eps[1].counters().unexpected, 2u);
    std::vector<std::byte> gb(10), ga(3000);
    ASSERT_FALSE(w.eps[1].recv(gb, nullptr, w.peers[0]));
    EXPECT_EQ(wait_ok(w.cqs[1]).len, 10u);
    EXPECT_EQ(gb, b);
    ASSERT_FALSE(w.eps[1].trecv(ga, 9, 0, nullptr));
    EXPECT_EQ(wait_ok(w.cqs[1]).tag, 9u);
    EXPECT_EQ(ga, a);
}

TEST_F(roce, inject_completes_only_at_the_target) {
    auto a = pattern(100, 6);
    std::vector<std::byte> g1(100), g2(100);
    ASSERT_FALSE(w.eps[1].recv(g1, nullptr));
    ASSERT_FALSE(w.eps[1].trecv(g2, 3, 0, nullptr));
    ASSERT_FALSE(w.eps[0].inject(w.peers[1], as_bytes_of(a)));
    ASSERT_FALSE(w.eps[0].tinject(w.peers[1], as_bytes_of(a), 3));
    a.assign(a.size(), std::byte{0});  // copied at the call
    wait_ok(w.cqs[1]);
    wait_ok(w.cqs[1]);
    EXPECT_EQ(g1, pattern(100, 6));
    EXPECT_EQ(g2, pattern(100, 6));
    completion c;
    EXPECT_EQ(w.cqs[0].read({&c, 1}), 0u);
    auto big = pattern(w.eps[0].attr().inject_size + 1, 1);
    EXPECT_EQ(w.eps[0].inject(w.peers[1], as_bytes_of(big)), errc::message_too_long);
}

TEST_F(roce, post_lists_and_unsignaled_operations) {
    std::vector<std::vector<std::byte>> data, got;
    std::vector<send_work> sends;
    std::vector<recv_work> recvs;
    for (int i = 0; i < 8; ++i) {
        data.push_back(pattern(200 + i, 10 + i));
        got.emplace_back(256);
    }
    for (int i = 0; i < 8; ++i) {
        sends.push_back({as_bytes_of(data[i]), nullptr,
                         i < 7 ? op_flags::no_completion : op_flags::none, std::uint64_t(i)});
        recvs.push_back({got[i], nullptr, std::uint64_t(i), 0});
    }
    std::size_t posted = 0;
    ASSERT_FALSE(w.eps[1].trecv_list(recvs, posted));
    EXPECT_EQ(posted, 8u);
    ASSERT_FALSE(w.eps[0].tsend_list(w.peers[1], sends, posted));
    EXPECT_EQ(posted, 8u);
    wait_ok(w.cqs[0]);  // only the last one has an entry
    EXPECT_EQ(w.eps[0].silent_completions(), 7u);
    for (int i = 0; i < 8; ++i) {
        const completion r = wait_ok(w.cqs[1]);
        EXPECT_EQ(r.len, data[r.tag].size());
        EXPECT_TRUE(std::equal(data[r.tag].begin(), data[r.tag].end(), got[r.tag].begin()));
    }
    // An unsignaled WRITE last: it ends without a completion of its own, and is counted.
    auto wdata = pattern(5000, 3);
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(wdata), 0, mr.key(), nullptr,
                                op_flags::no_completion));
    for (int i = 0; i < 10000 && w.eps[0].silent_completions() < 8; ++i)
        w.dom.progress();
    EXPECT_EQ(w.eps[0].silent_completions(), 8u);
    EXPECT_TRUE(std::equal(wdata.begin(), wdata.end(), region.begin()));
    std::vector<recv_work> plain(2, recv_work{got[0], nullptr});
    ASSERT_FALSE(w.eps[1].recv_list(plain, posted));
    std::vector<send_work> two(2, send_work{as_bytes_of(data[1]), nullptr});
    ASSERT_FALSE(w.eps[0].send_list(w.peers[1], two, posted));
    for (int i = 0; i < 2; ++i) {
        wait_ok(w.cqs[0]);
        wait_ok(w.cqs[1]);
    }
}

TEST_F(roce, write_write_data_and_read) {
    auto data = pattern(70000, 7);
    int ctx = 0;
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 1000, mr.key(), &ctx));
    completion c = wait_ok(w.cqs[0]);
    EXPECT_EQ(c.context, &ctx);
    EXPECT_TRUE(has(c.flags, completion_flags::rma | completion_flags::write));
    EXPECT_TRUE(std::equal(data.begin(), data.end(), region.begin() + 1000));
    ASSERT_FALSE(
        w.eps[0].write_data(w.peers[1], as_bytes_of(data), 0, mr.key(), 0xabcdef, nullptr));
    wait_ok(w.cqs[0]);
    c = wait_ok(w.cqs[1]);
    EXPECT_TRUE(has(c.flags, completion_flags::remote_cq_data | completion_flags::remote_write));
    EXPECT_EQ(c.data, 0xabcdefu);
    EXPECT_EQ(c.len, data.size());
    EXPECT_EQ(c.from, w.peers[0]);
    EXPECT_EQ(w.eps[0].write_data(w.peers[1], as_bytes_of(data), 0, mr.key(), 1ull << 32, nullptr),
              errc::invalid_argument);
    std::vector<std::byte> back(70000);
    ASSERT_FALSE(w.eps[0].read(w.peers[1], back, 0, mr.key(), nullptr));
    c = wait_ok(w.cqs[0]);
    EXPECT_TRUE(has(c.flags, completion_flags::rma | completion_flags::read));
    EXPECT_EQ(back, data);
}

TEST_F(roce, fetch_add_and_compare_swap) {
    std::uint64_t v = 40;
    std::memcpy(region.data() + 64, &v, 8);
    const std::uint64_t two = 2, forty_two = 42, seven = 7;
    std::uint64_t old = 0;
    auto bytes = [](const std::uint64_t& x) { return std::as_bytes(std::span(&x, 1)); };
    auto out = std::as_writable_bytes(std::span(&old, 1));
    ASSERT_FALSE(w.eps[0].fetch_atomic(w.peers[1], atomic_op::sum, atomic_type::uint64, bytes(two),
                                       out, 64, mr.key(), nullptr));
    EXPECT_TRUE(has(wait_ok(w.cqs[0]).flags, completion_flags::atomic));
    EXPECT_EQ(old, 40u);
    ASSERT_FALSE(w.eps[0].compare_atomic(w.peers[1], atomic_type::uint64, bytes(forty_two),
                                         bytes(seven), out, 64, mr.key(), nullptr));
    wait_ok(w.cqs[0]);
    EXPECT_EQ(old, 42u);
    ASSERT_FALSE(w.eps[0].atomic(w.peers[1], atomic_op::sum, atomic_type::int64, bytes(two), 64,
                                 mr.key(), nullptr));
    wait_ok(w.cqs[0]);
    ASSERT_FALSE(w.eps[0].fetch_atomic(w.peers[1], atomic_op::read, atomic_type::uint64, bytes(two),
                                       out, 64, mr.key(), nullptr));
    wait_ok(w.cqs[0]);
    EXPECT_EQ(old, 9u);
    std::memcpy(&v, region.data() + 64, 8);
    EXPECT_EQ(v, 9u);
    // What RC atomics cannot do.
    const std::uint32_t small = 1;
    EXPECT_EQ(w.eps[0].atomic(w.peers[1], atomic_op::min, atomic_type::uint64, bytes(two), 64,
                              mr.key(), nullptr),
              errc::unsupported);
    EXPECT_EQ(w.eps[0].atomic(w.peers[1], atomic_op::sum, atomic_type::uint32,
                              std::as_bytes(std::span(&small, 1)), 64, mr.key(), nullptr),
              errc::unsupported);
    EXPECT_EQ(w.eps[0].atomic(w.peers[1], atomic_op::sum, atomic_type::uint64, bytes(two), 60,
                              mr.key(), nullptr),
              errc::invalid_argument);
}

TEST_F(roce, bad_key_is_access_denied_and_the_endpoint_reconnects) {
    auto data = pattern(64, 2);
    int ctx = 0;
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, mr.rkey() ^ 1, &ctx));
    completion c = wait_error(w.cqs[0]);
    EXPECT_EQ(c.error, errc::access_denied);
    EXPECT_EQ(c.context, &ctx);
    EXPECT_EQ(c.prov_errno, 10);  // IBV_WC_REM_ACCESS_ERR
    EXPECT_FALSE(c.detail.empty());
    EXPECT_EQ(w.eps[1].counters().rejected_key, 1u);
    std::vector<std::byte> back(64);
    ASSERT_FALSE(w.eps[0].read(w.peers[1], back, 0x100000, mr.key(), nullptr));  // out of bounds
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::access_denied);
    // A fresh QP: the endpoint keeps working.
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, mr.key(), nullptr));
    wait_ok(w.cqs[0]);
    ASSERT_FALSE(w.eps[0].read(w.peers[1], back, 0, mr.key(), nullptr));
    wait_ok(w.cqs[0]);
    EXPECT_EQ(back, data);
}

TEST_F(roce, a_send_longer_than_its_receive_is_truncated) {
    auto data = pattern(100, 3);
    std::vector<std::byte> small(10);
    ASSERT_FALSE(w.eps[1].recv(small, nullptr));
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
    const completion r = wait_error(w.cqs[1]);
    EXPECT_EQ(r.error, errc::truncated);
    EXPECT_EQ(r.olen, 90u);
    const completion s = wait_error(w.cqs[0]);
    EXPECT_EQ(s.error, errc::remote_error);
    EXPECT_EQ(s.prov_errno, 9);  // IBV_WC_REM_INV_REQ_ERR
}

// A peer that connected before the target put it in its address vector is named once it is.
TEST(roce_peers, a_peer_added_after_it_connected_is_matched_by_source) {
    world w{clean_fabric(), 1, roce_rc()};
    auto other_av = w.dom.open_av().value();
    auto cq = w.dom.open_cq(64).value();
    auto target = w.dom.open_endpoint(roce_rc(), cq, other_av).value();
    const peer_addr to = w.av.insert(target.address()).value();
    auto data = pattern(50, 1);
    std::vector<std::byte> got(50);
    ASSERT_FALSE(target.recv(got, nullptr));
    ASSERT_FALSE(w.eps[0].send(to, as_bytes_of(data), nullptr));
    EXPECT_EQ(wait_ok(cq).from, any_peer);
    const peer_addr sender = other_av.insert(w.eps[0].address()).value();
    ASSERT_FALSE(target.recv(got, nullptr, sender));
    ASSERT_FALSE(w.eps[0].send(to, as_bytes_of(data), nullptr));
    EXPECT_EQ(wait_ok(cq).from, sender);
    EXPECT_EQ(got, data);
    for (int i = 0; i < 2; ++i)
        wait_ok(w.cqs[0]);
}

TEST(roce_errors, no_receive_and_no_room_is_no_match) {
    endpoint_attr a = roce_rc();
    a.max_unexpected = 0;
    a.roce.rnr_retry = 0;
    world w{clean_fabric(), 2, a};
    auto data = pattern(10, 1);
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
    const completion c = wait_error(w.cqs[0]);
    EXPECT_EQ(c.error, errc::no_match);
    EXPECT_EQ(c.prov_errno, 13);  // IBV_WC_RNR_RETRY_EXC_ERR
}

TEST(roce_errors, receiver_not_ready_is_retried_until_a_receive_is_posted) {
    endpoint_attr a = roce_rc();
    a.max_unexpected = 0;
    world w{clean_fabric(), 2, a};
    auto data = pattern(10, 1);
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
    for (int i = 0; i < 200; ++i)
        w.dom.progress();
    std::vector<std::byte> got(10);
    ASSERT_FALSE(w.eps[1].recv(got, nullptr));
    wait_ok(w.cqs[0]);
    wait_ok(w.cqs[1]);
    EXPECT_EQ(got, data);
}

TEST(roce_errors, a_peer_that_never_answers_is_unreachable) {
    world w{clean_fabric(), 1, roce_rc()};
    const peer_addr nobody = w.av.insert({0x0a0000f0, 4791}).value();
    auto data = pattern(10, 1);
    int ctx = 0;
    ASSERT_FALSE(w.eps[0].send(nobody, as_bytes_of(data), &ctx));
    const completion c = wait_error(w.cqs[0]);
    EXPECT_EQ(c.error, errc::peer_unreachable);
    EXPECT_EQ(c.context, &ctx);
}

TEST(roce_errors, close_cancels_what_is_outstanding) {
    world w{clean_fabric(), 2, roce_rc()};
    std::vector<std::byte> got(10);
    int ctx = 0;
    ASSERT_FALSE(w.eps[1].recv(got, &ctx));
    w.eps[1].close();
    const completion c = wait_error(w.cqs[1]);
    EXPECT_EQ(c.error, errc::canceled);
    EXPECT_EQ(c.context, &ctx);
    EXPECT_EQ(w.eps[1].recv(got, nullptr), errc::endpoint_closed);
}

// READ responses are cut from the region's memory as they are sent: close() waits until the
// responses of the READs already taken are built, so the memory may go once it returns. The
// link is slow, so that most of the 1024 responses are still to be cut at close(), and delivers
// frames twice (the READ request among them: answered once). No loss: a response lost after
// close() is asked for again by a request the revoked key refuses (the next test).
TEST(roce_errors, deregistering_waits_for_the_read_responses) {
    fabric_attr fa = clean_fabric();
    fa.impairments.rate_gbps = 0.5;
    fa.impairments.duplicate = 0.05;
    world w(fa, 2, roce_rc());
    read_of_a_closed_region r;
    int ctx = 0;
    r.run(w, job, &ctx);
    if (HasFatalFailure()) return;
    r.expect_whole_then_refused(w, &ctx, errc::access_denied);
}

// With loss, a response lost after close() is asked for again by a duplicate READ, which finds
// the key revoked: it is refused, the memory is never read again, and the READ ends in an error
// (the requester's retries run out) rather than a fault.
TEST(roce_errors, a_read_asked_again_after_deregistering_fails_without_touching_the_memory) {
    fabric_attr fa = clean_fabric();
    fa.impairments.rate_gbps = 0.5;
    fa.impairments.loss = 0.05;
    endpoint_attr a = roce_rc();
    a.roce.ack_timeout = 8;  // 1 ms: the pipe's round trip is microseconds
    a.roce.retry_cnt = 1;
    world w(fa, 2, a);
    read_of_a_closed_region r;
    r.run(w, job, nullptr);
    if (HasFatalFailure()) return;
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::retry_limit);
    EXPECT_FALSE(r.complete());
    EXPECT_GT(w.fab.stats().lost, 0u);
}

// A WRITE's packets come in separate bursts; its region is deregistered (and its memory taken
// away) while they still arrive. Each packet is placed where the live region table says, so the
// rest are refused (a remote access error ends the WRITE) rather than written into memory the
// application took back.
TEST(roce_errors, a_write_into_a_region_closed_midway_stops_there) {
    fabric_attr fa = clean_fabric();
    fa.impairments.rate_gbps = 0.5;
    world w(fa, 2, roce_rc());
    const std::size_t size = 4u << 20;
    mapping region(size);
    ASSERT_NE(region.at, MAP_FAILED);
    memory_region mr = w.dom.register_memory(region.bytes(), access::remote_write, job).value();
    std::vector<std::byte> data(size);
    fill(data, 4);
    int ctx = 0;
    ASSERT_FALSE(w.eps[0].write(w.peers[1], data, 0, mr.key(), &ctx));
    close_midway(w, mr, region, [&] { return w.eps[1].counters().packets_received; });
    if (HasFatalFailure()) return;
    const completion c = wait_error(w.cqs[0]);
    EXPECT_EQ(c.context, &ctx);
    EXPECT_EQ(c.error, errc::access_denied) << c.error.message();
}

TEST(roce_errors, multi_recv_is_unsupported) {
    world w{clean_fabric(), 1, roce_rc()};
    std::vector<std::byte> got(1000);
    EXPECT_EQ(w.eps[0].recv(got, nullptr, any_peer, op_flags::multi_recv), errc::unsupported);
}

// Both retransmission modes over a pipe that loses and reorders: every message, write, read and
// atomic arrives once and whole.
TEST(roce_modes, every_call_survives_loss_and_reordering) {
    for (const roce_mode mode : {roce_mode::go_back_n, roce_mode::out_of_order}) {
        endpoint_attr a = roce_rc();
        a.roce.mode = mode;
        a.roce.ack_timeout = 8;  // 1 ms: the pipe's round trip is microseconds
        world w{lossy_fabric(11), 2, a};
        std::vector<std::byte> region(64 * 1024);
        auto mr =
            w.dom
                .register_memory(
                    region, access::remote_read | access::remote_write | access::remote_atomic, job)
                .value();
        constexpr int n = 24;
        std::vector<std::vector<std::byte>> data, got;
        for (int i = 0; i < n; ++i) {
            data.push_back(pattern(100 + 997 * i, i));
            got.emplace_back(data.back().size());
            ASSERT_FALSE(w.eps[1].trecv(got[i], i, 0, nullptr));
        }
        for (int i = 0; i < n; ++i)
            ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(data[i]), i, nullptr));
        auto wdata = pattern(30000, 77);
        ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(wdata), 0, mr.key(), nullptr));
        const std::uint64_t one = 1;
        for (int i = 0; i < 8; ++i)
            ASSERT_FALSE(w.eps[0].atomic(w.peers[1], atomic_op::sum, atomic_type::uint64,
                                         std::as_bytes(std::span(&one, 1)), 32768, mr.key(),
                                         nullptr));
        std::vector<std::byte> back(30000);
        ASSERT_FALSE(w.eps[0].read(w.peers[1], back, 0, mr.key(), nullptr));
        for (int i = 0; i < n + 10; ++i)
            wait_ok(w.cqs[0]);
        for (int i = 0; i < n; ++i) {
            const completion r = wait_ok(w.cqs[1]);
            EXPECT_EQ(r.len, data[r.tag].size());
            EXPECT_EQ(got[r.tag], data[r.tag]) << static_cast<int>(mode) << " " << r.tag;
        }
        EXPECT_EQ(back, wdata);
        std::uint64_t count = 0;
        std::memcpy(&count, region.data() + 32768, 8);
        EXPECT_EQ(count, 8u) << static_cast<int>(mode);
        EXPECT_GT(w.fab.stats().lost, 0u);
        // The repairs show in the endpoints' counters, summed over their QPs.
        const endpoint_counters c0 = w.eps[0].counters(), c1 = w.eps[1].counters();
        EXPECT_GT(c0.retransmits, 0u);
        EXPECT_EQ(c0.retransmits, c0.retransmits_nack + c0.retransmits_timeout);
        EXPECT_GT(c1.roce.acks_sent, 0u);
        EXPECT_GT(c1.nacks_sent, 0u);
        EXPECT_GE(c1.nacks_sent, c0.nacks_received);  // some NAKs are lost on the way
        if (mode == roce_mode::go_back_n)
            EXPECT_GT(c0.roce.go_back_rounds, 0u);
        else
            EXPECT_GT(c1.roce.placed_early, 0u);
    }
}

// The UDP source ports of the RDMA WRITE_ONLY frames in a pcap capture (classic pcap, Ethernet,
// IPv4 without options, RoCEv2 on 4791).
std::set<std::uint16_t> write_only_source_ports(const std::string& path) {
    std::set<std::uint16_t> ports;
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = [&](std::size_t i) { return static_cast<std::uint8_t>(bytes[i]); };
    for (std::size_t off = 24; off + 16 <= bytes.size();) {
        std::uint32_t len = 0;
        std::memcpy(&len, &bytes[off + 8], 4);
        const std::size_t f = off + 16;
        off = f + len;
        if (off > bytes.size() || len < 43 || at(f + 12) != 0x08 || at(f + 13) != 0x00) continue;
        if ((at(f + 36) << 8 | at(f + 37)) != 4791) continue;
        if (at(f + 42) == 0x0a)
            ports.insert(static_cast<std::uint16_t>(at(f + 34) << 8 | at(f + 35)));
    }
    return ports;
}

// lb oblivious on roce_rc: refused with go-back-N; in out-of-order mode the WRITE packets leave
// on many source ports (paths) and the data still lands whole; with static_path, on one.
TEST(roce_attributes, oblivious_sprays_writes_in_out_of_order_mode_only) {
    {
        auto f = fabric::open(clean_fabric()).value();
        auto d = f.open_domain().value();
        auto av = d.open_av().value();
        auto cq = d.open_cq(16).value();
        endpoint_attr a = roce_rc();
        a.lb = path_policy::oblivious;
        EXPECT_FALSE(d.open_endpoint(a, cq, av));
        EXPECT_NE(fabric::last_error().find("out_of_order"), std::string::npos)
            << fabric::last_error();
    }
    for (const path_policy lb : {path_policy::oblivious, path_policy::static_path}) {
        fabric_attr fa = clean_fabric();
        fa.capture_file = ::testing::TempDir() + "api_roce_spray.pcap";
        endpoint_attr a = roce_rc();
        a.lb = lb;
        a.roce.mode = roce_mode::out_of_order;
        {
            world w{fa, 2, a};
            std::vector<std::byte> region(256 * 1024);
            auto mr = w.dom.register_memory(region, access::remote_write, job).value();
            const auto data = pattern(region.size(), 3);
            ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, mr.key(), nullptr));
            wait_ok(w.cqs[0]);
            EXPECT_EQ(region, data);
        }
        const std::size_t ports = write_only_source_ports(fa.capture_file).size();
        if (lb == path_policy::oblivious)
            EXPECT_GT(ports, 16u);  // 64 packets, each on a random port
        else
            EXPECT_EQ(ports, 1u);
        std::remove(fa.capture_file.c_str());
    }
}

TEST(roce_attributes, uet_only_fields_are_refused_by_name) {
    auto f = fabric::open(clean_fabric()).value();
    auto d = f.open_domain().value();
    auto av = d.open_av().value();
    auto cq = d.open_cq(16).value();
    const auto refused = [&](endpoint_attr a, std::string_view field) {
        auto r = d.open_endpoint(roce_rc(a), cq, av);
        EXPECT_FALSE(r) << field;
        EXPECT_EQ(r.error(), errc::invalid_argument);
        EXPECT_NE(fabric::last_error().find(field), std::string::npos) << fabric::last_error();
    };
    refused(endpoint_attr{.mode = delivery::rudi}, "endpoint_attr.mode");
    refused(endpoint_attr{.parallel_pdcs = 2}, "endpoint_attr.parallel_pdcs");
    refused(endpoint_attr{.answers_in_acks = false}, "endpoint_attr.answers_in_acks");
    refused(endpoint_attr{.deferrable_threshold = 1000}, "endpoint_attr.deferrable_threshold");
    refused(endpoint_attr{.rendezvous_threshold = 2u << 20}, "endpoint_attr.rendezvous_threshold");
    refused(endpoint_attr{.cc = congestion_control::rccc}, "endpoint_attr.cc");
    refused(endpoint_attr{.lb = path_policy::bitmap}, "endpoint_attr.lb bitmap");
    endpoint_attr a;
    a.roce.max_rd_atomic = 0;
    refused(a, "endpoint_attr.roce.max_rd_atomic");
    EXPECT_TRUE(d.open_endpoint(roce_rc(), cq, av));
}

}  // namespace
}  // namespace uet::test
