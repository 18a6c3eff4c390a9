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

TEST(wire_uet_packet, tss_leaves_everything_after_it_as_ciphertext) {
    const auto& s = sample("tss_ssi_encrypted");
    uet_packet p;
    ASSERT_EQ(decode_uet(s.bytes, false, p), reject_reason::none);
    ASSERT_TRUE(p.tss.has_value());
    EXPECT_EQ(p.tss->ssi, 0x11223344u);
    EXPECT_FALSE(p.ses.has_value());
    EXPECT_EQ(p.payload.size(), s.bytes.size() - 16);
    // Less than an ICV after the TSS header is short.
    EXPECT_EQ(decode_uet(std::span(s.bytes).first(16 + 15), false, p), reject_reason::truncated);
    EXPECT_EQ(decode_uet(std::span(s.bytes).first(16 + 16), false, p), reject_reason::none);
    // What follows is not read as headers, even bytes that would decode as a PDS header (or
    // as another TSS header): they are ciphertext.
    const auto& clear = sample("pds_rud_syn_ses_std_send");
    std::vector<std::uint8_t> hidden(s.bytes.begin(), s.bytes.begin() + 16);
    hidden.insert(hidden.end(), clear.bytes.begin(), clear.bytes.end());
    ASSERT_EQ(decode_uet(hidden, false, p), reject_reason::none);
    EXPECT_FALSE(p.ses.has_value());
    EXPECT_EQ(p.payload.size(), clear.bytes.size());
    std::vector<std::uint8_t> twice(s.bytes.begin(), s.bytes.begin() + 16);
    twice.insert(twice.end(), s.bytes.begin(), s.bytes.end());
    EXPECT_EQ(decode_uet(twice, false, p), reject_reason::none);
    EXPECT_EQ(p.payload.size(), s.bytes.size());
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
    EXPECT_EQ(line("tss_encrypted"), "TSS sdi 0xa0b0c epoch 258 tsc 3315799033608 encrypted 104");
}

TEST(wire_uet_packet, visit_order) {
    uet_packet p;
    ASSERT_EQ(decode_uet(sample("pds_rud_ses_std_cas").bytes, false, p), reject_reason::none);
    recorder d;
    visit(p, d);
    EXPECT_EQ(d.headers, (std::vector<std::string>{"pds_rud", "ses_std", "ses_cas"}));
    ASSERT_EQ(decode_uet(sample("tss_encrypted").bytes, false, p), reject_reason::none);
    recorder t;
    visit(p, t);
    EXPECT_EQ(t.headers, (std::vector<std::string>{"tss"}));
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

// Small and medium atomics: the atomic extension after the fixed bytes, decoded field by field.
TEST(wire_uet_packet, small_and_medium_atomics_carry_their_extension) {
    uet_packet p;
    const auto& small = sample("pds_rud_ses_small_atomic");
    ASSERT_EQ(decode_uet(small.bytes, false, p), reject_reason::none);
    const auto& s = std::get<ses_small_request>(*p.ses);
    EXPECT_EQ(s.opcode, ses_opcode::atomic);
    EXPECT_EQ(s.request_length, 8);
    EXPECT_EQ(s.buffer_offset, 0x8182838485868788u);
    ASSERT_TRUE(s.atomic);
    EXPECT_FALSE(s.cas);
    EXPECT_EQ(s.atomic->atomic_opcode, ses_atomic_opcode::bxor);
    EXPECT_EQ(s.atomic->atomic_datatype, ses_atomic_datatype::uint32);
    EXPECT_TRUE(s.atomic->cacheable);
    EXPECT_FALSE(s.atomic->cpu_coherent);
    EXPECT_EQ(p.payload.size(), 8u);  // the operand, not the extension
    EXPECT_EQ(small.bytes.size(), 12u + 20u + 4u + 8u);

    const auto& medium = sample("pds_rud_ses_medium_fetch_cas");
    ASSERT_EQ(decode_uet(medium.bytes, false, p), reject_reason::none);
    const auto& m = std::get<ses_medium_request>(*p.ses);
    EXPECT_EQ(m.opcode, ses_opcode::fetching_atomic);
    EXPECT_EQ(m.request_length, 16);
    EXPECT_EQ(m.initiator, 0x61626364u);
    EXPECT_EQ(m.memory_key, 0x7172737475767778u);
    ASSERT_TRUE(m.cas);
    EXPECT_FALSE(m.atomic);
    EXPECT_EQ(m.cas->atomic.atomic_opcode, ses_atomic_opcode::cswap);
    EXPECT_EQ(m.cas->atomic.atomic_datatype, ses_atomic_datatype::int128);
    EXPECT_FALSE(m.cas->atomic.cacheable);
    EXPECT_TRUE(m.cas->atomic.cpu_coherent);
    for (std::uint8_t i = 0; i < 16; ++i) {
        EXPECT_EQ(m.cas->compare_value[i], 0xc0 + i);
        EXPECT_EQ(m.cas->swap_value[i], 0xe0 + i);
    }
    EXPECT_TRUE(p.payload.empty());
    std::string line;
    summarize(p, line);
    EXPECT_NE(line.find("FETCH_ATOMIC medium"), std::string::npos) << line;
    EXPECT_NE(line.find("CSWAP INT128"), std::string::npos) << line;
}

TEST(wire_uet_packet, ack_ccx_of_an_unknown_cc_type_keeps_its_state_raw) {
    uet_packet p;
    ASSERT_EQ(decode_uet(sample("pds_ack_ccx_unknown_cc_type").bytes, false, p),
              reject_reason::none);
    const auto& a = std::get<pds_ack_ccx>(p.pds);
    EXPECT_EQ(static_cast<unsigned>(a.cc_type), 7u);
    EXPECT_EQ(a.cc_flags, 0x5);
    EXPECT_EQ(a.mpr, 128);
    EXPECT_EQ(a.sack_bitmap, 0xf0e0d0c0b0a09080u);
    EXPECT_EQ(a.cc_state, 0xa1a2a3a4a5a6a7a8u);
    EXPECT_EQ(a.ack_ccx_state, 0xb1b2b3b4b5b6b7b8u);
    const std::string text = dump(p);
    EXPECT_NE(text.find("cc_state"), std::string::npos) << text;
    EXPECT_EQ(text.find("service_time"), std::string::npos) << text;
}

TEST(wire_uet_packet, pdc_info_other_bits_are_not_use_rsv_pdc) {
    uet_packet p;
    ASSERT_EQ(decode_uet(sample("pds_rud_syn_pdc_info_low_bit").bytes, false, p),
              reject_reason::none);
    const auto& r = std::get<pds_rud_rod_request>(p.pds);
    EXPECT_TRUE(r.syn);
    EXPECT_FALSE(r.use_rsv_pdc);
    EXPECT_EQ(r.pdc_info_rsvd, 0x1);
    EXPECT_EQ(r.psn_offset, 0x0abc);
}

// The engine refuses a payload_length beyond the packet; the dissector keeps every header and
// flags the length.
TEST(wire_uet_packet, truncated_payload_rejected_by_decode_shown_by_dissect) {
    const auto samples = uet::golden::uet_dissector_only_payloads();
    ASSERT_EQ(samples.size(), 1u);
    const auto& s = samples.front();
    uet_packet p;
    EXPECT_EQ(decode_uet(s.bytes, false, p), reject_reason::bad_ses_payload_length);
    uet_dissection d;
    ASSERT_EQ(dissect_uet(s.bytes, false, d), reject_reason::none);
    ASSERT_TRUE(d.pds_decoded);
    const auto& pds = std::get<pds_rud_rod_request>(d.packet.pds);
    EXPECT_EQ(pds.psn, 0x10203040u);
    EXPECT_EQ(pds.spdcid, 0x0105);
    EXPECT_EQ(pds.dpdcid, 0x0207);
    ASSERT_TRUE(d.packet.ses);
    const auto& w = std::get<ses_standard_request>(*d.packet.ses);
    EXPECT_EQ(w.opcode, ses_opcode::write);
    EXPECT_FALSE(w.som);
    EXPECT_EQ(w.payload_length, 0x345);
    EXPECT_EQ(w.message_offset, 0x4000u);
    EXPECT_EQ(w.message_id, 0x0707);
    EXPECT_EQ(w.job_id, 0x2au);
    EXPECT_EQ(w.buffer_offset, 0x0001020304050607u);
    EXPECT_EQ(w.memory_key, 0x1112131415161718u);
    EXPECT_EQ(w.request_length, 4096u);
    ASSERT_TRUE(d.declared_payload);
    EXPECT_EQ(*d.declared_payload, 0x345u);
    EXPECT_TRUE(d.packet.payload.empty());
}

// A packet refused after its PDS header (here an unknown SES opcode) still shows that header;
// a request whose atomic extension is cut keeps the request.
TEST(wire_uet_packet, dissect_keeps_the_headers_before_the_fault) {
    auto bytes = sample("pds_rud_syn_ses_std_send").bytes;
    bytes[12] = 0x3f;  // SES opcode 63
    uet_dissection d;
    EXPECT_EQ(dissect_uet(bytes, false, d), reject_reason::bad_ses_opcode);
    EXPECT_TRUE(d.pds_decoded);
    EXPECT_FALSE(d.packet.ses);
    recorder r;
    visit(d, r);
    ASSERT_FALSE(r.names.empty());
    EXPECT_EQ(r.names.front(), "pds_rud.type");

    auto cut = sample("pds_rud_ses_small_atomic").bytes;
    cut.resize(12 + 20 + 2);  // half an atomic extension
    EXPECT_EQ(dissect_uet(cut, false, d), reject_reason::truncated);
    ASSERT_TRUE(d.packet.ses);
    const auto& s = std::get<ses_small_request>(*d.packet.ses);
    EXPECT_EQ(s.opcode, ses_opcode::atomic);
    EXPECT_FALSE(s.atomic);
    uet_packet p;
    EXPECT_EQ(decode_uet(cut, false, p), reject_reason::truncated);
}
