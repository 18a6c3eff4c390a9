// Errors between two engines, with verbs' outcome for each: the failing work request completes
// with its ibv_wc_status, the QP enters ERR (the target hears it once), every other work
// request completes with wr_flush_err in posting order (unsignaled ones too), and a post in ERR
// completes at once with wr_flush_err. Both retransmission modes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "roce_pair.hpp"

namespace {

using namespace uet::roce;
using namespace uet::roce::test;

class roce_errors : public ::testing::TestWithParam<retransmit_mode> {
  protected:
    send_wr write(std::uint64_t id, std::uint32_t rkey, std::uint64_t va, std::uint32_t len) {
        return make_wr(id, wr_opcode::write, buf_.data(), len, rkey, va);
    }
    send_wr read(std::uint64_t id, std::uint32_t rkey, std::uint64_t va, std::uint32_t len) {
        return make_wr(id, wr_opcode::read, buf_.data(), len, rkey, va);
    }
    send_wr send(std::uint64_t id, std::uint32_t len) {
        return make_wr(id, wr_opcode::send, buf_.data(), len);
    }
    // Posts `wrs` on A's QP; the one with id `culprit` must fail with `status` and every later
    // one flush, in order; those before it succeed.
    void expect_failure(engine_pair& p, const std::vector<send_wr>& wrs, std::uint64_t culprit,
                        wc_status status) {
        for (const send_wr& w : wrs)
            ASSERT_EQ(p.A.post_send(p.a, w), post_error::none);
        std::vector<work_completion> done;
        std::size_t signaled = 0;
        for (const send_wr& w : wrs)
            signaled += w.signaled || w.wr_id >= culprit;
        ASSERT_TRUE(p.run_until_done(done, signaled)) << done.size() << " of " << signaled;
        for (int i = 0; i < 20; ++i) {  // nothing more comes
            p.step();
            p.poll(done);
        }
        ASSERT_EQ(done.size(), signaled);
        std::size_t k = 0;
        for (const send_wr& w : wrs) {
            if (!w.signaled && w.wr_id < culprit) continue;
            const work_completion& c = done[k++];
            EXPECT_EQ(c.wr_id, w.wr_id);
            EXPECT_EQ(c.qp_num, p.a);
            const wc_status want = w.wr_id < culprit    ? wc_status::success
                                   : w.wr_id == culprit ? status
                                                        : wc_status::wr_flush_err;
            EXPECT_EQ(c.status, want) << "wr " << w.wr_id << ": " << to_string(c.status);
            EXPECT_EQ(c.opcode, w.opcode);
        }
        EXPECT_EQ(p.qa().attr.state, qp_state::err);
        EXPECT_EQ(p.qa().error, status) << to_string(p.qa().error);
        EXPECT_EQ(p.mem_a.count(qp_event::error), 1u);
        // A post in ERR completes at once, flushed.
        send_wr late = send(999, 8);
        ASSERT_EQ(p.A.post_send(p.a, late), post_error::none);
        work_completion wc[2];
        ASSERT_EQ(p.A.poll_completions(wc), 1u);
        EXPECT_EQ(wc[0].wr_id, 999u);
        EXPECT_EQ(wc[0].status, wc_status::wr_flush_err);
        // Nothing is left running on A: no timer, no frame.
        EXPECT_EQ(p.A.next_deadline(), std::numeric_limits<std::uint64_t>::max());
    }
    // The responder's own view of a fatal NAK: B entered ERR too, and said so once. The first
    // `landed` bytes of region `rkey` hold what the work requests before the bad one wrote.
    void expect_responder_failed(engine_pair& p, std::uint8_t nak_code, std::uint32_t rkey = 0,
                                 std::size_t landed = 0) {
        EXPECT_EQ(p.qb().attr.state, qp_state::err);
        EXPECT_EQ(p.mem_b.count(qp_event::error), 1u);
        EXPECT_EQ(p.qb().counters.naks_sent[nak_code], 1u);
        EXPECT_EQ(p.qa().counters.naks_received[nak_code], 1u);
        if (landed != 0) {
            EXPECT_EQ(std::memcmp(p.mem_b.regions[rkey - 1].bytes.data(), buf_.data(), landed), 0);
        }
    }

    std::vector<std::uint8_t> buf_ = std::vector<std::uint8_t>(8192, 0x5a);
};

constexpr std::uint8_t invalid_request = 1, remote_access_error = 2;

TEST_P(roce_errors, a_bad_rkey_is_a_remote_access_error) {
    engine_pair p(GetParam());
    ASSERT_TRUE(p.connected);
    const std::uint32_t rkey = p.mem_b.add_region(8192, access_remote_write | access_remote_read);
    send_wr unsignaled = write(4, rkey, 0, 100);
    unsignaled.signaled = false;
    expect_failure(p,
                   {write(1, rkey, 0, 3000), write(2, rkey + 50, 0, 100), send(3, 10), unsignaled,
                    read(5, rkey, 0, 2000)},
                   2, wc_status::rem_access_err);
    expect_responder_failed(p, remote_access_error, rkey, 3000);
}

TEST_P(roce_errors, a_write_beyond_the_region_is_a_remote_access_error) {
    engine_pair p(GetParam());
    ASSERT_TRUE(p.connected);
    const std::uint32_t rkey = p.mem_b.add_region(4096, access_remote_write);
    expect_failure(p, {write(1, rkey, 0, 4096), write(2, rkey, 4000, 200), write(3, rkey, 0, 8)}, 2,
                   wc_status::rem_access_err);
    expect_responder_failed(p, remote_access_error, rkey, 4096);
}

TEST_P(roce_errors, a_read_of_a_region_without_remote_read_is_a_remote_access_error) {
    engine_pair p(GetParam());
    ASSERT_TRUE(p.connected);
    const std::uint32_t writable = p.mem_b.add_region(8192, access_remote_write);
    const std::uint32_t readable = p.mem_b.add_region(8192, access_remote_read);
    expect_failure(
        p, {read(1, readable, 0, 2048), read(2, writable, 0, 2048), read(3, readable, 0, 64)}, 2,
        wc_status::rem_access_err);
    expect_responder_failed(p, remote_access_error);
}

TEST_P(roce_errors, a_read_on_a_qp_without_remote_read_is_an_invalid_request) {
    // The QP's own access flags refuse the opcode (rxe's rule): invalid request, not access.
    qp_attr at_b = pair_attr();
    at_b.access = access_remote_write;
    engine_pair p(GetParam(), pair_attr(), at_b);
    ASSERT_TRUE(p.connected);
    const std::uint32_t rkey = p.mem_b.add_region(8192, access_remote_write | access_remote_read);
    expect_failure(p, {write(1, rkey, 0, 1500), read(2, rkey, 0, 2048), write(3, rkey, 0, 8)}, 2,
                   wc_status::rem_inv_req_err);
    expect_responder_failed(p, invalid_request);
}

TEST_P(roce_errors, a_send_waits_out_rnr_naks_until_a_receive_is_posted) {
    qp_attr at_a = pair_attr();
    at_a.rnr_retry = 3;
    engine_pair p(GetParam(), at_a);
    ASSERT_TRUE(p.connected);
    std::vector<work_completion> done;
    ASSERT_EQ(p.A.post_send(p.a, send(1, 3000)), post_error::none);
    // No receive posted: the SEND is answered with an RNR NAK, and A waits and tries again.
    for (int i = 0; i < 1000 && p.qa().counters.rnr_naks_received < 2; ++i) {
        p.step();
        p.poll(done);
    }
    EXPECT_TRUE(done.empty());
    EXPECT_EQ(p.qa().counters.rnr_naks_received, 2u);
    EXPECT_EQ(p.qb().counters.rnr_naks_sent, 2u);
    EXPECT_EQ(p.qb().counters.dropped(roce_drop::no_receive), 2u);
    EXPECT_EQ(p.qa().attr.state, qp_state::rts);
    EXPECT_EQ(p.qb().attr.state, qp_state::rts);
    // One retry is left: a receive posted now takes the SEND.
    std::vector<std::uint8_t> rb(4096);
    p.mem_b.receives.push_back({rb.data(), 4096, 0, 77});
    ASSERT_TRUE(p.run_until_done(done, 1));
    EXPECT_EQ(done[0].wr_id, 1u);
    EXPECT_EQ(done[0].status, wc_status::success);
    ASSERT_EQ(p.mem_b.arrivals.size(), 1u);
    EXPECT_EQ(p.mem_b.arrivals[0].cookie, 77u);
    EXPECT_EQ(p.mem_b.arrivals[0].length, 3000u);
    EXPECT_EQ(p.mem_b.arrivals[0].status, wc_status::success);
    EXPECT_EQ(std::memcmp(rb.data(), buf_.data(), 3000), 0);
    EXPECT_GE(p.qa().counters.resent(resend_cause::rnr), 2u);
    EXPECT_EQ(p.qa().attr.state, qp_state::rts);
    EXPECT_TRUE(p.mem_a.events.empty());
    // The QP carries on: the next SEND takes the next receive at once.
    p.mem_b.receives.push_back({rb.data(), 4096, 0, 78});
    ASSERT_EQ(p.A.post_send(p.a, send(2, 10)), post_error::none);
    ASSERT_TRUE(p.run_until_done(done, 2));
    EXPECT_EQ(done[1].status, wc_status::success);
    EXPECT_EQ(p.qa().counters.rnr_naks_received, 2u);
}

TEST_P(roce_errors, rnr_naks_beyond_rnr_retry_fail_the_send) {
    qp_attr at_a = pair_attr();
    at_a.rnr_retry = 2;
    engine_pair p(GetParam(), at_a);
    ASSERT_TRUE(p.connected);
    const std::uint32_t rkey = p.mem_b.add_region(8192, access_remote_write);
    expect_failure(p, {write(1, rkey, 0, 2000), send(2, 3000), write(3, rkey, 0, 10), send(4, 1)},
                   2, wc_status::rnr_retry_exc_err);
    // The first try and rnr_retry more, each answered with an RNR NAK. The responder is fine:
    // a missing receive is no error on its side.
    EXPECT_EQ(p.qa().counters.rnr_naks_received, 3u);
    EXPECT_EQ(p.qb().counters.rnr_naks_sent, 3u);
    EXPECT_EQ(p.qb().attr.state, qp_state::rts);
    EXPECT_TRUE(p.mem_b.events.empty());
    EXPECT_TRUE(p.mem_b.arrivals.empty());
}

TEST_P(roce_errors, a_peer_that_is_gone_ends_in_retry_exc_err) {
    qp_attr at_a = pair_attr();
    at_a.retry_cnt = 3;
    engine_pair p(GetParam(), at_a);
    ASSERT_TRUE(p.connected);
    const std::uint32_t rkey = p.mem_b.add_region(8192, access_remote_write | access_remote_read);
    // One WRITE gets through; then the peer's QP is destroyed without a word (a crashed host):
    // its frames are dropped as for no QP, and A hears nothing.
    std::vector<work_completion> done;
    ASSERT_EQ(p.A.post_send(p.a, write(1, rkey, 0, 100)), post_error::none);
    ASSERT_TRUE(p.run_until_done(done, 1));
    ASSERT_EQ(done[0].status, wc_status::success);
    ASSERT_TRUE(p.B.destroy_qp(p.b));
    const std::uint64_t start = p.now;
    expect_failure(p, {write(2, rkey, 0, 5000), read(3, rkey, 0, 100), send(4, 10)}, 2,
                   wc_status::retry_exc_err);
    // The first timeout and retry_cnt more, each a local ACK timeout apart.
    EXPECT_EQ(p.qa().counters.timeouts, 4u);
    EXPECT_GE(p.now - start, 4 * ack_timeout_ns(at_a.timeout));
    EXPECT_GT(p.B.counters().dropped(roce_drop::wrong_qpn), 0u);
}

INSTANTIATE_TEST_SUITE_P(modes, roce_errors,
                         ::testing::Values(retransmit_mode::go_back_n,
                                           retransmit_mode::out_of_order),
                         [](const auto& info) {
                             return std::string(info.param == retransmit_mode::go_back_n ? "gbn"
                                                                                         : "ooo");
                         });

}  // namespace
