#include "rx_window.hpp"

#include <algorithm>

namespace uet::pds {

void rx_window::reset(std::span<std::uint64_t> ring, psn_t start_psn) noexcept {
    ring_ = ring;
    capacity_ = static_cast<std::uint32_t>(ring.size() * 64);
    std::fill(ring_.begin(), ring_.end(), 0);
    cack_ = start_psn - 1;
    highest_ = cack_;
}

rx_window::verdict rx_window::classify(psn_t psn) const noexcept {
    const std::int32_t ahead = psn_distance(cack_, psn);
    if (ahead <= 0) return verdict::duplicate;
    if (static_cast<std::uint32_t>(ahead) > capacity_) return verdict::beyond_window;
    return test(psn) ? verdict::duplicate : verdict::fresh;
}

bool rx_window::received(psn_t psn) const noexcept {
    return classify(psn) == verdict::duplicate;
}

void rx_window::accept(psn_t psn) noexcept {
    set(psn, true);
    highest_ = psn_max(highest_, psn);
    // Bits at or below the cumulative point are kept clear: their ring positions belong to the
    // PSNs one window ahead.
    while (test(cack_ + 1)) {
        set(cack_ + 1, false);
        ++cack_;
    }
}

sack_block rx_window::sack(psn_t epsn) const noexcept {
    sack_block s;
    const psn_t floor = cack_ + 1;
    s.base = psn_before(epsn - 63, floor) ? floor : epsn - 63;
    for (std::uint32_t i = 0; i < 64; ++i) {
        const psn_t psn = s.base + i;
        const std::int32_t ahead = psn_distance(cack_, psn);
        if (ahead > 0 && static_cast<std::uint32_t>(ahead) <= capacity_ && test(psn))
            s.bitmap |= std::uint64_t{1} << i;
    }
    return s;
}

}  // namespace uet::pds
