// NSCC, the UET sender-side congestion control: a byte window driven by the queueing delay
// (RTT minus the smallest RTT seen) against a target, and by ECN echoes. Sans-I/O: every call
// takes `now` in nanoseconds; nothing here reads a clock or allocates.
//
// The algorithm follows the UET 1.0 NSCC description as the public uet-htsim simulator models it
// (htsim/sim/uec.cpp: updateCwndOnAck_NSCC, quick_adapt, fair/proportional/fast increase,
// multiplicative_decrease, fulfill_adjustment, initNsccParams). This is our own code.
//
// Four quadrants on each ACK, on (ECN echoed, delay >= target):
//   ECN,    delay >= target: multiplicative decrease (at most once per base RTT)
//   no ECN, delay >= target: fair increase (additive, the same bytes for every flow)
//   no ECN, delay <  target: proportional increase (more the further below target), or fast
//                            increase when the queue has been ~empty for a whole window
//   ECN,    delay <  target: hold the window; the mark came from one path, not the bottleneck:
//                            take_path_switch() reports it so the path selector avoids that path
// Increases accumulate and are applied once per 8 MTU acknowledged or per base RTT.
// Quick adapt: once per epoch (base RTT + target), after a NACK or a delay sample above 4 x target,
// a flow that delivered less than max_window / 8 in the epoch drops its window to what it did
// deliver. A NACK subtracts the NACKed bytes. The window stays in [1 MTU, 1.5 x BDP].
#pragma once

#include <cstdint>

#include "cc/controller.hpp"

namespace uet::cc {

// Engine-wide NSCC parameters (one per engine or per link speed, shared by all its PDCs; each
// nscc keeps a pointer to it, so it must outlive them). from_link() gives the htsim defaults.
struct nscc_params {
    std::uint32_t mtu = 4096;           // bytes of payload per full packet: the window unit
    double bytes_per_ns = 12.5;         // link rate (100 Gb/s = 12.5 bytes/ns)
    std::uint64_t base_rtt_ns = 12000;  // configured unloaded RTT; each PDC lowers it to its min
    std::uint64_t target_delay_ns = 9000;
    std::uint64_t quick_adapt_delay_ns = 36000;
    std::uint8_t quick_adapt_gate = 3;       // quick adapt only below max_window >> gate delivered
    double max_window_bdp = 1.5;             // window cap in BDPs
    double gamma = 0.8;                      // multiplicative decrease gain
    double delay_ewma = 0.0125;              // weight of a new delay sample in the average
    double prop_alpha = 0;                   // proportional increase gain, bytes per byte-ns
    double fair_inc = 0;                     // fair increase: bytes per window acknowledged
    double eta = 0;                          // extra bytes added once per adjust period
    double fast_inc_scale = 0;               // fast increase: fraction of acked bytes added
    std::uint64_t fast_inc_delay_ns = 1000;  // "queue ~empty" below this delay
    std::uint64_t adjust_period_ns = 12000;  // apply pending increases at least this often
    std::uint64_t adjust_bytes = 8 * 4096;   // ... or after this many bytes acknowledged
    std::uint64_t initial_window = 0;        // 0: start at the max window (line rate)

    // Bandwidth-delay product for an RTT, in bytes.
    double bdp(std::uint64_t rtt_ns) const noexcept { return bytes_per_ns * double(rtt_ns); }

    // Defaults scaled from the link, as htsim initNsccParams does. `trimming`: whether switches
    // trim (then the target is 0.75 x RTT, else 1 x RTT).
    static nscc_params from_link(double gbps, std::uint64_t base_rtt_ns, std::uint32_t mtu,
                                 bool trimming = true) noexcept;
};

class nscc final : public controller {
  public:
    // Which rule the last signal applied (for tests, counters and traces).
    enum class action : std::uint8_t {
        none,
        decrease,
        fair_increase,
        proportional_increase,
        fast_increase,
        switch_path,
        quick_adapt,
        ignored,  // an ECN echo for data sent before the last quick adapt
        nack,
        timeout,
    };

    explicit nscc(const nscc_params& params) noexcept;

    void on_ack(std::uint32_t bytes, std::uint64_t rtt_ns, bool ecn,
                std::uint64_t now) noexcept override;
    void on_nack(std::uint32_t bytes, bool trimmed, std::uint64_t now) noexcept override;
    void on_timeout(std::uint64_t now) noexcept override;
    std::uint64_t window_bytes() const noexcept override {
        return static_cast<std::uint64_t>(cwnd_);
    }
    bool take_path_switch() noexcept override;

    std::uint64_t max_window() const noexcept;
    std::uint64_t min_window() const noexcept { return p_->mtu; }
    double avg_delay_ns() const noexcept { return avg_delay_; }
    std::uint64_t base_rtt_ns() const noexcept { return base_rtt_; }
    action last_action() const noexcept { return last_; }

  private:
    std::uint64_t sample_delay(std::uint64_t rtt_ns, bool ecn) noexcept;
    void update_avg_delay(double delay_ns, bool ecn) noexcept;
    bool quick_adapt(bool loss, bool ecn, std::uint64_t delay, std::uint64_t now) noexcept;
    void apply_quadrant(std::uint32_t bytes, bool ecn, std::uint64_t delay,
                        std::uint64_t now) noexcept;
    void fair_increase(std::uint32_t bytes) noexcept;
    void proportional_increase(std::uint32_t bytes, std::uint64_t delay) noexcept;
    bool fast_increase(std::uint32_t bytes, std::uint64_t delay) noexcept;
    void multiplicative_decrease(std::uint64_t now) noexcept;
    void maybe_adjust(std::uint64_t now) noexcept;
    void clamp() noexcept;
    void count_delivered(std::uint32_t bytes) noexcept;

    const nscc_params* p_;
    double cwnd_;                      // bytes; fractional so that small increments add up
    double pending_inc_ = 0;           // accumulated increase numerator (bytes^2), divided by cwnd
    double avg_delay_ = 0;             // ns, EWMA of queueing delay
    std::uint64_t base_rtt_;           // ns, smallest RTT seen (starts at the configured one)
    std::uint64_t epoch_end_ = 0;      // quick-adapt epoch boundary
    std::uint64_t last_adjust_ = 0;    // last time increases were applied with eta
    std::uint64_t last_decrease_ = 0;  // last multiplicative decrease
    std::uint64_t epoch_bytes_ = 0;    // delivered in this quick-adapt epoch
    std::uint64_t since_adjust_ = 0;   // acknowledged since the increases were last applied
    std::uint64_t fast_bytes_ = 0;     // acknowledged at ~zero delay in a row
    std::uint64_t ignore_bytes_ = 0;   // still to hear about from before the last quick adapt
    bool epoch_started_ = false;
    bool qa_triggered_ = false;  // a NACK asked for quick adapt at the next epoch boundary
    bool fast_mode_ = false;
    bool switch_path_ = false;
    action last_ = action::none;
};

}  // namespace uet::cc
