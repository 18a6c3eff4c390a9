// api_functional: the public API end to end over the pipe provider with 2% loss and reordering,
// in the spirit of libfabric's fabtests functional tests. Every byte is checked.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "api/api_impl.hpp"
#include "api_helpers.hpp"

namespace uet::test {
namespace {

constexpr std::uint32_t job = 7;

class functional : public ::testing::Test {
  protected:
    world w{lossy_fabric(), 2, endpoint_attr{.job_id = job}};
};

TEST_F(functional, message_ping_pong) {
    for (std::size_t size : {0u, 1u, 100u, 8191u, 8192u, 8193u, 20000u, 65535u}) {
        auto ping = pattern(size, size), pong = pattern(size, size + 1);
        std::vector<std::byte> got1(size + 1), got0(size + 1);
        int r1 = 0, s0 = 0, r0 = 0, s1 = 0;
        ASSERT_FALSE(w.eps[1].recv(got1, &r1));
        ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(ping), &s0));
        auto a = wait_ok(w.cqs[1]);
        EXPECT_EQ(a.context, &r1);
        EXPECT_EQ(a.len, size);
        EXPECT_EQ(a.from, w.peers[0]);
        EXPECT_TRUE(std::equal(ping.begin(), ping.end(), got1.begin()));
        EXPECT_EQ(wait_ok(w.cqs[0]).context, &s0);
        ASSERT_FALSE(w.eps[0].recv(got0, &r0));
        ASSERT_FALSE(w.eps[1].send(w.peers[0], as_bytes_of(pong), &s1));
        auto b = wait_ok(w.cqs[0]);
        EXPECT_EQ(b.context, &r0);
        EXPECT_TRUE(std::equal(pong.begin(), pong.end(), got0.begin()));
        EXPECT_EQ(wait_ok(w.cqs[1]).context, &s1);
    }
}

TEST_F(functional, tagged_ping_pong) {
    for (int round = 0; round < 50; ++round) {
        const std::size_t size = 1 + static_cast<std::size_t>(round) * 997;
        const std::uint64_t tag = 0xabc000u + static_cast<std::uint64_t>(round);
        auto ping = pattern(size, tag);
        std::vector<std::byte> got(size);
        ASSERT_FALSE(w.eps[1].trecv(got, tag, 0, nullptr));
        ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(ping), tag, nullptr));
        auto c = wait_ok(w.cqs[1]);
        EXPECT_TRUE(has(c.flags, completion_flags::tagged));
        EXPECT_EQ(c.tag, tag);
        EXPECT_EQ(got, ping);
        wait_ok(w.cqs[0]);
        ASSERT_FALSE(w.eps[0].trecv(got, tag + 1, 0, nullptr));
        ASSERT_FALSE(w.eps[1].tsend(w.peers[0], as_bytes_of(ping), tag + 1, nullptr));
        EXPECT_EQ(wait_ok(w.cqs[0]).tag, tag + 1);
        wait_ok(w.cqs[1]);
    }
}

// The first posted receive that matches gets the message, wildcard or not.
TEST_F(functional, tagged_wildcard_matching_order) {
    std::array<std::array<std::byte, 8>, 4> bufs{};
    int ctx[4];
    ASSERT_FALSE(w.eps[1].trecv(bufs[0], 0x100, 0xff, &ctx[0]));  // 0x100..0x1ff
    ASSERT_FALSE(w.eps[1].trecv(bufs[1], 0x105, 0, &ctx[1]));     // exactly 0x105
    ASSERT_FALSE(w.eps[1].trecv(bufs[2], 0, ~0ull, &ctx[2]));     // anything tagged
    ASSERT_FALSE(w.eps[1].recv(bufs[3], &ctx[3]));                // untagged only
    const std::uint64_t tags[] = {0x105, 0x105, 0x999};
    void* expect[] = {&ctx[0], &ctx[1], &ctx[2]};
    for (int i = 0; i < 3; ++i) {
        const std::array<std::byte, 1> msg{std::byte(i)};
        ASSERT_FALSE(w.eps[0].tsend(w.peers[1], msg, tags[i], nullptr));
        auto c = wait_ok(w.cqs[1]);
        EXPECT_EQ(c.context, expect[i]) << "message " << i;
        EXPECT_EQ(c.tag, tags[i]);
        wait_ok(w.cqs[0]);
    }
    const std::array<std::byte, 1> plain{std::byte(9)};
    ASSERT_FALSE(w.eps[0].send(w.peers[1], plain, nullptr));
    EXPECT_EQ(wait_ok(w.cqs[1]).context, &ctx[3]);
    wait_ok(w.cqs[0]);
}

// Messages that arrive before their receive are buffered and matched oldest first.
TEST_F(functional, unexpected_messages) {
    constexpr int n = 12;
    std::vector<std::vector<std::byte>> sent;
    for (int i = 0; i < n; ++i) {
        sent.push_back(pattern(100 + 1000 * i, 50 + i));
        // One at a time so that their arrival order is their send order.
        ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(sent.back()), i % 3, nullptr));
        wait_ok(w.cqs[0]);
    }
    EXPECT_EQ(w.eps[1].counters().unexpected, static_cast<std::uint64_t>(n));
    // Tag 2 first: the oldest message of tag 2 is message 2, then 5, 8, 11.
    for (int k = 0; k < 4; ++k) {
        std::vector<std::byte> got(20000);
        ASSERT_FALSE(w.eps[1].trecv(got, 2, 0, nullptr));
        auto c = wait_ok(w.cqs[1]);
        const auto& expect = sent[static_cast<std::size_t>(2 + 3 * k)];
        ASSERT_EQ(c.len, expect.size());
        EXPECT_TRUE(std::equal(expect.begin(), expect.end(), got.begin()));
    }
    // The rest with a wildcard: 0, 1, 3, 4, 6, 7, 9, 10 in that order.
    for (int i = 0; i < n; ++i) {
        if (i % 3 == 2) continue;
        std::vector<std::byte> got(20000);
        ASSERT_FALSE(w.eps[1].trecv(got, 0, ~0ull, nullptr));
        auto c = wait_ok(w.cqs[1]);
        const auto& expect = sent[static_cast<std::size_t>(i)];
        ASSERT_EQ(c.len, expect.size()) << "message " << i;
        EXPECT_EQ(c.tag, static_cast<std::uint64_t>(i % 3));
        EXPECT_TRUE(std::equal(expect.begin(), expect.end(), got.begin()));
    }
}

TEST_F(functional, rma_write_and_read_one_byte_to_64_mib_at_odd_offsets) {
    constexpr std::size_t region_size = (64u << 20) + 64;
    std::vector<std::byte> target(region_size);
    auto mr = w.dom.register_memory(target, access::remote_read | access::remote_write, job);
    ASSERT_TRUE(mr);
    std::vector<std::byte> back(64u << 20);
    std::uint64_t seed = 1;
    for (std::size_t size :
         {std::size_t{1}, std::size_t{7}, std::size_t{4097}, std::size_t{(1u << 20) + 3},
          std::size_t{(7u << 20) + 11}, std::size_t{64u << 20}}) {
        for (std::uint64_t offset : {std::uint64_t{3}, std::uint64_t{33}}) {
            auto data = pattern(size, ++seed);
            ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), offset, mr->key(), nullptr));
            auto c = wait_ok(w.cqs[0]);
            EXPECT_TRUE(has(c.flags, completion_flags::rma | completion_flags::write));
            ASSERT_TRUE(std::equal(data.begin(), data.end(), target.begin() + offset))
                << size << " bytes at " << offset;
            std::span<std::byte> into(back.data(), size);
            ASSERT_FALSE(w.eps[0].read(w.peers[1], into, offset, mr->key(), nullptr));
            auto r = wait_ok(w.cqs[0]);
            EXPECT_TRUE(has(r.flags, completion_flags::read));
            EXPECT_EQ(r.len, size);
            ASSERT_TRUE(std::equal(data.begin(), data.end(), back.begin())) << size;
        }
    }
}

TEST_F(functional, write_with_immediate_data) {
    std::vector<std::byte> target(4096);
    auto mr = w.dom.register_memory(target, access::remote_write, job).value();
    auto data = pattern(1000, 3);
    ASSERT_FALSE(
        w.eps[0].write_data(w.peers[1], as_bytes_of(data), 5, mr.key(), 0xfeedull, nullptr));
    wait_ok(w.cqs[0]);
    auto c = wait_ok(w.cqs[1]);  // the target hears of it
    EXPECT_TRUE(has(c.flags, completion_flags::remote_cq_data | completion_flags::remote_write));
    EXPECT_EQ(c.data, 0xfeedull);
    EXPECT_EQ(c.len, 1000u);
    EXPECT_EQ(c.from, w.peers[0]);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), target.begin() + 5));
}

// Completion entries are reused as they were left, every field written afresh: around a queue of
// two entries, a plain send and receive after remote write data and after a truncation carry
// nothing of them (no data, error, olen or detail).
TEST(functional_cq, reused_entries_carry_nothing_of_earlier_ones) {
    world w{lossy_fabric(), 2, endpoint_attr{.job_id = job}, 2};
    std::vector<std::byte> target(64), small(4), got(64);
    auto mr = w.dom.register_memory(target, access::remote_write, job).value();
    const auto data = pattern(16, 9);
    for (std::uint64_t i = 0; i < 8; ++i) {
        ASSERT_FALSE(
            w.eps[0].write_data(w.peers[1], as_bytes_of(data), 0, mr.key(), 0xfeed + i, nullptr));
        wait_ok(w.cqs[0]);
        EXPECT_EQ(wait_ok(w.cqs[1]).data, 0xfeed + i);
        ASSERT_FALSE(w.eps[1].recv(small, nullptr));
        ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
        EXPECT_EQ(wait_error(w.cqs[1]).olen, 12u);
        wait_error(w.cqs[0]);
        int r = 0, s = 0;
        ASSERT_FALSE(w.eps[1].recv(got, &r));
        ASSERT_FALSE(w.eps[0].send(w.peers[1], std::span(data).first(8), &s));
        for (const completion& c : {wait_ok(w.cqs[1]), wait_ok(w.cqs[0])}) {
            const bool recv = c.context == &r;
            EXPECT_TRUE(recv || c.context == &s);
            EXPECT_EQ(c.len, 8u);
            EXPECT_EQ(c.buf, recv ? got.data() : nullptr);
            EXPECT_EQ(c.from, recv ? w.peers[0] : any_peer);
            EXPECT_EQ(c.data, 0u);
            EXPECT_EQ(c.tag, 0u);
            EXPECT_FALSE(c.error);
            EXPECT_EQ(c.olen, 0u);
            EXPECT_EQ(c.prov_errno, 0);
            EXPECT_TRUE(c.detail.empty());
        }
    }
}

// ---- atomics, checked against a local model ----

template <class T>
T model(atomic_op op, T cur, T arg) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        switch (op) {
            case atomic_op::sum:
                return static_cast<T>(static_cast<U>(static_cast<U>(cur) + static_cast<U>(arg)));
            case atomic_op::band:
                return static_cast<T>(cur & arg);
            case atomic_op::bor:
                return static_cast<T>(cur | arg);
            case atomic_op::bxor:
                return static_cast<T>(cur ^ arg);
            default:
                break;
        }
    } else if (op == atomic_op::sum) {
        return cur + arg;
    }
    switch (op) {
        case atomic_op::min:
            return std::min(cur, arg);
        case atomic_op::max:
            return std::max(cur, arg);
        case atomic_op::swap:
            return arg;
        default:
            return cur;
    }
}

template <class T>
T random_value(std::mt19937_64& g) {
    if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(static_cast<int>(g() % 2001) - 1000) / T(4);
    else
        return static_cast<T>(g());
}

template <class T>
void check_atomics(world& w) {
    constexpr std::size_t count = 4;
    const atomic_type type = atomic_type_of<T>;
    std::vector<T> target(count);
    auto mr =
        w.dom.register_memory(std::as_writable_bytes(std::span(target)), access::remote_atomic, job)
            .value();
    std::mt19937_64 g(sizeof(T) * 31 + std::is_floating_point_v<T>);
    std::vector<atomic_op> ops = {atomic_op::min, atomic_op::max, atomic_op::sum, atomic_op::swap};
    if (std::is_integral_v<T>)
        ops.insert(ops.end(), {atomic_op::band, atomic_op::bor, atomic_op::bxor});
    for (atomic_op op : ops) {
        for (bool fetching : {false, true}) {
            std::vector<T> expect(count), arg(count), fetched(count);
            for (std::size_t i = 0; i < count; ++i) {
                target[i] = random_value<T>(g);
                arg[i] = random_value<T>(g);
                expect[i] = model(op, target[i], arg[i]);
            }
            const std::vector<T> before = target;
            auto operand = std::as_bytes(std::span(arg));
            std::error_code ec =
                fetching ? w.eps[0].fetch_atomic(w.peers[1], op, type, operand,
                                                 std::as_writable_bytes(std::span(fetched)), 0,
                                                 mr.key(), nullptr)
                         : w.eps[0].atomic(w.peers[1], op, type, operand, 0, mr.key(), nullptr);
            ASSERT_FALSE(ec) << ec.message();
            auto c = wait_ok(w.cqs[0]);
            EXPECT_TRUE(has(c.flags, completion_flags::atomic));
            for (std::size_t i = 0; i < count; ++i) {
                EXPECT_EQ(target[i], expect[i]) << "op " << int(op) << " type " << int(type);
                if (fetching) {
                    EXPECT_EQ(fetched[i], before[i]);
                }
            }
        }
    }
    // Fetching read leaves the target alone.
    std::vector<T> fetched(count), dummy(count);
    const std::vector<T> before = target;
    ASSERT_FALSE(
        w.eps[0].fetch_atomic(w.peers[1], atomic_op::read, type, std::as_bytes(std::span(dummy)),
                              std::as_writable_bytes(std::span(fetched)), 0, mr.key(), nullptr));
    wait_ok(w.cqs[0]);
    EXPECT_EQ(fetched, before);
    EXPECT_EQ(target, before);
    // Compare-and-swap on element 1: a miss, then a hit.
    for (bool hit : {false, true}) {
        const T old = target[1];
        const T compare = hit ? old : static_cast<T>(old + T(1));
        const T swap = static_cast<T>(old + T(2));
        T result{};
        ASSERT_FALSE(w.eps[0].compare_atomic(
            w.peers[1], type, std::as_bytes(std::span(&compare, 1)),
            std::as_bytes(std::span(&swap, 1)), std::as_writable_bytes(std::span(&result, 1)),
            sizeof(T), mr.key(), nullptr));
        wait_ok(w.cqs[0]);
        EXPECT_EQ(result, old);
        EXPECT_EQ(target[1], hit ? swap : old);
    }
}

TEST_F(functional, every_atomic_op_and_type) {
    check_atomics<std::int8_t>(w);
    check_atomics<std::uint8_t>(w);
    check_atomics<std::int16_t>(w);
    check_atomics<std::uint16_t>(w);
    check_atomics<std::int32_t>(w);
    check_atomics<std::uint32_t>(w);
    check_atomics<std::int64_t>(w);
    check_atomics<std::uint64_t>(w);
    check_atomics<float>(w);
    check_atomics<double>(w);
}

// A deferrable send finds no receive: the target answers NO_MATCH, keeps nothing, and asks for
// the message (RTR) once the receive is posted.
TEST_F(functional, deferrable_send_with_receive_posted_late) {
    auto data = pattern(200'000, 77);
    std::vector<std::byte> got(data.size());
    int sctx = 0, rctx = 0;
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), &sctx));
    for (int i = 0; i < 1'000'000 && w.eps[1].counters().deferred == 0; ++i)
        ASSERT_TRUE(w.fab.progress());
    EXPECT_EQ(w.eps[1].counters().deferred, 1u);
    EXPECT_EQ(w.eps[1].counters().unexpected, 0u);
    EXPECT_EQ(w.cqs[0].size(), 0u);  // the send is not complete
    ASSERT_FALSE(w.eps[1].recv(got, &rctx));
    auto r = wait_ok(w.cqs[1]);
    EXPECT_EQ(r.context, &rctx);
    EXPECT_EQ(got, data);
    EXPECT_EQ(wait_ok(w.cqs[0]).context, &sctx);
    EXPECT_EQ(w.eps[1].counters().ready_to_receive, 1u);
    EXPECT_EQ(w.eps[0].counters().resent_after_rtr, 1u);
}

TEST_F(functional, rendezvous_of_256_mib) {
    constexpr std::size_t size = 256u << 20;
    std::vector<std::byte> data(size), got(size);
    fill(data, 256);
    ASSERT_FALSE(w.eps[1].trecv(got, 42, 0, nullptr));
    ASSERT_FALSE(w.eps[0].tsend(w.peers[1], std::span<const std::byte>(data), 42, nullptr));
    auto r = wait_ok(w.cqs[1]);
    EXPECT_EQ(r.len, size);
    wait_ok(w.cqs[0]);
    EXPECT_EQ(w.eps[1].counters().rendezvous, 1u);
    EXPECT_TRUE(std::memcmp(data.data(), got.data(), size) == 0);
    // The links really were lossy and reordering.
    const fabric_stats s = w.fab.stats();
    EXPECT_GT(s.lost, s.frames / 100);
    EXPECT_GT(s.reordered, s.frames / 100);
}

// Four endpoints, every one sending to every other: eager, deferrable and rendezvous sizes.
TEST(functional_all, four_endpoints_all_to_all) {
    world w(lossy_fabric(5), 4, endpoint_attr{.job_id = job});
    const std::size_t sizes[] = {1000, 100'000, 1'500'000};
    std::map<std::uint64_t, std::vector<std::byte>> sent, got;
    for (std::size_t dst = 0; dst < 4; ++dst)
        for (std::size_t src = 0; src < 4; ++src)
            for (std::size_t k = 0; k < 3 && src != dst; ++k) {
                const std::uint64_t tag = (src << 16) | (dst << 8) | k;
                got[tag].resize(sizes[k]);
                ASSERT_FALSE(w.eps[dst].trecv(got[tag], tag, 0, nullptr, w.peers[src]));
            }
    for (std::size_t src = 0; src < 4; ++src)
        for (std::size_t dst = 0; dst < 4; ++dst)
            for (std::size_t k = 0; k < 3 && src != dst; ++k) {
                const std::uint64_t tag = (src << 16) | (dst << 8) | k;
                sent[tag] = pattern(sizes[k], tag);
                ASSERT_FALSE(w.eps[src].tsend(w.peers[dst], as_bytes_of(sent[tag]), tag, nullptr));
            }
    // 36 sends and 36 receives.
    std::size_t done = 0;
    while (done < 72) {
        bool any = false;
        for (auto& cq : w.cqs) {
            completion c[16];
            const std::size_t n = cq.read(c);
            ASSERT_FALSE(cq.has_error());
            for (std::size_t i = 0; i < n; ++i)
                if (has(c[i].flags, completion_flags::recv)) {
                    EXPECT_EQ(c[i].len, sent[c[i].tag].size());
                }
            done += n;
            any = any || n > 0;
        }
        if (!any) {
            ASSERT_TRUE(w.fab.progress()) << "stalled at " << done;
        }
    }
    for (const auto& [tag, bytes] : sent)
        EXPECT_EQ(got[tag], bytes) << "tag " << tag;
}

TEST_F(functional, inject_needs_no_completion) {
    auto data = pattern(200, 1);
    std::vector<std::byte> got(200);
    ASSERT_FALSE(w.eps[1].recv(got, nullptr));
    ASSERT_FALSE(w.eps[0].inject(w.peers[1], as_bytes_of(data)));
    data[0] = std::byte{0};  // the call copied it
    wait_ok(w.cqs[1]);
    EXPECT_TRUE(std::equal(data.begin() + 1, data.end(), got.begin() + 1));
    EXPECT_NE(got[0], std::byte{0});
    while (w.fab.progress()) {
    }
    EXPECT_EQ(w.cqs[0].size(), 0u);
}

// ROD: messages of one peer match in the order they were sent, even back to back under loss.
TEST(functional_modes, rod_matches_in_send_order) {
    world w(lossy_fabric(11), 2, endpoint_attr{.job_id = job, .mode = delivery::rod});
    constexpr int n = 40;
    std::vector<std::vector<std::byte>> got(n, std::vector<std::byte>(30000));
    for (int i = 0; i < n; ++i)
        ASSERT_FALSE(w.eps[1].trecv(got[static_cast<std::size_t>(i)], 0, ~0ull, nullptr));
    std::vector<std::vector<std::byte>> sent;
    for (int i = 0; i < n; ++i) {
        sent.push_back(pattern(1000 + 700 * static_cast<std::size_t>(i), 300 + i));
        ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(sent.back()), i, nullptr));
    }
    for (int i = 0; i < n; ++i) {
        auto c = wait_ok(w.cqs[1]);
        EXPECT_EQ(c.tag, static_cast<std::uint64_t>(i));
        EXPECT_EQ(c.buf, got[static_cast<std::size_t>(i)].data());
        const auto& expect = sent[static_cast<std::size_t>(i)];
        EXPECT_TRUE(
            std::equal(expect.begin(), expect.end(), got[static_cast<std::size_t>(i)].begin()));
    }
    for (int i = 0; i < n; ++i)
        wait_ok(w.cqs[0]);
}

// Small sends that find an ordinary receive posted are placed as they arrive (delivered
// directly, not handed over by the engine first); the others (no receive yet, a receive too
// small, a receive of the other kind) go the ordinary way, and matching order holds across both:
// ROD messages match tagged receives in send order, each entry naming its own tag, sender and
// length. Over loss and reordering, in both ordered and unordered modes.
TEST(functional_modes, small_sends_are_delivered_directly_into_waiting_receives) {
    for (delivery mode : {delivery::rud, delivery::rod}) {
        SCOPED_TRACE(mode == delivery::rod ? "rod" : "rud");
        world w(lossy_fabric(13), 2, endpoint_attr{.job_id = job, .mode = mode});
        constexpr int n = 1400, early = 1000;  // early: within rx_depth
        // The PDC established first: packets that still carry SYN are read in full, one by one.
        std::vector<std::byte> hello(8);
        const auto hello_sent = pattern(8, 1);  // valid until the send completes
        ASSERT_FALSE(w.eps[1].recv(hello, nullptr));
        ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(hello_sent), nullptr));
        wait_ok(w.cqs[1]);
        wait_ok(w.cqs[0]);
        std::vector<std::vector<std::byte>> got(n, std::vector<std::byte>(64));
        // The first `early` receives wait for their messages; the rest arrive unexpected.
        for (int i = 0; i < early; ++i)
            ASSERT_FALSE(w.eps[1].trecv(got[static_cast<std::size_t>(i)], i, 0, nullptr));
        std::vector<std::vector<std::byte>> sent;
        for (int i = 0; i < n; ++i)
            sent.push_back(pattern(24, 700 + i));  // one size: frames predicted, runs
        for (int i = 0; i < n; ++i)
            ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(sent[static_cast<std::size_t>(i)]),
                                        i, nullptr, op_flags::no_completion));
        for (int i = 0; i < early; ++i) {
            const completion c = wait_ok(w.cqs[1]);
            const auto k = static_cast<std::size_t>(c.tag);
            ASSERT_LT(k, static_cast<std::size_t>(early));
            EXPECT_EQ(c.buf, got[k].data());
            EXPECT_EQ(c.len, sent[k].size());
            EXPECT_EQ(c.from, w.peers[0]);
            EXPECT_TRUE(std::equal(sent[k].begin(), sent[k].end(), got[k].begin())) << k;
            if (mode == delivery::rod) {
                EXPECT_EQ(k, static_cast<std::size_t>(i));
            }
        }
        for (int i = early; i < n; ++i)
            ASSERT_FALSE(w.eps[1].trecv(got[static_cast<std::size_t>(i)], i, 0, nullptr));
        for (int i = early; i < n; ++i) {
            const completion c = wait_ok(w.cqs[1]);
            const auto k = static_cast<std::size_t>(c.tag);
            EXPECT_TRUE(std::equal(sent[k].begin(), sent[k].end(), got[k].begin())) << k;
        }
        for (int i = 0; i < 1'000'000 && w.eps[0].silent_completions() < n; ++i)
            ASSERT_TRUE(w.fab.progress());
        EXPECT_EQ(w.eps[0].silent_completions(), static_cast<std::uint64_t>(n));
        const endpoint_counters c = w.eps[1].counters();
        EXPECT_GT(c.delivered_directly, 0u);
        EXPECT_LE(c.delivered_directly, static_cast<std::uint64_t>(n) + 1);  // and the hello
        // Some of the later messages waited (unexpected, or deferred and sent again); ROD's
        // go-back-N may bring all of them after their receives (then directly too).
        if (mode == delivery::rud) {
            EXPECT_GT(c.unexpected + c.deferred, 0u);
        }
    }
}

// A full unexpected queue does not lose eager messages: they are deferred and asked for again.
TEST(functional_modes, eager_sends_beyond_the_unexpected_queue_are_deferred) {
    world w(lossy_fabric(12), 2, endpoint_attr{.job_id = job, .max_unexpected = 2});
    constexpr int n = 6;
    std::vector<std::vector<std::byte>> sent;
    for (int i = 0; i < n; ++i) {
        sent.push_back(pattern(2000, 400 + i));
        ASSERT_FALSE(w.eps[0].tsend(w.peers[1], as_bytes_of(sent.back()), i, nullptr));
    }
    for (int i = 0;
         i < 1'000'000 && w.eps[1].counters().unexpected + w.eps[1].counters().deferred < n; ++i)
        ASSERT_TRUE(w.fab.progress());
    EXPECT_EQ(w.eps[1].counters().unexpected, 2u);
    EXPECT_EQ(w.eps[1].counters().deferred, 4u);
    std::vector<std::vector<std::byte>> got(n, std::vector<std::byte>(2000));
    for (int i = 0; i < n; ++i)
        ASSERT_FALSE(w.eps[1].trecv(got[static_cast<std::size_t>(i)], i, 0, nullptr));
    for (int i = 0; i < 2 * n; ++i) {
        completion c;
        const std::error_code ec = i % 2 ? w.cqs[0].wait(c) : w.cqs[1].wait(c);
        ASSERT_FALSE(ec) << ec.message();
    }
    for (int i = 0; i < n; ++i)
        EXPECT_EQ(got[static_cast<std::size_t>(i)], sent[static_cast<std::size_t>(i)]);
}

TEST(functional_modes, every_delivery_mode_moves_messages) {
    for (delivery mode : {delivery::rud, delivery::rod, delivery::rudi, delivery::uud}) {
        fabric_attr fa;
        fa.mtu = 4096;
        world w(fa, 2, endpoint_attr{.job_id = job, .mode = mode});
        const std::size_t size = mode == delivery::uud ? 4096 : 100'000;
        auto data = pattern(size, 9);
        std::vector<std::byte> got(size);
        ASSERT_FALSE(w.eps[1].recv(got, nullptr));
        ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
        wait_ok(w.cqs[1]);
        wait_ok(w.cqs[0]);
        EXPECT_EQ(got, data) << "mode " << int(mode);
        if (mode == delivery::uud) continue;
        std::vector<std::byte> region(size);
        auto mr = w.dom.register_memory(region, access::remote_write, job).value();
        ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 0, mr.key(), nullptr));
        wait_ok(w.cqs[0]);
        EXPECT_EQ(region, data) << "mode " << int(mode);
    }
}

// The target answers OK sends and writes in its PDS ACKs (no response message) unless its
// endpoint says otherwise; either way, over loss and reordering, every operation ends with the
// right status: an access error still reaches the initiator, a read still brings its data.
TEST(functional_modes, answers_ride_in_acks_unless_the_target_switches_them_off) {
    for (const bool in_acks : {true, false}) {
        SCOPED_TRACE(in_acks ? "answers in ACKs" : "answers as messages");
        world w(lossy_fabric(3), 1, endpoint_attr{.job_id = job});
        const std::size_t target = w.add(endpoint_attr{.job_id = job, .answers_in_acks = in_acks});
        std::vector<std::byte> region(4096);
        auto mr =
            w.dom.register_memory(region, access::remote_write | access::remote_read, job).value();
        std::vector<std::byte> ro(64);
        auto read_only = w.dom.register_memory(ro, access::remote_read, job).value();
        auto data = pattern(64, 4);
        std::vector<std::vector<std::byte>> got(100, std::vector<std::byte>(64));
        for (auto& g : got)
            ASSERT_FALSE(w.eps[target].recv(g, nullptr));
        for (int i = 0; i < 100; ++i) {
            ASSERT_FALSE(w.eps[0].send(w.peers[target], as_bytes_of(data), nullptr));
            ASSERT_FALSE(w.eps[0].write(w.peers[target], as_bytes_of(data), 64 * (i % 64), mr.key(),
                                        nullptr));
        }
        for (int i = 0; i < 200; ++i)
            wait_ok(w.cqs[0]);
        for (int i = 0; i < 100; ++i)
            wait_ok(w.cqs[target]);
        for (const auto& g : got)
            ASSERT_EQ(g, data);
        ASSERT_FALSE(
            w.eps[0].write(w.peers[target], as_bytes_of(data), 0, read_only.key(), nullptr));
        EXPECT_EQ(wait_error(w.cqs[0]).error, errc::access_denied);
        std::vector<std::byte> back(64);
        ASSERT_FALSE(w.eps[0].read(w.peers[target], back, 0, mr.key(), nullptr));
        wait_ok(w.cqs[0]);
        EXPECT_EQ(back, data);
        const endpoint_counters t = w.eps[target].counters(), i = w.eps[0].counters();
        if (in_acks) {
            EXPECT_EQ(t.answers_in_acks, 200u);
            EXPECT_EQ(i.answered_by_ack, 200u);
            EXPECT_EQ(t.answers_as_messages, 2u);  // the access error and the read's data
        } else {
            EXPECT_EQ(t.answers_in_acks, 0u);
            EXPECT_EQ(t.answers_as_messages, 202u);
            EXPECT_EQ(i.answered_by_ack, 0u);
        }
    }
}

// A send's message goes without a record of the endpoint unless its answer comes as a message
// (endpoint_impl::post_send_message). Over loss and reordering, with answers in ACKs and as
// messages, a stream of sends longer than the endpoint's 4096 records, 512 in flight, each
// completes once with its own status: every 97th is too long for the receives and fails with
// the target's TOO_LONG, the others succeed. A record promised and never given back would stall
// the stream.
TEST(functional_modes, a_stream_longer_than_the_records_completes_each_send_once) {
    for (const bool in_acks : {true, false}) {
        SCOPED_TRACE(in_acks ? "answers in ACKs" : "answers as messages");
        world w(lossy_fabric(21), 1, endpoint_attr{.job_id = job});
        const std::size_t target = w.add(endpoint_attr{.job_id = job, .answers_in_acks = in_acks});
        constexpr int n = 5000, window = 512;
        const auto small = pattern(8, 1), big = pattern(16, 2);
        std::vector<std::vector<std::byte>> got(window, std::vector<std::byte>(8));
        std::vector<int> ends(n, 0), contexts(n);
        int posted = 0, sends_done = 0, recvs_done = 0, truncated = 0;
        for (int steps = 0; sends_done < n || recvs_done < n; ++steps) {
            ASSERT_LT(steps, 5'000'000)
                << sends_done << " sends and " << recvs_done << " receives done";
            // Receives complete in the order they were posted (untagged, matched first-posted
            // first), so the oldest buffer is the one given back.
            while (posted < n && posted - recvs_done < window && posted - sends_done < window) {
                const int i = posted++;
                ASSERT_FALSE(
                    w.eps[target].recv(got[static_cast<std::size_t>(i % window)], nullptr));
                ASSERT_FALSE(w.eps[0].send(w.peers[target], as_bytes_of(i % 97 == 0 ? big : small),
                                           &contexts[static_cast<std::size_t>(i)]));
            }
            const std::size_t sent = drain(w.cqs[0], [&](const completion& c) {
                const auto i = static_cast<int*>(c.context) - contexts.data();
                ASSERT_TRUE(i >= 0 && i < n);
                ++ends[static_cast<std::size_t>(i)];
                if (i % 97 == 0)
                    EXPECT_EQ(c.error, errc::message_too_long) << "send " << i;
                else
                    EXPECT_FALSE(c.error) << "send " << i << ": " << c.error.message();
                ++sends_done;
            });
            const std::size_t received = drain_receives(w.cqs[target], recvs_done, truncated);
            if (sent + received == 0) w.fab.progress();
        }
        EXPECT_EQ(truncated, (n + 96) / 97);
        for (int i = 0; i < n; ++i)
            ASSERT_EQ(ends[static_cast<std::size_t>(i)], 1) << "send " << i;
    }
}

// WRITEs are copied once, straight into the region as their packets arrive (no reassembly
// buffer), byte-exact through loss, reordering and duplicates, in every answered mode; nothing
// around the region is touched.
TEST(functional_modes, writes_are_placed_directly_into_the_region) {
    for (delivery mode : {delivery::rud, delivery::rod, delivery::rudi}) {
        fabric_attr fa = lossy_fabric(5);
        fa.impairments.duplicate = 0.05;
        world w(fa, 2, endpoint_attr{.job_id = job, .mode = mode});
        constexpr std::size_t guard = 4096, size = (2u << 20) + 100;
        std::vector<std::byte> memory(guard + size + guard);
        fill(memory, 3);
        const auto before = memory;
        std::span<std::byte> region(memory.data() + guard, size);
        auto mr = w.dom.register_memory(region, access::remote_write, job).value();
        std::uint64_t seed = 10, writes = 0;
        for (std::size_t len :
             {std::size_t{1}, std::size_t{8192}, std::size_t{8193}, std::size_t{(1u << 20) + 5}}) {
            for (std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{size - len}}) {
                auto data = pattern(len, ++seed);
                ASSERT_FALSE(
                    w.eps[0].write(w.peers[1], as_bytes_of(data), offset, mr.key(), nullptr));
                wait_ok(w.cqs[0]);
                ++writes;
                ASSERT_TRUE(std::equal(data.begin(), data.end(), region.begin() + offset))
                    << len << " bytes at " << offset << " mode " << int(mode);
            }
        }
        EXPECT_TRUE(std::equal(memory.begin(), memory.begin() + guard, before.begin()));
        EXPECT_TRUE(std::equal(memory.end() - guard, memory.end(), before.end() - guard));
        const endpoint_counters c = w.eps[1].counters();
        EXPECT_EQ(c.writes_placed_directly, writes) << "mode " << int(mode);
        EXPECT_EQ(c.write_packets_refused, 0u);
        EXPECT_EQ(c.rejected_key, 0u);
    }
}

// The endpoint's defaults, safe on a shared fabric (NSCC with REPS spraying), are what its engine
// runs; none and static_path still give the fixed window on one path of point-to-point runs.
// (The providers' prepare() leaves both alone.)
TEST(functional_attr, congestion_control_and_path_policy_reach_the_engine) {
    const endpoint_attr defaults;
    EXPECT_EQ(defaults.cc, congestion_control::nscc);
    EXPECT_EQ(defaults.lb, path_policy::reps);
    const engine_config c = detail::engine_config_for(defaults, 4096);
    EXPECT_EQ(c.cc, cc::algorithm::nscc);
    EXPECT_EQ(c.lb, lb::algorithm::reps);
    const engine_config p2p = detail::engine_config_for(
        endpoint_attr{.cc = congestion_control::none, .lb = path_policy::static_path}, 4096);
    EXPECT_EQ(p2p.cc, cc::algorithm::none);
    EXPECT_EQ(p2p.lb, lb::algorithm::static_path);
}

}  // namespace
}  // namespace uet::test
