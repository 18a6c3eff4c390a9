// api_probe: endpoint::probe / tprobe (and their claims, recv_claimed) and endpoint::cancel over
// the pipe provider with loss and reordering: what a probe reports of eager, deferred and
// rendezvous messages, that it consumes nothing, that a claimed message goes only to its
// recv_claimed, and that a canceled receive ends in errc::canceled and takes nothing.
#include <algorithm>

#include "api_helpers.hpp"

namespace uet::test {
namespace {

constexpr std::uint32_t job = 9;

// Progresses until endpoint ep holds n messages that arrived before their receive (unexpected
// or deferred).
void wait_arrivals(world& w, std::size_t ep, std::uint64_t n) {
    for (int i = 0; i < 1'000'000; ++i) {
        const endpoint_counters c = w.eps[ep].counters();
        if (c.unexpected + c.deferred >= n) return;
        ASSERT_TRUE(w.fab.progress());
    }
    FAIL() << "messages did not arrive";
}

class probe : public ::testing::Test {
  protected:
    world w{lossy_fabric(31), 3, endpoint_attr{.job_id = job}};
};

TEST_F(probe, reports_a_message_without_taking_it) {
    probed_message m;
    EXPECT_EQ(w.eps[1].tprobe(5, 0, m), errc::no_message);
    EXPECT_EQ(w.eps[1].probe(m), errc::no_message);
    const auto a = pattern(1500, 1), b = pattern(3000, 2);
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(a), 5, nullptr));
    ASSERT_FALSE(w.eps[2].send(w.peers[1], as_bytes_of(b), nullptr));
    wait_arrivals(w, 1, 2);
    // Twice: the first probe took nothing.
    for (int k = 0; k < 2; ++k) {
        m = {};
        ASSERT_FALSE(w.eps[1].tprobe(4, 1, m));  // tag 5 under ignore mask 1
        EXPECT_EQ(m.len, a.size());
        EXPECT_EQ(m.tag, 5u);
        EXPECT_EQ(m.from, w.peers[0]);
        EXPECT_TRUE(m.tagged);
        EXPECT_EQ(m.claim, 0u);
    }
    EXPECT_EQ(w.eps[1].tprobe(6, 0, m), errc::no_message);
    EXPECT_EQ(w.eps[1].tprobe(5, 0, m, w.peers[2]), errc::no_message);  // not from that source
    ASSERT_FALSE(w.eps[1].probe(m, w.peers[2]));                        // untagged: b
    EXPECT_EQ(m.len, b.size());
    EXPECT_EQ(m.from, w.peers[2]);
    EXPECT_FALSE(m.tagged);
    // The receives take what the probes saw.
    std::vector<std::byte> got(4000);
    ASSERT_FALSE(w.eps[1].trecv(got, 5, 0, nullptr));
    auto c = wait_ok(w.cqs[1]);
    ASSERT_EQ(c.len, a.size());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), got.begin()));
    EXPECT_EQ(w.eps[1].tprobe(0, ~0ull, m), errc::no_message);
    ASSERT_FALSE(w.eps[1].recv(got, nullptr));
    c = wait_ok(w.cqs[1]);
    ASSERT_EQ(c.len, b.size());
    EXPECT_TRUE(std::equal(b.begin(), b.end(), got.begin()));
    EXPECT_EQ(w.eps[1].probe(m), errc::no_message);
}

TEST_F(probe, a_claimed_message_goes_only_to_its_claimed_receive) {
    const auto a = pattern(2000, 3), b = pattern(2500, 4);
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(a), 7, nullptr));
    wait_arrivals(w, 1, 1);
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(b), 8, nullptr));
    wait_arrivals(w, 1, 2);
    probed_message m;
    ASSERT_FALSE(w.eps[1].tprobe(0, ~0ull, m, any_peer, probe_flags::claim));  // the oldest: a
    EXPECT_EQ(m.len, a.size());
    EXPECT_EQ(m.tag, 7u);
    ASSERT_NE(m.claim, 0u);
    // Out of matching now: probes and a wildcard receive see b only.
    probed_message next;
    ASSERT_FALSE(w.eps[1].tprobe(0, ~0ull, next));
    EXPECT_EQ(next.tag, 8u);
    EXPECT_EQ(w.eps[1].tprobe(7, 0, next), errc::no_message);
    std::vector<std::byte> got_b(4000), got_a(4000);
    int ctx_b = 0, ctx_a = 0;
    ASSERT_FALSE(w.eps[1].trecv(got_b, 0, ~0ull, &ctx_b));
    auto c = wait_ok(w.cqs[1]);
    EXPECT_EQ(c.context, &ctx_b);
    EXPECT_EQ(c.tag, 8u);
    ASSERT_FALSE(w.eps[1].recv_claimed(m.claim, got_a, &ctx_a));
    c = wait_ok(w.cqs[1]);
    EXPECT_EQ(c.context, &ctx_a);
    EXPECT_EQ(c.tag, 7u);
    EXPECT_EQ(c.from, w.peers[0]);
    ASSERT_EQ(c.len, a.size());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), got_a.begin()));
    // A claim is received once.
    EXPECT_EQ(w.eps[1].recv_claimed(m.claim, got_a, &ctx_a), errc::invalid_argument);
    EXPECT_EQ(w.eps[1].recv_claimed(12345, got_a, &ctx_a), errc::invalid_argument);
    EXPECT_EQ(w.cqs[1].size(), 0u);
}

TEST_F(probe, a_claimed_message_into_a_smaller_buffer_is_truncated) {
    const auto a = pattern(2000, 5);
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(a), nullptr));
    wait_arrivals(w, 1, 1);
    probed_message m;
    ASSERT_FALSE(w.eps[1].probe(m, w.peers[0], probe_flags::claim));
    std::vector<std::byte> small(100);
    ASSERT_FALSE(w.eps[1].recv_claimed(m.claim, small, nullptr));
    const auto c = wait_error(w.cqs[1]);
    EXPECT_EQ(c.error, errc::truncated);
    EXPECT_EQ(c.olen, a.size() - small.size());
}

// A deferrable send (at least deferrable_threshold bytes) finds no receive: the target keeps its
// header and answers NO_MATCH. The probe reports its whole length; the claimed receive asks for
// it with an RTR.
TEST_F(probe, a_deferred_send_is_probed_and_claimed) {
    const auto data = pattern(200'000, 6);
    int sctx = 0, rctx = 0;
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(data), 11, &sctx));
    wait_arrivals(w, 1, 1);
    ASSERT_EQ(w.eps[1].counters().deferred, 1u);
    probed_message m;
    ASSERT_FALSE(w.eps[1].tprobe(11, 0, m));
    EXPECT_EQ(m.len, data.size());
    EXPECT_EQ(m.from, w.peers[0]);
    ASSERT_FALSE(w.eps[1].tprobe(11, 0, m, w.peers[0], probe_flags::claim));
    EXPECT_EQ(w.eps[1].tprobe(11, 0, m), errc::no_message);
    std::vector<std::byte> got(data.size());
    ASSERT_FALSE(w.eps[1].recv_claimed(m.claim, got, &rctx));
    const auto r = wait_ok(w.cqs[1]);
    EXPECT_EQ(r.context, &rctx);
    EXPECT_EQ(r.len, data.size());
    EXPECT_EQ(got, data);
    EXPECT_EQ(wait_ok(w.cqs[0]).context, &sctx);
    EXPECT_EQ(w.eps[1].counters().ready_to_receive, 1u);
}

// A rendezvous send (at least rendezvous_threshold bytes) arrives as its header: held with the
// eager part, the rest pulled once a receive takes it.
TEST_F(probe, a_rendezvous_send_is_probed_by_its_header_and_claimed) {
    const auto data = pattern(3u << 20, 7);
    int sctx = 0;
    ASSERT_FALSE(w.eps[2].tsend(w.peers[1], as_bytes_of(data), 12, &sctx));
    wait_arrivals(w, 1, 1);
    probed_message m;
    ASSERT_FALSE(w.eps[1].tprobe(12, 0, m, any_peer, probe_flags::claim));
    EXPECT_EQ(m.len, data.size());
    EXPECT_EQ(m.from, w.peers[2]);
    std::vector<std::byte> got(data.size());
    ASSERT_FALSE(w.eps[1].recv_claimed(m.claim, got, nullptr));
    EXPECT_EQ(wait_ok(w.cqs[1]).len, data.size());
    EXPECT_EQ(got, data);
    EXPECT_EQ(wait_ok(w.cqs[2]).context, &sctx);
    EXPECT_EQ(w.eps[1].counters().rendezvous, 1u);
}

// Claimed messages keep their place in max_unexpected until received: the next is deferred.
TEST(probe_limits, claimed_messages_count_against_the_unexpected_limit) {
    world w(lossy_fabric(32), 2, endpoint_attr{.job_id = job, .max_unexpected = 2});
    std::vector<std::vector<std::byte>> sent;
    std::vector<std::uint64_t> claims;
    for (int i = 0; i < 2; ++i) {
        sent.push_back(pattern(1000, 10 + i));
        ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(sent.back()), i, nullptr));
        wait_arrivals(w, 1, i + 1);
        probed_message m;
        ASSERT_FALSE(w.eps[1].tprobe(i, 0, m, any_peer, probe_flags::claim));
        claims.push_back(m.claim);
    }
    sent.push_back(pattern(1000, 12));
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(sent.back()), 2, nullptr));
    wait_arrivals(w, 1, 3);
    EXPECT_EQ(w.eps[1].counters().unexpected, 2u);
    EXPECT_EQ(w.eps[1].counters().deferred, 1u);
    std::vector<std::vector<std::byte>> got(3, std::vector<std::byte>(1000));
    ASSERT_FALSE(w.eps[1].recv_claimed(claims[1], got[1], nullptr));
    ASSERT_FALSE(w.eps[1].recv_claimed(claims[0], got[0], nullptr));
    ASSERT_FALSE(w.eps[1].trecv(got[2], 2, 0, nullptr));
    for (int i = 0; i < 3; ++i)
        wait_ok(w.cqs[1]);
    EXPECT_EQ(got, sent);
}

TEST_F(probe, a_canceled_receive_ends_canceled_and_takes_nothing) {
    std::vector<std::byte> buf(4000);
    int tctx = 0, uctx = 0, other = 0;
    EXPECT_EQ(w.eps[1].cancel(&tctx), errc::not_found);
    ASSERT_FALSE(w.eps[1].trecv(buf, 3, 0, &tctx));
    ASSERT_FALSE(w.eps[1].recv(buf, &uctx));
    ASSERT_FALSE(w.eps[1].cancel(&tctx));
    auto c = wait_error(w.cqs[1]);
    EXPECT_EQ(c.error, errc::canceled);
    EXPECT_EQ(c.context, &tctx);
    EXPECT_TRUE(has(c.flags, completion_flags::tagged));
    EXPECT_EQ(w.eps[1].cancel(&tctx), errc::not_found);  // once
    ASSERT_FALSE(w.eps[1].cancel(&uctx));
    c = wait_error(w.cqs[1]);
    EXPECT_EQ(c.error, errc::canceled);
    EXPECT_EQ(c.context, &uctx);
    EXPECT_EQ(w.eps[1].cancel(&other), errc::not_found);
    // The message meant for the canceled receive waits for another.
    const auto a = pattern(1200, 8);
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(a), 3, nullptr));
    wait_arrivals(w, 1, 1);
    EXPECT_EQ(w.cqs[1].size(), 0u);
    probed_message m;
    ASSERT_FALSE(w.eps[1].tprobe(3, 0, m));
    EXPECT_EQ(m.len, a.size());
}

TEST_F(probe, a_multi_receive_buffer_is_canceled_after_its_messages) {
    std::vector<std::byte> buf(16384);
    int ctx = 0;
    ASSERT_FALSE(w.eps[1].recv(buf, &ctx, any_peer, op_flags::multi_recv));
    const auto a = pattern(500, 9);
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(a), nullptr));
    auto c = wait_ok(w.cqs[1]);  // placed at the start of the buffer
    EXPECT_EQ(c.len, a.size());
    EXPECT_EQ(c.buf, buf.data());
    ASSERT_FALSE(w.eps[1].cancel(&ctx));
    c = wait_error(w.cqs[1]);
    EXPECT_EQ(c.error, errc::canceled);
    EXPECT_EQ(c.context, &ctx);
    EXPECT_TRUE(has(c.flags, completion_flags::multi_recv));
    EXPECT_EQ(w.eps[1].cancel(&ctx), errc::not_found);
}

// Sends are on the wire once posted: a deferred one waits for its RTR, under way.
TEST_F(probe, a_send_under_way_is_not_canceled) {
    const auto data = pattern(200'000, 10);
    int sctx = 0;
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), &sctx));
    wait_arrivals(w, 1, 1);
    EXPECT_EQ(w.eps[0].cancel(&sctx), errc::busy);
    std::vector<std::byte> got(data.size());
    ASSERT_FALSE(w.eps[1].recv(got, nullptr));
    wait_ok(w.cqs[1]);
    EXPECT_EQ(wait_ok(w.cqs[0]).context, &sctx);
    EXPECT_EQ(got, data);
}

// A receive that met a deferred send has asked for it (an RTR): it is being filled.
TEST_F(probe, a_receive_a_message_matched_is_not_canceled) {
    const auto data = pattern(200'000, 12);
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
    wait_arrivals(w, 1, 1);
    ASSERT_EQ(w.eps[1].counters().deferred, 1u);
    std::vector<std::byte> got(data.size());
    int rctx = 0;
    ASSERT_FALSE(w.eps[1].recv(got, &rctx));
    EXPECT_EQ(w.eps[1].cancel(&rctx), errc::busy);
    EXPECT_EQ(wait_ok(w.cqs[1]).context, &rctx);
    EXPECT_EQ(got, data);
    EXPECT_EQ(w.eps[1].cancel(&rctx), errc::not_found);
}

// Closed with a message claimed and never received: every call says closed.
TEST(probe_closed, every_call_says_closed) {
    world w(lossy_fabric(33), 2, endpoint_attr{.job_id = job});
    const auto a = pattern(800, 11);
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(a), nullptr));
    wait_arrivals(w, 1, 1);
    probed_message m;
    ASSERT_FALSE(w.eps[1].probe(m, any_peer, probe_flags::claim));
    w.eps[1].close();
    std::vector<std::byte> buf(1000);
    EXPECT_EQ(w.eps[1].probe(m), errc::endpoint_closed);
    EXPECT_EQ(w.eps[1].tprobe(0, 0, m), errc::endpoint_closed);
    EXPECT_EQ(w.eps[1].recv_claimed(m.claim, buf, nullptr), errc::endpoint_closed);
    EXPECT_EQ(w.eps[1].cancel(&m), errc::endpoint_closed);
}

}  // namespace
}  // namespace uet::test
