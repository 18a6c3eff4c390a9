// TSS and entropy headers against byte vectors written by hand from the public layout
// (uet-ref-prov uet_pkt_hdr.h uet_sec / uet_sec_ssi / uet_entropy).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wire/uet_tss.hpp"
#include "wire_test_helpers.hpp"

namespace {

using namespace uet::wire;
using uet::wire_test::check_golden;
using uet::wire_test::recorder;

TEST(wire_tss, sizes) {
    EXPECT_EQ(tss_header::wire_size, 12u);
    EXPECT_EQ(tss_header::wire_size_with_ssi, 16u);
    EXPECT_EQ(tss_icv_size, 16u);
    EXPECT_EQ(entropy_header::wire_size, 4u);
    EXPECT_EQ(encoded_size(tss_header{}), 12u);
    EXPECT_EQ(encoded_size(tss_header{.ssi = 1}), 16u);
}

TEST(wire_tss, without_ssi) {
    constexpr std::array<std::uint8_t, 12> bytes{
        0x09,                                // type 1 (00001) | SP 0 | rsvd | AN 1
        0x0a, 0x0b, 0x0c,                    // SDI
        0x01, 0x02,                          // epoch
        0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // TSC
    };
    check_golden(bytes, tss_header{.an = true,
                                   .sdi = 0x0a0b0c,
                                   .ssi = std::nullopt,
                                   .epoch = 0x0102,
                                   .tsc = 0x030405060708});
}

TEST(wire_tss, with_ssi) {
    constexpr std::array<std::uint8_t, 16> bytes{
        0x0c,                                // type 1 | SP 1 | rsvd | AN 0
        0x0d, 0x0e, 0x0f,                    // SDI
        0x11, 0x22, 0x33, 0x44,              // SSI
        0x03, 0x04,                          // epoch
        0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,  // TSC
    };
    check_golden(bytes, tss_header{.an = false,
                                   .sdi = 0x0d0e0f,
                                   .ssi = 0x11223344,
                                   .epoch = 0x0304,
                                   .tsc = 0x0a0b0c0d0e0f});
}

TEST(wire_tss, bad_type_rejected_reserved_ignored) {
    std::array<std::uint8_t, 12> bytes{0x09, 0x0a, 0x0b, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8};
    tss_header h;
    for (unsigned t = 0; t < 32; ++t) {
        if (t == 1) continue;
        bytes[0] = static_cast<std::uint8_t>((t << 3) | 0x01);
        EXPECT_EQ(decode(bytes, h), reject_reason::bad_tss_type) << t;
    }
    bytes[0] = 0x0b;  // the reserved bit between SP and AN
    ASSERT_EQ(decode(bytes, h), reject_reason::none);
    EXPECT_TRUE(h.an);
    EXPECT_FALSE(h.ssi.has_value());
}

TEST(wire_tss, entropy) {
    constexpr std::array<std::uint8_t, 4> bytes{0xbe, 0xef, 0x00, 0x00};  // entropy, reserved
    check_golden(bytes, entropy_header{.entropy = 0xbeef});
    constexpr std::array<std::uint8_t, 4> reserved_set{0x12, 0x34, 0xff, 0xff};
    entropy_header e;
    ASSERT_EQ(decode(reserved_set, e), reject_reason::none);
    EXPECT_EQ(e.entropy, 0x1234);
}

TEST(wire_tss, visit) {
    recorder r;
    visit(tss_header{.ssi = 5}, r);
    visit(entropy_header{}, r);
    const std::vector<std::string> want{"tss.type", "tss.sp",    "tss.an",  "tss.sdi",
                                        "tss.ssi",  "tss.epoch", "tss.tsc", "entropy.entropy"};
    EXPECT_EQ(r.names, want);
    EXPECT_EQ(r.headers, (std::vector<std::string>{"tss", "entropy"}));
    EXPECT_EQ(r.lines.back(), "entropy.end");
}

}  // namespace
