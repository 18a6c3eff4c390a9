// api_multi_recv: multi-receive buffers (op_flags::multi_recv, libfabric's FI_MULTI_RECV) end to
// end over the pipe provider: placement one after another, the releasing entry, messages that do
// not fit, truncation, what the buffers do not take, a full completion queue, cancellation, and a
// long stream over loss and reordering. Every byte is checked.
#include <algorithm>
#include <cstring>
#include <map>

#include "api_helpers.hpp"

namespace uet::test {
namespace {

constexpr std::uint32_t job = 9;

fabric_attr clean_fabric() {
    fabric_attr a;
    a.mtu = 8192;
    return a;
}

// Message i: its index in the first 4 bytes (where it fits), then a pattern of seed i.
std::vector<std::byte> message(std::size_t size, std::uint32_t i) {
    std::vector<std::byte> v = pattern(size, 1000 + i);
    if (size >= 4) std::memcpy(v.data(), &i, 4);
    return v;
}

bool holds(const completion& c, const std::vector<std::byte>& expect) {
    return c.len == expect.size() &&
           std::equal(expect.begin(), expect.end(), static_cast<const std::byte*>(c.buf));
}

// One endpoint sends to another; the receiver's queue may be small.
struct pair {
    world w;
    pair(const fabric_attr& fa, const endpoint_attr& ea, std::size_t rx_cq = 4096) : w(fa, 1, ea) {
        w.add(ea, rx_cq);
    }
    endpoint& tx() { return w.eps[0]; }
    endpoint& rx() { return w.eps[1]; }
    completion_queue& tx_cq() { return w.cqs[0]; }
    completion_queue& rx_cq() { return w.cqs[1]; }
    peer_addr to_rx() const { return w.peers[1]; }
};

TEST(multi_recv, messages_go_one_after_another_and_the_last_entry_releases_the_buffer) {
    pair p(clean_fabric(), endpoint_attr{.job_id = job, .mode = delivery::rod});
    std::vector<std::byte> buf(1000);
    int ctx = 0;
    ASSERT_FALSE(p.rx().recv(buf, &ctx, any_peer, op_flags::multi_recv));
    std::vector<std::vector<std::byte>> sent;
    for (std::uint32_t i = 0; i < 10; ++i) {
        sent.push_back(message(100, i));
        ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(sent.back()), nullptr));
    }
    // 100 bytes left after nine (at least min_multi_recv, 64): the tenth fills it and releases it.
    for (std::uint32_t i = 0; i < 10; ++i) {
        const completion c = wait_ok(p.rx_cq());
        EXPECT_EQ(c.context, &ctx);
        EXPECT_EQ(c.buf, buf.data() + 100 * i) << "message " << i;
        EXPECT_EQ(c.from, p.w.peers[0]);
        EXPECT_TRUE(has(c.flags, completion_flags::recv));
        EXPECT_TRUE(holds(c, sent[i])) << "message " << i;
        EXPECT_EQ(has(c.flags, completion_flags::multi_recv), i == 9) << "message " << i;
    }
    for (int i = 0; i < 10; ++i)
        wait_ok(p.tx_cq());
    EXPECT_EQ(p.rx_cq().size(), 0u);
}

TEST(multi_recv, a_message_that_does_not_fit_releases_the_buffer_for_the_next_receive) {
    pair p(clean_fabric(),
           endpoint_attr{.job_id = job, .mode = delivery::rod, .min_multi_recv = 16});
    std::vector<std::byte> multi(250), plain(100);
    int multi_ctx = 0, plain_ctx = 0;
    ASSERT_FALSE(p.rx().recv(multi, &multi_ctx, any_peer, op_flags::multi_recv));
    ASSERT_FALSE(p.rx().recv(plain, &plain_ctx));
    std::vector<std::vector<std::byte>> sent;
    for (std::uint32_t i = 0; i < 3; ++i) {
        sent.push_back(message(100, i));
        ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(sent.back()), nullptr));
    }
    for (std::uint32_t i = 0; i < 2; ++i) {
        const completion c = wait_ok(p.rx_cq());
        EXPECT_EQ(c.buf, multi.data() + 100 * i);
        EXPECT_TRUE(holds(c, sent[i]));
        EXPECT_FALSE(has(c.flags, completion_flags::multi_recv));
    }
    // 50 bytes left: the third does not fit; the buffer is released by an entry of its own.
    const completion released = wait_ok(p.rx_cq());
    EXPECT_EQ(released.context, &multi_ctx);
    EXPECT_TRUE(has(released.flags, completion_flags::multi_recv));
    EXPECT_EQ(released.len, 0u);
    EXPECT_EQ(released.buf, nullptr);
    const completion third = wait_ok(p.rx_cq());
    EXPECT_EQ(third.context, &plain_ctx);
    EXPECT_EQ(third.buf, plain.data());
    EXPECT_TRUE(holds(third, sent[2]));
    for (int i = 0; i < 3; ++i)
        wait_ok(p.tx_cq());
}

TEST(multi_recv, a_message_longer_than_a_fresh_buffer_fails_it_truncated) {
    pair p(clean_fabric(), endpoint_attr{.job_id = job});
    std::vector<std::byte> buf(64);
    int ctx = 0;
    ASSERT_FALSE(p.rx().recv(buf, &ctx, any_peer, op_flags::multi_recv));
    const auto big = message(100, 1);
    ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(big), nullptr));
    const completion c = wait_error(p.rx_cq());
    EXPECT_EQ(c.error, make_error_code(errc::truncated));
    EXPECT_EQ(c.context, &ctx);
    EXPECT_EQ(c.olen, 36u);
    EXPECT_TRUE(has(c.flags, completion_flags::multi_recv));
    EXPECT_TRUE(wait_error(p.tx_cq()).error);  // the target answered TOO_LONG
}

// Sends of at least deferrable_threshold bytes are deferred past a multi-receive buffer, and go
// to the plain receive posted later; the small ones around them land in the buffer.
TEST(multi_recv, large_sends_wait_for_a_plain_receive) {
    pair p(
        clean_fabric(),
        endpoint_attr{.job_id = job, .deferrable_threshold = 4096, .rendezvous_threshold = 16384});
    std::vector<std::byte> multi(64 * 1024);
    ASSERT_FALSE(p.rx().recv(multi, nullptr, any_peer, op_flags::multi_recv));
    const auto small0 = message(300, 0), large = message(5000, 1), huge = message(20000, 2),
               small1 = message(300, 3);
    ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(small0), nullptr));
    ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(large), nullptr));
    ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(huge), nullptr));
    ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(small1), nullptr));
    std::map<std::uint32_t, completion> got;
    for (int i = 0; i < 2; ++i) {
        const completion c = wait_ok(p.rx_cq());
        std::uint32_t index = 0;
        std::memcpy(&index, c.buf, 4);
        got[index] = c;
    }
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(holds(got[0], small0));
    EXPECT_TRUE(holds(got[3], small1));
    EXPECT_GE(p.rx().counters().deferred, 1u);
    std::vector<std::byte> plain(20000), plain2(20000);
    ASSERT_FALSE(p.rx().recv(plain, nullptr));
    ASSERT_FALSE(p.rx().recv(plain2, nullptr));
    for (int i = 0; i < 2; ++i) {
        const completion c = wait_ok(p.rx_cq());
        EXPECT_FALSE(has(c.flags, completion_flags::multi_recv));
        std::uint32_t index = 0;
        std::memcpy(&index, c.buf, 4);
        EXPECT_TRUE(holds(c, index == 1 ? large : huge)) << "message " << index;
    }
    for (int i = 0; i < 4; ++i)
        wait_ok(p.tx_cq());
}

// Messages held before the buffer was posted go into it, oldest first, when it is posted.
TEST(multi_recv, held_messages_fill_a_buffer_posted_after_them) {
    pair p(clean_fabric(), endpoint_attr{.job_id = job, .mode = delivery::rod});
    std::vector<std::vector<std::byte>> sent;
    for (std::uint32_t i = 0; i < 5; ++i) {
        sent.push_back(message(40 + i, i));
        ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(sent.back()), nullptr));
        wait_ok(p.tx_cq());
    }
    EXPECT_EQ(p.rx().counters().unexpected, 5u);
    std::vector<std::byte> buf(4096);
    ASSERT_FALSE(p.rx().recv(buf, nullptr, any_peer, op_flags::multi_recv));
    std::size_t offset = 0;
    for (std::uint32_t i = 0; i < 5; ++i) {
        const completion c = wait_ok(p.rx_cq());
        EXPECT_EQ(c.buf, buf.data() + offset);
        EXPECT_TRUE(holds(c, sent[i])) << "message " << i;
        offset += sent[i].size();
    }
    // Still posted: the next message goes after them.
    const auto next = message(10, 5);
    ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(next), nullptr));
    const completion c = wait_ok(p.rx_cq());
    EXPECT_EQ(c.buf, buf.data() + offset);
    EXPECT_TRUE(holds(c, next));
    wait_ok(p.tx_cq());
}

// With the unexpected queue full, eager sends are answered NO_MATCH (deferred); a multi-receive
// buffer posted later takes the held ones and asks the deferred ones to come again.
TEST(multi_recv, deferred_eager_sends_are_asked_again_by_a_buffer) {
    pair p(lossy_fabric(22), endpoint_attr{.job_id = job, .max_unexpected = 2});
    constexpr std::uint32_t n = 6;
    std::vector<std::vector<std::byte>> sent;
    for (std::uint32_t i = 0; i < n; ++i) {
        sent.push_back(message(500, i));
        ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(sent.back()), nullptr));
    }
    for (int i = 0; i < 1'000'000 && p.rx().counters().unexpected + p.rx().counters().deferred < n;
         ++i)
        ASSERT_TRUE(p.w.fab.progress());
    EXPECT_EQ(p.rx().counters().unexpected, 2u);
    EXPECT_EQ(p.rx().counters().deferred, 4u);
    std::vector<std::byte> buf(64 * 1024);
    ASSERT_FALSE(p.rx().recv(buf, nullptr, any_peer, op_flags::multi_recv));
    std::vector<int> seen(n, 0);
    for (std::uint32_t k = 0; k < n; ++k) {
        const completion c = wait_ok(p.rx_cq());
        std::uint32_t index = 0;
        std::memcpy(&index, c.buf, 4);
        ASSERT_LT(index, n);
        EXPECT_TRUE(holds(c, sent[index])) << "message " << index;
        ++seen[index];
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(n));
    EXPECT_EQ(p.rx().counters().ready_to_receive, 4u);
    for (std::uint32_t i = 0; i < n; ++i)
        wait_ok(p.tx_cq());
}

TEST(multi_recv, bad_flags_and_buffers_are_refused) {
    pair p(clean_fabric(), endpoint_attr{.job_id = job});
    std::vector<std::byte> small(63), buf(64);
    EXPECT_EQ(p.rx().recv(small, nullptr, any_peer, op_flags::multi_recv),
              make_error_code(errc::invalid_argument));
    EXPECT_EQ(p.rx().recv(std::span<std::byte>{}, nullptr, any_peer, op_flags::multi_recv),
              make_error_code(errc::invalid_argument));
    EXPECT_EQ(p.rx().recv(buf, nullptr, any_peer, op_flags::no_completion),
              make_error_code(errc::invalid_argument));
    EXPECT_EQ(p.tx().send(p.to_rx(), buf, nullptr, op_flags::multi_recv),
              make_error_code(errc::invalid_argument));
    EXPECT_EQ(p.tx().write(p.to_rx(), buf, 0, 1, nullptr, op_flags::multi_recv),
              make_error_code(errc::invalid_argument));
    EXPECT_EQ(p.tx().read(p.to_rx(), buf, 0, 1, nullptr, op_flags::multi_recv),
              make_error_code(errc::invalid_argument));
    EXPECT_EQ(p.rx_cq().size(), 0u);
    EXPECT_EQ(p.tx_cq().size(), 0u);
}

TEST(multi_recv, close_cancels_a_posted_buffer) {
    pair p(clean_fabric(), endpoint_attr{.job_id = job});
    std::vector<std::byte> buf(4096);
    int ctx = 0;
    ASSERT_FALSE(p.rx().recv(buf, &ctx, any_peer, op_flags::multi_recv));
    const auto msg = message(100, 0);
    ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(msg), nullptr));
    EXPECT_TRUE(holds(wait_ok(p.rx_cq()), msg));
    p.rx().close();
    completion c;
    ASSERT_TRUE(p.rx_cq().read_error(c));
    EXPECT_EQ(c.error, make_error_code(errc::canceled));
    EXPECT_EQ(c.context, &ctx);
    EXPECT_TRUE(has(c.flags, completion_flags::multi_recv));
    EXPECT_EQ(c.len, 0u);
}

// A queue of 8 (a ring of 16, one entry reserved for the buffer's release) takes 15 message
// entries; the rest wait, answered, until the application reads: every send completes before the
// receiver reads anything, and no message is lost or reordered.
TEST(multi_recv, a_full_queue_keeps_arrivals_until_it_is_read_and_answers_them_at_once) {
    pair p(clean_fabric(), endpoint_attr{.job_id = job, .mode = delivery::rod}, 8);
    std::vector<std::byte> buf(64 * 1024);
    ASSERT_FALSE(p.rx().recv(buf, nullptr, any_peer, op_flags::multi_recv));
    constexpr std::uint32_t n = 100;
    std::vector<std::vector<std::byte>> sent;
    for (std::uint32_t i = 0; i < n; ++i) {
        sent.push_back(message(8, i));
        ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(sent.back()), nullptr));
    }
    for (std::uint32_t i = 0; i < n; ++i)
        wait_ok(p.tx_cq());
    EXPECT_EQ(p.rx_cq().size(), 15u);
    EXPECT_EQ(p.rx().counters().kept_for_queue_room, n - 15);
    std::uint32_t next = 0;
    std::array<completion, 4> out;
    for (int step = 0; step < 1'000'000 && next < n; ++step) {
        const std::size_t k = p.rx_cq().read(out);
        for (std::size_t j = 0; j < k; ++j, ++next) {
            ASSERT_TRUE(holds(out[j], sent[next])) << "message " << next;
            ASSERT_EQ(out[j].buf, buf.data() + 8 * next);
        }
        ASSERT_FALSE(p.rx_cq().has_error());
    }
    EXPECT_EQ(next, n);
}

// A long stream of sizes 0..299 over loss and reordering into two buffers re-posted as they are
// released: every message lands once, whole, and every buffer is used up to its end.
TEST(multi_recv, a_stream_over_loss_fills_buffers_posted_again_and_again) {
    pair p(lossy_fabric(21), endpoint_attr{.job_id = job, .min_multi_recv = 300});
    constexpr std::uint32_t n = 3000;
    std::array<std::vector<std::byte>, 2> bufs{std::vector<std::byte>(4096),
                                               std::vector<std::byte>(4096)};
    std::array<int, 2> ctx{0, 1};
    for (int b = 0; b < 2; ++b)
        ASSERT_FALSE(p.rx().recv(bufs[b], &ctx[b], any_peer, op_flags::multi_recv));
    std::vector<std::vector<std::byte>> sent;
    for (std::uint32_t i = 0; i < n; ++i)
        sent.push_back(message(4 + (i * 37) % 296, i));
    std::vector<int> seen(n, 0);
    std::uint32_t posted = 0, received = 0, sends_done = 0, releases = 0;
    std::array<completion, 16> out;
    for (int step = 0; step < 5'000'000 && (received < n || sends_done < n); ++step) {
        while (posted < n && posted - sends_done < 256) {
            ASSERT_FALSE(p.tx().send(p.to_rx(), as_bytes_of(sent[posted]), nullptr));
            ++posted;
        }
        sends_done += static_cast<std::uint32_t>(p.tx_cq().read(out));
        ASSERT_FALSE(p.tx_cq().has_error());
        const std::size_t k = p.rx_cq().read(out);
        ASSERT_FALSE(p.rx_cq().has_error());
        for (std::size_t j = 0; j < k; ++j) {
            const completion& c = out[j];
            const int b = *static_cast<int*>(c.context);
            if (c.len > 0) {
                std::uint32_t index = 0;
                std::memcpy(&index, c.buf, 4);
                ASSERT_LT(index, n);
                ASSERT_TRUE(holds(c, sent[index])) << "message " << index;
                ASSERT_GE(static_cast<const std::byte*>(c.buf), bufs[b].data());
                ASSERT_LE(static_cast<const std::byte*>(c.buf) + c.len,
                          bufs[b].data() + bufs[b].size());
                ++seen[index];
                ++received;
            }
            if (has(c.flags, completion_flags::multi_recv)) {
                ++releases;
                ASSERT_FALSE(p.rx().recv(bufs[b], &ctx[b], any_peer, op_flags::multi_recv));
            }
        }
    }
    EXPECT_EQ(received, n);
    EXPECT_EQ(sends_done, n);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(n));
    // ~460 KB through 4 KiB buffers, each released with at most 299 + 299 bytes unused.
    EXPECT_GT(releases, 100u);
}

}  // namespace
}  // namespace uet::test
