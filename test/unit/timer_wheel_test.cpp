// Timer wheel: exact behaviour on small cases, then randomized runs in lock step with a
// brute-force model (an ordered set of (deadline, schedule order)).
#include "core/timer_wheel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "core/ring_index.hpp"
#include "core/rng.hpp"

namespace {

using uet::rng;
using uet::timer_node;
using uet::timer_wheel;

constexpr std::uint64_t never = timer_wheel::never;
constexpr std::uint64_t us = 1000, ms = 1000 * us, sec = 1000 * ms;

// Records the cookies of fired nodes.
struct recorder {
    std::vector<std::uint64_t> fired;
    void operator()(timer_node& n) { fired.push_back(n.cookie); }
};

TEST(rng, deterministic_and_in_range) {
    rng a(42), b(42), c(43);
    for (int i = 0; i < 100; ++i) {
        const std::uint64_t x = a.next_u64();
        EXPECT_EQ(x, b.next_u64());
        EXPECT_NE(x, c.next_u64());  // 2^-64 chance of a spurious failure per draw, fixed seed
    }
    for (int i = 0; i < 10000; ++i) {
        EXPECT_LT(a.uniform(7), 7u);
        const double d = a.next_double();
        EXPECT_GE(d, 0.0);
        EXPECT_LT(d, 1.0);
        const std::uint64_t v = a.between(5, 9);
        EXPECT_GE(v, 5u);
        EXPECT_LE(v, 9u);
    }
    EXPECT_EQ(a.uniform(0), 0u);
    EXPECT_EQ(a.uniform(1), 0u);
    EXPECT_FALSE(a.bernoulli(0));
    EXPECT_TRUE(a.bernoulli(1));
}

TEST(rng, uniform_is_unbiased) {
    rng r(7);
    // n = 3 * 2^62: a modulo reduction would hit the lowest third twice as often.
    const std::uint64_t n = 3ull << 62;
    int low = 0;
    const int draws = 300000;
    for (int i = 0; i < draws; ++i)
        low += r.uniform(n) < (1ull << 62);
    EXPECT_NEAR(static_cast<double>(low) / draws, 1.0 / 3, 0.01);
    std::vector<int> buckets(10);
    for (int i = 0; i < draws; ++i)
        ++buckets[r.uniform(10)];
    for (int b : buckets)
        EXPECT_NEAR(b, draws / 10, draws / 100);
    int heads = 0;
    for (int i = 0; i < draws; ++i)
        heads += r.bernoulli(0.25);
    EXPECT_NEAR(static_cast<double>(heads) / draws, 0.25, 0.01);
}

TEST(timer_wheel, empty) {
    timer_wheel w;
    EXPECT_TRUE(w.empty());
    EXPECT_EQ(w.next_deadline(), never);
    recorder r;
    EXPECT_EQ(w.advance(10 * sec, r), 0u);
    EXPECT_EQ(w.next_deadline(), never);
}

TEST(timer_wheel, fires_at_deadline_never_before) {
    timer_wheel w(1000);
    timer_node n(1);
    w.schedule(n, 1500);  // inside tick 1
    EXPECT_TRUE(n.scheduled());
    EXPECT_EQ(w.next_deadline(), 1500u);
    recorder r;
    EXPECT_EQ(w.advance(1000, r), 0u);
    EXPECT_EQ(w.advance(1499, r), 0u);
    EXPECT_TRUE(r.fired.empty());
    EXPECT_EQ(w.advance(1500, r), 1u);
    EXPECT_EQ(r.fired, std::vector<std::uint64_t>{1});
    EXPECT_FALSE(n.scheduled());
    EXPECT_TRUE(w.empty());
    EXPECT_EQ(w.next_deadline(), never);
}

TEST(timer_wheel, past_deadline_fires_on_next_advance) {
    timer_wheel w(1000);
    recorder r;
    w.advance(5 * ms, r);
    timer_node n(9);
    w.schedule(n, 1 * ms);
    EXPECT_EQ(w.next_deadline(), 1 * ms);
    EXPECT_EQ(w.advance(5 * ms, r), 1u);
    EXPECT_EQ(r.fired, std::vector<std::uint64_t>{9});
}

TEST(timer_wheel, ties_fire_in_schedule_order_and_deadlines_in_order) {
    timer_wheel w(1000);
    std::vector<timer_node> nodes(8);
    // Same tick, deadlines out of order, with ties.
    const std::uint64_t deadlines[8] = {2900, 2100, 2500, 2100, 2900, 2000, 2500, 2100};
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        nodes[i].cookie = i;
        w.schedule(nodes[i], deadlines[i]);
    }
    recorder r;
    EXPECT_EQ(w.advance(2999, r), 8u);
    EXPECT_EQ(r.fired, (std::vector<std::uint64_t>{5, 1, 3, 7, 2, 6, 0, 4}));
}

TEST(timer_wheel, partial_tick_keeps_later_timers) {
    timer_wheel w(1000);
    timer_node a(1), b(2);
    w.schedule(a, 7100);
    w.schedule(b, 7600);
    recorder r;
    EXPECT_EQ(w.advance(7300, r), 1u);
    EXPECT_EQ(w.next_deadline(), 7600u);
    EXPECT_EQ(w.advance(7599, r), 0u);
    EXPECT_EQ(w.advance(7600, r), 1u);
    EXPECT_EQ(r.fired, (std::vector<std::uint64_t>{1, 2}));
}

TEST(timer_wheel, cancel_and_reschedule) {
    timer_wheel w(1000);
    timer_node a(1), b(2), c(3);
    w.schedule(a, 10 * us);
    w.schedule(b, 20 * us);
    w.schedule(c, 30 * us);
    EXPECT_TRUE(w.cancel(b));
    EXPECT_FALSE(w.cancel(b));
    EXPECT_EQ(w.size(), 2u);
    w.reschedule(a, 40 * us);  // later
    w.reschedule(c, 5 * us);   // earlier
    EXPECT_EQ(w.next_deadline(), 5 * us);
    recorder r;
    w.advance(100 * us, r);
    EXPECT_EQ(r.fired, (std::vector<std::uint64_t>{3, 1}));
}

TEST(timer_wheel, periodic_reschedule_from_handler) {
    timer_wheel w(1000);
    timer_node n(1);
    std::vector<std::uint64_t> at;
    w.schedule(n, 3 * us);
    // One call covering 1 ms: a 10 us period fires 100 times (3, 13, ..., 993 us).
    std::size_t fired = w.advance(1 * ms, [&](timer_node& t) {
        at.push_back(t.deadline());
        w.schedule(t, t.deadline() + 10 * us);
    });
    EXPECT_EQ(fired, 100u);
    ASSERT_EQ(at.size(), 100u);
    for (std::size_t i = 0; i < at.size(); ++i)
        EXPECT_EQ(at[i], 3 * us + i * 10 * us);
    EXPECT_EQ(w.next_deadline(), 1003 * us);
}

TEST(timer_wheel, rearm_at_now_fires_again_in_same_advance) {
    timer_wheel w(1000);
    timer_node n(1);
    w.schedule(n, 500);
    int runs = 0;
    w.advance(2500, [&](timer_node& t) {
        if (++runs < 5) w.schedule(t, 2500);  // due again: the same call must fire it
    });
    EXPECT_EQ(runs, 5);
    EXPECT_TRUE(w.empty());
}

TEST(timer_wheel, handler_cancels_timer_of_the_same_batch) {
    timer_wheel w(1000);
    timer_node a(1), b(2), c(3);
    w.schedule(a, 100);
    w.schedule(b, 200);
    w.schedule(c, 300);
    recorder r;
    w.advance(1000, [&](timer_node& t) {
        r(t);
        if (t.cookie == 1) {
            EXPECT_TRUE(w.cancel(b));
        }
    });
    EXPECT_EQ(r.fired, (std::vector<std::uint64_t>{1, 3}));
    EXPECT_TRUE(w.empty());
}

TEST(timer_wheel, next_deadline_inside_handler_and_across_levels) {
    timer_wheel w(1000);
    timer_node near_(1), mid(2), far_(3);
    w.schedule(near_, 100 * us);  // level 0
    w.schedule(mid, 50 * ms);     // level 1
    w.schedule(far_, 10 * sec);   // level 2
    EXPECT_EQ(w.next_deadline(), 100 * us);
    w.cancel(near_);
    EXPECT_LE(w.next_deadline(), 50 * ms);
    EXPECT_GT(w.next_deadline(), 0u);
    recorder r;
    // Following next_deadline() reaches the timer in a few steps.
    int steps = 0;
    while (r.fired.empty()) {
        ASSERT_LT(++steps, 10);
        w.advance(w.next_deadline(), r);
    }
    EXPECT_EQ(r.fired, std::vector<std::uint64_t>{2});
    EXPECT_LE(w.next_deadline(), 10 * sec);
}

TEST(timer_wheel, far_future_beyond_span) {
    timer_wheel w(1000);  // span 2^32 us, about 71.6 minutes
    timer_node hour3(1), day(2), last(3), end(4);
    w.schedule(hour3, 3 * 3600 * sec + 17);
    w.schedule(day, 24 * 3600 * sec + 5);
    w.schedule(last, never - 1);
    w.schedule(end, never);
    EXPECT_LE(w.next_deadline(), 3 * 3600 * sec + 17);
    recorder r;
    EXPECT_EQ(w.advance(3 * 3600 * sec + 16, r), 0u);
    EXPECT_EQ(w.advance(3 * 3600 * sec + 17, r), 1u);
    EXPECT_EQ(w.advance(24 * 3600 * sec + 4, r), 0u);
    EXPECT_EQ(w.advance(24 * 3600 * sec + 5, r), 1u);
    EXPECT_EQ(w.advance(never - 2, r), 0u);
    EXPECT_EQ(w.advance(never - 1, r), 1u);
    EXPECT_EQ(w.advance(never, r), 1u);
    EXPECT_EQ(r.fired, (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST(timer_wheel, start_time_far_from_zero) {
    const std::uint64_t t0 = 1'700'000'000ull * sec;  // wall-clock-like epoch nanoseconds
    timer_wheel w(1000, t0);
    timer_node n(1);
    w.schedule(n, t0 + 250 * us);
    recorder r;
    EXPECT_EQ(w.advance(t0 + 249 * us, r), 0u);
    EXPECT_EQ(w.advance(t0 + 250 * us, r), 1u);
}

TEST(timer_wheel, copy_of_node_is_unscheduled) {
    timer_wheel w;
    timer_node a(5);
    w.schedule(a, 10);
    timer_node b = a;
    EXPECT_EQ(b.cookie, 5u);
    EXPECT_FALSE(b.scheduled());
    EXPECT_TRUE(a.scheduled());
}

TEST(timer_wheel, clear_unschedules_and_destructor_leaves_nodes_alone) {
    timer_node kept(1);
    {
        timer_wheel w;
        w.schedule(kept, 1 * sec);
        w.clear();
        EXPECT_FALSE(kept.scheduled());
        EXPECT_TRUE(w.empty());
        EXPECT_EQ(w.next_deadline(), never);
    }
    // Owners commonly destroy their nodes before the wheel; that must be safe.
    auto w = std::make_unique<timer_wheel>();
    {
        std::vector<timer_node> nodes(100);
        for (std::size_t i = 0; i < nodes.size(); ++i)
            w->schedule(nodes[i], i * us);
    }
    w.reset();
}

// ---- randomized, against the model ----

struct model_run {
    explicit model_run(std::uint64_t tick, std::uint64_t seed, std::uint64_t start = 0)
        : nodes(512), w(tick, start), r(seed), now(start) {
        for (std::size_t i = 0; i < nodes.size(); ++i)
            nodes[i].cookie = i;
        keys.resize(nodes.size());
    }

    std::vector<timer_node> nodes;  // declared first: outlives the wheel
    timer_wheel w;
    rng r;
    std::uint64_t now;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> keys;  // (deadline, seq) if scheduled
    std::set<std::pair<std::pair<std::uint64_t, std::uint64_t>, std::size_t>> model;
    std::uint64_t seq = 0;
    std::size_t fired = 0;

    static std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
        return a > never - b ? never : a + b;
    }

    // Offsets from 1 ns to hours, roughly log-uniform, plus some in the past.
    std::uint64_t random_deadline() {
        switch (r.uniform(8)) {
            case 0:
                return now - std::min(now, r.uniform(5 * ms));
            case 1:
                return add_sat(now, r.uniform(2000));
            case 2:
                return add_sat(now, r.uniform(300 * us));
            case 3:
                return add_sat(now, r.uniform(70 * ms));
            case 4:
                return add_sat(now, r.uniform(20 * sec));
            case 5:
                return add_sat(now, r.uniform(2 * 3600 * sec));
            case 6:
                return add_sat(now, r.uniform(48 * 3600 * sec));
            default:
                return add_sat(now, r.uniform(1ull << r.uniform(40)));
        }
    }

    void schedule(std::size_t i, std::uint64_t deadline) {
        if (nodes[i].scheduled()) model.erase({keys[i], i});
        keys[i] = {deadline, seq++};
        model.insert({keys[i], i});
        w.schedule(nodes[i], deadline);
    }

    void cancel(std::size_t i) {
        const bool was = nodes[i].scheduled();
        EXPECT_EQ(w.cancel(nodes[i]), was);
        if (was) model.erase({keys[i], i});
    }

    void check_next_deadline() {
        const std::uint64_t nd = w.next_deadline();
        if (model.empty()) {
            ASSERT_EQ(nd, never);
        } else {
            ASSERT_LE(nd, model.begin()->first.first) << "next_deadline later than the earliest";
        }
        ASSERT_EQ(w.size(), model.size());
    }

    // Timers armed by a handler during this advance(): they must fire within it if due, but
    // only after the batch being fired, so the strict order check applies to the others.
    std::vector<bool> late = std::vector<bool>(512);

    void advance_to(std::uint64_t t, bool rearm) {
        now = t;
        std::fill(late.begin(), late.end(), false);
        w.advance(now, [&](timer_node& n) {
            ++fired;
            const std::size_t i = n.cookie;
            ASSERT_TRUE(nodes[i].deadline() <= now) << "fired early";
            ASSERT_TRUE(model.count({keys[i], i})) << "fired a timer that is not scheduled";
            auto first = model.begin();
            while (first != model.end() && late[first->second])
                ++first;
            if (!late[i]) {
                ASSERT_EQ(first->second, i)
                    << "out of (deadline, schedule order) order: expected d=" << first->first.first
                    << " got d=" << n.deadline() << " now=" << now;
            }
            ASSERT_EQ(n.deadline(), keys[i].first);
            model.erase({keys[i], i});
            late[i] = false;
            if (rearm && r.bernoulli(0.3)) {
                const std::uint64_t span = r.bernoulli(0.5) ? 50 * us : 30 * sec;
                schedule(i, add_sat(n.deadline(), 1 + r.uniform(span)));
                late[i] = true;
            }
            if (rearm && r.bernoulli(0.1)) cancel(r.uniform(nodes.size()));
        });
        if (!model.empty()) {
            ASSERT_GT(model.begin()->first.first, now) << "a due timer survived advance()";
        }
    }

    std::uint64_t random_step() {
        switch (r.uniform(6)) {
            case 0:
                return 0;
            case 1:
                return r.uniform(3000);
            case 2:
                return r.uniform(500 * us);
            case 3:
                return r.uniform(100 * ms);
            case 4:
                return r.uniform(30 * sec);
            default:
                return r.bernoulli(0.05) ? r.uniform(5 * 3600 * sec) : r.uniform(2 * ms);
        }
    }

    void run(int ops, bool rearm) {
        for (int op = 0; op < ops; ++op) {
            const std::size_t i = r.uniform(nodes.size());
            switch (r.uniform(10)) {
                case 0:
                case 1:
                case 2:
                case 3:
                    schedule(i, random_deadline());
                    break;
                case 4:
                    cancel(i);
                    break;
                case 5: {
                    // Follow next_deadline() as an event loop would.
                    const std::uint64_t nd = w.next_deadline();
                    if (nd != never && nd >= now) advance_to(nd, rearm);
                    break;
                }
                default:
                    advance_to(add_sat(now, random_step()), rearm);
                    break;
            }
            check_next_deadline();
            if (::testing::Test::HasFatalFailure()) return;
        }
        advance_to(never, false);  // drain: everything fires, in order
        EXPECT_TRUE(model.empty());
        EXPECT_TRUE(w.empty());
    }
};

class timer_wheel_model : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(timer_wheel_model, matches_brute_force) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        model_run m(GetParam(), seed * 1000 + GetParam());
        m.run(60000, false);
        ASSERT_FALSE(HasFatalFailure()) << "seed " << seed;
        EXPECT_GT(m.fired, 1000u);
    }
}

TEST_P(timer_wheel_model, matches_brute_force_with_handler_rearm_and_cancel) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        model_run m(GetParam(), seed * 7777 + GetParam(), seed * 123456789ull * sec);
        m.run(60000, true);
        ASSERT_FALSE(HasFatalFailure()) << "seed " << seed;
        EXPECT_GT(m.fired, 1000u);
    }
}

// Tick widths: 1 ns (span ~4.3 s, heavy overflow use), 1 us, an odd 7 ns, 1 ms.
INSTANTIATE_TEST_SUITE_P(ticks, timer_wheel_model, ::testing::Values(1, 1000, 7, 1000000));

TEST(timer_wheel, many_timers_in_one_slot_fire_sorted) {
    timer_wheel w(1 * ms);
    rng r(3);
    std::vector<timer_node> nodes(5000);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> expect;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        nodes[i].cookie = i;
        const std::uint64_t d = 5 * ms + r.uniform(1000);  // lots of ties too
        w.schedule(nodes[i], d);
        expect.push_back({d, i});
    }
    std::sort(expect.begin(), expect.end());
    std::vector<std::uint64_t> got;
    w.advance(6 * ms, [&](timer_node& n) { got.push_back(n.cookie); });
    ASSERT_EQ(got.size(), expect.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(got[i], expect[i].second);
}

// The rings' index helpers (lib/core/ring_index.hpp) agree with the modulo they replace over
// their whole domain (base < size, offset <= size), for sizes that are and are not powers of two.
TEST(ring_index, matches_modulo_over_its_domain) {
    for (std::size_t size = 1; size <= 70; ++size) {
        for (std::size_t base = 0; base < size; ++base) {
            EXPECT_EQ(uet::ring_next(base, size), (base + 1) % size);
            for (std::size_t offset = 0; offset <= size; ++offset)
                EXPECT_EQ(uet::ring_add(base, offset, size), (base + offset) % size);
        }
    }
}

}  // namespace

// next_deadline() keeps its last answer while it is still a lower bound (a cancel leaves it
// early), and counts again once advance() has passed it: an event loop that sleeps until it
// never spins on a deadline already gone.
TEST(timer_wheel, next_deadline_kept_while_a_bound_and_recounted_once_passed) {
    timer_wheel w(1000);
    timer_node a(1), b(2);
    w.schedule(a, 100 * us);
    w.schedule(b, 200 * us);
    EXPECT_EQ(w.next_deadline(), 100 * us);
    w.cancel(a);
    EXPECT_LE(w.next_deadline(), 200 * us);  // early is allowed, late never
    recorder r;
    EXPECT_EQ(w.advance(150 * us, r), 0u);
    EXPECT_EQ(w.next_deadline(), 200 * us);
    timer_node c(3);
    w.schedule(c, 160 * us);  // earlier than the answer kept: it must show at once
    EXPECT_EQ(w.next_deadline(), 160 * us);
    EXPECT_EQ(w.advance(200 * us, r), 2u);
    EXPECT_EQ(w.next_deadline(), never);
}
