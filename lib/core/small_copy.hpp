// Copying a payload whose size is known only at run time, inline when it is small; and a run of
// equal-sized payloads, in as few copies as their places allow.
//
// Why: std::memcpy with a variable size is a call into libc (the call, the size dispatch and
// the return outweigh the copy of a few bytes), and small messages copy their payload once on
// each side, sometimes twice. Up to 32 bytes two overlapping loads and stores of one width cover
// every size; longer payloads still go to memcpy, which is the better copy there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace uet {

namespace detail_copy {

// Copies n bytes, W <= n <= 2W, as two W-byte moves that overlap when n < 2W. Both loads come
// before either store, so it is right for any n in that range.
template <std::size_t W>
inline void two_moves(std::uint8_t* d, const std::uint8_t* s, std::size_t n) noexcept {
    unsigned char head[W], tail[W];
    std::memcpy(head, s, W);
    std::memcpy(tail, s + n - W, W);
    std::memcpy(d, head, W);
    std::memcpy(d + n - W, tail, W);
}

}  // namespace detail_copy

// std::memcpy(dst, src, n) for buffers that do not overlap.
inline void copy_payload(void* dst, const void* src, std::size_t n) noexcept {
    auto* d = static_cast<std::uint8_t*>(dst);
    const auto* s = static_cast<const std::uint8_t*>(src);
    if (n > 32) {
        std::memcpy(d, s, n);
    } else if (n >= 16) {
        detail_copy::two_moves<16>(d, s, n);
    } else if (n >= 8) {
        detail_copy::two_moves<8>(d, s, n);
    } else if (n >= 4) {
        detail_copy::two_moves<4>(d, s, n);
    } else if (n > 0) {
        // 1-3 bytes: the first, the last and the middle one (some of them the same byte).
        const std::uint8_t first = s[0], middle = s[n / 2], last = s[n - 1];
        d[0] = first;
        d[n / 2] = middle;
        d[n - 1] = last;
    }
}

// Copies n payloads of `length` bytes each (at payloads[i]) to dst one after the other. Those
// that already lie one after the other where they come from (a message's packets sent from the
// sender's memory in place: zero-copy transmit) go in one copy: a call per run rather than per
// packet, and one long copy runs at libc's rate for its size, faster than many short ones.
inline void copy_payload_run(std::uint8_t* dst, const std::uint8_t* const* payloads, std::size_t n,
                             std::size_t length) noexcept {
    std::size_t i = 0;
    while (i < n) {
        std::size_t k = i + 1;
        while (k < n && payloads[k] == payloads[k - 1] + length)
            ++k;
        std::memcpy(dst + i * length, payloads[i], (k - i) * length);
        i = k;
    }
}

}  // namespace uet
