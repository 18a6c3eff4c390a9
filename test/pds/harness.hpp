// A virtual-time loop that drives two engines over a pipe::duplex: at each step time jumps to
// the earliest of the engines' deadlines and the links' next arrivals; arrivals are delivered,
// timers fire, and whatever the engines want to send goes onto the links. No clock, no sleep:
// the same seeds give the same run. The simulator reuses this loop.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>

#include "engine.hpp"
#include "pipe.hpp"

namespace uet::test {

class harness {
  public:
    static constexpr std::uint64_t never = ~std::uint64_t{0};

    harness(engine& a, engine& b, pipe::duplex& net) : a_(a), b_(b), net_(net) {}

    std::uint64_t now() const { return now_; }

    // The time of the next event, never when there is none.
    std::uint64_t next_event() const {
        return std::min({a_.next_deadline(), b_.next_deadline(), net_.a_to_b.next_arrival(),
                         net_.b_to_a.next_arrival()});
    }

    // One step; false (and no time passes) when the next event is later than limit.
    bool step(std::uint64_t limit) {
        const std::uint64_t t = next_event();
        if (t == never || t > limit) return false;
        now_ = std::max(now_, t);
        net_.a_to_b.receive(now_, [&](std::span<const std::uint8_t> f) { b_.receive(f, now_); });
        net_.b_to_a.receive(now_, [&](std::span<const std::uint8_t> f) { a_.receive(f, now_); });
        if (between) between();
        pump(a_, net_.a_to_b);
        pump(b_, net_.b_to_a);
        ++steps_;
        return true;
    }

    // Steps until done() holds (true) or nothing happens before limit (false). done() is
    // checked between steps, so it may poll the engines.
    template <class Done>
    bool run_until(Done&& done, std::uint64_t limit) {
        while (!done())
            if (!step(limit)) return done();
        return true;
    }

    // Lets time pass to `t` (processing everything due before it).
    void run_to(std::uint64_t t) {
        while (step(t)) {
        }
        now_ = std::max(now_, t);
    }

    std::uint64_t steps() const { return steps_; }

    // Runs after each step's arrivals and before its transmissions (an application that
    // answers what arrived before the engine sends again).
    std::function<void()> between;

  private:
    void pump(engine& e, pipe::link& out) {
        for (;;) {
            const std::size_t n = e.transmit(now_, frames_);
            for (std::size_t i = 0; i < n; ++i)
                out.send(frames_[i].data, now_);
            if (n < frames_.size()) break;
        }
    }

    engine& a_;
    engine& b_;
    pipe::duplex& net_;
    std::uint64_t now_ = 0;
    std::uint64_t steps_ = 0;
    std::array<tx_frame, 64> frames_{};
};

}  // namespace uet::test
