#include "cc/dcqcn.hpp"

#include <algorithm>
#include <cmath>

namespace uet::cc {

dcqcn_rp::dcqcn_rp(const dcqcn_params& p) noexcept
    : p_(&p), rc_(p.line_rate_gbps), rt_(p.line_rate_gbps), alpha_(p.initial_alpha) {}

void dcqcn_rp::on_cnp(std::uint64_t now) noexcept {
    advance(now);
    if (cut_before_ && now - last_cut_ < p_->rate_reduce_monitor_period_ns) {
        last_ = action::cnp_ignored;
        return;
    }
    if (!cut_before_ && p_->first_cnp_rate_gbps > 0) {
        rt_ = rc_;
        rc_ = p_->first_cnp_rate_gbps;
    } else {
        // The target keeps a rate reached by the byte counter alone (a sender that is fast
        // because it has much to send), unless clamped on every CNP.
        if (!cut_before_ || p_->clamp_target_rate || time_increased_) rt_ = rc_;
        rc_ *= std::max(1 - alpha_ / 2, p_->min_dec_factor);
    }
    alpha_ = (1 - p_->g) * alpha_ + p_->g;
    next_alpha_ = now + p_->alpha_update_period_ns;
    next_increase_ = now + p_->time_reset_ns;
    t_stage_ = b_stage_ = 0;
    bytes_ = 0;
    time_increased_ = false;
    cut_before_ = true;
    last_cut_ = now;
    clamp();
    limited_ = rc_ < p_->line_rate_gbps;
    last_ = action::cut;
}

void dcqcn_rp::advance(std::uint64_t now) noexcept {
    if (!cut_before_) return;
    if (now >= next_alpha_) {
        const std::uint64_t periods = (now - next_alpha_) / p_->alpha_update_period_ns + 1;
        alpha_ *= std::pow(1 - p_->g, static_cast<double>(periods));
        next_alpha_ += periods * p_->alpha_update_period_ns;
    }
    // Each event halves the distance to the target at least: a few dozen bring the rate to
    // within a rounding of it, so a QP idle for long catches up in a bounded loop.
    for (int i = 0; limited_ && now >= next_increase_ && i < 256; ++i) {
        next_increase_ += p_->time_reset_ns;
        ++t_stage_;
        increase(true);
    }
    if (now >= next_increase_) next_increase_ = now + p_->time_reset_ns;
}

void dcqcn_rp::on_sent(std::uint32_t bytes, std::uint64_t now) noexcept {
    if (!limited_) return;
    advance(now);
    if (!limited_) return;
    // rate in Gb/s is bits per ns
    next_send_ = std::max(next_send_, now) + static_cast<std::uint64_t>(bytes * 8.0 / rc_);
    bytes_ += bytes;
    while (limited_ && bytes_ >= p_->byte_reset) {
        bytes_ -= p_->byte_reset;
        ++b_stage_;
        increase(false);
    }
}

std::uint64_t dcqcn_rp::next_send_ns(std::uint64_t now) noexcept {
    advance(now);
    return limited_ ? next_send_ : 0;
}

void dcqcn_rp::increase(bool by_timer) noexcept {
    time_increased_ |= by_timer;
    const std::uint32_t most = std::max(t_stage_, b_stage_);
    const std::uint32_t least = std::min(t_stage_, b_stage_);
    if (most < p_->threshold) {
        last_ = action::fast_recovery;
    } else if (least >= p_->threshold) {
        rt_ += (least - p_->threshold + 1) * p_->hai_rate_gbps;
        last_ = action::hyper_increase;
    } else {
        rt_ += p_->ai_rate_gbps;
        last_ = action::additive_increase;
    }
    rc_ = (rt_ + rc_) / 2;
    clamp();
    // Within a rounding of line rate: at it, and unpaced.
    if (rc_ >= p_->line_rate_gbps * (1 - 1e-9)) {
        rc_ = rt_ = p_->line_rate_gbps;
        limited_ = false;
    }
}

void dcqcn_rp::clamp() noexcept {
    rt_ = std::clamp(rt_, p_->min_rate_gbps, p_->line_rate_gbps);
    rc_ = std::clamp(rc_, p_->min_rate_gbps, p_->line_rate_gbps);
}

}  // namespace uet::cc
