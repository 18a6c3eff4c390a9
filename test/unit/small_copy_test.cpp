// copy_payload: every size up to well past its inline cases, at every alignment of source and
// destination within a line, copies exactly the bytes memcpy copies and touches nothing else;
// copy_payload_run: a run of payloads lands in order whichever of them lie side by side.
#include "core/small_copy.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

constexpr std::size_t guard = 64;
constexpr std::uint8_t untouched = 0xa5;

TEST(small_copy, copies_every_size_and_alignment_like_memcpy_and_nothing_else) {
    std::array<std::uint8_t, 256> src{};
    for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<std::uint8_t>(i * 7 + 1);  // no byte equals its neighbour
    for (std::size_t n = 0; n <= 80; ++n) {
        for (std::size_t from = 0; from < 16; ++from) {
            for (std::size_t to = 0; to < 16; ++to) {
                std::array<std::uint8_t, guard + 96 + guard> dst;
                dst.fill(untouched);
                uet::copy_payload(dst.data() + guard + to, src.data() + from, n);
                for (std::size_t i = 0; i < dst.size(); ++i) {
                    const bool inside = i >= guard + to && i < guard + to + n;
                    const std::uint8_t want = inside ? src[from + i - guard - to] : untouched;
                    ASSERT_EQ(dst[i], want) << "size " << n << ", source offset " << from
                                            << ", destination offset " << to << ", byte " << i;
                }
            }
        }
    }
}

TEST(small_copy, a_null_buffer_of_no_bytes_is_not_touched) {
    uet::copy_payload(nullptr, nullptr, 0);  // memcpy's callers skip it; this one need not
}

// Payloads from one buffer, some of them one after the other and some not (a gap, a step back,
// the same payload twice): each lands in its own place after the last, nothing else is written.
TEST(small_copy, a_payload_run_lands_in_order_whether_its_sources_are_adjacent_or_not) {
    constexpr std::size_t length = 24;
    std::vector<std::uint8_t> src(64 * length);
    for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<std::uint8_t>(i * 7 + 1);
    const std::vector<std::size_t> at = {0, 1, 2, 5, 6, 4, 4, 9, 10, 11, 12, 30};
    for (std::size_t n = 0; n <= at.size(); ++n) {
        std::vector<const std::uint8_t*> payloads;
        for (std::size_t i = 0; i < n; ++i)
            payloads.push_back(src.data() + at[i] * length);
        std::vector<std::uint8_t> dst(guard + at.size() * length + guard, untouched);
        uet::copy_payload_run(dst.data() + guard, payloads.data(), n, length);
        for (std::size_t i = 0; i < dst.size(); ++i) {
            const bool inside = i >= guard && i < guard + n * length;
            const std::size_t k = (i - guard) / length, byte = (i - guard) % length;
            const std::uint8_t want = inside ? src[at[k] * length + byte] : untouched;
            ASSERT_EQ(dst[i], want) << n << " payloads, byte " << i;
        }
    }
}

}  // namespace
