// copy_payload: every size up to well past its inline cases, at every alignment of source and
// destination within a line, copies exactly the bytes memcpy copies and touches nothing else.
#include "small_copy.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace {

constexpr std::size_t guard = 64;
constexpr std::uint8_t untouched = 0xa5;

TEST(SmallCopy, CopiesEverySizeAndAlignmentLikeMemcpyAndNothingElse) {
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

TEST(SmallCopy, ANullBufferOfNoBytesIsNotTouched) {
    uet::copy_payload(nullptr, nullptr, 0);  // memcpy's callers skip it; this one need not
}

}  // namespace
