// RoCEv2: BTH and extension headers (golden vectors written by hand from the IBA 1.x layouts),
// the CRC-32/ICRC (known answers from a ConnectX-4 Lx capture and the scapy RoCE test), whole
// packets built by build_roce_frame, and the pcap writer.
#include <gtest/gtest.h>
#include <algorithm>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "golden.hpp"
#include "wire/icrc.hpp"
#include "wire/pcap_file.hpp"
#include "wire/roce.hpp"
#include "wire/roce_cm.hpp"
#include "wire_test_helpers.hpp"

namespace {

using namespace uet::wire;
using namespace uet::wire_test;
using bytes = std::vector<std::uint8_t>;

template <class H, std::size_t N>
void expect_encodes_to(const H& h, const std::array<std::uint8_t, N>& wire) {
    static_assert(H::wire_size == N);
    std::array<std::uint8_t, N> out{};
    ASSERT_EQ(encode(h, out), N);
    EXPECT_EQ(out, wire);
}

TEST(wire_sizes, match_the_iba_layouts) {
    EXPECT_EQ(bth_header::wire_size, 12u);
    EXPECT_EQ(reth_header::wire_size, 16u);
    EXPECT_EQ(aeth_header::wire_size, 4u);
    EXPECT_EQ(immdt_header::wire_size, 4u);
    EXPECT_EQ(atomic_eth_header::wire_size, 28u);
    EXPECT_EQ(atomic_ack_eth_header::wire_size, 8u);
    EXPECT_EQ(icrc_size, 4u);
}

// ---- BTH ----

constexpr std::array<std::uint8_t, 12> bth_wire = {
    0x06,              // opcode RC RDMA WRITE FIRST
    0xa0,              // SE 1, M 0, PadCnt 2 (bits 5..4 = 10b), TVer 0
    0xff, 0xff,        // P_Key default
    0xc0,              // resv8a: FECN 1, BECN 1 (RoCEv2), 6 reserved bits 0
    0x12, 0x34, 0x56,  // DestQP 0x123456
    0x80,              // AckReq 1, 7 reserved bits
    0x00, 0x00, 0x64,  // PSN 100
};

bth_header bth_fields() {
    bth_header h;
    h.opcode = 0x06;
    h.se = true;
    h.m = false;
    h.pad_count = 2;
    h.tver = 0;
    h.pkey = 0xffff;
    h.fecn = true;
    h.becn = true;
    h.dest_qp = 0x123456;
    h.ack_req = true;
    h.psn = 100;
    return h;
}

TEST(bth, golden_encode_decode) {
    expect_encodes_to(bth_fields(), bth_wire);
    bth_header d;
    ASSERT_EQ(decode(bth_wire, d), reject_reason::none);
    EXPECT_EQ(d.opcode, 0x06);
    EXPECT_TRUE(d.se);
    EXPECT_FALSE(d.m);
    EXPECT_EQ(d.pad_count, 2);
    EXPECT_EQ(d.tver, 0);
    EXPECT_EQ(d.pkey, 0xffff);
    EXPECT_TRUE(d.fecn);
    EXPECT_TRUE(d.becn);
    EXPECT_EQ(d.dest_qp, 0x123456u);
    EXPECT_TRUE(d.ack_req);
    EXPECT_EQ(d.psn, 100u);
    expect_truncations<bth_header>(bth_wire);
    expect_encode_too_small(bth_fields());
}

TEST(bth, second_vector_other_bits) {
    const std::array<std::uint8_t, 12> w = {
        0x11,              // opcode RC ACKNOWLEDGE
        0x41,              // SE 0, M 1, PadCnt 0, TVer 1 (invalid)
        0x80, 0x01,        // P_Key 0x8001
        0x00,              // no FECN/BECN
        0x00, 0x00, 0x01,  // DestQP 1
        0x00,              // AckReq 0
        0xff, 0xff, 0xff,  // PSN 2^24-1
    };
    bth_header d;
    EXPECT_EQ(decode(w, d), reject_reason::bad_bth_tver);
    auto ok = w;
    ok[1] = 0x40;
    ASSERT_EQ(decode(ok, d), reject_reason::none);
    EXPECT_TRUE(d.m);
    EXPECT_FALSE(d.se);
    EXPECT_EQ(d.pkey, 0x8001);
    EXPECT_EQ(d.psn, 0xffffffu);
    EXPECT_FALSE(d.fecn || d.becn || d.ack_req);
    // Reserved bits are ignored on receive and written as zero.
    ok[8] = 0x7f;
    ok[4] = 0x3f;
    ASSERT_EQ(decode(ok, d), reject_reason::none);
    std::array<std::uint8_t, 12> out{};
    encode(d, out);
    EXPECT_EQ(out[8], 0);
    EXPECT_EQ(out[4], 0);
}

TEST(bth, visit_names_fields) {
    recorder r;
    visit(bth_fields(), r);
    EXPECT_EQ(r.lines,
              (std::vector<std::string>{"bth.opcode=6(RC_RDMA_WRITE_FIRST)", "bth.se=1", "bth.m=0",
                                        "bth.pad_count=2", "bth.tver=0", "bth.pkey=65535",
                                        "bth.fecn=1", "bth.becn=1", "bth.dest_qp=1193046",
                                        "bth.ack_req=1", "bth.psn=100", "bth.end"}));
}

// ---- RETH ----

constexpr std::array<std::uint8_t, 16> reth_wire = {
    0x00, 0x00, 0x7f, 0x12, 0x34, 0x56, 0x78, 0x90,  // virtual address
    0xa1, 0xb2, 0xc3, 0xd4,                          // R_Key
    0x00, 0x01, 0x00, 0x00,                          // DMA length 65536
};

TEST(reth, golden_encode_decode) {
    reth_header h{0x00007f1234567890ull, 0xa1b2c3d4, 65536};
    expect_encodes_to(h, reth_wire);
    reth_header d;
    ASSERT_EQ(decode(reth_wire, d), reject_reason::none);
    EXPECT_EQ(d.va, 0x00007f1234567890ull);
    EXPECT_EQ(d.rkey, 0xa1b2c3d4u);
    EXPECT_EQ(d.dma_len, 65536u);
    expect_truncations<reth_header>(reth_wire);
    expect_encode_too_small(h);
    recorder r;
    visit(d, r);
    EXPECT_EQ(r.lines.front(), "reth.va=139716164221072");
    EXPECT_EQ(r.lines[1], "reth.rkey=2712847316");
    EXPECT_EQ(r.lines[2], "reth.dma_len=65536");
}

// ---- AETH ----

constexpr std::array<std::uint8_t, 4> aeth_nak_wire = {
    0x62,              // syndrome: reserved 0, kind 11b (NAK), code 00010b (remote access error)
    0x00, 0x01, 0x02,  // MSN 258
};

TEST(aeth, golden_encode_decode) {
    aeth_header h{0x62, 258};
    expect_encodes_to(h, aeth_nak_wire);
    aeth_header d;
    ASSERT_EQ(decode(aeth_nak_wire, d), reject_reason::none);
    EXPECT_EQ(d.syndrome, 0x62);
    EXPECT_EQ(d.msn, 258u);
    EXPECT_EQ(d.kind(), aeth_kind::nak);
    EXPECT_EQ(d.value(), static_cast<std::uint8_t>(aeth_nak_code::remote_access_error));
    EXPECT_STREQ(aeth_nak_name(d.value()), "REMOTE_ACCESS_ERROR");
    expect_truncations<aeth_header>(aeth_nak_wire);
    expect_encode_too_small(h);
    recorder r;
    visit(d, r);
    EXPECT_EQ(r.lines, (std::vector<std::string>{"aeth.syndrome=98", "aeth.kind=3(NAK)",
                                                 "aeth.nak_code=2(REMOTE_ACCESS_ERROR)",
                                                 "aeth.msn=258", "aeth.end"}));
}

TEST(aeth, syndrome_kinds) {
    // ACK with credit count 31 (0x1f), RNR NAK with timer 14, reserved kind 10b.
    const std::array<std::uint8_t, 4> ack = {0x1f, 0xff, 0xff, 0xfe};
    const std::array<std::uint8_t, 4> rnr = {0x2e, 0x00, 0x00, 0x05};
    const std::array<std::uint8_t, 4> reserved = {0x40, 0x00, 0x00, 0x05};
    aeth_header d;
    ASSERT_EQ(decode(ack, d), reject_reason::none);
    EXPECT_EQ(d.kind(), aeth_kind::ack);
    EXPECT_EQ(d.value(), 31);
    EXPECT_EQ(d.msn, 0xfffffeu);
    ASSERT_EQ(decode(rnr, d), reject_reason::none);
    EXPECT_EQ(d.kind(), aeth_kind::rnr_nak);
    EXPECT_EQ(d.value(), 14);
    EXPECT_EQ(decode(reserved, d), reject_reason::bad_aeth_syndrome);
    EXPECT_EQ(aeth_header::make_syndrome(aeth_kind::nak, 2), 0x62);
    EXPECT_EQ(aeth_header::make_syndrome(aeth_kind::rnr_nak, 14), 0x2e);
    EXPECT_STREQ(to_string(aeth_kind::rnr_nak), "RNR_NAK");
}

// ---- ImmDt ----

constexpr std::array<std::uint8_t, 4> immdt_wire = {0xde, 0xad, 0xbe, 0xef};  // immediate data

TEST(immdt, golden_encode_decode) {
    immdt_header h{0xdeadbeef};
    expect_encodes_to(h, immdt_wire);
    immdt_header d;
    ASSERT_EQ(decode(immdt_wire, d), reject_reason::none);
    EXPECT_EQ(d.imm, 0xdeadbeefu);
    expect_truncations<immdt_header>(immdt_wire);
    expect_encode_too_small(h);
}

// ---- AtomicETH ----

constexpr std::array<std::uint8_t, 28> atomic_eth_wire = {
    0x00, 0x00, 0x7f, 0x00, 0x00, 0x40, 0x00, 0x08,  // virtual address (8-byte aligned)
    0x00, 0x00, 0x0a, 0xaa,                          // R_Key
    0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44,  // swap (or add) data
    0x55, 0x55, 0x66, 0x66, 0x77, 0x77, 0x88, 0x88,  // compare data
};

TEST(atomic_eth, golden_encode_decode) {
    atomic_eth_header h{0x00007f0000400008ull, 0xaaa, 0x1111222233334444ull, 0x5555666677778888ull};
    expect_encodes_to(h, atomic_eth_wire);
    atomic_eth_header d;
    ASSERT_EQ(decode(atomic_eth_wire, d), reject_reason::none);
    EXPECT_EQ(d.va, 0x00007f0000400008ull);
    EXPECT_EQ(d.rkey, 0xaaau);
    EXPECT_EQ(d.swap_add, 0x1111222233334444ull);
    EXPECT_EQ(d.compare, 0x5555666677778888ull);
    expect_truncations<atomic_eth_header>(atomic_eth_wire);
    expect_encode_too_small(h);
}

// ---- AtomicAckETH ----

constexpr std::array<std::uint8_t, 8> atomic_ack_wire = {
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,  // original remote data
};

TEST(atomic_ack_eth, golden_encode_decode) {
    atomic_ack_eth_header h{0x0123456789abcdefull};
    expect_encodes_to(h, atomic_ack_wire);
    atomic_ack_eth_header d;
    ASSERT_EQ(decode(atomic_ack_wire, d), reject_reason::none);
    EXPECT_EQ(d.orig_remote_data, 0x0123456789abcdefull);
    expect_truncations<atomic_ack_eth_header>(atomic_ack_wire);
    expect_encode_too_small(h);
}

// ---- opcodes ----

TEST(opcodes, names_and_extension_headers) {
    EXPECT_STREQ(roce_opcode_name(0x00), "RC_SEND_FIRST");
    EXPECT_STREQ(roce_opcode_name(0x05), "RC_SEND_ONLY_WITH_IMMEDIATE");
    EXPECT_STREQ(roce_opcode_name(0x0b), "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
    EXPECT_STREQ(roce_opcode_name(0x0c), "RC_RDMA_READ_REQUEST");
    EXPECT_STREQ(roce_opcode_name(0x11), "RC_ACKNOWLEDGE");
    EXPECT_STREQ(roce_opcode_name(0x12), "RC_ATOMIC_ACKNOWLEDGE");
    EXPECT_STREQ(roce_opcode_name(0x13), "RC_COMPARE_SWAP");
    EXPECT_STREQ(roce_opcode_name(0x14), "RC_FETCH_ADD");
    EXPECT_STREQ(roce_opcode_name(0x81), "CNP");
    EXPECT_EQ(roce_opcode_name(0x15), nullptr);            // RESERVED
    EXPECT_EQ(roce_opcode_name(0x24), nullptr);            // UC SEND ONLY: not supported
    EXPECT_STREQ(roce_opcode_name(0x64), "UD_SEND_ONLY");  // the connection manager's MADs

    // IBA table: which headers follow the BTH.
    auto i = roce_opcode_lookup(0x06);
    EXPECT_TRUE(i.reth && i.payload && i.full_payload && !i.immdt && !i.aeth);
    i = roce_opcode_lookup(0x09);
    EXPECT_TRUE(!i.reth && i.immdt && i.payload && !i.full_payload);
    i = roce_opcode_lookup(0x0b);
    EXPECT_TRUE(i.reth && i.immdt && i.payload);
    i = roce_opcode_lookup(0x0c);
    EXPECT_TRUE(i.reth && !i.payload);
    i = roce_opcode_lookup(0x0e);
    EXPECT_TRUE(!i.aeth && i.payload && i.full_payload);
    i = roce_opcode_lookup(0x0f);
    EXPECT_TRUE(i.aeth && i.payload);
    i = roce_opcode_lookup(0x12);
    EXPECT_TRUE(i.aeth && i.atomic_ack_eth && !i.payload);
    i = roce_opcode_lookup(0x13);
    EXPECT_TRUE(i.atomic_eth && !i.reth && !i.payload);
    EXPECT_FALSE(roce_opcode_lookup(0x15).known);
}

// ---- CRC-32 and ICRC ----

TEST(crc32, check_value_and_slicing) {
    const std::string check = "123456789";
    std::span<const std::uint8_t> s(reinterpret_cast<const std::uint8_t*>(check.data()),
                                    check.size());
    EXPECT_EQ(crc32(s), 0xcbf43926u);  // the CRC-32/ISO-HDLC check value
    // Slice-by-8 against a bitwise reference over every length and alignment up to 64.
    std::mt19937 rng(3);
    bytes data(80);
    for (auto& b : data)
        b = static_cast<std::uint8_t>(rng());
    for (std::size_t off = 0; off < 8; ++off)
        for (std::size_t len = 0; len + off <= 72; ++len) {
            std::uint32_t ref = 0xffffffffu;
            for (std::size_t k = off; k < off + len; ++k) {
                ref ^= data[k];
                for (int b = 0; b < 8; ++b)
                    ref = (ref & 1) ? (ref >> 1) ^ 0xedb88320u : ref >> 1;
            }
            EXPECT_EQ(crc32(std::span(data).subspan(off, len)), ~ref) << off << "+" << len;
        }
    // Chaining pieces equals one pass.
    std::uint32_t st = crc32_update(crc32_init, std::span(data).first(13));
    st = crc32_update(st, std::span(data).subspan(13));
    EXPECT_EQ(crc32_finish(st), crc32(data));
}

// Folding with carry-less multiplication (where the CPU has it) gives the table path's CRC for
// every length, alignment and starting state: runs of 16 bytes and more fold (of 256 and more four
// times as wide where the CPU has VPCLMULQDQ), tails go by table.
TEST(crc32, folding_matches_the_table_path) {
    std::mt19937_64 rng(7);
    std::vector<std::uint8_t> data(10000);
    for (auto& b : data)
        b = static_cast<std::uint8_t>(rng());
    for (int i = 0; i < 3000; ++i) {
        const std::size_t off = rng() % 64;
        const std::size_t len = i < 300 ? static_cast<std::size_t>(i) : rng() % 9900;
        const auto state = static_cast<std::uint32_t>(rng());
        const auto piece = std::span(data).subspan(off, len);
        ASSERT_EQ(crc32_update(state, piece), crc32_update_table(state, piece))
            << "offset " << off << " length " << len;
    }
    std::printf("crc32 folds with PCLMULQDQ on this CPU: %s; with VPCLMULQDQ: %s\n",
                crc32_folds() ? "yes" : "no", crc32_folds_wide() ? "yes" : "no");
}

// Copying while summing gives memcpy's bytes and crc32_update's state for every length, source
// and destination alignment and starting state, and writes nothing outside the destination.
TEST(crc32, copy_matches_memcpy_then_crc32) {
    std::mt19937_64 rng(11);
    std::vector<std::uint8_t> src(10000);
    for (auto& b : src)
        b = static_cast<std::uint8_t>(rng());
    std::vector<std::uint8_t> dst(10000 + 128);
    for (int i = 0; i < 3000; ++i) {
        const std::size_t from = rng() % 64, to = rng() % 64;
        const std::size_t len = i < 300 ? static_cast<std::size_t>(i) : rng() % 9900;
        const auto state = static_cast<std::uint32_t>(rng());
        std::fill(dst.begin(), dst.end(), 0xee);
        const auto piece = std::span(src).subspan(from, len);
        ASSERT_EQ(crc32_copy(state, dst.data() + to, piece.data(), len), crc32_update(state, piece))
            << "from " << from << " to " << to << " length " << len;
        ASSERT_TRUE(std::equal(piece.begin(), piece.end(), dst.begin() + to)) << len;
        ASSERT_TRUE(std::all_of(dst.begin(), dst.begin() + to, [](auto b) { return b == 0xee; }));
        ASSERT_TRUE(
            std::all_of(dst.begin() + to + len, dst.end(), [](auto b) { return b == 0xee; }));
    }
}

// A RoCEv2 CNP captured on a Mellanox ConnectX-4 Lx, as published in scapy's
// test/contrib/roce.uts ("RoCE CNP captured on ConnectX-4 Lx"): the ICRC bytes 82 fd 00 2a were
// computed by the NIC's hardware, independently of this code.
const bytes cx4_cnp_frame = {
    0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00,  // Eth
    0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61,  // IPv4, TOS 0xc2
    0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,                          // 10.0.17/18.1
    0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,  // UDP 0 -> 4791, len 40, no checksum
    0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18,  // BTH: CNP, BECN, QP 0x118
    0x00, 0x00, 0x00, 0x00,                          //      PSN 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // 16 reserved bytes
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
    0x82, 0xfd, 0x00, 0x2a,                          // ICRC (hardware)
};

TEST(icrc, known_answer_connectx4_capture) {
    auto ip = std::span(cx4_cnp_frame).subspan(14);
    EXPECT_EQ(roce_icrc(ip.first(ip.size() - 4)), 0x2a00fd82u);  // stored LE: 82 fd 00 2a

    l2l4_view v;
    ASSERT_EQ(parse_l2l4(cx4_cnp_frame, v), reject_reason::none);
    roce_packet p;
    ASSERT_EQ(decode_roce(v.l4_payload, v.ip_packet, p), reject_reason::none);
    EXPECT_EQ(p.bth.opcode, 0x81);
    EXPECT_TRUE(p.bth.becn);
    EXPECT_EQ(p.bth.dest_qp, 0x118u);
    EXPECT_EQ(p.icrc, 0x2a00fd82u);
    EXPECT_EQ(p.payload.size(), 16u);
}

TEST(icrc, known_answer_scapy_uc_send) {
    // scapy test/contrib/roce.uts "RoCE layer": UC_SEND_ONLY, pad count 2, ICRC 0x78f353f3 as
    // scapy reads it (wire bytes 78 f3 53 f3). Starts at the IPv4 header.
    const bytes ip = {
        0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11, 0xb4, 0xd5,
        0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07,                          // IPv4
        0xc0, 0x00, 0x12, 0xb7, 0x00, 0x2c, 0xac, 0xa2,                          // UDP
        0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3, 0x00, 0xcf, 0x17, 0x10,  // BTH
        0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89, 0x35, 0xd9, 0x0e, 0x9a, 0x95, 0x50,  // payload
        0x54, 0x01, 0xbe, 0x88, 0x5e, 0x50, 0x00, 0x00,                          // + pad
        0x78, 0xf3, 0x53, 0xf3,                                                  // ICRC
    };
    std::uint32_t c = roce_icrc(std::span(ip).first(ip.size() - 4));
    EXPECT_EQ(c, load_le32(&ip[ip.size() - 4]));
    // A UC opcode is outside what decode_roce supports, and says so.
    roce_packet p;
    EXPECT_EQ(decode_roce(std::span(ip).subspan(28), ip, p),
              reject_reason::unsupported_roce_opcode);
}

TEST(icrc, masked_fields_do_not_count_others_do) {
    auto frames = uet::golden::roce_frames();
    bytes f = frames.at(0).bytes;
    const std::size_t ip = 14;
    auto icrc_of = [&](const bytes& b) {
        auto pkt = std::span(b).subspan(ip);
        return roce_icrc(pkt.first(pkt.size() - 4));
    };
    const std::uint32_t base = icrc_of(f);
    auto with = [&](std::size_t off, std::uint8_t v) {
        bytes g = f;
        g[off] = v;
        return icrc_of(g);
    };
    EXPECT_EQ(with(ip + 1, 0x03), base);        // ECN marked CE by a switch
    EXPECT_EQ(with(ip + 8, 0x01), base);        // TTL
    EXPECT_EQ(with(ip + 10, 0x00), base);       // IP checksum
    EXPECT_EQ(with(ip + 26, 0x12), base);       // UDP checksum
    EXPECT_EQ(with(ip + 28 + 4, 0x80), base);   // BTH FECN
    EXPECT_NE(with(ip + 2, 0x7f), base);        // total length
    EXPECT_NE(with(ip + 12, 0x0b), base);       // source address
    EXPECT_NE(with(ip + 20, 0x00), base);       // UDP source port
    EXPECT_NE(with(ip + 28, 0x05), base);       // BTH opcode
    EXPECT_NE(with(ip + 28 + 7, 0x00), base);   // DestQP
    EXPECT_NE(with(f.size() - 5, 0xaa), base);  // last pad byte
    // Nothing outside the span is read even when the headers do not fit.
    for (std::size_t n = 0; n < 60; ++n)
        (void)roce_icrc(std::span(f).subspan(ip, n));
}

// ---- whole packets ----

struct expected_packet {
    const char* name;
    roce_opcode op;
    std::uint32_t qp;
    std::uint32_t psn;
    std::size_t payload;
    std::uint8_t pad;
};

constexpr expected_packet golden_expect[] = {
    {"roce_send_only", roce_opcode::rc_send_only, 0x101, 1000, 61, 3},
    {"roce_rdma_write_first", roce_opcode::rc_rdma_write_first, 0x102, 2000, 1024, 0},
    {"roce_rdma_write_middle", roce_opcode::rc_rdma_write_middle, 0x103, 2001, 1024, 0},
    {"roce_rdma_write_last", roce_opcode::rc_rdma_write_last, 0x104, 2002, 1022, 2},
    {"roce_rdma_write_only", roce_opcode::rc_rdma_write_only, 0x105, 3000, 37, 3},
    {"roce_rdma_write_only_with_immediate", roce_opcode::rc_rdma_write_only_with_immediate, 0x106,
     3100, 9, 3},
    {"roce_rdma_read_request", roce_opcode::rc_rdma_read_request, 0x107, 4000, 0, 0},
    {"roce_rdma_read_response_first", roce_opcode::rc_rdma_read_response_first, 0x108, 4000, 1024,
     0},
    {"roce_rdma_read_response_last", roce_opcode::rc_rdma_read_response_last, 0x109, 4002, 1030, 2},
    {"roce_rdma_read_response_only", roce_opcode::rc_rdma_read_response_only, 0x10a, 4100, 13, 3},
    {"roce_acknowledge", roce_opcode::rc_acknowledge, 0x10b, 5000, 0, 0},
    {"roce_compare_swap", roce_opcode::rc_compare_swap, 0x10c, 6000, 0, 0},
    {"roce_fetch_add", roce_opcode::rc_fetch_add, 0x10d, 6100, 0, 0},
    {"roce_atomic_acknowledge", roce_opcode::rc_atomic_acknowledge, 0x10e, 6000, 0, 0},
};

TEST(roce_packet, golden_frames_decode) {
    auto frames = uet::golden::roce_frames();
    ASSERT_EQ(frames.size(), std::size(golden_expect));
    for (std::size_t k = 0; k < frames.size(); ++k) {
        const auto& e = golden_expect[k];
        const auto& f = frames[k];
        SCOPED_TRACE(f.name);
        EXPECT_EQ(f.name, e.name);
        l2l4_view v;
        ASSERT_EQ(parse_l2l4(f.bytes, v), reject_reason::none);
        EXPECT_EQ(v.udp->dport, roce_udp_port);
        roce_packet p;
        ASSERT_EQ(decode_roce(v.l4_payload, v.ip_packet, p), reject_reason::none);
        EXPECT_EQ(p.bth.opcode, static_cast<std::uint8_t>(e.op));
        EXPECT_EQ(p.bth.dest_qp, e.qp);
        EXPECT_EQ(p.bth.psn, e.psn);
        EXPECT_EQ(p.bth.pad_count, e.pad);
        EXPECT_EQ(p.payload.size(), e.payload);
        auto info = roce_opcode_lookup(p.bth.opcode);
        EXPECT_EQ(p.reth.has_value(), info.reth);
        EXPECT_EQ(p.aeth.has_value(), info.aeth);
        EXPECT_EQ(p.immdt.has_value(), info.immdt);
        EXPECT_EQ(p.atomic_eth.has_value(), info.atomic_eth);
        EXPECT_EQ(p.atomic_ack_eth.has_value(), info.atomic_ack_eth);
        // Pad bytes are zero and the ICRC on the wire is little-endian.
        const auto& b = f.bytes;
        for (std::size_t i = 0; i < e.pad; ++i)
            EXPECT_EQ(b[b.size() - 5 - i], 0);
        EXPECT_EQ(p.icrc, load_le32(&b[b.size() - 4]));
    }
}

TEST(roce_packet, golden_field_values) {
    auto frames = uet::golden::roce_frames();
    std::map<std::string, roce_packet> by_name;
    for (const auto& f : frames) {
        l2l4_view v;
        ASSERT_EQ(parse_l2l4(f.bytes, v), reject_reason::none);
        ASSERT_EQ(decode_roce(v.l4_payload, v.ip_packet, by_name[f.name]), reject_reason::none);
    }
    const auto& wf = by_name["roce_rdma_write_first"];
    EXPECT_EQ(wf.reth->va, 0x00007f0012345000ull);
    EXPECT_EQ(wf.reth->rkey, 0x00a1b2c3u);
    EXPECT_EQ(wf.reth->dma_len, 4096u);
    const auto& wi = by_name["roce_rdma_write_only_with_immediate"];
    EXPECT_EQ(wi.immdt->imm, 0xdeadbeefu);
    EXPECT_TRUE(wi.bth.se);
    const auto& cs = by_name["roce_compare_swap"];
    EXPECT_EQ(cs.atomic_eth->compare, 0x5555666677778888ull);
    const auto& aa = by_name["roce_atomic_acknowledge"];
    EXPECT_EQ(aa.atomic_ack_eth->orig_remote_data, 0x0123456789abcdefull);
    EXPECT_EQ(aa.aeth->kind(), aeth_kind::ack);
    EXPECT_EQ(aa.aeth->msn, 21u);
    // Golden frames carry a real UDP checksum and DSCP/ECN.
    l2l4_view v;
    ASSERT_EQ(parse_l2l4(frames[0].bytes, v), reject_reason::none);
    EXPECT_NE(v.udp->checksum, 0);
    EXPECT_EQ(v.ip.dscp, 26);
    EXPECT_EQ(v.ip.ecn, 2);
}

TEST(roce_packet, summarize) {
    auto frames = uet::golden::roce_frames();
    auto line = [&](std::size_t k) {
        l2l4_view v;
        roce_packet p;
        EXPECT_EQ(parse_l2l4(frames[k].bytes, v), reject_reason::none);
        EXPECT_EQ(decode_roce(v.l4_payload, v.ip_packet, p), reject_reason::none);
        std::string s;
        summarize(p, s);
        return s;
    };
    EXPECT_EQ(line(1),
              "RC_RDMA_WRITE_FIRST qp 0x000102 psn 2000 va 0x7f0012345000 rkey 0xa1b2c3 len 4096 "
              "payload 1024");
    EXPECT_EQ(line(0), "RC_SEND_ONLY qp 0x000101 psn 1000 ackreq se payload 61");
    EXPECT_EQ(line(10), "RC_ACKNOWLEDGE qp 0x00010b psn 5000 ACK 31 msn 20 payload 0");
    EXPECT_EQ(line(5),
              "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE qp 0x000106 psn 3100 ackreq se va 0x7f0000200000 "
              "rkey 0x888 len 9 imm 0xdeadbeef payload 9");
}

TEST(roce_packet, visit_order) {
    auto frames = uet::golden::roce_frames();
    l2l4_view v;
    roce_packet p;
    ASSERT_EQ(parse_l2l4(frames[13].bytes, v), reject_reason::none);
    ASSERT_EQ(decode_roce(v.l4_payload, v.ip_packet, p), reject_reason::none);
    recorder r;
    visit(p, r);
    std::vector<std::string> heads;
    for (const auto& l : r.lines)
        if (l.ends_with(".end")) heads.push_back(l.substr(0, l.size() - 4));
    EXPECT_EQ(heads,
              (std::vector<std::string>{"bth", "aeth", "atomic_ack_eth", "roce_payload", "icrc"}));
}

TEST(roce_packet, corruption_is_caught) {
    auto frames = uet::golden::roce_frames();
    for (const auto& f : frames) {
        SCOPED_TRACE(f.name);
        bytes b = f.bytes;
        l2l4_view v;
        ASSERT_EQ(parse_l2l4(b, v), reject_reason::none);
        auto udp = v.l4_payload;
        auto ip = v.ip_packet;
        // Flip one bit anywhere in the last 8 transport bytes or the BTH's DestQP: with the
        // UDP/IP checksums bypassed, decode_roce must still refuse via the ICRC.
        for (std::size_t off : {udp.size() - 1, udp.size() - 5, udp.size() - 8, std::size_t{7}}) {
            std::size_t abs = static_cast<std::size_t>(udp.data() - b.data()) + off;
            b[abs] ^= 0x04;
            roce_packet p;
            EXPECT_EQ(decode_roce(udp, ip, p), reject_reason::bad_icrc) << off;
            b[abs] ^= 0x04;
        }
        // Changing an IP address (covered by the ICRC) is caught too.
        b[14 + 15] ^= 1;
        roce_packet p;
        EXPECT_EQ(decode_roce(udp, ip, p), reject_reason::bad_icrc);
        b[14 + 15] ^= 1;
        EXPECT_EQ(decode_roce(udp, ip, p), reject_reason::none);
        // udp_payload that is not the tail of ip_packet is refused.
        EXPECT_NE(decode_roce(udp, ip.first(ip.size() - 1), p), reject_reason::none);
    }
}

TEST(roce_packet, truncations_rejected) {
    auto frames = uet::golden::roce_frames();
    for (const auto& f : frames) {
        SCOPED_TRACE(f.name);
        l2l4_view v;
        ASSERT_EQ(parse_l2l4(f.bytes, v), reject_reason::none);
        for (std::size_t n = 0; n < v.l4_payload.size(); ++n) {
            auto udp = v.l4_payload.first(n);
            auto ip = v.ip_packet.first(v.ip_packet.size() - (v.l4_payload.size() - n));
            roce_packet p;
            reject_reason r = decode_roce(udp, ip, p);
            EXPECT_NE(r, reject_reason::none) << n;
            if (n < 16) {
                EXPECT_EQ(r, reject_reason::truncated) << n;
            }
        }
        // And every truncation of the frame stops at the IP layer as truncated.
        for (std::size_t n = 0; n < f.bytes.size(); ++n) {
            l2l4_view t;
            EXPECT_EQ(parse_l2l4(std::span(f.bytes).first(n), t), reject_reason::truncated);
        }
    }
}

// Transport bytes (BTH .. ICRC) with the ICRC left zero; the checks under test all come first.
reject_reason decode_transport(bytes t) {
    roce_packet p;
    return decode_roce(t, t, p);
}

bytes transport(std::uint8_t opcode, std::uint8_t pad, std::size_t after_bth) {
    bytes t(12 + after_bth + 4, 0);
    t[0] = opcode;
    t[1] = static_cast<std::uint8_t>(pad << 4);
    return t;
}

TEST(roce_packet, opcode_rules) {
    EXPECT_EQ(decode_transport(transport(0x15, 0, 0)), reject_reason::unsupported_roce_opcode);
    EXPECT_EQ(decode_transport(transport(0x24, 0, 8)), reject_reason::unsupported_roce_opcode);
    auto bad_tver = transport(0x04, 0, 4);
    bad_tver[1] = 0x02;
    EXPECT_EQ(decode_transport(bad_tver), reject_reason::bad_bth_tver);
    // Extension headers that do not fit.
    EXPECT_EQ(decode_transport(transport(0x0c, 0, 15)), reject_reason::roce_short_for_opcode);
    EXPECT_EQ(decode_transport(transport(0x13, 0, 27)), reject_reason::roce_short_for_opcode);
    EXPECT_EQ(decode_transport(transport(0x12, 0, 11)), reject_reason::roce_short_for_opcode);
    EXPECT_EQ(decode_transport(transport(0x0b, 0, 19)), reject_reason::roce_short_for_opcode);
    // Pad count.
    EXPECT_EQ(decode_transport(transport(0x11, 1, 4)), reject_reason::bad_pad_count);  // ACK
    EXPECT_EQ(decode_transport(transport(0x06, 2, 16 + 64)), reject_reason::bad_pad_count);
    EXPECT_EQ(decode_transport(transport(0x07, 1, 64)), reject_reason::bad_pad_count);
    EXPECT_EQ(decode_transport(transport(0x04, 3, 0)), reject_reason::bad_pad_count);
    // Payload shape.
    EXPECT_EQ(decode_transport(transport(0x11, 0, 8)), reject_reason::roce_unexpected_payload);
    EXPECT_EQ(decode_transport(transport(0x07, 0, 0)), reject_reason::roce_unexpected_payload);
    EXPECT_EQ(decode_transport(transport(0x04, 0, 5)), reject_reason::roce_misaligned_payload);
    EXPECT_EQ(decode_transport(transport(0x81, 0, 12)), reject_reason::roce_unexpected_payload);
    auto reserved_aeth = transport(0x11, 0, 4);
    reserved_aeth[12] = 0x40;
    EXPECT_EQ(decode_transport(reserved_aeth), reject_reason::bad_aeth_syndrome);
    // Shape accepted: only the (zero) ICRC is wrong.
    EXPECT_EQ(decode_transport(transport(0x04, 3, 4)), reject_reason::bad_icrc);
    EXPECT_EQ(decode_transport(transport(0x04, 0, 0)), reject_reason::bad_icrc);
}

frame_spec test_spec() {
    frame_spec s;
    s.src_mac = {{2, 0, 0, 0, 0, 1}};
    s.dst_mac = {{2, 0, 0, 0, 0, 2}};
    s.src_ip = 0xc0a80101;
    s.dst_ip = 0xc0a80102;
    s.src_port = 50000;
    s.dst_port = roce_udp_port;
    return s;
}

TEST(roce_build, refuses_inconsistent_specs) {
    bytes out(2000);
    auto payload = bytes(8, 1);
    roce_packet_spec r;
    r.bth.opcode = static_cast<std::uint8_t>(roce_opcode::rc_rdma_write_first);
    r.payload = payload;
    EXPECT_EQ(build_roce_frame(test_spec(), r, out), 0u);  // no RETH
    r.reth = reth_header{};
    EXPECT_GT(build_roce_frame(test_spec(), r, out), 0u);
    r.immdt = immdt_header{};
    EXPECT_EQ(build_roce_frame(test_spec(), r, out), 0u);  // extra ImmDt
    r.immdt.reset();
    auto odd = bytes(7, 1);
    r.payload = odd;
    EXPECT_EQ(build_roce_frame(test_spec(), r, out), 0u);  // FIRST must be 4-byte aligned
    r = {};
    r.bth.opcode = static_cast<std::uint8_t>(roce_opcode::rc_acknowledge);
    r.aeth = aeth_header{};
    r.payload = payload;
    EXPECT_EQ(build_roce_frame(test_spec(), r, out), 0u);  // ACK carries no payload
    r.payload = {};
    EXPECT_GT(build_roce_frame(test_spec(), r, out), 0u);
    r.bth.opcode = 0x15;
    EXPECT_EQ(build_roce_frame(test_spec(), r, out), 0u);
}

TEST(roce_build, too_small_buffer_and_vlan_and_no_udp_checksum) {
    auto payload = bytes(5, 0x5a);
    roce_packet_spec r;
    r.bth.opcode = static_cast<std::uint8_t>(roce_opcode::rc_send_last_with_immediate);
    r.bth.dest_qp = 77;
    r.immdt = immdt_header{0x01020304};
    r.payload = payload;
    auto s = test_spec();
    s.vlan = vlan_tag{3, false, 10, 0};
    s.udp_checksum = false;
    bytes out(200);
    std::size_t n = build_roce_frame(s, r, out);
    ASSERT_EQ(n, 18u + 20 + 8 + 12 + 4 + 8 + 4);
    for (std::size_t k = 0; k < n; ++k) {
        bytes small(k);
        EXPECT_EQ(build_roce_frame(s, r, small), 0u) << k;
    }
    out.resize(n);
    l2l4_view v;
    ASSERT_EQ(parse_l2l4(out, v), reject_reason::none);
    EXPECT_EQ(v.udp->checksum, 0);
    roce_packet p;
    ASSERT_EQ(decode_roce(v.l4_payload, v.ip_packet, p), reject_reason::none);
    EXPECT_EQ(p.bth.pad_count, 3);
    EXPECT_EQ(p.immdt->imm, 0x01020304u);
    EXPECT_EQ(bytes(p.payload.begin(), p.payload.end()), payload);
}

// build_roce_frame_fast is held to the reference: every golden frame's packet, decoded back into a
// spec, then with payloads of other lengths where its opcode takes any, copied from unaligned
// sources, under other IP IDs, source ports, DSCP and ECN, with and without UDP checksums: the
// same bytes every time, and a buffer one byte short refused. Without UDP checksums the
// zero-copy builder's headers, payload and trailer make the same frame.
TEST(roce_build, fast_builder_writes_the_reference_frame) {
    std::mt19937 rng(53);
    bytes src(4096 + 8);
    for (auto& b : src)
        b = static_cast<std::uint8_t>(rng());
    std::size_t checked = 0;
    for (const auto& g : uet::golden::roce_frames()) {
        SCOPED_TRACE(g.name);
        l2l4_view v;
        ASSERT_EQ(parse_l2l4(g.bytes, v), reject_reason::none);
        roce_packet p;
        ASSERT_EQ(decode_roce(v.l4_payload, v.ip_packet, p), reject_reason::none);
        roce_packet_spec r;
        r.bth = p.bth;
        r.deth = p.deth;
        r.reth = p.reth;
        r.aeth = p.aeth;
        r.immdt = p.immdt;
        r.atomic_eth = p.atomic_eth;
        r.atomic_ack_eth = p.atomic_ack_eth;
        r.payload = p.payload;
        const roce_opcode_info info = roce_opcode_lookup(r.bth.opcode);
        for (int round = 0; round < 24; ++round) {
            if (round > 0 && info.payload && info.fixed_payload == 0) {
                std::size_t n = rng() % 4097;
                if (info.full_payload) n = std::min<std::size_t>(4096, (n / 4 + 1) * 4);
                r.payload = std::span<const std::uint8_t>(src.data() + rng() % 8, n);
            }
            frame_spec s = test_spec();
            s.ip_id = static_cast<std::uint16_t>(rng());
            s.src_port = static_cast<std::uint16_t>(rng());
            s.dscp = static_cast<std::uint8_t>(rng() % 64);
            s.ecn = static_cast<std::uint8_t>(rng() % 4);
            s.udp_checksum = round % 2 == 0;
            udp_header_template t;
            ASSERT_TRUE(t.build(s));
            bytes want(4200), got(4200, 0xee);
            const std::size_t n = build_roce_frame(s, r, want);
            ASSERT_GT(n, 0u) << round;
            ASSERT_EQ(build_roce_frame_fast(t, s.ip_id, s.src_port, s.udp_checksum, r, got), n)
                << round;
            want.resize(n);
            got.resize(n);
            EXPECT_EQ(got, want) << round << ": payload " << r.payload.size();
            bytes small(n - 1);
            EXPECT_EQ(build_roce_frame_fast(t, s.ip_id, s.src_port, s.udp_checksum, r, small), 0u);
            if (!s.udp_checksum) {  // zero-copy: headers, the payload where it lies, trailer
                bytes head(200, 0xee);
                std::array<std::uint8_t, 8> trailer{};
                std::size_t tl = 0;
                const std::size_t h =
                    build_roce_headers_fast(t, s.ip_id, s.src_port, r, head, trailer, tl);
                ASSERT_GT(h, 0u) << round;
                ASSERT_LT(tl, 8u);
                head.resize(h);
                head.insert(head.end(), r.payload.begin(), r.payload.end());
                head.insert(head.end(), trailer.begin(), trailer.begin() + tl);
                EXPECT_EQ(head, want) << round << ": by reference, payload " << r.payload.size();
                bytes short_head(h - 1);
                EXPECT_EQ(
                    build_roce_headers_fast(t, s.ip_id, s.src_port, r, short_head, trailer, tl),
                    0u);
            }
            ++checked;
        }
    }
    EXPECT_GE(checked, 14u * 24);
}

TEST(roce_packet, random_bytes_never_crash) {
    std::mt19937 rng(2024);
    auto frames = uet::golden::roce_frames();
    for (int i = 0; i < 20000; ++i) {
        bytes t(rng() % 120);
        for (auto& b : t)
            b = static_cast<std::uint8_t>(rng());
        if (!t.empty() && (i & 1)) t[0] = static_cast<std::uint8_t>(rng() % 0x16);  // known ops
        if (t.size() > 1 && (i & 2)) t[1] &= 0xf0;                                  // tver 0
        roce_packet p;
        (void)decode_roce(t, t, p);
        std::string s;
        summarize(p, s);
        bth_header b;
        reth_header re;
        aeth_header ae;
        immdt_header im;
        atomic_eth_header at;
        atomic_ack_eth_header aa;
        (void)decode(t, b);
        (void)decode(t, re);
        (void)decode(t, ae);
        (void)decode(t, im);
        (void)decode(t, at);
        (void)decode(t, aa);
        (void)roce_icrc(t);
    }
    // Mutated golden frames through the whole receive path.
    for (int i = 0; i < 20000; ++i) {
        bytes f = frames[rng() % frames.size()].bytes;
        f[rng() % f.size()] = static_cast<std::uint8_t>(rng());
        if (i & 1) f.resize(rng() % (f.size() + 1));
        l2l4_view v;
        if (parse_l2l4(f, v) != reject_reason::none) continue;
        roce_packet p;
        if (decode_roce(v.l4_payload, v.ip_packet, p) == reject_reason::none) {
            // Only changes to masked fields or their own checksums can survive.
            EXPECT_LE(p.payload.data() + p.payload.size(), f.data() + f.size());
        }
    }
}

// ---- pcap ----

TEST(pcap, writes_classic_format) {
    const char* dir = std::getenv("UET_TEST_TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/wire_roce_test_pcap.pcap";
    {
        pcap_writer w;
        ASSERT_TRUE(w.open(path));
        const bytes frame = {1, 2, 3, 4, 5};
        ASSERT_TRUE(w.write(frame, 1'700'000'000'123'456'789ull));
        w.close();
        EXPECT_FALSE(w.write(frame, 0));
    }
    std::FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    bytes got(100);
    got.resize(std::fread(got.data(), 1, got.size(), f));
    std::fclose(f);
    std::remove(path.c_str());
    const bytes want = {
        0xd4, 0xc3, 0xb2, 0xa1,  // magic (microseconds), little-endian
        0x02, 0x00, 0x04, 0x00,  // version 2.4
        0x00, 0x00, 0x00, 0x00,  // thiszone
        0x00, 0x00, 0x00, 0x00,  // sigfigs
        0x00, 0x00, 0x04, 0x00,  // snaplen 262144
        0x01, 0x00, 0x00, 0x00,  // LINKTYPE_ETHERNET
        0x00, 0xf1, 0x53, 0x65,  // ts_sec 1700000000
        0x40, 0xe2, 0x01, 0x00,  // ts_usec 123456
        0x05, 0x00, 0x00, 0x00,  // incl_len
        0x05, 0x00, 0x00, 0x00,  // orig_len
        0x01, 0x02, 0x03, 0x04, 0x05,
    };
    EXPECT_EQ(got, want);
    pcap_writer bad;
    EXPECT_FALSE(bad.open("/nonexistent-dir/x.pcap"));
    EXPECT_FALSE(bad.write(want, 0));
}

}  // namespace

namespace {

using namespace uet::wire;

cm_message sample_cm(cm_attribute a) {
    cm_message m;
    m.attribute = a;
    m.transaction_id = 0x0102030405060708ull;
    m.local_comm_id = 0xaabbccdd;
    m.remote_comm_id = a == cm_attribute::req ? 0 : 0x11223344;
    m.service_id = a == cm_attribute::req ? 0x0106000000001234ull : 0;
    m.local_ca_guid =
        (a == cm_attribute::req || a == cm_attribute::rep) ? 0x0002c9030000beefull : 0;
    if (a == cm_attribute::req || a == cm_attribute::rep) {
        m.local_qpn = 0x00abcd;
        m.starting_psn = 0xfffffe;
        m.responder_resources = 16;
        m.initiator_depth = 8;
        m.rnr_retry_count = 7;
    }
    if (a == cm_attribute::req) {
        m.remote_cm_response_timeout = 20;
        m.local_cm_response_timeout = 21;
        m.retry_count = 7;
        m.max_cm_retries = 15;
        m.path_mtu = ib_mtu_code(1024);
        m.pkey = 0xffff;
        m.local_gid = ipv4_mapped_gid(0xc0a80001);
        m.remote_gid = ipv4_mapped_gid(0xc0a80002);
        m.traffic_class = 106;
        m.hop_limit = 64;
        m.sl = 3;
        m.local_ack_timeout = 14;
    }
    if (a == cm_attribute::rep) m.target_ack_delay = 15;
    if (a == cm_attribute::rej) {
        m.rejected_message = 0;
        m.reject_reason_code = 28;
    }
    if (a == cm_attribute::dreq) m.remote_qpn = 0x00beef;
    for (std::size_t i = 0; i < private_data_size(a); ++i)
        m.private_data[i] = static_cast<std::uint8_t>(i * 3 + 1);
    return m;
}

TEST(roce_cm, every_message_round_trips_field_by_field) {
    for (const cm_attribute a : {cm_attribute::req, cm_attribute::rep, cm_attribute::rtu,
                                 cm_attribute::rej, cm_attribute::dreq, cm_attribute::drep}) {
        SCOPED_TRACE(to_string(a));
        const cm_message m = sample_cm(a);
        std::array<std::uint8_t, mad_size> mad{};
        ASSERT_EQ(encode(m, mad), mad_size);
        cm_message back;
        ASSERT_EQ(decode_cm(mad, back), reject_reason::none);
        EXPECT_EQ(back.attribute, a);
        EXPECT_EQ(back.transaction_id, m.transaction_id);
        EXPECT_EQ(back.local_comm_id, m.local_comm_id);
        EXPECT_EQ(back.remote_comm_id, m.remote_comm_id);
        EXPECT_EQ(back.service_id, m.service_id);
        EXPECT_EQ(back.local_ca_guid, m.local_ca_guid);
        EXPECT_EQ(back.local_qpn, m.local_qpn);
        EXPECT_EQ(back.starting_psn, m.starting_psn);
        EXPECT_EQ(back.responder_resources, m.responder_resources);
        EXPECT_EQ(back.initiator_depth, m.initiator_depth);
        EXPECT_EQ(back.remote_cm_response_timeout, m.remote_cm_response_timeout);
        EXPECT_EQ(back.local_cm_response_timeout, m.local_cm_response_timeout);
        EXPECT_EQ(back.retry_count, m.retry_count);
        EXPECT_EQ(back.rnr_retry_count, m.rnr_retry_count);
        EXPECT_EQ(back.max_cm_retries, m.max_cm_retries);
        EXPECT_EQ(back.path_mtu, m.path_mtu);
        EXPECT_EQ(back.local_gid, m.local_gid);
        EXPECT_EQ(back.remote_gid, m.remote_gid);
        EXPECT_EQ(back.traffic_class, m.traffic_class);
        EXPECT_EQ(back.hop_limit, m.hop_limit);
        EXPECT_EQ(back.sl, m.sl);
        EXPECT_EQ(back.local_ack_timeout, m.local_ack_timeout);
        EXPECT_EQ(back.target_ack_delay, m.target_ack_delay);
        EXPECT_EQ(back.reject_reason_code, m.reject_reason_code);
        EXPECT_EQ(back.remote_qpn, m.remote_qpn);
        EXPECT_EQ(back.private_data, m.private_data);
    }
    EXPECT_EQ(private_data_size(cm_attribute::req), 92u);
    EXPECT_EQ(private_data_size(cm_attribute::rep), 196u);
    EXPECT_EQ(private_data_size(cm_attribute::rtu), 224u);
    EXPECT_EQ(private_data_size(cm_attribute::rej), 148u);
    EXPECT_EQ(private_data_size(cm_attribute::dreq), 220u);
    EXPECT_EQ(private_data_size(cm_attribute::drep), 224u);
}

TEST(roce_cm, fields_sit_at_the_standard_offsets) {
    std::array<std::uint8_t, mad_size> mad{};
    ASSERT_EQ(encode(sample_cm(cm_attribute::req), mad), mad_size);
    const std::uint8_t* d = mad.data() + mad_header_size;
    EXPECT_EQ(mad[0], 1);      // base version
    EXPECT_EQ(mad[1], 0x07);   // communication management
    EXPECT_EQ(mad[2], 2);      // class version
    EXPECT_EQ(mad[3], 0x03);   // Send
    EXPECT_EQ(mad[17], 0x10);  // REQ
    EXPECT_EQ(d[32], 0x00);    // local QPN 0x00abcd at 32..34
    EXPECT_EQ(d[33], 0xab);
    EXPECT_EQ(d[34], 0xcd);
    EXPECT_EQ(d[35], 16);    // responder resources
    EXPECT_EQ(d[39], 8);     // initiator depth
    EXPECT_EQ(d[44], 0xff);  // starting PSN 0xfffffe at 44..46
    EXPECT_EQ(d[46], 0xfe);
    EXPECT_EQ(d[47], (21 << 3) | 7);  // local CM response timeout | retry count
    EXPECT_EQ(d[50], (3 << 4) | 7);   // path MTU 1024 | RNR retry count
    EXPECT_EQ(d[52], 0xff);           // permissive LIDs
    EXPECT_EQ(d[66], 0xff);           // ::ffff:192.168.0.1 at 56..71
    EXPECT_EQ(d[68], 192);
    EXPECT_EQ(d[95], 14 << 3);  // local ACK timeout
    EXPECT_EQ(d[140], 1);       // private data
}

TEST(roce_cm, refuses_what_is_not_a_cm_send_it_handles) {
    std::array<std::uint8_t, mad_size> mad{};
    ASSERT_EQ(encode(sample_cm(cm_attribute::rtu), mad), mad_size);
    cm_message m;
    EXPECT_EQ(decode_cm(std::span(mad).first(255), m), reject_reason::truncated);
    auto other = mad;
    other[1] = 0x01;  // subnet management
    EXPECT_EQ(decode_cm(other, m), reject_reason::not_cm_mad);
    other = mad;
    other[3] = 0x81;  // a GetResp
    EXPECT_EQ(decode_cm(other, m), reject_reason::not_cm_mad);
    other = mad;
    other[17] = 0x11;  // MRA
    EXPECT_EQ(decode_cm(other, m), reject_reason::unsupported_cm_attribute);
    other[16] = 0x01;  // 0x0111
    EXPECT_EQ(decode_cm(other, m), reject_reason::unsupported_cm_attribute);
    cm_message mra;
    mra.attribute = cm_attribute::mra;
    EXPECT_EQ(encode(mra, mad), 0u);
    EXPECT_EQ(encode(sample_cm(cm_attribute::req), std::span(mad).first(100)), 0u);
    EXPECT_STREQ(to_string(static_cast<cm_attribute>(0x99)), "UNKNOWN");
}

TEST(roce_cm, ud_send_carries_a_deth) {
    cm_message m = sample_cm(cm_attribute::req);
    const std::vector<std::uint8_t> frame = uet::golden::cm_frame(m);
    ASSERT_EQ(frame.size(), 14u + 20 + 8 + 12 + 8 + 256 + 4);
    l2l4_view v;
    ASSERT_EQ(parse_l2l4(frame, v), reject_reason::none);
    roce_packet p;
    ASSERT_EQ(decode_roce(v.l4_payload, v.ip_packet, p), reject_reason::none);
    ASSERT_TRUE(p.deth.has_value());
    EXPECT_EQ(p.deth->q_key, gsi_qkey);
    EXPECT_EQ(p.deth->src_qp, gsi_qpn);
    cm_message back;
    ASSERT_EQ(decode_cm(p.payload, back), reject_reason::none);
    EXPECT_EQ(back.local_qpn, m.local_qpn);
    std::string line;
    summarize(p, line);
    EXPECT_NE(line.find("UD_SEND_ONLY qp 0x000001"), std::string::npos) << line;
    EXPECT_NE(line.find("qkey 0x80010000 srcqp 0x000001"), std::string::npos) << line;
    line.clear();
    summarize(back, line);
    EXPECT_EQ(line, "CM REQ comm 0xaabbccdd qpn 0x00abcd psn 16777214 mtu 1024");
    // Without its DETH a UD SEND is refused by the builder.
    roce_packet_spec s;
    s.bth.opcode = static_cast<std::uint8_t>(roce_opcode::ud_send_only);
    s.bth.dest_qp = gsi_qpn;
    s.payload = p.payload;
    std::array<std::uint8_t, 512> room{};
    EXPECT_EQ(build_roce_frame(frame_spec{}, s, room), 0u);
}

}  // namespace
