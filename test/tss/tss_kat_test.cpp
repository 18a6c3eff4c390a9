// Known answers for lib/tss: AES-CMAC (RFC 4493, NIST SP 800-38B), the SP 800-108 counter-mode
// KDF, AES-256-GCM (McGrew & Viega test cases 13-16, the NIST GCM spec's AES-256 cases) and a
// whole secure frame laid out by hand from docs/wire-format.md.
//
// Without internet access the KDF has no NIST CAVP KDFCTR file here: its expected outputs, and
// those of the secure frame, were computed by test/tss/make_vectors.py with Debian's
// python3-cryptography 38.0.4 (KBKDFCMAC, counter before the fixed data, rlen = 1, llen = 4;
// upstream tests that class against the CAVP KDFCTR vectors) and pasted below as hex. The CMAC
// and GCM answers are the published ones; make_vectors.py printed the same.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "tss/cmac.hpp"
#include "tss/gcm.hpp"
#include "tss/kdf.hpp"
#include "tss_helpers.hpp"

namespace {

using namespace uet::tss;
using uet::tss::test::counting_key;
using uet::tss::test::from_hex;

std::vector<std::uint8_t> cmac_of(cmac& c, const std::vector<std::uint8_t>& key,
                                  std::span<const std::uint8_t> msg) {
    std::array<std::uint8_t, cmac::tag_size> tag{};
    const std::span<const std::uint8_t> parts[] = {msg};
    EXPECT_TRUE(c.mac(key, parts, tag));
    return {tag.begin(), tag.end()};
}

const std::vector<std::uint8_t> cmac_msg = from_hex(
    "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
    "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710");

// Tags of the first 0, 16, 40 and 64 bytes of cmac_msg.
void check_examples(cmac& c, const std::vector<std::uint8_t>& key, const char* const (&tags)[4]) {
    const std::size_t lengths[] = {0, 16, 40, 64};
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(cmac_of(c, key, std::span(cmac_msg).first(lengths[i])), from_hex(tags[i])) << i;
}

TEST(tss_cmac, rfc4493_aes128_examples) {
    cmac c(16);
    check_examples(c, from_hex("2b7e151628aed2a6abf7158809cf4f3c"),
                   {"bb1d6929e95937287fa37d129b756746", "070a16b46b4d4144f79bdd9dd04a287c",
                    "dfa66747de9ae63030ca32611497c827", "51f0bebf7e3b9d92fc49741779363cfe"});
}

TEST(tss_cmac, sp800_38b_aes256_examples) {
    cmac c(32);
    const auto key = from_hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
    check_examples(c, key,
                   {"028962f61b7bf89efc6b551f4667d983", "28a7023f452e8f82bd4bf28d8c37c35c",
                    "aaf3d8f1de5640c232f5b169b9c911e6", "e1992190549f6ed5696a2c056c315410"});
    const std::span m(cmac_msg);
    // The message in parts gives the same tag as in one piece.
    std::array<std::uint8_t, cmac::tag_size> tag{};
    const std::span<const std::uint8_t> parts[] = {m.first(7), m.subspan(7, 30), m.subspan(37)};
    ASSERT_TRUE(c.mac(key, parts, tag));
    EXPECT_EQ(std::vector(tag.begin(), tag.end()), from_hex("e1992190549f6ed5696a2c056c315410"));
    // A key of the other size is refused.
    EXPECT_FALSE(c.mac(std::span(key).first(16), parts, tag));
}

std::vector<std::uint8_t> kdf_of(cmac& c, std::span<const std::uint8_t> key, std::string_view label,
                                 std::span<const std::uint8_t> context, std::size_t bytes) {
    std::vector<std::uint8_t> out(bytes);
    EXPECT_TRUE(kdf_ctr_cmac(
        c, key, {reinterpret_cast<const std::uint8_t*>(label.data()), label.size()}, context, out));
    return out;
}

TEST(tss_kdf, counter_mode_cmac_matches_independent_kbkdf) {
    cmac c;
    const auto key = counting_key();
    EXPECT_EQ(kdf_of(c, key, "U1", from_hex("0003000000010a000001"), 44),
              from_hex("adbf386e85802679ee2c63643810d290b162e2e1d2f853e86e2f13e07dbb5d11"
                       "d87b8730e17131a9a364926c"));
    EXPECT_EQ(kdf_of(c, key, "U2", from_hex("ffff12345678c0a80102"), 44),
              from_hex("c5e92b1c9a2a07a99e7ee1561db7aa1e05126bf0f8904a5f36f4c3f4c74006f2"
                       "a1af80119af7843bb44e4ece"));
    const auto k256 = from_hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
    const std::string_view ctx = "context bytes";
    EXPECT_EQ(kdf_of(c, k256, "label",
                     {reinterpret_cast<const std::uint8_t*>(ctx.data()), ctx.size()}, 80),
              from_hex("f1172207b53d7d672252117db94b5a63c0992c2a0b8cf0603133204e8346e282"
                       "0608f51d75cfd75f176d87c52d135fac290df87febf6c953963bbf1bedcca198"
                       "4e9a476fd65c769539d07c5ecc09524c"));
    // 255 blocks is the most an 8-bit counter numbers; 256 is refused.
    std::vector<std::uint8_t> big(256 * 16);
    EXPECT_FALSE(kdf_ctr_cmac(c, key, {}, {}, big));
    EXPECT_TRUE(kdf_ctr_cmac(c, key, {}, {}, std::span(big).first(255 * 16)));
}

TEST(tss_kdf, packet_key_is_key_then_iv_mask_of_the_ipv4_context) {
    cmac c;
    const auto key = counting_key();
    EXPECT_EQ(encode(key_context{.epoch = 3, .rekey = 1, .source = 0x0a000001}),
              (std::array<std::uint8_t, 10>{0, 3, 0, 0, 0, 1, 10, 0, 0, 1}));
    packet_key k;
    ASSERT_TRUE(derive_packet_key(c, key, domain_mode::cluster,
                                  {.epoch = 3, .rekey = 1, .source = 0x0a000001}, k));
    const auto want = from_hex(
        "adbf386e85802679ee2c63643810d290b162e2e1d2f853e86e2f13e07dbb5d11d87b8730e17131a9a364926c");
    EXPECT_EQ(std::vector(k.key.view().begin(), k.key.view().end()),
              std::vector(want.begin(), want.begin() + 32));
    EXPECT_EQ(std::vector(k.iv_mask.view().begin(), k.iv_mask.view().end()),
              std::vector(want.begin() + 32, want.end()));
    ASSERT_TRUE(derive_packet_key(c, key, domain_mode::client_server,
                                  {.epoch = 0xffff, .rekey = 0x12345678, .source = 0xc0a80102}, k));
    EXPECT_EQ(std::vector(k.key.view().begin(), k.key.view().end()),
              from_hex("c5e92b1c9a2a07a99e7ee1561db7aa1e05126bf0f8904a5f36f4c3f4c74006f2"));
}

struct gcm_case {
    const char *key, *iv, *aad, *plain, *cipher, *tag;
};

// The GCM specification's test cases 13-16 (AES-256).
const gcm_case gcm_cases[] = {
    {"0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
     "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
    {"0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
     "", "00000000000000000000000000000000", "cea7403d4d606b6e074ec5d3baf39d18",
     "d0d1c8a799996bf0265b98b5d48ab919"},
    {"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
     "",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
     "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
     "b094dac5d93471bdec1a502270e3cc6c"},
    {"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
     "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
     "76fc6ece0f4e1768cddf8853bb2d551b"},
};

TEST(tss_gcm, spec_test_cases_13_to_16_seal_and_open) {
    gcm g;
    for (const auto& tc : gcm_cases) {
        const auto key = from_hex(tc.key), iv = from_hex(tc.iv), aad = from_hex(tc.aad);
        const auto plain = from_hex(tc.plain), cipher = from_hex(tc.cipher), tag = from_hex(tc.tag);
        std::vector<std::uint8_t> out(plain.size());
        std::array<std::uint8_t, icv_size> t{};
        ASSERT_TRUE(g.seal(std::span<const std::uint8_t, key_size>(key.data(), key_size),
                           std::span<const std::uint8_t, iv_size>(iv.data(), iv_size), aad, plain,
                           out.data(), t));
        EXPECT_EQ(out, cipher) << tc.tag;
        EXPECT_EQ(std::vector(t.begin(), t.end()), tag) << tc.tag;
        std::vector<std::uint8_t> back(cipher);  // opened in place
        EXPECT_TRUE(g.open(std::span<const std::uint8_t, key_size>(key.data(), key_size),
                           std::span<const std::uint8_t, iv_size>(iv.data(), iv_size), aad, back,
                           back.data(), std::span<const std::uint8_t, icv_size>(tag.data(), 16)));
        EXPECT_EQ(back, plain) << tc.tag;
        std::array<std::uint8_t, icv_size> bad{};
        std::copy(tag.begin(), tag.end(), bad.begin());
        bad[15] ^= 1;
        back = cipher;
        EXPECT_FALSE(g.open(std::span<const std::uint8_t, key_size>(key.data(), key_size),
                            std::span<const std::uint8_t, iv_size>(iv.data(), iv_size), aad, back,
                            back.data(), bad))
            << tc.tag;
    }
    // Cases 13/14 share a key and 15/16 another: a schedule is computed for each new key and
    // each change of direction (seal, open), not for the second open in a row: 8 in all.
    EXPECT_EQ(g.key_loads(), 8u);
}

// The frame of docs/wire-format.md's example, sealed by hand from the layout.
const std::vector<std::uint8_t> frame_payload = [] {
    std::vector<std::uint8_t> p(40);
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = static_cast<std::uint8_t>(i * 7 + 3);
    return p;
}();

TEST(tss_frame, sealed_frame_matches_the_layout_byte_for_byte) {
    // Domain key 00..1f, cluster mode, SDI 0x00abcd, AN 1, epoch 3, TSC 0x201, rekey field
    // (TSC & 0xff00) >> 8 = 2, no SSI; 10.0.0.1:0x1234 -> 10.0.0.2:4793.
    sublayer tss;
    secure_domain* d =
        tss.add_domain({.sdi = 0x00abcd, .epoch = 3, .rekey_mask = 0xff00, .rekey_shift = 8});
    ASSERT_NE(d, nullptr);
    d->set_key(true, counting_key());
    d->use_an(true);
    ASSERT_TRUE(d->advance_tsc(0x201));
    const auto plain = uet::tss::test::udp_frame(frame_payload);

    // TSS header: type 1 << 3 | AN = 0x09, SDI 00 ab cd, epoch 0003, TSC 000000000201.
    const auto header = from_hex(
        "0900abcd"
        "0003"
        "000000000201");
    // KDF context epoch || rekey || source IP; the KDF's output (make_vectors.py).
    const auto key_and_mask = from_hex(
        "77122c238937d880ce3f062caae73461ed03bb7920737d2f1158bf9b9c53a6e6"
        "e353457880bab1715e5a02f8");
    // IV = source IP 0a000001 || epoch|TSC 0003000000000201, XOR the mask.
    const auto iv = from_hex("e953457980b9b1715e5a00f9");
    // AAD = IPv4 source, destination || UDP source port, 0000 || TSS header.
    const auto aad = from_hex(
        "0a000001"
        "0a000002"
        "12340000"
        "0900abcd0003000000000201");
    // The sealed frame as python3-cryptography's AESGCM(key).encrypt(iv, payload, aad) and the
    // IPv4/UDP lengths (+28) and checksum computed apart from lib/wire give it.
    const auto want = from_hex(
        "020000000002020000000001"
        "0800"
        "45000060"
        "00004000"
        "4011268b"
        "0a000001"
        "0a000002"
        "123412b9004c0000"
        "0900abcd0003000000000201"
        "61ad0ff1d829ac7c7f9c3155e2395d6871a21a8fde63f963a9c147f7de7282394b216059e8b265cf"
        "5b79334b9d3087b23e91467e020d4d1f");

    cmac prf;
    packet_key k;
    ASSERT_TRUE(derive_packet_key(prf, counting_key(), domain_mode::cluster,
                                  {.epoch = 3, .rekey = 2, .source = 0x0a000001}, k));
    std::vector<std::uint8_t> derived(k.key.view().begin(), k.key.view().end());
    derived.insert(derived.end(), k.iv_mask.view().begin(), k.iv_mask.view().end());
    EXPECT_EQ(derived, key_and_mask);
    const auto nonce = from_hex("0a0000010003000000000201");
    for (std::size_t i = 0; i < iv_size; ++i)
        EXPECT_EQ(nonce[i] ^ key_and_mask[32 + i], iv[i]);

    std::vector<std::uint8_t> out(plain.size() + 64);
    const std::size_t n = tss.seal_frame(*d, plain, out);
    ASSERT_EQ(n, want.size());
    out.resize(n);
    EXPECT_EQ(out, want);
    EXPECT_EQ(std::vector(out.begin() + 42, out.begin() + 54), header);
    EXPECT_EQ(std::vector(aad.end() - 12, aad.end()), header);

    // The same AAD and IV open the ciphertext with the bare GCM: nothing else is authenticated.
    gcm g;
    std::vector<std::uint8_t> body(out.begin() + 54, out.end() - 16);
    EXPECT_TRUE(g.open(std::span<const std::uint8_t, key_size>(key_and_mask.data(), key_size),
                       std::span<const std::uint8_t, iv_size>(iv.data(), iv_size), aad, body,
                       body.data(),
                       std::span<const std::uint8_t, icv_size>(&*(out.end() - 16), 16)));
    EXPECT_EQ(body, frame_payload);
    EXPECT_EQ(d->next_tsc(), 0x202u);
}

}  // namespace
