#include "cc/nscc.hpp"

#include <algorithm>

namespace uet::cc {

namespace {

// NSCC's constants are specified for a reference network of 100 Gb/s and 12 us RTT and scaled
// to the real one (UET 1.0 NSCC; htsim initNsccParams: _reference_network_linkspeed/rtt).
constexpr double reference_bytes_per_ns = 100.0 / 8.0;
constexpr double reference_rtt_ns = 12000.0;
constexpr double reference_bdp = reference_bytes_per_ns * reference_rtt_ns;

}  // namespace

nscc_params nscc_params::from_link(double gbps, std::uint64_t base_rtt_ns, std::uint32_t mtu,
                                   bool trimming) noexcept {
    nscc_params p;
    p.mtu = mtu;
    p.bytes_per_ns = gbps / 8.0;
    p.base_rtt_ns = base_rtt_ns;
    // Target queueing delay: 0.75 x RTT when switches trim (a trimmed packet already tells the
    // sender about a full queue), 1 x RTT otherwise (htsim initNsccParams).
    p.target_delay_ns = trimming ? base_rtt_ns * 3 / 4 : base_rtt_ns;
    // Quick adapt fires on delay above 4 x target (htsim _qa_threshold) and only for flows that
    // delivered less than max_window >> 3 in the epoch (htsim _qa_gate default 3).
    p.quick_adapt_delay_ns = 4 * p.target_delay_ns;
    p.quick_adapt_gate = 3;
    p.max_window_bdp = 1.5;  // htsim initNscc: maxwnd = 1.5 x BDP
    p.gamma = 0.8;           // htsim _gamma
    p.delay_ewma = 0.0125;   // htsim _delay_alpha
    // scale_a: this network's BDP over the reference BDP; scale_b: target over the reference
    // RTT. alpha = 4 MTU * a * b / target, fi = 5 MTU * a, eta = 0.15 MTU * a, fast increase
    // 0.25 * a of the acked bytes (htsim initNsccParams: _alpha, _fi, _eta, _fi_scale).
    const double scale_a = p.bdp(base_rtt_ns) / reference_bdp;
    const double scale_b = double(p.target_delay_ns) / reference_rtt_ns;
    p.prop_alpha = 4.0 * mtu * scale_a * scale_b / double(p.target_delay_ns);
    p.fair_inc = 5.0 * mtu * scale_a;
    p.eta = 0.15 * mtu * scale_a;
    p.fast_inc_scale = 0.25 * scale_a;
    p.fast_inc_delay_ns = 1000;  // htsim fast_increase: delay < 1 us
    // Pending increases are applied every base RTT or every 8 MTU acknowledged
    // (htsim _adjust_period_threshold, _adjust_bytes_threshold).
    p.adjust_period_ns = base_rtt_ns;
    p.adjust_bytes = 8ull * mtu;
    p.initial_window = 0;  // flows start at line rate (UET: "always start at line rate")
    return p;
}

nscc::nscc(const nscc_params& params) noexcept : p_(&params), base_rtt_(params.base_rtt_ns) {
    const auto max = double(max_window());
    cwnd_ = params.initial_window ? std::min(double(params.initial_window), max) : max;
    clamp();
}

std::uint64_t nscc::max_window() const noexcept {
    const double cap = p_->max_window_bdp * p_->bdp(base_rtt_);
    return std::max<std::uint64_t>(static_cast<std::uint64_t>(cap), p_->mtu);
}

void nscc::clamp() noexcept {
    cwnd_ = std::clamp(cwnd_, double(min_window()), double(max_window()));
}

void nscc::count_delivered(std::uint32_t bytes) noexcept {
    epoch_bytes_ += bytes;
    since_adjust_ += bytes;
    ignore_bytes_ -= std::min<std::uint64_t>(ignore_bytes_, bytes);
}

// The delay sample of an ACK: RTT over the smallest RTT seen. Without an RTT sample (the ACK
// covered only retransmitted or unknown packets) the average stands in for it.
std::uint64_t nscc::sample_delay(std::uint64_t rtt_ns, bool ecn) noexcept {
    if (rtt_ns == 0) return static_cast<std::uint64_t>(avg_delay_);
    if (rtt_ns < base_rtt_) base_rtt_ = rtt_ns;
    const std::uint64_t delay = rtt_ns - base_rtt_;
    update_avg_delay(double(delay), ecn);
    return delay;
}

// A long delay without an ECN mark says one path is slow, not that the bottleneck queue is long:
// such samples pull the average towards a quarter of the base RTT instead of raising it
// (htsim update_delay).
void nscc::update_avg_delay(double delay_ns, bool ecn) noexcept {
    const double a = p_->delay_ewma;
    const bool unmarked_long = !ecn && delay_ns > double(p_->target_delay_ns);
    const double sample = unmarked_long ? double(base_rtt_) * 0.25 : delay_ns;
    avg_delay_ = a * sample + (1.0 - a) * avg_delay_;
}

void nscc::on_ack(std::uint32_t bytes, std::uint64_t rtt_ns, bool ecn, std::uint64_t now) noexcept {
    count_delivered(bytes);
    const std::uint64_t delay = sample_delay(rtt_ns, ecn);
    if (quick_adapt(false, ecn, delay, now)) return;
    apply_quadrant(bytes, ecn, delay, now);
    clamp();
    maybe_adjust(now);
    clamp();
}

void nscc::apply_quadrant(std::uint32_t bytes, bool ecn, std::uint64_t delay,
                          std::uint64_t now) noexcept {
    const bool long_delay = delay >= p_->target_delay_ns;
    if (!ecn && long_delay) {
        fair_increase(bytes);
    } else if (!ecn) {
        proportional_increase(bytes, delay);
    } else if (long_delay) {
        multiplicative_decrease(now);
    } else {
        switch_path_ = true;
        last_ = action::switch_path;
    }
}

// Additive: every flow adds the same bytes per window acknowledged, which is what makes
// competing flows converge to equal windows.
void nscc::fair_increase(std::uint32_t bytes) noexcept {
    fast_mode_ = false;
    fast_bytes_ = 0;
    pending_inc_ += p_->fair_inc * bytes;
    last_ = action::fair_increase;
}

void nscc::proportional_increase(std::uint32_t bytes, std::uint64_t delay) noexcept {
    if (fast_increase(bytes, delay)) return;
    pending_inc_ += p_->prop_alpha * bytes * double(p_->target_delay_ns - delay);
    last_ = action::proportional_increase;
}

// A whole window acknowledged with an ~empty queue: the link is idle, grow multiplicatively
// (and keep doing so until the delay rises).
bool nscc::fast_increase(std::uint32_t bytes, std::uint64_t delay) noexcept {
    if (delay >= p_->fast_inc_delay_ns) {
        fast_bytes_ = 0;
        fast_mode_ = false;
        return false;
    }
    fast_bytes_ += bytes;
    if (!fast_mode_ && double(fast_bytes_) <= cwnd_) return false;
    fast_mode_ = true;
    cwnd_ += double(bytes) * p_->fast_inc_scale;
    last_ = action::fast_increase;
    return true;
}

// Cut in proportion to how far the average delay is over target, by at most half, at most once
// per base RTT (the ECN marks of one window all describe the same queue).
void nscc::multiplicative_decrease(std::uint64_t now) noexcept {
    fast_mode_ = false;
    fast_bytes_ = 0;
    last_ = action::none;
    const double target = double(p_->target_delay_ns);
    if (avg_delay_ <= target) return;
    if (now - last_decrease_ <= base_rtt_ && last_decrease_ != 0) return;
    const double factor = std::max(1.0 - p_->gamma * (avg_delay_ - target) / avg_delay_, 0.5);
    cwnd_ *= factor;
    last_decrease_ = now == 0 ? 1 : now;
    last_ = action::decrease;
}

// Increases are summed as bytes^2 and divided by the window when applied, so that a flow gains
// about fair_inc (or its proportional share) per window's worth of ACKs, whatever its window.
void nscc::maybe_adjust(std::uint64_t now) noexcept {
    const bool period_over = now - last_adjust_ >= p_->adjust_period_ns;
    if (since_adjust_ <= p_->adjust_bytes && !period_over) return;
    cwnd_ += pending_inc_ / cwnd_;
    pending_inc_ = 0;
    since_adjust_ = 0;
    if (period_over) {
        cwnd_ += p_->eta;
        last_adjust_ = now;
    }
}

// Evaluated once per epoch (base RTT + target). Returns true when the signal was consumed.
bool nscc::quick_adapt(bool loss, bool ecn, std::uint64_t delay, std::uint64_t now) noexcept {
    if (ecn && ignore_bytes_ > 0) {
        // Marks on data sent before the last cut describe the queue the cut already answered.
        pending_inc_ = 0;
        since_adjust_ = 0;
        last_ = action::ignored;
        return true;
    }
    if (epoch_started_ && now <= epoch_end_) return false;
    bool fired = false;
    const bool asked = qa_triggered_ || loss || delay > p_->quick_adapt_delay_ns;
    if (epoch_started_ && asked && epoch_bytes_ < (max_window() >> p_->quick_adapt_gate)) {
        // The window was sized for a network that is gone: restart from what got through.
        ignore_bytes_ = static_cast<std::uint64_t>(cwnd_);
        cwnd_ = std::max(double(epoch_bytes_), double(min_window()));
        qa_triggered_ = false;
        pending_inc_ = 0;
        since_adjust_ = 0;
        last_ = action::quick_adapt;
        fired = true;
    }
    epoch_started_ = true;
    epoch_bytes_ = 0;
    epoch_end_ = now + base_rtt_ + p_->target_delay_ns;
    return fired;
}

// A NACK (trimmed or lost packet): the packet's bytes leave the window unless quick adapt
// resized it. A trimmed packet also says the queue reached the trimming threshold, which we
// take as a delay sample of one base RTT (htsim updateCwndOnNack_NSCC uses the network RTT).
void nscc::on_nack(std::uint32_t bytes, bool trimmed, std::uint64_t now) noexcept {
    ignore_bytes_ -= std::min<std::uint64_t>(ignore_bytes_, bytes);
    if (trimmed) update_avg_delay(double(p_->base_rtt_ns), true);
    qa_triggered_ = true;
    if (quick_adapt(true, true, 0, now)) return;
    cwnd_ -= double(bytes);
    last_ = action::nack;
    clamp();
}

// A retransmit timeout takes one packet out of the window (htsim
// mark_packet_for_retransmission).
void nscc::on_timeout(std::uint64_t) noexcept {
    cwnd_ -= double(p_->mtu);
    last_ = action::timeout;
    clamp();
}

bool nscc::take_path_switch() noexcept {
    const bool s = switch_path_;
    switch_path_ = false;
    return s;
}

}  // namespace uet::cc
