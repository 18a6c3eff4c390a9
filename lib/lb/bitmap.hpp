// Bitmap spraying (Strack-like, as in htsim UecMpBitmap): the oblivious walk, plus a 4-bit
// penalty per entropy value. Bad news about a value adds to its penalty (+1 ECN echo, +4 NACK,
// the maximum 15 on a retransmit timeout); when the walk reaches a penalised value it takes one
// off and skips it, so a value marked once sits out one round.
#pragma once

#include <array>
#include <cstdint>

#include "lb/lb_context.hpp"
#include "lb/path_selector.hpp"

namespace uet::lb {

class bitmap final : public path_selector {
  public:
    // htsim UecMpBitmap::processEv: PATH_ECN 1, PATH_NACK 4, PATH_TIMEOUT _max_penalty = 15.
    static constexpr std::uint8_t ecn_penalty = 1;
    static constexpr std::uint8_t nack_penalty = 4;
    static constexpr std::uint8_t max_penalty = 15;
    // Penalties are kept for at most 2^8 values (128 bytes per PDC); a larger path_bits is
    // clamped to 8 here.
    static constexpr std::uint8_t max_path_bits = 8;

    using path_selector::next_entropy;
    using path_selector::on_timeout;

    explicit bitmap(lb_context& ctx) noexcept;

    std::uint16_t next_entropy() noexcept override;
    void on_ack(std::uint16_t entropy, bool ecn) noexcept override;
    void on_nack(std::uint16_t entropy) noexcept override;
    void on_timeout(std::uint16_t entropy) noexcept override;
    // NSCC judged a mark to be this path's own (ECN without queueing delay), not the
    // bottleneck's: one more ECN penalty, so such a path sits out two rounds per mark. Marks at
    // a shared bottleneck (incast) hit every path alike and skipping paths would not help.
    void on_path_switch(std::uint16_t entropy) noexcept override;

    std::uint8_t penalty(std::uint16_t entropy) const noexcept;

  private:
    void add_penalty(std::uint16_t entropy, std::uint8_t amount) noexcept;
    void set_penalty(std::uint16_t path, std::uint8_t value) noexcept;
    std::uint16_t path_of(std::uint16_t entropy) const noexcept { return entropy & walk_.mask(); }

    lb_context* ctx_;
    spray_walk walk_;
    std::array<std::uint8_t, (1u << max_path_bits) / 2> nibbles_{};  // two penalties a byte
};

}  // namespace uet::lb
