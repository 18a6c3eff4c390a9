// PDS headers against byte vectors written by hand from the public layout (uet-ref-prov
// uet_pkt_hdr.h; ACK_CC state widths from xdp2 pds.h), not produced by our encoder.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wire/uet_pds.hpp"
#include "wire_test_helpers.hpp"

namespace {

using namespace uet::wire;
using uet::wire_test::recorder;

// The shared check_golden, and through the variant dispatcher too.
template <class H, std::size_t N>
void check_golden(const std::array<std::uint8_t, N>& bytes, const H& fields) {
    uet::wire_test::check_golden(bytes, fields);
    pds_header any;
    std::size_t used = 0;
    ASSERT_EQ(decode_pds(bytes, any, used), reject_reason::none);
    EXPECT_EQ(used, N);
    ASSERT_TRUE(std::holds_alternative<H>(any));
    EXPECT_TRUE(std::get<H>(any) == fields);
    for (std::size_t n = 0; n < N; ++n)
        EXPECT_EQ(decode_pds(std::span(bytes).first(n), any, used), reject_reason::truncated);
}

TEST(wire_pds, sizes) {
    EXPECT_EQ(pds_rud_rod_request::wire_size, 12u);
    EXPECT_EQ(pds_rud_rod_cc_request::wire_size, 16u);
    EXPECT_EQ(pds_ack::wire_size, 12u);
    EXPECT_EQ(pds_ack_cc::wire_size, 32u);
    EXPECT_EQ(pds_ack_ccx::wire_size, 40u);
    EXPECT_EQ(pds_nack::wire_size, 16u);
    EXPECT_EQ(pds_nack_ccx::wire_size, 32u);
    EXPECT_EQ(pds_ctrl::wire_size, 16u);
    EXPECT_EQ(pds_rudi::wire_size, 8u);
    EXPECT_EQ(pds_uud::wire_size, 4u);
}

TEST(wire_pds, rud_request) {
    // prologue: type 2 (00010) | next_hdr 3 (0011) | flags AR 0x08 = 0x1188
    constexpr std::array<std::uint8_t, 12> bytes{
        0x11, 0x88,              // prologue
        0xff, 0xfd,              // clear_psn_offset -3
        0x10, 0x20, 0x30, 0x40,  // psn
        0x01, 0x05,              // spdcid
        0x02, 0x07,              // dpdcid
    };
    pds_rud_rod_request h;
    h.type = pds_type::rud;
    h.next_hdr = pds_next_hdr::request_std;
    h.ar = true;
    h.clear_psn_offset = -3;
    h.psn = 0x10203040;
    h.spdcid = 0x0105;
    h.dpdcid = 0x0207;
    check_golden(bytes, h);
}

TEST(wire_pds, rod_request_syn_form) {
    // prologue: type 3 | next_hdr 1 | RETX 0x10 AR 0x08 SYN 0x04 = 0x1800|0x0080|0x1c = 0x189c
    constexpr std::array<std::uint8_t, 12> bytes{
        0x18, 0x9c,              // prologue
        0x01, 0x02,              // clear_psn_offset 258
        0xa1, 0xb2, 0xc3, 0xd4,  // psn
        0x0e, 0x0f,              // spdcid
        0x8a, 0xbc,              // pdc_info use_rsv_pdc (0x8000) | psn_offset 0xabc
    };
    pds_rud_rod_request h;
    h.type = pds_type::rod;
    h.next_hdr = pds_next_hdr::request_small;
    h.retx = h.ar = h.syn = true;
    h.clear_psn_offset = 0x0102;
    h.psn = 0xa1b2c3d4;
    h.spdcid = 0x0e0f;
    h.use_rsv_pdc = true;
    h.psn_offset = 0xabc;
    check_golden(bytes, h);
}

// The other bits of pdc_info (uet-ref-prov reads use_rsv_pdc at 0x1000) are kept, never refused,
// and do not mean use_rsv_pdc.
TEST(wire_pds, syn_pdc_info_other_bits_are_kept) {
    for (unsigned info = 0; info < 16; ++info) {
        std::array<std::uint8_t, 12> bytes{0x10, 0x84, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0x05};
        bytes[10] = static_cast<std::uint8_t>(info << 4);
        pds_rud_rod_request h;
        ASSERT_EQ(decode(bytes, h), reject_reason::none) << info;
        EXPECT_TRUE(h.syn);
        EXPECT_EQ(h.use_rsv_pdc, (info & 0x8) != 0) << info;
        EXPECT_EQ(h.pdc_info_rsvd, info & 0x7) << info;
        EXPECT_EQ(h.psn_offset, 5);
        std::array<std::uint8_t, 12> again{};
        ASSERT_EQ(encode(h, again), 12u);
        EXPECT_EQ(again, bytes) << info;
    }
    // Sent as 0 unless a reserved PDC is used.
    pds_rud_rod_request h;
    h.syn = true;
    h.psn_offset = 0x123;
    std::array<std::uint8_t, 12> out{};
    ASSERT_EQ(encode(h, out), 12u);
    EXPECT_EQ(out[10], 0x01);
    EXPECT_EQ(out[11], 0x23);
}

TEST(wire_pds, rud_cc_request) {
    // prologue: type 13 (0x6800) | next_hdr 2 (0x0100) | RETX 0x10 = 0x6910
    constexpr std::array<std::uint8_t, 16> bytes{
        0x69, 0x10,              // prologue
        0x00, 0x05,              // clear_psn_offset
        0x50, 0x60, 0x70, 0x80,  // psn
        0x03, 0x11,              // spdcid
        0x04, 0x22,              // dpdcid
        0x33,                    // ccc_id
        0x0a, 0x0b, 0x0c,        // credit_target
    };
    pds_rud_rod_cc_request h;
    h.type = pds_type::rud_cc;
    h.next_hdr = pds_next_hdr::request_medium;
    h.retx = true;
    h.clear_psn_offset = 5;
    h.psn = 0x50607080;
    h.spdcid = 0x0311;
    h.dpdcid = 0x0422;
    h.ccc_id = 0x33;
    h.credit_target = 0x0a0b0c;
    check_golden(bytes, h);
}

TEST(wire_pds, rod_cc_request) {
    // prologue: type 14 (0x7000) | next_hdr 0 | SYN 0x04 = 0x7004
    constexpr std::array<std::uint8_t, 16> bytes{
        0x70, 0x04, 0x80, 0x00,  // prologue, clear_psn_offset -32768
        0xff, 0xff, 0xff, 0xfe,  // psn
        0x00, 0x01,              // spdcid
        0x0f, 0xff,              // use_rsv_pdc 0 | psn_offset 0xfff
        0xff, 0xff, 0xff, 0xff,  // ccc_id 0xff, credit_target 0xffffff
    };
    pds_rud_rod_cc_request h;
    h.type = pds_type::rod_cc;
    h.syn = true;
    h.clear_psn_offset = -32768;
    h.psn = 0xfffffffe;
    h.spdcid = 1;
    h.psn_offset = 0xfff;
    h.ccc_id = 0xff;
    h.credit_target = 0xffffff;
    check_golden(bytes, h);
}

TEST(wire_pds, ack) {
    // prologue: type 7 (0x3800) | next_hdr 4 (0x0200) | M 0x20 REQ_CLEAR 0x02 = 0x3a22
    constexpr std::array<std::uint8_t, 12> bytes{
        0x3a, 0x22,              // prologue
        0x00, 0x07,              // ack_psn_offset
        0x01, 0x02, 0x03, 0x04,  // cack_psn
        0x02, 0x07,              // spdcid
        0x01, 0x05,              // dpdcid
    };
    pds_ack h;
    h.next_hdr = pds_next_hdr::response;
    h.m = true;
    h.req_clear = true;
    h.ack_psn_offset = 7;
    h.cack_psn = 0x01020304;
    h.spdcid = 0x0207;
    h.dpdcid = 0x0105;
    check_golden(bytes, h);
}

TEST(wire_pds, ack_probe_close_retx) {
    // prologue: 0x3800 | RETX 0x10 P 0x08 REQ_CLOSE 0x04 = 0x381c
    constexpr std::array<std::uint8_t, 12> bytes{
        0x38, 0x1c, 0xbe, 0xef,  // prologue, probe_opaque
        0x00, 0x00, 0x00, 0x01,  // cack_psn
        0xff, 0xff, 0x80, 0x00,  // spdcid, dpdcid
    };
    pds_ack h;
    h.retx = h.p = h.req_close = true;
    h.ack_psn_offset = static_cast<std::int16_t>(0xbeef);
    h.cack_psn = 1;
    h.spdcid = 0xffff;
    h.dpdcid = 0x8000;
    check_golden(bytes, h);
}

pds_ack_cc ack_cc_fields() {
    pds_ack_cc h;
    h.retx = true;
    h.req_close = true;
    h.ack_psn_offset = 2;
    h.cack_psn = 0x63;
    h.spdcid = 0x0207;
    h.dpdcid = 0x0105;
    h.cc_flags = 5;
    h.mpr = 0x80;
    h.sack_psn_offset = 1;
    h.sack_bitmap = 0xf0e0d0c0b0a09080;
    return h;
}

TEST(wire_pds, ack_cc_nscc) {
    // prologue: type 8 (0x4000) | next_hdr 0 | RETX 0x10 REQ_CLOSE 0x04 = 0x4014
    constexpr std::array<std::uint8_t, 32> bytes{
        0x40, 0x14, 0x00, 0x02,                          // prologue, ack_psn_offset
        0x00, 0x00, 0x00, 0x63,                          // cack_psn
        0x02, 0x07, 0x01, 0x05,                          // spdcid, dpdcid
        0x05,                                            // cc_type NSCC (0) | cc_flags 5
        0x80,                                            // mpr
        0x00, 0x01,                                      // sack_psn_offset
        0xf0, 0xe0, 0xd0, 0xc0, 0xb0, 0xa0, 0x90, 0x80,  // sack_bitmap
        0x12, 0x34,                                      // service_time
        0xc5,                                            // restore_cwnd 1 | rcv_cwnd_pend 0x45
        0x06, 0x78, 0x90,                                // rcvd_bytes
        0x0a, 0xbc,                                      // ooo_count
    };
    pds_ack_cc h = ack_cc_fields();
    h.cc_type = cc_type::nscc;
    h.nscc = {.service_time = 0x1234,
              .restore_cwnd = true,
              .rcv_cwnd_pend = 0x45,
              .rcvd_bytes = 0x067890,
              .ooo_count = 0x0abc};
    check_golden(bytes, h);
}

TEST(wire_pds, ack_cc_credit) {
    constexpr std::array<std::uint8_t, 32> bytes{
        0x40, 0x14, 0x00, 0x02,                          // prologue, ack_psn_offset
        0x00, 0x00, 0x00, 0x63,                          // cack_psn
        0x02, 0x07, 0x01, 0x05,                          // spdcid, dpdcid
        0x15,                                            // cc_type CREDIT (1) | cc_flags 5
        0x80, 0x00, 0x01,                                // mpr, sack_psn_offset
        0xf0, 0xe0, 0xd0, 0xc0, 0xb0, 0xa0, 0x90, 0x80,  // sack_bitmap
        0x0c, 0x0d, 0x0e,                                // credit
        0x00, 0x00, 0x00,                                // reserved
        0x0d, 0xef,                                      // ooo_count
    };
    pds_ack_cc h = ack_cc_fields();
    h.cc_type = cc_type::credit;
    h.credit = {.credit = 0x0c0d0e, .ooo_count = 0x0def};
    check_golden(bytes, h);
}

TEST(wire_pds, ack_ccx) {
    // prologue: type 9 (0x4800) | RETX REQ_CLOSE = 0x4814
    constexpr std::array<std::uint8_t, 40> bytes{
        0x48, 0x14, 0x00, 0x02, 0x00, 0x00, 0x00, 0x63,  // prologue, ack_psn_offset, cack_psn
        0x02, 0x07, 0x01, 0x05,                          // spdcid, dpdcid
        0x05, 0x80, 0x00, 0x01,                          // NSCC|5, mpr, sack_psn_offset
        0xf0, 0xe0, 0xd0, 0xc0, 0xb0, 0xa0, 0x90, 0x80,  // sack_bitmap
        0x12, 0x34, 0xc5, 0x06, 0x78, 0x90, 0x0a, 0xbc,  // NSCC state
        0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98,  // ack_ccx_state
    };
    const pds_ack_cc base = ack_cc_fields();
    pds_ack_ccx h;
    h.retx = base.retx;
    h.req_close = base.req_close;
    h.ack_psn_offset = base.ack_psn_offset;
    h.cack_psn = base.cack_psn;
    h.spdcid = base.spdcid;
    h.dpdcid = base.dpdcid;
    h.cc_flags = base.cc_flags;
    h.mpr = base.mpr;
    h.sack_psn_offset = base.sack_psn_offset;
    h.sack_bitmap = base.sack_bitmap;
    h.nscc = {.service_time = 0x1234,
              .restore_cwnd = true,
              .rcv_cwnd_pend = 0x45,
              .rcvd_bytes = 0x067890,
              .ooo_count = 0x0abc};
    h.ack_ccx_state = 0x9192939495969798;
    check_golden(bytes, h);
}

TEST(wire_pds, nack) {
    // prologue: type 10 (0x5000) | next_hdr 0 | M 0x20 = 0x5020
    constexpr std::array<std::uint8_t, 16> bytes{
        0x50, 0x20,              // prologue
        0x01,                    // nack_code TRIMMED
        0x21,                    // vendor_code
        0x00, 0x00, 0x00, 0x0c,  // nack_psn
        0x02, 0x07, 0x01, 0x05,  // spdcid, dpdcid
        0x31, 0x32, 0x33, 0x34,  // payload
    };
    pds_nack h;
    h.m = true;
    h.code = nack_code::trimmed;
    h.vendor_code = 0x21;
    h.nack_psn = 12;
    h.spdcid = 0x0207;
    h.dpdcid = 0x0105;
    h.payload = 0x31323334;
    check_golden(bytes, h);
    EXPECT_STREQ(to_string(h.code), "TRIMMED");
    EXPECT_STREQ(to_string(nack_code::rcvr_infer_loss), "RCVR_INFER_LOSS");
    EXPECT_STREQ(to_string(static_cast<nack_code>(0x0c)), "UNKNOWN");
}

TEST(wire_pds, nack_ccx) {
    // prologue: type 12 (0x6000) | RETX 0x10 NT 0x08 = 0x6018
    constexpr std::array<std::uint8_t, 32> bytes{
        0x60, 0x18, 0x07, 0x22,                          // prologue, NO_PKT_BUFFER, vendor_code
        0x0b, 0xad, 0xf0, 0x0d,                          // nack_pkt_id (NT)
        0x00, 0x00, 0x00, 0x00,                          // spdcid, dpdcid
        0x41, 0x42, 0x43, 0x44,                          // payload
        0xe1, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,  // nccx_type 0xe | state1
        0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,  // state2
    };
    pds_nack_ccx h;
    h.retx = h.nt = true;
    h.code = nack_code::no_pkt_buffer;
    h.vendor_code = 0x22;
    h.nack_psn = 0x0badf00d;
    h.payload = 0x41424344;
    h.nccx_type = 0xe;
    h.nack_ccx_state1 = 0x0123456789abcdef;
    h.nack_ccx_state2 = 0xfedcba9876543210;
    check_golden(bytes, h);
}

TEST(wire_pds, ctrl_ack_req) {
    // prologue: type 11 (0x5800) | ctrl_type ACK_REQ 1 (0x0080) | AR 0x08 = 0x5888
    constexpr std::array<std::uint8_t, 16> bytes{
        0x58, 0x88, 0x00, 0x00,  // prologue, rsvd
        0x10, 0x20, 0x30, 0x44,  // psn
        0x01, 0x05, 0x02, 0x07,  // spdcid, dpdcid
        0x00, 0x00, 0x07, 0x07,  // payload (message id)
    };
    pds_ctrl h;
    h.ctrl_type = ctrl_type::ack_req;
    h.ar = true;
    h.psn = 0x10203044;
    h.spdcid = 0x0105;
    h.dpdcid = 0x0207;
    h.payload = 0x0707;
    check_golden(bytes, h);
}

TEST(wire_pds, ctrl_probe_syn) {
    // prologue: 0x5800 | PROBE 6 (0x0300) | ISROD 0x20 SYN 0x04 = 0x5b24
    constexpr std::array<std::uint8_t, 16> bytes{
        0x5b, 0x24, 0x5a, 0x5a,  // prologue, probe_opaque
        0x10, 0x20, 0x30, 0x45,  // psn
        0x01, 0x05,              // spdcid
        0x00, 0x05,              // use_rsv_pdc 0 | psn_offset 5
        0x10, 0x20, 0x30, 0x00,  // payload (SACK base)
    };
    pds_ctrl h;
    h.ctrl_type = ctrl_type::probe;
    h.is_rod = h.syn = true;
    h.probe_opaque = 0x5a5a;
    h.psn = 0x10203045;
    h.spdcid = 0x0105;
    h.psn_offset = 5;
    h.payload = 0x10203000;
    check_golden(bytes, h);
}

TEST(wire_pds, rudi_request_and_response) {
    // prologue: type 4 (0x2000) | next_hdr 2 (0x0100) | RETX 0x10 = 0x2110
    constexpr std::array<std::uint8_t, 8> req{0x21, 0x10, 0x00, 0x00, 0x0b, 0xad, 0xf0, 0x0d};
    check_golden(req, pds_rudi{.type = pds_type::rudi_req,
                               .next_hdr = pds_next_hdr::request_medium,
                               .m = false,
                               .retx = true,
                               .pkt_id = 0x0badf00d});
    // prologue: type 5 (0x2800) | next_hdr 4 (0x0200) | M 0x20 = 0x2a20
    constexpr std::array<std::uint8_t, 8> resp{0x2a, 0x20, 0x00, 0x00, 0x12, 0x34, 0x56, 0x78};
    check_golden(resp, pds_rudi{.type = pds_type::rudi_resp,
                                .next_hdr = pds_next_hdr::response,
                                .m = true,
                                .retx = false,
                                .pkt_id = 0x12345678});
}

TEST(wire_pds, uud) {
    // prologue: type 6 (0x3000) | next_hdr 1 (0x0080) = 0x3080, reserved
    constexpr std::array<std::uint8_t, 4> bytes{0x30, 0x80, 0x00, 0x00};
    check_golden(bytes, pds_uud{.next_hdr = pds_next_hdr::request_small});
}

TEST(wire_pds, reserved_bits_ignored) {
    // RUD with reserved flag bits 0x60 and 0x03 set: accepted, fields unchanged.
    constexpr std::array<std::uint8_t, 12> bytes{0x11, 0xeb, 0, 0, 0, 0, 0, 1, 0, 2, 0, 3};
    pds_rud_rod_request h;
    ASSERT_EQ(decode(bytes, h), reject_reason::none);
    EXPECT_TRUE(h.ar);
    EXPECT_FALSE(h.retx);
    EXPECT_FALSE(h.syn);
    EXPECT_EQ(h.dpdcid, 3);
    // UUD flags are ignored entirely.
    constexpr std::array<std::uint8_t, 4> uud{0x30, 0x7f, 0xff, 0xff};
    pds_uud u;
    EXPECT_EQ(decode(uud, u), reject_reason::none);
}

TEST(wire_pds, unknown_codes_rejected) {
    std::array<std::uint8_t, 40> buf{};
    pds_header any;
    std::size_t used = 7;
    auto with_type = [&](unsigned type, unsigned next, unsigned flags) {
        const unsigned v = (type << 11) | (next << 7) | flags;
        buf[0] = static_cast<std::uint8_t>(v >> 8);
        buf[1] = static_cast<std::uint8_t>(v);
        return std::span<const std::uint8_t>(buf);
    };
    EXPECT_EQ(decode_pds(with_type(0, 0, 0), any, used), reject_reason::bad_pds_type);
    EXPECT_EQ(used, 0u);
    for (unsigned t = 15; t < 32; ++t)
        EXPECT_EQ(decode_pds(with_type(t, 0, 0), any, used), reject_reason::bad_pds_type) << t;
    EXPECT_EQ(decode_pds(with_type(1, 0, 0), any, used), reject_reason::pds_type_not_allowed);
    for (unsigned next = 7; next < 16; ++next) {
        for (unsigned t : {2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 12u, 13u, 14u})
            EXPECT_EQ(decode_pds(with_type(t, next, 0), any, used), reject_reason::bad_pds_next_hdr)
                << t << " " << next;
    }
    for (unsigned ctrl = 10; ctrl < 16; ++ctrl)
        EXPECT_EQ(decode_pds(with_type(11, ctrl, 0), any, used), reject_reason::bad_pds_ctrl_type);
    // cc_type 2..15: refused in ACK_CC (whose state the engine reads), kept raw in ACK_CCX.
    for (unsigned cc = 2; cc < 16; ++cc) {
        with_type(8, 0, 0);
        buf[12] = static_cast<std::uint8_t>(cc << 4);
        EXPECT_EQ(decode_pds(buf, any, used), reject_reason::bad_pds_cc_type);
        with_type(9, 0, 0);
        buf[12] = static_cast<std::uint8_t>(cc << 4);
        buf[31] = 0x5a;
        EXPECT_EQ(decode_pds(buf, any, used), reject_reason::none);
        const auto& x = std::get<pds_ack_ccx>(any);
        EXPECT_EQ(static_cast<unsigned>(x.cc_type), cc);
        EXPECT_EQ(x.cc_state, 0x5au);
        buf[31] = 0;
    }
    // A known type handed to the decoder of another struct.
    pds_ack ack;
    EXPECT_EQ(decode(with_type(2, 0, 0), ack), reject_reason::pds_type_not_allowed);
    pds_rud_rod_request req;
    EXPECT_EQ(decode(with_type(13, 0, 0), req), reject_reason::pds_type_not_allowed);
    EXPECT_EQ(decode(with_type(20, 0, 0), req), reject_reason::bad_pds_type);
}

TEST(wire_pds, names) {
    EXPECT_EQ(pds_type_name(pds_type::rud), "RUD");
    EXPECT_EQ(pds_type_name(pds_type::rod_cc), "ROD_CC");
    EXPECT_EQ(pds_type_name(pds_type::nack_ccx), "NACK_CCX");
    EXPECT_EQ(pds_type_name(static_cast<pds_type>(0)), "UNKNOWN");
    EXPECT_EQ(ctrl_type_name(ctrl_type::negotiation), "NEGOTIATION");
    EXPECT_EQ(pds_next_hdr_name(pds_next_hdr::response_data_small), "RSP_DATA_SMALL");
}

TEST(wire_pds, visit_rud_syn) {
    pds_rud_rod_request h;
    h.type = pds_type::rud;
    h.next_hdr = pds_next_hdr::request_std;
    h.syn = true;
    recorder r;
    visit(pds_header{h}, r);
    const std::vector<std::string> want{
        "pds_rud.type",     "pds_rud.next_hdr",         "pds_rud.retx",       "pds_rud.ar",
        "pds_rud.syn",      "pds_rud.clear_psn_offset", "pds_rud.psn",        "pds_rud.spdcid",
        "pds_rud.pdc_info", "pds_rud.use_rsv_pdc",      "pds_rud.psn_offset",
    };
    EXPECT_EQ(r.names, want);
    EXPECT_EQ(r.symbols, (std::vector<std::string>{"RUD", "REQ_STD"}));
}

TEST(wire_pds, visit_nack_and_ack_cc) {
    recorder r;
    pds_nack n;
    visit(n, r);
    const std::vector<std::string> want{
        "pds_nack.type",   "pds_nack.next_hdr",  "pds_nack.m",           "pds_nack.retx",
        "pds_nack.nt",     "pds_nack.nack_code", "pds_nack.vendor_code", "pds_nack.nack_psn",
        "pds_nack.spdcid", "pds_nack.dpdcid",    "pds_nack.payload",
    };
    EXPECT_EQ(r.names, want);
    EXPECT_EQ(r.symbols, (std::vector<std::string>{"NACK", "NONE", "TRIMMED"}));

    recorder c;
    pds_ack_cc a;
    a.cc_type = cc_type::credit;
    visit(a, c);
    ASSERT_GE(c.names.size(), 3u);
    EXPECT_EQ(c.names[c.names.size() - 2], "pds_ack_cc.credit");
    EXPECT_EQ(c.names.back(), "pds_ack_cc.ooo_count");
    EXPECT_EQ(c.symbols.back(), "CREDIT");
}

}  // namespace
