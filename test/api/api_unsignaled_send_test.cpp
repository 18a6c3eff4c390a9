// api_unsignaled_send: sends asked no completion of (op_flags::no_completion) go without an
// operation entry of the endpoint (unsignaled engine requests) where they can; the rare end that
// needs one (a failure, an answer that comes as a message, a NO_MATCH and the RTR after it, a
// close) adopts one then. Each such send still ends exactly once: counted by silent_completions()
// when it succeeds, with its error entry and its own context when it fails.
#include <algorithm>

#include "api_helpers.hpp"

namespace uet::test {
namespace {

constexpr std::uint32_t job = 7;

// Over loss and reordering, 5,000 silent sends with 512 in flight, every 97th too long for the
// receives (the target's TOO_LONG comes as a response message): the others are only counted,
// each failure gives one error entry with its own context. With answers as messages every end
// needs the operation, adopted whether the answer or the PDS completion comes first.
TEST(unsignaled_send, a_stream_of_silent_sends_ends_each_once) {
    for (const bool in_acks : {true, false}) {
        SCOPED_TRACE(in_acks ? "answers in ACKs" : "answers as messages");
        world w(lossy_fabric(31), 1, endpoint_attr{.job_id = job});
        const std::size_t target = w.add(endpoint_attr{.job_id = job, .answers_in_acks = in_acks});
        constexpr int n = 5000, window = 512;
        const auto small = pattern(8, 1), big = pattern(16, 2);
        std::vector<std::vector<std::byte>> got(window, std::vector<std::byte>(8));
        std::vector<int> failed(n, 0), contexts(n);
        int posted = 0, failures = 0, recvs_done = 0, truncated = 0;
        const auto sends_done = [&] {
            return static_cast<int>(w.eps[0].silent_completions()) + failures;
        };
        for (int steps = 0; sends_done() < n || recvs_done < n; ++steps) {
            ASSERT_LT(steps, 5'000'000)
                << sends_done() << " sends and " << recvs_done << " receives done";
            while (posted < n && posted - recvs_done < window && posted - sends_done() < window) {
                const int i = posted++;
                ASSERT_FALSE(
                    w.eps[target].recv(got[static_cast<std::size_t>(i % window)], nullptr));
                ASSERT_FALSE(w.eps[0].send(w.peers[target], as_bytes_of(i % 97 == 0 ? big : small),
                                           &contexts[static_cast<std::size_t>(i)],
                                           op_flags::no_completion));
            }
            const std::size_t sent = drain(w.cqs[0], [&](const completion& c) {
                const auto i = static_cast<int*>(c.context) - contexts.data();
                ASSERT_TRUE(i >= 0 && i < n);
                EXPECT_EQ(i % 97, 0) << "send " << i << ": " << c.error.message();
                EXPECT_EQ(c.error, errc::message_too_long) << "send " << i;
                EXPECT_TRUE(has(c.flags, completion_flags::send));
                EXPECT_EQ(c.len, big.size());
                ++failed[static_cast<std::size_t>(i)];
                ++failures;
            });
            const std::size_t received = drain_receives(w.cqs[target], recvs_done, truncated);
            if (sent + received == 0) w.fab.progress();
        }
        EXPECT_EQ(truncated, (n + 96) / 97);
        for (int i = 0; i < n; i += 97)
            ASSERT_EQ(failed[static_cast<std::size_t>(i)], 1) << "send " << i;
        EXPECT_EQ(failures, (n + 96) / 97);
        EXPECT_EQ(w.eps[0].silent_completions(), static_cast<std::uint64_t>(n - failures));
        const endpoint_counters c = w.eps[0].counters();
        EXPECT_EQ(c.unsignaled_sends, static_cast<std::uint64_t>(n));
        if (in_acks)
            EXPECT_GE(c.unsignaled_sends_adopted, static_cast<std::uint64_t>(failures));
        else
            EXPECT_EQ(c.unsignaled_sends_adopted, c.unsignaled_sends);
    }
}

// Past the target's unexpected queue its eager sends are deferred (NO_MATCH); the target's RTR
// names each by the restart token it went with, and the resend goes to the receive posted for
// it. The sender sees no entry at all.
TEST(unsignaled_send, deferred_unsignaled_sends_go_again_after_the_rtr) {
    world w(lossy_fabric(12), 2, endpoint_attr{.job_id = job, .max_unexpected = 2});
    constexpr int n = 6;
    std::vector<std::vector<std::byte>> sent;
    for (int i = 0; i < n; ++i) {
        sent.push_back(pattern(2000, 400 + i));
        ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(sent.back()), i, nullptr,
                                    op_flags::no_completion));
    }
    for (int i = 0;
         i < 1'000'000 && w.eps[1].counters().unexpected + w.eps[1].counters().deferred < n; ++i)
        ASSERT_TRUE(w.fab.progress());
    EXPECT_EQ(w.eps[1].counters().unexpected, 2u);
    EXPECT_EQ(w.eps[1].counters().deferred, 4u);
    std::vector<std::vector<std::byte>> got(n, std::vector<std::byte>(2000));
    for (int i = n; i-- > 0;)  // the last first: each resend must find its own receive
        ASSERT_FALSE(w.eps[1].trecv(got[static_cast<std::size_t>(i)], i, 0, nullptr));
    for (int i = 0; i < n; ++i) {
        const completion c = wait_ok(w.cqs[1]);
        EXPECT_EQ(c.len, 2000u);
    }
    for (int i = 0; i < 1'000'000 && w.eps[0].silent_completions() < n; ++i)
        ASSERT_TRUE(w.fab.progress());
    EXPECT_EQ(w.eps[0].silent_completions(), static_cast<std::uint64_t>(n));
    EXPECT_EQ(w.cqs[0].size(), 0u);
    EXPECT_FALSE(w.cqs[0].has_error());
    for (int i = 0; i < n; ++i)
        EXPECT_EQ(got[static_cast<std::size_t>(i)], sent[static_cast<std::size_t>(i)]) << i;
    const endpoint_counters c = w.eps[0].counters();
    EXPECT_EQ(c.unsignaled_sends, static_cast<std::uint64_t>(n));
    EXPECT_GE(c.unsignaled_sends_adopted, 4u);
    EXPECT_EQ(w.eps[1].counters().resent_after_rtr + c.resent_after_rtr, 4u);
}

// A unsignaled send the target refuses (another job) fails with its own context and flags; a tagged
// one says it was tagged.
TEST(unsignaled_send, a_refused_unsignaled_send_gives_its_error_entry) {
    world w(lossy_fabric(5), 1, endpoint_attr{.job_id = 8});
    const std::size_t target = w.add(endpoint_attr{.job_id = job});
    const auto data = pattern(64, 3);
    int ctx = 0, tctx = 0;
    ASSERT_FALSE(w.eps[0].send(w.peers[target], as_bytes_of(data), &ctx, op_flags::no_completion));
    ASSERT_FALSE(
        w.eps[0].tsend(w.peers[target], as_bytes_of(data), 42, &tctx, op_flags::no_completion));
    completion first = wait_error(w.cqs[0]), second = wait_error(w.cqs[0]);
    if (first.context != &ctx) std::swap(first, second);
    EXPECT_EQ(first.context, &ctx);
    EXPECT_EQ(first.error, errc::job_mismatch);
    EXPECT_TRUE(has(first.flags, completion_flags::send));
    EXPECT_FALSE(has(first.flags, completion_flags::tagged));
    EXPECT_EQ(second.context, &tctx);
    EXPECT_EQ(second.error, errc::job_mismatch);
    EXPECT_TRUE(has(second.flags, completion_flags::tagged));
    EXPECT_EQ(w.eps[0].silent_completions(), 0u);
    EXPECT_EQ(w.eps[0].counters().unsignaled_sends, 2u);
    EXPECT_EQ(w.eps[0].counters().unsignaled_sends_adopted, 2u);
}

// Closed with unsignaled sends in flight, the endpoint cancels each with an entry of its own.
TEST(unsignaled_send, close_cancels_unsignaled_sends_in_flight) {
    world w(lossy_fabric(6), 2, endpoint_attr{.job_id = job});
    const auto data = pattern(64, 3);
    constexpr int n = 10;
    int contexts[n] = {};
    for (int i = 0; i < n; ++i)
        ASSERT_FALSE(
            w.eps[0].send(w.peers[1], as_bytes_of(data), &contexts[i], op_flags::no_completion));
    EXPECT_EQ(w.eps[0].counters().unsignaled_sends, static_cast<std::uint64_t>(n));
    w.eps[0].close();
    std::vector<int> seen(n, 0);
    for (int i = 0; i < n; ++i) {
        const completion c = wait_error(w.cqs[0]);
        EXPECT_EQ(c.error, errc::canceled);
        const auto k = static_cast<int*>(c.context) - contexts;
        ASSERT_TRUE(k >= 0 && k < n);
        ++seen[static_cast<std::size_t>(k)];
    }
    for (int i = 0; i < n; ++i)
        EXPECT_EQ(seen[static_cast<std::size_t>(i)], 1) << i;
    EXPECT_FALSE(w.cqs[0].has_error());
}

// Only RUD and ROD sends below the deferrable threshold go unsignaled; the others take their
// operation as before and still end without an entry.
TEST(unsignaled_send, other_sends_take_an_operation) {
    for (delivery mode : {delivery::rudi, delivery::uud}) {
        world w(lossy_fabric(7), 2, endpoint_attr{.job_id = job, .mode = mode});
        std::vector<std::byte> got(64);
        ASSERT_FALSE(w.eps[1].recv(got, nullptr));
        const auto data = pattern(64, 4);
        ASSERT_FALSE(
            w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr, op_flags::no_completion));
        if (mode != delivery::uud) {  // a datagram may be lost
            wait_ok(w.cqs[1]);
            EXPECT_EQ(got, data);
            for (int i = 0; i < 1'000'000 && w.eps[0].silent_completions() < 1; ++i)
                ASSERT_TRUE(w.fab.progress());
            EXPECT_EQ(w.eps[0].silent_completions(), 1u);
        }
        EXPECT_EQ(w.eps[0].counters().unsignaled_sends, 0u) << int(mode);
    }
    world w(lossy_fabric(8), 2, endpoint_attr{.job_id = job, .deferrable_threshold = 1000});
    std::vector<std::byte> got(2000);
    ASSERT_FALSE(w.eps[1].recv(got, nullptr));
    const auto data = pattern(2000, 5);
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr, op_flags::no_completion));
    wait_ok(w.cqs[1]);
    EXPECT_EQ(got, data);
    EXPECT_EQ(w.eps[0].counters().unsignaled_sends, 0u);
}

}  // namespace
}  // namespace uet::test
