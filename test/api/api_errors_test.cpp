// api_errors: every error names its cause, leaves the target memory untouched, and the endpoint
// keeps working afterwards.
#include <sys/mman.h>

#include <algorithm>
#include <optional>

#include "api_helpers.hpp"

namespace uet::test {
namespace {

constexpr std::uint32_t job = 7;

class errors : public ::testing::Test {
  protected:
    void SetUp() override {
        fill(region, 1);
        snapshot = region;
        mr = w.dom.register_memory(region, access::remote_read | access::remote_write, job).value();
    }

    // A write and a read that must succeed: the endpoint still works.
    void still_works() {
        auto data = pattern(5000, 99);
        ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 100, mr.key(), nullptr));
        wait_ok(w.cqs[0]);
        std::vector<std::byte> back(5000);
        ASSERT_FALSE(w.eps[0].read(w.peers[1], back, 100, mr.key(), nullptr));
        wait_ok(w.cqs[0]);
        EXPECT_EQ(back, data);
        std::copy(data.begin(), data.end(), snapshot.begin() + 100);
        EXPECT_EQ(region, snapshot);
    }

    world w{lossy_fabric(3), 2, endpoint_attr{.job_id = job}};
    std::vector<std::byte> region = std::vector<std::byte>(64 * 1024);
    std::vector<std::byte> snapshot;
    memory_region mr;
};

TEST_F(errors, bad_memory_key) {
    auto data = pattern(64, 2);
    int ctx = 0;
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, mr.key() ^ (1ull << 40), &ctx));
    auto c = wait_error(w.cqs[0]);
    EXPECT_EQ(c.error, errc::bad_memory_key);
    EXPECT_EQ(c.context, &ctx);
    EXPECT_NE(c.detail.find("BAD_MKEY"), std::string_view::npos) << c.detail;
    EXPECT_EQ(region, snapshot);
    std::vector<std::byte> back(64);
    ASSERT_FALSE(w.eps[0].read(w.peers[1], back, 0, 12345, nullptr));
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::bad_memory_key);
    EXPECT_EQ(w.eps[1].counters().rejected_key, 2u);
    still_works();
}

TEST_F(errors, deregistered_key_is_refused) {
    const std::uint64_t key = mr.key();
    mr.close();
    auto data = pattern(64, 2);
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, key, nullptr));
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::bad_memory_key);
    EXPECT_EQ(region, snapshot);
    mr = w.dom.register_memory(region, access::remote_read | access::remote_write, job).value();
    still_works();
}

TEST_F(errors, rma_out_of_bounds) {
    auto data = pattern(8, 2);
    ASSERT_FALSE(
        w.eps[0].write(w.peers[1], as_bytes_of(data), region.size() - 4, mr.key(), nullptr));
    auto c = wait_error(w.cqs[0]);
    EXPECT_EQ(c.error, errc::out_of_bounds);
    EXPECT_NE(c.detail.find("BAD_ADDR"), std::string_view::npos) << c.detail;
    std::vector<std::byte> back(16);
    ASSERT_FALSE(w.eps[0].read(w.peers[1], back, ~0ull - 4, mr.key(), nullptr));
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::out_of_bounds);
    EXPECT_EQ(region, snapshot);
    still_works();
}

// A multi-packet write that does not fit, or names a bad key, writes nothing at all: every
// packet is checked against the whole message's range before it is placed.
TEST_F(errors, multi_packet_write_out_of_bounds_or_bad_key_writes_nothing) {
    auto data = pattern(40'000, 2);
    ASSERT_FALSE(
        w.eps[0].write(w.peers[1], as_bytes_of(data), region.size() - 20'000, mr.key(), nullptr));
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::out_of_bounds);
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, mr.key() ^ 1ull << 40, nullptr));
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::bad_memory_key);
    EXPECT_EQ(region, snapshot);
    const endpoint_counters c = w.eps[1].counters();
    EXPECT_EQ(c.rejected_key, 2u);
    // 40000 bytes in 8192-byte packets; consecutive ones received in one burst count once.
    EXPECT_GE(c.write_packets_refused, 2u);
    EXPECT_LE(c.write_packets_refused, 2u * 5);
    EXPECT_EQ(c.writes_placed_directly, 0u);
    still_works();
}

// A region deregistered while a write to it arrives: packets placed before stay, none after is
// written (placement checks the live table per packet), and the write fails BAD_MKEY as a write
// to a deregistered key always did. The memory around the region is never touched.
TEST_F(errors, region_deregistered_mid_write_is_not_written_after) {
    constexpr std::size_t guard = 4096, size = 16u << 20;
    std::vector<std::byte> memory(guard + size + guard);
    fill(memory, 4);
    std::span<std::byte> target(memory.data() + guard, size);
    auto big = w.dom.register_memory(target, access::remote_write, job).value();
    const auto before = memory;
    auto data = pattern(size, 5);  // four messages of 4 MiB, a window of 4 MiB at most
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, big.key(), nullptr));
    // Progress until the first bytes are in place (placement is as packets arrive).
    for (int i = 0; i < 1'000'000 && memory == before; ++i)
        w.dom.progress();
    ASSERT_NE(memory, before);
    big.close();
    const auto at_close = memory;
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::bad_memory_key);
    EXPECT_EQ(memory, at_close);
    EXPECT_GT(w.eps[1].counters().write_packets_refused, 0u);
    EXPECT_EQ(w.eps[1].counters().writes_placed_directly, 0u);
    EXPECT_EQ(region, snapshot);
    still_works();
}

TEST_F(errors, access_flag_missing) {
    std::vector<std::byte> ro(256);
    fill(ro, 5);
    const auto ro_before = ro;
    auto read_only = w.dom.register_memory(ro, access::remote_read, job).value();
    auto data = pattern(16, 2);
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, read_only.key(), nullptr));
    auto c = wait_error(w.cqs[0]);
    EXPECT_EQ(c.error, errc::access_denied);
    EXPECT_NE(c.detail.find("PERM_VIOLATION"), std::string_view::npos) << c.detail;
    const std::uint64_t one = 1;
    ASSERT_FALSE(w.eps[0].atomic(w.peers[1], atomic_op::sum, atomic_type::uint64,
                                 std::as_bytes(std::span(&one, 1)), 0, read_only.key(), nullptr));
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::access_denied);
    // The general region grants read and write but not atomics.
    ASSERT_FALSE(w.eps[0].atomic(w.peers[1], atomic_op::sum, atomic_type::uint64,
                                 std::as_bytes(std::span(&one, 1)), 0, mr.key(), nullptr));
    EXPECT_EQ(wait_error(w.cqs[0]).error, errc::access_denied);
    EXPECT_EQ(ro, ro_before);
    EXPECT_EQ(region, snapshot);
    still_works();
}

TEST_F(errors, receive_buffer_too_small) {
    auto data = pattern(100, 2);
    std::vector<std::byte> small(10, std::byte{0x5a});
    int rctx = 0, sctx = 0;
    ASSERT_FALSE(w.eps[1].recv(small, &rctx));
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), &sctx));
    auto r = wait_error(w.cqs[1]);
    EXPECT_EQ(r.error, errc::truncated);
    EXPECT_EQ(r.context, &rctx);
    EXPECT_EQ(r.olen, 90u);
    EXPECT_EQ(small, std::vector<std::byte>(10, std::byte{0x5a}));
    auto s = wait_error(w.cqs[0]);
    EXPECT_EQ(s.error, errc::message_too_long);
    EXPECT_NE(s.detail.find("TOO_LONG"), std::string_view::npos) << s.detail;
    // Both sides carry on.
    std::vector<std::byte> big(100);
    ASSERT_FALSE(w.eps[1].recv(big, nullptr));
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
    wait_ok(w.cqs[1]);
    wait_ok(w.cqs[0]);
    EXPECT_EQ(big, data);
    still_works();
}

TEST_F(errors, unknown_peer) {
    auto data = pattern(16, 2);
    EXPECT_EQ(w.eps[0].send(static_cast<peer_addr>(999), as_bytes_of(data), nullptr),
              errc::unknown_peer);
    EXPECT_EQ(w.eps[0].write(static_cast<peer_addr>(5), as_bytes_of(data), 0, mr.key(), nullptr),
              errc::unknown_peer);
    EXPECT_EQ(std::error_code(errc::unknown_peer).message(), "peer is not in the address vector");
    EXPECT_EQ(w.cqs[0].size(), 0u);
    still_works();
}

// An endpoint of job 8 is refused by an endpoint of job 7; and a key registered for job 7 is not
// valid for an endpoint of job 8, even in the same domain.
TEST_F(errors, other_job_id) {
    const std::size_t other = w.add(endpoint_attr{.job_id = 8});
    auto data = pattern(64, 2);
    ASSERT_FALSE(w.eps[other].write(w.peers[1], as_bytes_of(data), 0, mr.key(), nullptr));
    auto c = wait_error(w.cqs[other]);
    EXPECT_EQ(c.error, errc::job_mismatch);
    EXPECT_NE(c.detail.find("BAD_JOB_ID"), std::string_view::npos) << c.detail;
    std::vector<std::byte> got(64);
    ASSERT_FALSE(w.eps[1].recv(got, nullptr));
    ASSERT_FALSE(w.eps[other].send(w.peers[1], as_bytes_of(data), nullptr));
    EXPECT_EQ(wait_error(w.cqs[other]).error, errc::job_mismatch);
    EXPECT_EQ(w.eps[1].counters().rejected_job, 2u);
    EXPECT_EQ(region, snapshot);

    const std::size_t other_target = w.add(endpoint_attr{.job_id = 8});
    ASSERT_FALSE(
        w.eps[other].write(w.peers[other_target], as_bytes_of(data), 0, mr.key(), nullptr));
    EXPECT_EQ(wait_error(w.cqs[other]).error, errc::bad_memory_key);
    EXPECT_EQ(region, snapshot);

    // The receive posted above is still there for a message of the right job.
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
    wait_ok(w.cqs[1]);
    wait_ok(w.cqs[0]);
    EXPECT_EQ(got, data);
    still_works();
}

// op_flags::no_completion: an operation that succeeds leaves no entry (the endpoint counts it);
// one that fails still ends in its error entry, with its context.
TEST_F(errors, silent_operations_report_only_their_failures) {
    auto data = pattern(3000, 5);
    constexpr std::uint64_t writes = 20;
    for (std::uint64_t i = 0; i < writes; ++i)
        ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 3000 * i, mr.key(), nullptr,
                                    op_flags::no_completion));
    while (w.eps[0].silent_completions() < writes && w.fab.progress()) {
    }
    EXPECT_EQ(w.eps[0].silent_completions(), writes);
    EXPECT_EQ(w.cqs[0].size(), 0u);
    for (std::uint64_t i = 0; i < writes; ++i)
        EXPECT_TRUE(std::equal(data.begin(), data.end(), region.begin() + 3000 * i)) << i;
    snapshot = region;

    int ctx = 0;
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, mr.key() ^ (1ull << 40), &ctx,
                                op_flags::no_completion));
    auto c = wait_error(w.cqs[0]);
    EXPECT_EQ(c.error, errc::bad_memory_key);
    EXPECT_EQ(c.context, &ctx);
    EXPECT_EQ(w.eps[0].silent_completions(), writes);
    EXPECT_EQ(region, snapshot);

    // A silent send: the receiver's entry as always, none for the sender.
    std::vector<std::byte> got(64);
    int rctx = 0;
    ASSERT_FALSE(w.eps[1].recv(got, &rctx));
    auto small = pattern(64, 6);
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(small), nullptr, op_flags::no_completion));
    EXPECT_EQ(wait_ok(w.cqs[1]).context, &rctx);
    EXPECT_EQ(got, small);
    while (w.eps[0].silent_completions() < writes + 1 && w.fab.progress()) {
    }
    EXPECT_EQ(w.eps[0].silent_completions(), writes + 1);
    EXPECT_EQ(w.cqs[0].size(), 0u);
    still_works();
}

// An inject has no entry when it succeeds, but one that fails is not lost: an error entry
// (context nullptr) names the cause.
TEST_F(errors, failed_inject_gives_an_error_entry) {
    const std::size_t other = w.add(endpoint_attr{.job_id = 8});
    auto data = pattern(64, 2);
    ASSERT_FALSE(w.eps[other].inject(w.peers[1], as_bytes_of(data)));
    auto c = wait_error(w.cqs[other]);
    EXPECT_EQ(c.error, errc::job_mismatch);
    EXPECT_EQ(c.context, nullptr);
    EXPECT_TRUE(has(c.flags, completion_flags::send));
    // A successful one leaves nothing.
    std::vector<std::byte> got(64);
    ASSERT_FALSE(w.eps[1].recv(got, nullptr));
    ASSERT_FALSE(w.eps[0].inject(w.peers[1], as_bytes_of(data)));
    wait_ok(w.cqs[1]);
    EXPECT_EQ(got, data);
    for (int i = 0; i < 1000 && w.fab.progress(); ++i) {
    }
    EXPECT_EQ(w.cqs[0].size(), 0u);
    EXPECT_FALSE(w.cqs[0].has_error());
}

TEST_F(errors, closed_endpoint) {
    const std::size_t third = w.add(endpoint_attr{.job_id = job});
    std::vector<std::byte> buf(64);
    int rctx = 0;
    ASSERT_FALSE(w.eps[third].recv(buf, &rctx));
    w.eps[third].close();
    EXPECT_FALSE(w.eps[third].is_open());
    auto c = wait_error(w.cqs[third]);  // the posted receive is not lost
    EXPECT_EQ(c.error, errc::canceled);
    EXPECT_EQ(c.context, &rctx);
    auto data = pattern(64, 2);
    EXPECT_EQ(w.eps[third].send(w.peers[0], as_bytes_of(data), nullptr), errc::endpoint_closed);
    EXPECT_EQ(w.eps[third].recv(buf, nullptr), errc::endpoint_closed);
    // A peer sending to it finds out by its retry limit.
    ASSERT_FALSE(w.eps[0].send(w.peers[third], as_bytes_of(data), nullptr));
    auto s = wait_error(w.cqs[0]);
    EXPECT_TRUE(s.error == errc::peer_unreachable || s.error == errc::retry_limit)
        << s.error.message();
    still_works();
}

TEST_F(errors, completion_queue_full) {
    world small(lossy_fabric(4), 2, endpoint_attr{.job_id = job}, 4);
    auto data = pattern(16, 2);
    for (int i = 0; i < 4; ++i)
        ASSERT_FALSE(small.eps[0].send(small.peers[1], as_bytes_of(data), nullptr));
    const std::error_code ec = small.eps[0].send(small.peers[1], as_bytes_of(data), nullptr);
    EXPECT_EQ(ec, errc::cq_full);
    EXPECT_NE(ec.message().find("completion queue full"), std::string::npos);
    for (int i = 0; i < 4; ++i)
        wait_ok(small.cqs[0]);
    ASSERT_FALSE(small.eps[0].send(small.peers[1], as_bytes_of(data), nullptr));
    wait_ok(small.cqs[0]);
    EXPECT_EQ(small.eps[1].counters().unexpected, 5u);
}

// Bounded matching queues say so: posted receives beyond rx_depth, and deferred sends beyond
// max_deferred (the sender hears no_match; nothing waits forever).
TEST_F(errors, matching_queues_full) {
    world small(
        lossy_fabric(6), 2,
        endpoint_attr{.job_id = job, .rx_depth = 2, .max_unexpected = 0, .max_deferred = 1});
    std::vector<std::byte> a(16), b(16), c(16);
    ASSERT_FALSE(small.eps[1].trecv(a, 1, 0, nullptr));
    ASSERT_FALSE(small.eps[1].trecv(b, 2, 0, nullptr));
    EXPECT_EQ(small.eps[1].trecv(c, 3, 0, nullptr), errc::again);
    auto data = pattern(16, 2);
    int first = 0, second = 0;
    ASSERT_FALSE(small.eps[0].tsend(small.peers[1], as_bytes_of(data), 7, &first));
    for (int i = 0; i < 1'000'000 && small.eps[1].counters().deferred == 0; ++i)
        ASSERT_TRUE(small.fab.progress());
    ASSERT_FALSE(small.eps[0].tsend(small.peers[1], as_bytes_of(data), 8, &second));
    auto e = wait_error(small.cqs[0]);
    EXPECT_EQ(e.error, errc::no_match);
    EXPECT_EQ(e.context, &second);
    EXPECT_NE(e.detail.find("DROPPED"), std::string_view::npos) << e.detail;
    // The deferred one is still there: a receive for it brings it.
    std::vector<std::byte> d(16);
    int rctx = 0;
    ASSERT_FALSE(small.eps[1].trecv(d, 7, 0, &rctx));
    EXPECT_EQ(wait_ok(small.cqs[1]).context, &rctx);
    EXPECT_EQ(wait_ok(small.cqs[0]).context, &first);
    EXPECT_EQ(d, data);
    // And the posted ones still match.
    ASSERT_FALSE(small.eps[0].tsend(small.peers[1], as_bytes_of(data), 1, nullptr));
    wait_ok(small.cqs[1]);
    wait_ok(small.cqs[0]);
    EXPECT_EQ(a, data);
}

TEST_F(errors, bad_arguments) {
    auto data = pattern(16, 2);
    std::vector<std::byte> result(16);
    // Bitwise operations on floating point, a read that does not fetch, a ragged operand.
    EXPECT_EQ(w.eps[0].atomic(w.peers[1], atomic_op::bor, atomic_type::float64, as_bytes_of(data),
                              0, mr.key(), nullptr),
              errc::unsupported);
    EXPECT_EQ(w.eps[0].atomic(w.peers[1], atomic_op::read, atomic_type::uint64, as_bytes_of(data),
                              0, mr.key(), nullptr),
              errc::invalid_argument);
    EXPECT_EQ(w.eps[0].atomic(w.peers[1], atomic_op::sum, atomic_type::uint64,
                              std::span(data).first(5), 0, mr.key(), nullptr),
              errc::invalid_argument);
    std::vector<std::byte> big(w.eps[0].attr().inject_size + 1);
    EXPECT_EQ(w.eps[0].inject(w.peers[1], big), errc::message_too_long);
    EXPECT_EQ(w.cqs[0].size(), 0u);
    still_works();
}

// A rendezvous send from eps[0] to eps[1], whose receive is posted, and the application taking
// the send's buffer back once it has the completion.
class errors_rendezvous : public ::testing::Test {
  protected:
    // paced: the endpoints' congestion control knows the link's rate (a window of its size).
    void start(double rate_gbps, std::size_t size, bool paced = false) {
        fabric_attr fa;
        fa.mtu = 8192;
        fa.impairments.rate_gbps = rate_gbps;
        src.emplace(size);
        ASSERT_NE(src->at, MAP_FAILED);
        fill(src->bytes(), size);
        got.resize(size);
        endpoint_attr ea{.job_id = job};
        if (paced) ea.link_gbps = rate_gbps;
        w.emplace(fa, 2, ea);
        ASSERT_FALSE(w->eps[1].recv(got, nullptr));
        ASSERT_FALSE(w->eps[0].send(w->peers[1], src->bytes(), nullptr));
    }
    // From here on, any access to the buffer faults; nothing may be left to do.
    void take_back_and_settle() {
        ASSERT_EQ(mprotect(src->at, src->size, PROT_NONE), 0);
        for (int i = 0; i < 1'000'000 && w->fab.progress(); ++i) {
        }
        EXPECT_FALSE(w->fab.progress());
    }

    std::optional<mapping> src;
    std::vector<std::byte> got;
    std::optional<world> w;  // goes first
};

// Answers queued behind others are late, not lost. A pull keeps 8 reads in flight, and at
// 40 Mb/s one read's answer (4 MiB) takes ~0.84 s, so the last ones come ~6 s after their
// requests, beyond the 5 s an answer is awaited (answer_timeout) while its peer answers nothing.
// The target answers them one after another: none may fail.
TEST_F(errors_rendezvous, pull_behind_its_own_slow_answers_completes) {
    ASSERT_NO_FATAL_FAILURE(start(0.04, 32u << 20, true));
    wait_ok(w->cqs[1]);
    wait_ok(w->cqs[0]);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), src->bytes().begin()));
    EXPECT_EQ(w->eps[1].counters().rendezvous, 1u);
}

// A rendezvous send whose target gives up on its pull (a read's answer is overdue, the
// responses crawling over a slow link) is answered with an error while the initiator's engine
// is still sending read responses cut from the send's buffer. The send must complete only once
// none is left: the application may unmap the buffer as soon as it has the completion (the API
// peer of run_tap.sh died of exactly this, SIGSEGV in its next group).
TEST_F(errors_rendezvous, failed_pull_completes_after_the_read_responses) {
    // One read's answer (4 MiB) takes ~6.7 s, beyond the 5 s an answer is awaited
    // (answer_timeout) while its peer answers nothing: the pull fails on its first read.
    ASSERT_NO_FATAL_FAILURE(start(0.005, 16u << 20));
    EXPECT_EQ(wait_error(w->cqs[1]).error, errc::retry_limit);
    const completion s = wait_error(w->cqs[0]);
    // The target's answer, or (the slow link's RTT is beyond rto_max) the initiator's engine
    // giving up on a response first.
    EXPECT_TRUE(s.error == errc::remote_error || s.error == errc::retry_limit) << s.error.message();
    EXPECT_EQ(w->eps[1].counters().rendezvous, 1u);
    take_back_and_settle();
}

// The target of a rendezvous send closes in the middle of its pull: the responses to its reads
// go unacknowledged until the initiator's engine gives up on them, and then the send, whose
// answer will never come, fails rather than waiting forever (and only then: its buffer is in
// those responses).
TEST_F(errors_rendezvous, target_gone_mid_pull_fails_the_send) {
    ASSERT_NO_FATAL_FAILURE(start(1, 16u << 20));
    for (int i = 0; i < 1'000'000 && w->eps[1].counters().rendezvous == 0; ++i)
        ASSERT_TRUE(w->fab.progress());
    ASSERT_EQ(w->eps[1].counters().rendezvous, 1u);
    w->eps[1].close();
    completion c;
    const std::error_code ec = w->cqs[0].wait(c);
    ASSERT_NE(ec, errc::again) << "the send never completed";
    EXPECT_EQ(ec, errc::retry_limit) << ec.message();
    take_back_and_settle();
}

// A peer reads a region whose deregistration comes while the responses crawl over a slow link:
// they are cut from the region's memory, as sent and as resent. close() must return only once
// the engine is done with them, since the application may unmap the memory right after (without
// the hold, the next response faults).
TEST(errors_region, deregistering_waits_for_the_read_responses) {
    fabric_attr fa;
    fa.mtu = 8192;
    fa.impairments.rate_gbps = 0.5;
    fa.impairments.loss = 0.05;  // so that responses are resent, read again from the region
    world w(fa, 2, endpoint_attr{.job_id = job});
    read_of_a_closed_region r;
    int ctx = 0;
    r.run(w, job, &ctx);
    if (HasFatalFailure()) return;
    r.expect_whole_then_refused(w, &ctx, errc::bad_memory_key);  // no such region now
}

}  // namespace
}  // namespace uet::test
