// Oblivious spraying: each packet takes the next value of the per-PDC walk over 2^k entropy
// values, whatever the network says. Even on a symmetric fabric, useless against a bad path.
#pragma once

#include "lb/lb_context.hpp"
#include "lb/path_selector.hpp"

namespace uet::lb {

class oblivious final : public path_selector {
  public:
    using path_selector::next_entropy;
    using path_selector::on_timeout;

    explicit oblivious(lb_context& ctx) noexcept : ctx_(&ctx) {
        walk_.init(*ctx.rng, ctx.path_bits());
    }

    std::uint16_t next_entropy() noexcept override {
        const std::uint16_t path = walk_.current();
        walk_.advance(*ctx_->rng);
        return walk_.value(path);
    }
    void on_ack(std::uint16_t, bool) noexcept override {}
    bool hears_acks() const noexcept override { return false; }
    void on_nack(std::uint16_t) noexcept override {}
    void on_timeout(std::uint16_t) noexcept override {}

    std::uint16_t upper_bits() const noexcept { return walk_.upper(); }

  private:
    lb_context* ctx_;
    spray_walk walk_;
};

}  // namespace uet::lb
