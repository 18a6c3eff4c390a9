#include "core/rx_window.hpp"

#include <algorithm>

#include "core/bit_range.hpp"

namespace uet {

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

bool rx_window::all_fresh(psn_t first, std::uint32_t n) const noexcept {
    if (n == 0) return true;
    const std::int32_t ahead = psn_distance(cack_, first);
    if (ahead <= 0 || std::uint64_t(ahead) + (n - 1) > capacity_) return false;
    return !ring_ranges(first, n, [this](std::uint32_t at, std::uint32_t count) {
        return bits::any_in(ring_.data(), at, count);
    });
}

bool rx_window::received(psn_t psn) const noexcept {
    return classify(psn) == verdict::duplicate;
}

void rx_window::accept(psn_t psn) noexcept {
    highest_ = psn_max(highest_, psn);
    // In order (the usual case): the cumulative point moves over it, its bit never set (and
    // cleared again) as accept_run does.
    if (psn == cack_ + 1)
        cack_ = psn;
    else
        set(psn, true);
    advance_cumulative();
}

void rx_window::accept_run(psn_t first, std::uint32_t n) noexcept {
    if (n == 0) return;
    const psn_t last = first + (n - 1);
    highest_ = psn_max(highest_, last);
    // In order (the usual case): the run moves the cumulative point past itself without its
    // bits ever being set. Otherwise its bits are set as accept() would set them.
    if (first == cack_ + 1) {
        cack_ = last;
    } else {
        ring_ranges(first, n, [this](std::uint32_t at, std::uint32_t count) {
            bits::set_range(ring_.data(), at, count);
            return false;  // on to the second range
        });
    }
    advance_cumulative();
}

// Over what is now contiguous. Bits at or below the cumulative point are kept clear: their ring
// positions belong to the PSNs one window ahead.
void rx_window::advance_cumulative() noexcept {
    while (test(cack_ + 1)) {
        set(cack_ + 1, false);
        ++cack_;
    }
}

sack_block rx_window::sack(psn_t epsn) const noexcept {
    sack_block s;
    const psn_t floor = cack_ + 1;
    s.base = psn_before(epsn - 63, floor) ? floor : epsn - 63;
    // The 64 ring bits from base's, in two word reads (the ring wraps; with one word, the two
    // reads are the same word and the bits rotate), rather than 64 reads of one bit each.
    const std::uint32_t mask = capacity_ - 1;
    const std::uint32_t first = s.base & mask;
    const std::uint32_t shift = first & 63;
    const std::uint32_t words = capacity_ / 64;
    const std::uint64_t low = ring_[first >> 6];
    const std::uint64_t high = ring_[((first >> 6) + 1) & (words - 1)];
    const std::uint64_t bits = shift == 0 ? low : (low >> shift) | (high << (64 - shift));
    // Only PSNs within (cack, cack + capacity] are tracked by the ring: bit i is base + i, which
    // is cack + ahead + i.
    const std::int64_t ahead = psn_distance(cack_, s.base);
    const std::int64_t from = std::max<std::int64_t>(0, 1 - ahead);
    const std::int64_t to = std::min<std::int64_t>(63, std::int64_t{capacity_} - ahead);
    if (from > to) return s;
    const std::uint64_t upper = to == 63 ? ~std::uint64_t{0} : (std::uint64_t{1} << (to + 1)) - 1;
    s.bitmap = bits & upper & (~std::uint64_t{0} << from);
    return s;
}

}  // namespace uet
