// A virtual-time loop that drives two engines over a pipe::duplex: at each step time jumps to
// the earliest of the engines' deadlines and the links' next arrivals; arrivals are delivered,
// timers fire, and whatever the engines want to send goes onto the links. No clock, no sleep:
// the same seeds give the same run. The simulator reuses this loop.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/engine.hpp"
#include "pipe/pipe.hpp"
#include "wire/frame.hpp"
#include "wire/uet_packet.hpp"

namespace uet::test {

// A frame's L2-L4 view and its UET headers, as a test reads what an engine sent.
struct captured {
    wire::l2l4_view l2;
    wire::uet_packet pkt;
};

inline bool decode(std::span<const std::uint8_t> frame, captured& out) {
    return wire::parse_l2l4(frame, out.l2) == wire::reject_reason::none &&
           wire::decode_uet(out.l2.l4_payload, false, out.pkt) == wire::reject_reason::none;
}

// Every frame e has to send at `now`, copied out.
inline std::vector<std::vector<std::uint8_t>> drain_tx(engine& e, std::uint64_t now) {
    std::vector<std::vector<std::uint8_t>> frames;
    std::array<tx_frame, 64> out{};
    for (std::size_t n; (n = e.transmit(now, out)) > 0;) {
        for (std::size_t i = 0; i < n; ++i)
            frames.emplace_back(out[i].data.begin(), out[i].data.end());
        if (n < out.size()) break;
    }
    return frames;
}

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
        if (burst == 0) {
            net_.a_to_b.receive(now_,
                                [&](std::span<const std::uint8_t> f) { b_.receive(f, now_); });
            net_.b_to_a.receive(now_,
                                [&](std::span<const std::uint8_t> f) { a_.receive(f, now_); });
        } else {
            deliver_bursts(net_.a_to_b, b_);
            deliver_bursts(net_.b_to_a, a_);
        }
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
    // 0: each arrival to engine::receive; n: a step's arrivals to engine::receive_burst, n
    // frames at most at a time (as a port's receive burst hands them over).
    std::size_t burst = 0;
    // If set, every frame either engine sends is folded into it (FNV-1a), in order.
    std::uint64_t* trace = nullptr;
    // 0: each step hands transmit() 64 rooms until a call fills fewer; n: n rooms (1 to 64) per
    // call until a call fills none, everything the engines have to send at that time.
    std::size_t tx_room = 0;
    // Each frame handed to transmit() with a room of its own (as a port's mbufs), so that the
    // engine builds frames there rather than in its staging buffer.
    bool rooms = false;

  private:
    void deliver_bursts(pipe::link& in, engine& to) {
        held_.clear();
        in.receive(
            now_, [&](std::span<const std::uint8_t> f) { held_.emplace_back(f.begin(), f.end()); });
        for (std::size_t i = 0; i < held_.size(); i += burst) {
            std::vector<std::span<const std::uint8_t>> spans;
            for (std::size_t k = i; k < std::min(held_.size(), i + burst); ++k)
                spans.emplace_back(held_[k]);
            to.receive_burst(spans, now_);
        }
    }

    void pump(engine& e, pipe::link& out) {
        const std::size_t room = tx_room == 0 ? frames_.size() : std::min(tx_room, frames_.size());
        if (rooms && room_buf_.empty()) room_buf_.assign(frames_.size() * room_bytes, 0);
        for (std::size_t i = 0; i < frames_.size(); ++i)
            frames_[i].room = rooms ? std::span(room_buf_).subspan(i * room_bytes, room_bytes)
                                    : std::span<std::uint8_t>{};
        for (;;) {
            const std::size_t n = e.transmit(now_, std::span(frames_).first(room));
            for (std::size_t i = 0; i < n; ++i) {
                out.send(frames_[i].data, now_);
                if (trace)
                    for (const std::uint8_t b : frames_[i].data)
                        *trace = (*trace ^ b) * 0x100000001b3ull;
            }
            if (tx_room == 0 ? n < frames_.size() : n == 0) break;
        }
    }

    engine& a_;
    engine& b_;
    pipe::duplex& net_;
    std::uint64_t now_ = 0;
    std::uint64_t steps_ = 0;
    std::array<tx_frame, 64> frames_{};
    static constexpr std::size_t room_bytes = 16384;
    std::vector<std::uint8_t> room_buf_;
    std::vector<std::vector<std::uint8_t>> held_;
};

}  // namespace uet::test
