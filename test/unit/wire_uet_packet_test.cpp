// The whole UET stack: every golden sample decodes and re-encodes to the same bytes, truncations
// and random bytes never crash, and visit()/summarize() describe what was decoded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "golden.hpp"
#include "wire/uet_packet.hpp"
#include "wire_test_helpers.hpp"

namespace {

using namespace uet::wire;
using uet::golden::uet_udp_payloads;
using uet::wire_test::recorder;

// Every visited field as text, so two packets can be compared field by field.
std::string dump(const uet_packet& p) {
    recorder r;
    visit(p, r);
    std::string text;
    for (const auto& line : r.lines)
        text += line + " ";
    return text;
}

uet_packet_spec spec_of(const uet_packet& p) {
    return {p.entropy, p.tss, p.pds, p.ses, p.payload};
}

std::vector<std::uint8_t> reencode(const uet_packet& p) {
    const auto s = spec_of(p);
    std::vector<std::uint8_t> out(encoded_size(s));
    EXPECT_EQ(encode_uet(s, out), out.size());
    return out;
}

const uet::golden::named_bytes& sample(const std::string& name) {
    static const auto all = uet_udp_payloads();
    for (const auto& s : all)
        if (s.name == name) return s;
    ADD_FAILURE() << "no sample " << name;
    return all.front();
}

TEST(wire_uet_packet, samples_are_named_and_cover_every_form) {
    const auto samples = uet_udp_payloads();
    std::set<std::string> names;
    std::set<pds_type> pds_types;
    std::set<std::size_t> ses_forms;
    bool atomic = false, cas = false, tss = false, tss_ssi = false;
    for (const auto& s : samples) {
        EXPECT_TRUE(names.insert(s.name).second) << "duplicate " << s.name;
        EXPECT_TRUE(std::all_of(s.name.begin(), s.name.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        })) << s.name;
        uet_packet p;
        ASSERT_EQ(decode_uet(s.bytes, false, p), reject_reason::none) << s.name;
        pds_types.insert(type_of(p.pds));
        if (p.ses) {
            ses_forms.insert(p.ses->index());
            if (auto* r = std::get_if<ses_standard_request>(&*p.ses)) {
                atomic |= r->atomic.has_value();
                cas |= r->cas.has_value();
            }
        }
        if (p.tss) (p.tss->ssi ? tss_ssi : tss) = true;
    }
    EXPECT_EQ(pds_types.size(), 13u);  // every PDS type but TSS
    EXPECT_EQ(ses_forms.size(), std::variant_size_v<ses_header>);
    EXPECT_TRUE(atomic && cas && tss && tss_ssi);
}

TEST(wire_uet_packet, samples_round_trip) {
    for (const auto& s : uet_udp_payloads()) {
        SCOPED_TRACE(s.name);
        uet_packet p;
        ASSERT_EQ(decode_uet(s.bytes, false, p), reject_reason::none);
        EXPECT_EQ(reencode(p), s.bytes);
        EXPECT_TRUE(p.payload.data() >= s.bytes.data() &&
                    p.payload.data() + p.payload.size() == s.bytes.data() + s.bytes.size());
        EXPECT_EQ(p.ses.has_value(), !p.tss && next_hdr_of(p.pds) != pds_next_hdr::none);
        if (p.ses) {
            EXPECT_EQ(next_hdr_for(*p.ses), next_hdr_of(p.pds));
        }
        std::string line;
        summarize(p, line);
        EXPECT_FALSE(line.empty());
    }
}

TEST(wire_uet_packet, entropy_header_form) {
    for (const auto& s : uet_udp_payloads()) {
        SCOPED_TRACE(s.name);
        std::vector<std::uint8_t> bytes{0xbe, 0xef, 0x00, 0x00};
        bytes.insert(bytes.end(), s.bytes.begin(), s.bytes.end());
        uet_packet with, without;
        ASSERT_EQ(decode_uet(bytes, true, with), reject_reason::none);
        ASSERT_EQ(decode_uet(s.bytes, false, without), reject_reason::none);
        ASSERT_TRUE(with.entropy.has_value());
        EXPECT_EQ(with.entropy->entropy, 0xbeef);
        EXPECT_FALSE(without.entropy.has_value());
        EXPECT_EQ(dump(with), "entropy.entropy=48879 entropy.end " + dump(without));
        EXPECT_EQ(reencode(with), bytes);
    }
    uet_packet p;
    const std::vector<std::uint8_t> three{0xbe, 0xef, 0x00};
    EXPECT_EQ(decode_uet(three, true, p), reject_reason::truncated);
}

TEST(wire_uet_packet, truncated_headers_rejected) {
    for (const auto& s : uet_udp_payloads()) {
        SCOPED_TRACE(s.name);
        uet_packet p;
        ASSERT_EQ(decode_uet(s.bytes, false, p), reject_reason::none);
        const std::size_t headers = s.bytes.size() - p.payload.size();
        for (std::size_t n = 0; n < headers; ++n)
            EXPECT_EQ(decode_uet(std::span(s.bytes).first(n), false, p), reject_reason::truncated)
                << n;
    }
}

TEST(wire_uet_packet, tss_leaves_ciphertext_as_payload) {
    const auto& s = sample("tss_ssi_pds_rod_encrypted");
    uet_packet p;
    ASSERT_EQ(decode_uet(s.bytes, false, p), reject_reason::none);
    ASSERT_TRUE(p.tss.has_value());
    EXPECT_EQ(p.tss->ssi, 0x11223344u);
    EXPECT_FALSE(p.ses.has_value());
    EXPECT_EQ(type_of(p.pds), pds_type::rod);
    EXPECT_EQ(p.payload.size(), s.bytes.size() - 16 - 12);
    // Less than an ICV after the PDS header is short.
    EXPECT_EQ(decode_uet(std::span(s.bytes).first(16 + 12 + 15), false, p),
              reject_reason::truncated);
    EXPECT_EQ(decode_uet(std::span(s.bytes).first(16 + 12 + 16), false, p), reject_reason::none);
    // A second TSS header in the PDS slot is not allowed.
    std::vector<std::uint8_t> twice(s.bytes.begin(), s.bytes.begin() + 16);
    twice.insert(twice.end(), s.bytes.begin(), s.bytes.end());
    EXPECT_EQ(decode_uet(twice, false, p), reject_reason::pds_type_not_allowed);
}

TEST(wire_uet_packet, ctrl_carries_no_ses) {
    const auto& s = sample("pds_ctrl_probe_syn");
    uet_packet p;
    ASSERT_EQ(decode_uet(s.bytes, false, p), reject_reason::none);
    EXPECT_FALSE(p.ses.has_value());
    EXPECT_TRUE(p.payload.empty());
}

TEST(wire_uet_packet, summaries) {
    auto line = [](const std::string& name) {
        uet_packet p;
        EXPECT_EQ(decode_uet(sample(name).bytes, false, p), reject_reason::none);
        std::string out;
        summarize(p, out);
        return out;
    };
    EXPECT_EQ(line("pds_rud_syn_ses_std_send"),
              "RUD SYN AR psn 270544960 spdcid 261 rsv_pdc psn_offset 2748 | SEND std msg 1799 "
              "off 283686952306183 len 4096 job 42 payload 64");
    EXPECT_EQ(line("pds_nack_trimmed"), "NACK TRIMMED psn 12 spdcid 519 dpdcid 261 payload 0");
    EXPECT_EQ(line("pds_ack_cc_nscc"),
              "ACK_CC NSCC RETX REQ_CLOSE cack 99 sack_base 100 bitmap 0xf0e0d0c0b0a09080 "
              "spdcid 519 dpdcid 261 payload 0");
    EXPECT_EQ(line("tss_pds_rud_encrypted"),
              "TSS sdi 0xa0b0c epoch 258 tsc 3315799033608 | RUD AR psn 270544960 spdcid 261 "
              "dpdcid 519 encrypted 92");
}

TEST(wire_uet_packet, visit_order) {
    uet_packet p;
    ASSERT_EQ(decode_uet(sample("pds_rud_ses_std_cas").bytes, false, p), reject_reason::none);
    recorder d;
    visit(p, d);
    EXPECT_EQ(d.headers, (std::vector<std::string>{"pds_rud", "ses_std", "ses_cas"}));
    ASSERT_EQ(decode_uet(sample("tss_pds_rud_encrypted").bytes, false, p), reject_reason::none);
    recorder t;
    visit(p, t);
    EXPECT_EQ(t.headers, (std::vector<std::string>{"tss", "pds_rud"}));
}

// A decode that succeeds must describe the bytes exactly: re-encoding gives the same length and
// decodes to the same fields.
void check_any(std::span<const std::uint8_t> in, bool entropy) {
    uet_packet p;
    const reject_reason rc = decode_uet(in, entropy, p);
    ASSERT_LT(static_cast<std::size_t>(rc), reject_reason_count);
    if (rc != reject_reason::none) return;
    ASSERT_GE(p.payload.data(), in.data());
    ASSERT_EQ(p.payload.data() + p.payload.size(), in.data() + in.size());
    const auto again = reencode(p);
    ASSERT_EQ(again.size(), in.size());
    uet_packet q;
    ASSERT_EQ(decode_uet(again, entropy, q), reject_reason::none);
    EXPECT_EQ(dump(p), dump(q));
    std::string line;
    summarize(p, line);
}

TEST(wire_uet_packet, random_bytes_never_crash) {
    std::mt19937 rng(20251122);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<std::size_t> len(0, 112);
    std::size_t accepted = 0;
    for (int i = 0; i < 20000; ++i) {
        std::vector<std::uint8_t> buf(len(rng));
        for (auto& b : buf)
            b = static_cast<std::uint8_t>(byte(rng));
        // Steer half the buffers to a known PDS type so deeper paths get exercised.
        if (!buf.empty() && i % 2)
            buf[0] = static_cast<std::uint8_t>(((i / 2) % 14 + 1) << 3 | (buf[0] & 0x07));
        check_any(buf, false);
        check_any(buf, true);
        uet_packet p;
        accepted += decode_uet(buf, false, p) == reject_reason::none;
    }
    EXPECT_GT(accepted, 100u);  // the steering must reach successful decodes too
}

TEST(wire_uet_packet, mutated_samples_never_crash) {
    std::mt19937 rng(7);
    const auto samples = uet_udp_payloads();
    for (int i = 0; i < 20000; ++i) {
        auto buf = samples[static_cast<std::size_t>(i) % samples.size()].bytes;
        std::uniform_int_distribution<std::size_t> pos(0, buf.size() - 1);
        for (int k = 0; k < 1 + i % 3; ++k)
            buf[pos(rng)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        if (i % 5 == 0) buf.resize(pos(rng));
        check_any(buf, false);
    }
}

}  // namespace
