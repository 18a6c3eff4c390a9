#include "tss/replay_window.hpp"

namespace uet::tss {

bool replay_window::rejects(std::uint64_t seq) const noexcept {
    if (!any_ || seq > top_) return false;
    if (top_ - seq >= size) return true;
    return (bits_[(seq / 64) % blocks] >> (seq % 64)) & 1;
}

void replay_window::accept(std::uint64_t seq) noexcept {
    if (!any_ || seq > top_) {
        const std::uint64_t from = any_ ? top_ / 64 : seq / 64 - 1;
        const std::uint64_t moved = seq / 64 - from;
        // The blocks the window moves into held bits of numbers a whole ring ago: clear them.
        for (std::uint64_t i = 1; i <= moved && i <= blocks; ++i)
            bits_[(from + i) % blocks] = 0;
        top_ = seq;
        any_ = true;
    }
    bits_[(seq / 64) % blocks] |= std::uint64_t{1} << (seq % 64);
}

}  // namespace uet::tss
