#include "lb/reps.hpp"

#include <bit>

namespace uet::lb {

reps::reps(lb_context& ctx) noexcept : ctx_(&ctx) {
    upper_ = static_cast<std::uint16_t>(ctx.rng->next_u64()) &
             static_cast<std::uint16_t>(~ctx.path_mask());
}

std::uint8_t reps::cached() const noexcept {
    return static_cast<std::uint8_t>(std::popcount(valid_));
}

std::uint16_t reps::random_value() noexcept {
    return upper_ | static_cast<std::uint16_t>(ctx_->rng->uniform(ctx_->path_count()));
}

// The oldest value not yet reused: scan from the oldest slot (head when full) forward.
std::uint16_t reps::take_oldest() noexcept {
    const unsigned oldest = filled_ == cache_size ? head_ : 0;
    for (unsigned i = 0; i < cache_size; ++i) {
        const unsigned slot = (oldest + i) % cache_size;
        if (!(valid_ & (1u << slot))) continue;
        valid_ = static_cast<std::uint8_t>(valid_ & ~(1u << slot));
        return ring_[slot];
    }
    return random_value();
}

// While frozen every remembered value is replayed in turn, used or not.
std::uint16_t reps::replay() noexcept {
    if (filled_ == 0) return random_value();
    const std::uint16_t v = ring_[replay_ % filled_];
    replay_ = static_cast<std::uint8_t>((replay_ + 1) % filled_);
    return v;
}

std::uint16_t reps::pick() noexcept {
    if (frozen_) return replay();
    if (explore_left_ > 0) {
        --explore_left_;
        return random_value();
    }
    return valid_ ? take_oldest() : random_value();
}

std::uint16_t reps::next_entropy() noexcept {
    return pick();
}

std::uint16_t reps::next_entropy(std::uint64_t now) noexcept {
    if (freeze_pending_) freeze(now);
    if (frozen_ && freeze_over(now)) end_freeze();
    return pick();
}

// Unsigned tick arithmetic: correct across the 32-bit wrap as long as the PDC is heard from at
// least once every 73 minutes while frozen (an idle PDC may replay for one more freeze time).
bool reps::freeze_over(std::uint64_t now) const noexcept {
    const auto elapsed = static_cast<std::uint32_t>(now >> tick_shift) - freeze_start_;
    return std::uint64_t{elapsed} << tick_shift >= ctx_->params.reps_freeze_ns;
}

void reps::freeze(std::uint64_t now) noexcept {
    freeze_pending_ = 0;
    if (filled_ == 0) return;  // nothing to replay: keep drawing at random
    frozen_ = 1;
    ++ctx_->stats.reps_freezes;
    replay_ = 0;
    freeze_start_ = static_cast<std::uint32_t>(now >> tick_shift);
}

void reps::end_freeze() noexcept {
    frozen_ = 0;
    ++ctx_->stats.reps_freezes_ended;
    valid_ = 0;
    filled_ = 0;
    head_ = 0;
    explore_left_ = ctx_->params.reps_explore;
}

// Only un-marked ACKs teach us a good path. The ring is a snapshot while frozen.
void reps::on_ack(std::uint16_t entropy, bool ecn) noexcept {
    if (ecn || frozen_) return;
    ring_[head_] = entropy;
    valid_ = static_cast<std::uint8_t>(valid_ | (1u << head_));
    head_ = static_cast<std::uint8_t>((head_ + 1) % cache_size);
    if (filled_ < cache_size) filled_ = static_cast<std::uint8_t>(filled_ + 1);
}

void reps::on_timeout(std::uint16_t) noexcept {
    if (!frozen_) freeze_pending_ = 1;
}

void reps::on_timeout(std::uint16_t, std::uint64_t now) noexcept {
    if (!frozen_) freeze(now);
}

// The path turned bad after it was remembered: do not reuse it.
void reps::on_path_switch(std::uint16_t entropy) noexcept {
    for (unsigned slot = 0; slot < cache_size; ++slot)
        if (ring_[slot] == entropy) valid_ = static_cast<std::uint8_t>(valid_ & ~(1u << slot));
}

}  // namespace uet::lb
