// Drives one host::frame_handler over one host::packet_io: receive a burst, let the handler
// transmit a burst, back off while idle. Two ways to run it :
//  - inline progress: the application thread calls poll_once() itself whenever it likes;
//  - a dedicated lcore: launch(lcore) runs the loop there until stop().
// The clock (TSC, converted to ns) is read once per poll, i.e. once per pair of bursts.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "host/backoff.hpp"
#include "host/frame_handler.hpp"

namespace uet::dpdk {

struct loop_stats {
    std::uint64_t polls = 0, rx_frames = 0, tx_frames = 0, idle_polls = 0;
    std::uint64_t pauses = 0, yields = 0, sleeps = 0;
    // Time between poll starts, by whether the poll moved anything (see host::busy_meter).
    std::uint64_t busy_ns = 0, idle_ns = 0;
};

class poll_loop {
  public:
    poll_loop(host::packet_io& io, host::frame_handler& handler,
              const host::backoff_config& backoff = {});
    poll_loop(const poll_loop&) = delete;
    poll_loop& operator=(const poll_loop&) = delete;
    ~poll_loop();

    // One receive burst and one transmit burst at time now (ns). Returns frames moved.
    std::size_t poll_once(std::uint64_t now);
    // The same, reading the clock (the EAL must be running).
    std::size_t poll_once();
    // poll_once, then the idle back-off the result calls for (nothing after useful work).
    std::size_t poll_and_backoff();

    // Runs poll_and_backoff in the calling thread until stop() is called (from another thread
    // or from the handler).
    void run();
    // Runs the loop on a worker lcore of the EAL. False if that lcore is not a free worker.
    bool launch(unsigned lcore_id);
    // Asks run()/the lcore to return after its current poll; join() waits for the lcore.
    void stop() noexcept { stop_.store(true, std::memory_order_relaxed); }
    void join();

    void set_backoff(bool enabled) noexcept { backoff_.set_enabled(enabled); }
    // Work run between the two bursts of each poll (the application's part: what it answers
    // to the frames just received then leaves in the same poll's transmit burst); its result
    // says whether it did anything (no back-off after useful work). It is given the poll's
    // time, read once for the poll: a TSC read is not free, and a second one would add its
    // cost to every poll.
    void set_between_bursts(bool (*fn)(void*, std::uint64_t), void* ctx) noexcept {
        between_ = fn;
        between_ctx_ = ctx;
    }
    loop_stats stats() const noexcept;

  private:
    static int lcore_main(void* self);
    void idle(host::idle_action a, std::uint64_t now);

    host::packet_io& io_;
    host::frame_handler& handler_;
    host::idle_backoff backoff_;
    loop_stats stats_;
    host::busy_meter busy_;
    std::atomic<bool> stop_{false};
    unsigned lcore_ = ~0u;
    std::uint64_t last_now_ = 0;
    bool (*between_)(void*, std::uint64_t) = nullptr;
    void* between_ctx_ = nullptr;
};

}  // namespace uet::dpdk
