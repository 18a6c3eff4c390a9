// api_post_list: endpoint::send_list and tsend_list post a list of sends to one peer as send()
// and tsend() would post them one by one: in order, each ending exactly once (silent ones
// counted, signaled ones and failures with their entries and contexts), the unsignaled ones handed
// to the engine together; a list stops at the first send that cannot be posted, with its error.
#include <algorithm>

#include "api_helpers.hpp"

namespace uet::test {
namespace {

constexpr std::uint32_t job = 9;

// Tagged sends asked no completion of: data[i] (of the first n) with tag first_tag + i.
std::vector<send_work> tagged_sends(const std::vector<std::vector<std::byte>>& data,
                                    std::uint64_t first_tag, std::size_t n) {
    std::vector<send_work> sends;
    for (std::size_t i = 0; i < n; ++i)
        sends.push_back({as_bytes_of(data[i]), nullptr, op_flags::no_completion, first_tag + i});
    return sends;
}

// Over loss and reordering, ROD (messages match their receives in the order they were sent):
// 3,000 sends in lists of 1 to 70 (the receives in lists of 1 to 45) (longer than the engine's
// chunks of 32), every 10th signaled, every 37th too long for its receive. Each receive gets its
// own message, in order; each signaled send and each failure gives one entry with its own context;
// the others are only counted.
TEST(post_list, a_list_of_mixed_sends_ends_each_once_in_order) {
    for (const delivery mode : {delivery::rod, delivery::rud}) {
        SCOPED_TRACE(mode == delivery::rod ? "rod" : "rud");
        const endpoint_attr attr{.job_id = job, .mode = mode};
        world w(lossy_fabric(41), 2, attr);
        constexpr int n = 3000, window = 400;
        std::vector<std::vector<std::byte>> data(n), got(n, std::vector<std::byte>(24));
        for (int i = 0; i < n; ++i)
            data[static_cast<std::size_t>(i)] = pattern(i % 37 == 0 ? 40 : 8 + i % 17, 100 + i);
        std::vector<int> contexts(n), entries(n, 0);
        int posted = 0, recvs_posted = 0, recvs_done = 0, entries_seen = 0, truncated = 0;
        int signaled_ok = 0, failures = 0, list_length = 1;
        const auto is_signaled = [](int i) { return i % 10 == 0; };
        const auto sends_done = [&] {
            return static_cast<int>(w.eps[0].silent_completions()) + entries_seen;
        };
        std::vector<send_work> list;
        for (int steps = 0; sends_done() < n || recvs_done < n; ++steps) {
            ASSERT_LT(steps, 5'000'000) << sends_done() << " sends, " << recvs_done << " receives";
            // The receives go in lists too, of 1 to 45.
            std::vector<recv_work> recvs;
            while (recvs_posted + static_cast<int>(recvs.size()) < n &&
                   recvs_posted + static_cast<int>(recvs.size()) - recvs_done < window &&
                   recvs.size() < static_cast<std::size_t>(list_length % 45 + 1))
                recvs.push_back(
                    {got[static_cast<std::size_t>(recvs_posted) + recvs.size()], &contexts[0]});
            std::size_t took = 0;
            ASSERT_FALSE(w.eps[1].recv_list(recvs, took));
            ASSERT_EQ(took, recvs.size());
            recvs_posted += static_cast<int>(took);
            const int room = std::min(recvs_posted - posted, window - (posted - sends_done()));
            if (room > 0) {
                list.clear();
                list_length = list_length % 70 + 1;
                for (int i = posted; i < posted + std::min(room, list_length); ++i) {
                    const auto k = static_cast<std::size_t>(i);
                    list.push_back({as_bytes_of(data[k]), &contexts[k],
                                    is_signaled(i) ? op_flags::none : op_flags::no_completion});
                }
                std::size_t done = 0;
                ASSERT_FALSE(w.eps[0].send_list(w.peers[1], list, done));
                ASSERT_EQ(done, list.size());
                posted += static_cast<int>(done);
            }
            const std::size_t sent = drain(w.cqs[0], [&](const completion& c) {
                const auto i = static_cast<int*>(c.context) - contexts.data();
                ASSERT_TRUE(i >= 0 && i < n);
                ++entries[static_cast<std::size_t>(i)];
                ++entries_seen;
                if (i % 37 == 0) {
                    EXPECT_EQ(c.error, errc::message_too_long) << "send " << i;
                    ++failures;
                } else {
                    EXPECT_FALSE(c.error) << "send " << i << ": " << c.error.message();
                    EXPECT_TRUE(is_signaled(static_cast<int>(i))) << "send " << i;
                    ++signaled_ok;
                }
            });
            const std::size_t received = drain_receives(w.cqs[1], recvs_done, truncated);
            if (sent + received == 0) w.fab.progress();
        }
        int expected_failures = 0, expected_signaled = 0;
        for (int i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(i);
            if (i % 37 == 0) {
                ++expected_failures;
                EXPECT_EQ(entries[k], 1) << "send " << i;
                continue;
            }
            if (is_signaled(i)) ++expected_signaled;
            EXPECT_EQ(entries[k], is_signaled(i) ? 1 : 0) << "send " << i;
            if (mode == delivery::rod) {  // the receives were posted in order: so were they matched
                ASSERT_TRUE(std::equal(data[k].begin(), data[k].end(), got[k].begin()))
                    << "receive " << i;
            }
        }
        EXPECT_EQ(failures, expected_failures);
        EXPECT_EQ(truncated, expected_failures);
        EXPECT_EQ(signaled_ok, expected_signaled);
        EXPECT_EQ(w.eps[0].silent_completions(),
                  static_cast<std::uint64_t>(n - expected_signaled - expected_failures));
        // Every send asked no completion of went unsignaled (none stalled, the queue had room).
        EXPECT_EQ(w.eps[0].counters().unsignaled_sends, static_cast<std::uint64_t>(n - n / 10));
    }
}

// Tagged: each message reaches the receive posted for its tag, whatever the order of the
// receives.
TEST(post_list, a_tagged_list_matches_by_tag) {
    world w(lossy_fabric(42), 2, endpoint_attr{.job_id = job});
    constexpr int n = 50;
    std::vector<std::vector<std::byte>> data, got(n, std::vector<std::byte>(64));
    for (int i = 0; i < n; ++i)
        data.push_back(pattern(64, 300 + i));
    const std::vector<send_work> list = tagged_sends(data, 1000, n);
    for (int i = n; i-- > 0;)
        ASSERT_FALSE(w.eps[1].trecv(got[static_cast<std::size_t>(i)], 1000 + i, 0, nullptr));
    std::size_t posted = 0;
    ASSERT_FALSE(w.eps[0].tsend_list(w.peers[1], list, posted));
    EXPECT_EQ(posted, static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const completion c = wait_ok(w.cqs[1]);
        EXPECT_TRUE(has(c.flags, completion_flags::tagged));
    }
    for (int i = 0; i < n; ++i)
        EXPECT_EQ(got[static_cast<std::size_t>(i)], data[static_cast<std::size_t>(i)]) << i;
    for (int i = 0; i < 1'000'000 && w.eps[0].silent_completions() < n; ++i)
        ASSERT_TRUE(w.fab.progress());
    EXPECT_EQ(w.eps[0].silent_completions(), static_cast<std::uint64_t>(n));
    EXPECT_EQ(w.eps[0].counters().unsignaled_sends, static_cast<std::uint64_t>(n));
}

// A list stops at the first send that cannot be posted and says why; the sends before it are
// posted (and delivered), the ones after it are not.
TEST(post_list, a_list_stops_at_the_first_send_it_cannot_post) {
    world w(lossy_fabric(43), 2, endpoint_attr{.job_id = job});
    const auto data = pattern(8, 7);
    std::vector<send_work> list(10, send_work{as_bytes_of(data), nullptr, op_flags::no_completion});
    list[6].flags = op_flags::multi_recv;  // not a send's flag
    std::size_t posted = 99;
    EXPECT_EQ(w.eps[0].send_list(w.peers[1], list, posted), errc::invalid_argument);
    EXPECT_EQ(posted, 6u);
    EXPECT_EQ(w.eps[0].counters().unsignaled_sends, 6u);
    std::vector<std::vector<std::byte>> got(10, std::vector<std::byte>(8));
    for (auto& g : got)
        ASSERT_FALSE(w.eps[1].recv(g, nullptr));
    for (int i = 0; i < 6; ++i)
        wait_ok(w.cqs[1]);
    for (int i = 0; i < 1'000'000 && w.eps[0].silent_completions() < 6; ++i)
        ASSERT_TRUE(w.fab.progress());
    for (int i = 0; i < 1000; ++i)
        w.fab.progress();
    EXPECT_EQ(w.eps[0].silent_completions(), 6u);
    EXPECT_EQ(w.cqs[1].size(), 0u) << "only the six posted arrived";

    posted = 99;
    EXPECT_EQ(w.eps[0].send_list(static_cast<peer_addr>(77), list, posted), errc::unknown_peer);
    EXPECT_EQ(posted, 0u);
    posted = 99;
    EXPECT_FALSE(w.eps[0].send_list(w.peers[1], std::span<const send_work>{}, posted));
    EXPECT_EQ(posted, 0u);
    w.eps[0].close();
    posted = 99;
    EXPECT_EQ(w.eps[0].send_list(w.peers[1], list, posted), errc::endpoint_closed);
    EXPECT_EQ(posted, 0u);
}

// Sends asked no completion of still hold an entry's room in the completion queue while in
// flight: a list longer than the room posts what fits and stops with errc::cq_full; the rest
// goes once the first ones ended.
TEST(post_list, a_list_longer_than_the_queue_room_posts_what_fits) {
    world w(lossy_fabric(44), 2, endpoint_attr{.job_id = job}, 16);
    const auto data = pattern(8, 8);
    std::vector<send_work> list(40, send_work{as_bytes_of(data), nullptr, op_flags::no_completion});
    std::size_t posted = 0;
    EXPECT_EQ(w.eps[0].send_list(w.peers[1], list, posted), errc::cq_full);
    EXPECT_EQ(posted, 16u);
    std::vector<std::vector<std::byte>> got(40, std::vector<std::byte>(8));
    for (std::size_t i = 0; i < 16; ++i)
        ASSERT_FALSE(w.eps[1].recv(got[i], nullptr));
    for (int i = 0; i < 16; ++i)
        wait_ok(w.cqs[1]);
    for (int i = 0; i < 1'000'000 && w.eps[0].silent_completions() < 16; ++i)
        ASSERT_TRUE(w.fab.progress());
    std::size_t more = 0;
    EXPECT_FALSE(w.eps[0].send_list(w.peers[1], std::span(list).subspan(16, 16), more));
    EXPECT_EQ(more, 16u);
    EXPECT_EQ(w.eps[0].counters().unsignaled_sends, 32u);
}

// Messages that came before their receives are held; a list of receives takes them first, in
// order, and posts the rest for the messages still to come. Each receive gives one entry with
// its own context.
TEST(post_list, a_receive_list_takes_held_messages_then_waits) {
    world w(lossy_fabric(45), 2, endpoint_attr{.job_id = job, .mode = delivery::rod});
    constexpr int n = 12, early = 4;
    std::vector<std::vector<std::byte>> data, got(n, std::vector<std::byte>(32));
    for (int i = 0; i < n; ++i)
        data.push_back(pattern(32, 500 + i));
    for (int i = 0; i < early; ++i)
        ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data[static_cast<std::size_t>(i)]),
                                   nullptr, op_flags::no_completion));
    for (int i = 0; i < 1'000'000 && w.eps[1].counters().unexpected < early; ++i)
        ASSERT_TRUE(w.fab.progress());
    ASSERT_EQ(w.eps[1].counters().unexpected, static_cast<std::uint64_t>(early));
    int contexts[n] = {};
    std::vector<recv_work> list;
    for (int i = 0; i < n; ++i)
        list.push_back({got[static_cast<std::size_t>(i)], &contexts[i]});
    std::size_t posted = 0;
    ASSERT_FALSE(w.eps[1].recv_list(list, posted, w.peers[0]));
    EXPECT_EQ(posted, static_cast<std::size_t>(n));
    for (int i = early; i < n; ++i)
        ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data[static_cast<std::size_t>(i)]),
                                   nullptr, op_flags::no_completion));
    std::vector<int> seen(n, 0);
    for (int i = 0; i < n; ++i) {
        const completion c = wait_ok(w.cqs[1]);
        const auto k = static_cast<int*>(c.context) - contexts;
        ASSERT_TRUE(k >= 0 && k < n);
        ++seen[static_cast<std::size_t>(k)];
        EXPECT_EQ(c.len, 32u);
        EXPECT_EQ(c.from, w.peers[0]);
    }
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(seen[static_cast<std::size_t>(i)], 1) << i;
        EXPECT_EQ(got[static_cast<std::size_t>(i)], data[static_cast<std::size_t>(i)]) << i;
    }
}

// Sends deferred before any receive (deferrable, NO_MATCH) each get their RTR when a list of
// receives is posted, and arrive in the receive posted for their tag.
TEST(post_list, a_receive_list_calls_deferred_sends_back) {
    world w(lossy_fabric(48), 2, endpoint_attr{.job_id = job, .deferrable_threshold = 1000});
    constexpr int n = 6;
    std::vector<std::vector<std::byte>> data, got(n, std::vector<std::byte>(2000));
    for (int i = 0; i < n; ++i)
        data.push_back(pattern(2000, 900 + i));
    const std::vector<send_work> sends = tagged_sends(data, 0, n);
    std::size_t posted = 0;
    ASSERT_FALSE(w.eps[0].tsend_list(w.peers[1], sends, posted));
    for (int i = 0; i < 1'000'000 && w.eps[1].counters().deferred < n; ++i)
        ASSERT_TRUE(w.fab.progress());
    ASSERT_EQ(w.eps[1].counters().deferred, static_cast<std::uint64_t>(n));
    std::vector<recv_work> list;
    for (int i = n; i-- > 0;)
        list.push_back({got[static_cast<std::size_t>(i)], nullptr, std::uint64_t(i), 0});
    ASSERT_FALSE(w.eps[1].trecv_list(list, posted));
    EXPECT_EQ(posted, static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        EXPECT_EQ(wait_ok(w.cqs[1]).len, 2000u);
    for (int i = 0; i < n; ++i)
        EXPECT_EQ(got[static_cast<std::size_t>(i)], data[static_cast<std::size_t>(i)]) << i;
    EXPECT_EQ(w.eps[1].counters().ready_to_receive, static_cast<std::uint64_t>(n));
    for (int i = 0; i < 1'000'000 && w.eps[0].silent_completions() < n; ++i)
        ASSERT_TRUE(w.fab.progress());
    EXPECT_EQ(w.eps[0].silent_completions(), static_cast<std::uint64_t>(n));
}

// Tagged receives in a list each take the message of their tag; one with an ignore mask takes
// any of its tags.
TEST(post_list, a_tagged_receive_list_matches_by_tag) {
    world w(lossy_fabric(46), 2, endpoint_attr{.job_id = job});
    constexpr int n = 20;
    std::vector<std::vector<std::byte>> data, got(n + 1, std::vector<std::byte>(16));
    for (int i = 0; i <= n; ++i)
        data.push_back(pattern(16, 700 + i));
    std::vector<recv_work> list;
    for (int i = n; i-- > 0;)
        list.push_back({got[static_cast<std::size_t>(i)], nullptr, 100 + std::uint64_t(i), 0});
    list.push_back({got[n], nullptr, 0xab00, 0xff});  // any tag 0xab00 .. 0xabff
    std::size_t posted = 0;
    ASSERT_FALSE(w.eps[1].trecv_list(list, posted));
    EXPECT_EQ(posted, list.size());
    std::vector<send_work> sends = tagged_sends(data, 100, n);
    sends.push_back({as_bytes_of(data[n]), nullptr, op_flags::no_completion, 0xab42});
    ASSERT_FALSE(w.eps[0].tsend_list(w.peers[1], sends, posted));
    for (int i = 0; i <= n; ++i) {
        const completion c = wait_ok(w.cqs[1]);
        EXPECT_TRUE(has(c.flags, completion_flags::tagged));
        if (c.buf == got[n].data()) {
            EXPECT_EQ(c.tag, 0xab42u);
        }
    }
    for (int i = 0; i <= n; ++i)
        EXPECT_EQ(got[static_cast<std::size_t>(i)], data[static_cast<std::size_t>(i)]) << i;
}

// A receive list longer than the queue's room posts what fits and stops with errc::cq_full; from
// a peer the address vector does not know, it posts nothing.
TEST(post_list, a_receive_list_stops_at_the_first_receive_it_cannot_post) {
    world w(lossy_fabric(47), 2, endpoint_attr{.job_id = job}, 8);
    std::vector<std::vector<std::byte>> got(12, std::vector<std::byte>(8));
    std::vector<recv_work> list;
    for (auto& g : got)
        list.push_back({g, nullptr});
    std::size_t posted = 99;
    EXPECT_EQ(w.eps[1].recv_list(list, posted, static_cast<peer_addr>(55)), errc::unknown_peer);
    EXPECT_EQ(posted, 0u);
    EXPECT_EQ(w.eps[1].recv_list(list, posted), errc::cq_full);
    EXPECT_EQ(posted, 8u);
    const auto data = pattern(8, 9);
    for (int i = 0; i < 8; ++i)
        ASSERT_FALSE(
            w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr, op_flags::no_completion));
    for (int i = 0; i < 8; ++i)
        EXPECT_EQ(wait_ok(w.cqs[1]).buf, got[static_cast<std::size_t>(i)].data());
    EXPECT_FALSE(w.eps[1].recv_list(std::span(list).subspan(8), posted));
    EXPECT_EQ(posted, 4u);
    w.eps[1].close();
    EXPECT_EQ(w.eps[1].recv_list(list, posted), errc::endpoint_closed);
    EXPECT_EQ(posted, 0u);
}

}  // namespace
}  // namespace uet::test
