#include "dpdk/poll_loop.hpp"

#include <sched.h>
#include <time.h>

#include "dpdk/dpdk_include.hpp"
#include "dpdk/eal.hpp"

namespace uet::dpdk {

poll_loop::poll_loop(host::packet_io& io, host::frame_handler& handler,
                     const host::backoff_config& backoff)
    : io_(io), handler_(handler), backoff_(backoff) {
    handler_.on_start(io_.caps());
}

poll_loop::~poll_loop() {
    stop();
    join();
}

std::size_t poll_loop::poll_once(std::uint64_t now) {
    last_now_ = now;
    ++stats_.polls;
    busy_.poll_started(now);
    const std::size_t rx = io_.receive_burst(handler_, now);
    const bool worked = between_ && between_(between_ctx_, now);
    const std::size_t tx = io_.transmit_burst(handler_, now);
    stats_.rx_frames += rx;
    stats_.tx_frames += tx;
    const std::size_t moved = rx + tx + (worked ? 1 : 0);
    busy_.poll_ended(moved != 0);
    return moved;
}

loop_stats poll_loop::stats() const noexcept {
    loop_stats s = stats_;
    s.busy_ns = busy_.busy_ns();
    s.idle_ns = busy_.idle_ns();
    return s;
}

std::size_t poll_loop::poll_once() {
    return poll_once(now_ns());
}

void poll_loop::idle(host::idle_action a, std::uint64_t now) {
    switch (a) {
        case host::idle_action::spin:
            return;
        case host::idle_action::pause:
            ++stats_.pauses;
            rte_pause();
            return;
        case host::idle_action::yield:
            ++stats_.yields;
            sched_yield();
            return;
        case host::idle_action::sleep: {
            // Never sleep past the handler's next deadline (a retransmit timer, an ARP retry).
            const std::uint64_t ns = backoff_.sleep_for(now, handler_.next_deadline());
            if (ns == 0) return;
            ++stats_.sleeps;
            const timespec ts{static_cast<time_t>(ns / 1'000'000'000),
                              static_cast<long>(ns % 1'000'000'000)};
            nanosleep(&ts, nullptr);
            return;
        }
    }
}

std::size_t poll_loop::poll_and_backoff() {
    const std::size_t moved = poll_once();
    if (moved == 0) ++stats_.idle_polls;
    idle(backoff_.after_poll(moved != 0), last_now_);
    return moved;
}

void poll_loop::run() {
    while (!stop_.load(std::memory_order_relaxed))
        poll_and_backoff();
}

int poll_loop::lcore_main(void* self) {
    static_cast<poll_loop*>(self)->run();
    return 0;
}

bool poll_loop::launch(unsigned lcore_id) {
    if (lcore_ != ~0u || lcore_id == rte_get_main_lcore() || !rte_lcore_is_enabled(lcore_id)) {
        return false;
    }
    stop_.store(false, std::memory_order_relaxed);
    if (rte_eal_remote_launch(&poll_loop::lcore_main, this, lcore_id) != 0) return false;
    lcore_ = lcore_id;
    return true;
}

void poll_loop::join() {
    if (lcore_ == ~0u) return;
    rte_eal_wait_lcore(lcore_);
    lcore_ = ~0u;
}

}  // namespace uet::dpdk
