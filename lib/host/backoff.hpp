// Idle back-off of a poll loop, as a pure decision so that it is testable without a clock:
// spin for a while (lowest latency), then pause the core (cheap, hyper-thread friendly), then
// give the core away (yield, then short sleeps) so that two pollers on two cores, or a poller
// and the kernel, do not starve each other.
#pragma once

#include <cstdint>

namespace uet::host {

struct backoff_config {
    bool enabled = true;               // false: always spin (benchmarks on dedicated cores)
    std::uint32_t spin_polls = 64;     // idle polls before pausing
    std::uint32_t pause_polls = 1024;  // idle polls (after spinning) with rte_pause
    std::uint32_t yield_polls = 64;    // idle polls (after pausing) with sched_yield
    std::uint64_t sleep_ns = 50'000;   // then nanosleep this long per idle poll
};

enum class idle_action : std::uint8_t { spin, pause, yield, sleep };

class idle_backoff {
  public:
    explicit idle_backoff(const backoff_config& cfg = {}) noexcept : cfg_(cfg) {}

    // Called after each poll: did_work = the poll moved a frame. Returns what to do before the
    // next poll.
    idle_action after_poll(bool did_work) noexcept {
        if (did_work || !cfg_.enabled) {
            idle_polls_ = 0;
            return idle_action::spin;
        }
        if (idle_polls_ < UINT32_MAX) ++idle_polls_;
        if (idle_polls_ <= cfg_.spin_polls) return idle_action::spin;
        if (idle_polls_ <= cfg_.spin_polls + cfg_.pause_polls) return idle_action::pause;
        if (idle_polls_ <= cfg_.spin_polls + cfg_.pause_polls + cfg_.yield_polls) {
            return idle_action::yield;
        }
        return idle_action::sleep;
    }
    // How long a sleep may last when the handler has a deadline at `deadline` (never past it).
    std::uint64_t sleep_for(std::uint64_t now, std::uint64_t deadline) const noexcept {
        if (deadline <= now) return 0;
        return deadline - now < cfg_.sleep_ns ? deadline - now : cfg_.sleep_ns;
    }
    const backoff_config& config() const noexcept { return cfg_; }
    void set_enabled(bool on) noexcept { cfg_.enabled = on; }

  private:
    backoff_config cfg_;
    std::uint32_t idle_polls_ = 0;
};

// Where a poller's time goes, from the clock it reads once per poll anyway: the time from one
// poll's start to the next counts as busy when that poll moved something, idle otherwise. Busy
// time so includes what the caller does after a busy poll (inline progress: handling the
// completions it produced), and idle time the back-off's pauses, yields and sleeps. It tells
// whether a side is the bottleneck (busy nearly all the time) and what a frame costs it.
class busy_meter {
  public:
    void poll_started(std::uint64_t now) noexcept {
        if (started_ && now > last_start_) (worked_ ? busy_ns_ : idle_ns_) += now - last_start_;
        started_ = true;
        last_start_ = now;
        worked_ = false;
    }
    void poll_ended(bool worked) noexcept { worked_ = worked; }
    std::uint64_t busy_ns() const noexcept { return busy_ns_; }
    std::uint64_t idle_ns() const noexcept { return idle_ns_; }

  private:
    std::uint64_t busy_ns_ = 0, idle_ns_ = 0, last_start_ = 0;
    bool started_ = false, worked_ = false;
};

}  // namespace uet::host
