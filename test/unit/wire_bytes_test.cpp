// byte_reader / byte_writer: exact big-endian layout and the no-overrun guarantees every decoder
// relies on.
#include <gtest/gtest.h>

#include <array>

#include "wire/bytes.hpp"
#include "wire/reject.hpp"

namespace uet::wire {
namespace {

TEST(byte_writer, writes_big_endian_fields_in_order) {
    std::array<std::uint8_t, 26> buf{};
    byte_writer w(buf);
    w.u8(0x01);
    w.u16(0x0203);
    w.u24(0x040506);
    w.u32(0x0708090a);
    w.u48(0x0b0c0d0e0f10);
    w.u64(0x1112131415161718);
    w.zeros(2);
    ASSERT_FALSE(w.failed());
    EXPECT_EQ(w.result(), 26u);
    const std::array<std::uint8_t, 26> expect{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
                                              0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12,
                                              0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x00, 0x00};
    EXPECT_EQ(buf, expect);
}

TEST(byte_reader, reads_what_the_writer_wrote) {
    const std::array<std::uint8_t, 24> buf{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                           0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
                                           0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18};
    byte_reader r(buf);
    EXPECT_EQ(r.u8(), 0x01u);
    EXPECT_EQ(r.u16(), 0x0203u);
    EXPECT_EQ(r.u24(), 0x040506u);
    EXPECT_EQ(r.u32(), 0x0708090au);
    EXPECT_EQ(r.u48(), 0x0b0c0d0e0f10u);
    EXPECT_EQ(r.u64(), 0x1112131415161718u);
    EXPECT_FALSE(r.failed());
    EXPECT_EQ(r.remaining(), 0u);
}

TEST(byte_reader, short_read_fails_and_stays_failed) {
    const std::array<std::uint8_t, 3> buf{0xaa, 0xbb, 0xcc};
    byte_reader r(buf);
    EXPECT_EQ(r.u32(), 0u);  // one byte short: nothing consumed
    EXPECT_TRUE(r.failed());
    EXPECT_EQ(r.offset(), 0u);
    EXPECT_EQ(r.u8(), 0u);  // even a read that would fit returns zero once failed
    EXPECT_TRUE(r.bytes(1).empty());
}

TEST(byte_reader, huge_lengths_do_not_wrap) {
    const std::array<std::uint8_t, 8> buf{};
    byte_reader r(buf);
    r.u16();
    EXPECT_TRUE(r.bytes(SIZE_MAX).empty());
    EXPECT_TRUE(r.failed());
}

TEST(byte_writer, overflow_writes_nothing_and_result_is_zero) {
    std::array<std::uint8_t, 5> buf{0x55, 0x55, 0x55, 0x55, 0x55};
    byte_writer w(buf);
    w.u32(0x01020304);
    w.u16(0xffff);  // does not fit in the last byte
    EXPECT_TRUE(w.failed());
    EXPECT_EQ(w.result(), 0u);
    EXPECT_EQ(buf[4], 0x55);
}

TEST(reject_reason, every_reason_has_a_name_and_text) {
    for (std::size_t i = 0; i < reject_reason_count; ++i) {
        auto r = static_cast<reject_reason>(i);
        EXPECT_STRNE(to_string(r), "") << i;
        EXPECT_STRNE(reject_name(r), "unknown") << i;
    }
    EXPECT_STREQ(reject_name(reject_reason::truncated), "truncated");
    EXPECT_STREQ(reject_name(reject_reason::count_), "unknown");
}

}  // namespace
}  // namespace uet::wire
