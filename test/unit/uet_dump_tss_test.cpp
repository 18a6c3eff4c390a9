// uet-dump --key: a capture of TSS-sealed UET frames (every golden UET frame, sealed by lib/tss)
// is printed in full with the right key, as TSS header and ciphertext without one, and as
// authentication failures with a wrong key; a forged frame and a replayed one are named.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "golden.hpp"
#include "tss/sublayer.hpp"
#include "uet_dump_run.hpp"
#include "wire/dissect.hpp"
#include "wire/pcap_file.hpp"

namespace {

using nlohmann::json;
using namespace uet;

using test::lines_of;
using test::tmpdir;

test::run_result run(const std::string& args) {
    return test::run_uet_dump(args, "uet_dump_tss_stderr.txt");
}

constexpr std::uint32_t sdi = 0xa0b0c;
constexpr std::uint16_t epoch = 3;

std::array<std::uint8_t, tss::key_size> test_key(std::uint8_t first) {
    std::array<std::uint8_t, tss::key_size> k{};
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::uint8_t>(first + 7 * i);
    return k;
}

std::string write_file(const std::string& name, const std::string& bytes) {
    const std::string path = tmpdir() + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    return path;
}

std::string hex_of(std::span<const std::uint8_t> b) {
    std::string s;
    char buf[3];
    for (auto c : b) {
        std::snprintf(buf, sizeof buf, "%02x", c);
        s += buf;
    }
    return s;
}

struct capture {
    std::string pcap;
    std::vector<std::vector<std::uint8_t>> plain;  // what each sealed frame was before sealing
    std::size_t sealed = 0;                        // frames 0..sealed-1 are good sealed frames
    // then: one with a flipped ciphertext byte, then a replay of frame 0
};

capture make_capture() {
    capture c;
    tss::sublayer tx;
    auto* d = tx.add_domain({.sdi = sdi, .epoch = epoch});
    const auto key = test_key(1);
    d->set_key(false, key);
    std::vector<std::vector<std::uint8_t>> frames;
    for (auto& f : golden::uet_frames()) {
        wire::dissection dis;
        if (wire::dissect(f.bytes, dis) != wire::reject_reason::none || dis.uet.packet.tss ||
            (dis.kind != wire::frame_kind::uet_udp && dis.kind != wire::frame_kind::uet_ip))
            continue;
        std::vector<std::uint8_t> out(f.bytes.size() + 64);
        out.resize(tx.seal_frame(*d, f.bytes, out));
        EXPECT_FALSE(out.empty()) << f.name;
        frames.push_back(out);
        c.plain.push_back(f.bytes);
    }
    c.sealed = frames.size();
    // A fresh TSC, so it is the ICV that fails and not the replay window.
    std::vector<std::uint8_t> forged(c.plain.front().size() + 64);
    forged.resize(tx.seal_frame(*d, c.plain.front(), forged));
    forged[forged.size() - 20] ^= 0x01;  // in the ciphertext, before the ICV
    forged[40] = forged[41] = 0;         // UDP checksum "none": only the ICV can catch it
    wire::dissection check;
    EXPECT_EQ(wire::dissect(forged, check), wire::reject_reason::none);
    EXPECT_EQ(check.kind, wire::frame_kind::uet_udp);
    frames.push_back(forged);
    frames.push_back(frames.front());
    c.pcap = tmpdir() + "/uet_dump_tss.pcap";
    wire::pcap_writer w;
    EXPECT_TRUE(w.open(c.pcap));
    std::uint64_t ts = 1700000000ull * 1000000000ull;
    for (auto& f : frames) {
        EXPECT_TRUE(w.write(f, ts));
        ts += 1000;
    }
    w.close();
    return c;
}

TEST(uet_dump_tss, with_the_key_every_frame_prints_as_it_was_before_sealing) {
    const auto c = make_capture();
    ASSERT_GE(c.sealed, 5u);
    const auto key = test_key(1);
    const std::string key_file = write_file("tss_good.key", hex_of(key) + "\n");
    const auto r = run("--json --key " + key_file + " " + c.pcap);
    EXPECT_EQ(r.exit_code, 1) << "a forged and a replayed frame: exit status 1";
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), c.sealed + 2);
    for (std::size_t i = 0; i < c.sealed; ++i) {
        SCOPED_TRACE(i);
        const json got = json::parse(lines[i]);
        EXPECT_EQ(got["status"], "ok") << lines[i];
        ASSERT_TRUE(got.contains("tss")) << lines[i];
        EXPECT_EQ(got["tss"]["status"], "authenticated");
        EXPECT_EQ(got["tss"]["sdi"], sdi);
        EXPECT_EQ(got["tss"]["epoch"], epoch);
        EXPECT_EQ(got["tss"]["tsc"], i + 1);
        wire::dissection d;
        ASSERT_EQ(wire::dissect(c.plain[i], d), wire::reject_reason::none);
        std::string summary;
        wire::summarize(d, summary);
        EXPECT_EQ(got["summary"], summary);
    }
    EXPECT_EQ(json::parse(lines[c.sealed])["tss"]["status"], "bad_icv");
    EXPECT_EQ(json::parse(lines[c.sealed + 1])["tss"]["status"], "replay");

    const auto text = run("--key " + key_file + " " + c.pcap);
    const auto text_lines = lines_of(text.out);
    ASSERT_EQ(text_lines.size(), c.sealed + 2);
    EXPECT_NE(text_lines[0].find("[TSS sdi 0xa0b0c epoch 3 tsc 1 authenticated]"),
              std::string::npos)
        << text_lines[0];
    EXPECT_NE(text_lines[c.sealed].find("not opened: bad_icv"), std::string::npos);
    EXPECT_NE(text.err.find(std::to_string(c.sealed) + " TSS authenticated, 2 not"),
              std::string::npos)
        << text.err;

    // Raw key bytes work as well as hex; -v shows the TSS header after the decrypted ones.
    const std::string raw_file = write_file("tss_raw.key", std::string(key.begin(), key.end()));
    const auto verbose = run("-v -c 1 --key " + raw_file + " " + c.pcap);
    EXPECT_EQ(verbose.exit_code, 0);
    EXPECT_NE(verbose.out.find("authenticated]"), std::string::npos);
    EXPECT_NE(verbose.out.find("sdi=658188"), std::string::npos) << verbose.out;
    EXPECT_NE(verbose.out.find("pds"), std::string::npos) << verbose.out;
}

TEST(uet_dump_tss, without_the_key_the_header_and_ciphertext_length_show) {
    const auto c = make_capture();
    const auto r = run("--json " + c.pcap);
    EXPECT_EQ(r.exit_code, 0);
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), c.sealed + 2);
    for (const auto& l : lines) {
        const json got = json::parse(l);
        EXPECT_FALSE(got.contains("tss"));
        EXPECT_NE(got["summary"].get<std::string>().find("TSS sdi 0xa0b0c"), std::string::npos);
        EXPECT_NE(got["summary"].get<std::string>().find("encrypted"), std::string::npos);
    }
}

TEST(uet_dump_tss, a_wrong_key_opens_nothing) {
    const auto c = make_capture();
    const auto wrong = test_key(2);
    const std::string key_file = write_file("tss_wrong.key", hex_of(wrong));
    const auto r = run("--json --key " + key_file + " " + c.pcap);
    EXPECT_EQ(r.exit_code, 1);
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), c.sealed + 2);
    for (const auto& l : lines) {
        const json got = json::parse(l);
        EXPECT_EQ(got["tss"]["status"], "bad_icv");
        EXPECT_NE(got["summary"].get<std::string>().find("encrypted"), std::string::npos);
    }
}

TEST(uet_dump_tss, bad_key_files_and_options_are_usage_errors) {
    const auto c = make_capture();
    const std::string short_key = write_file("tss_short.key", "abcd\n");
    auto r = run("--key " + short_key + " " + c.pcap);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("key file"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("abcd"), std::string::npos) << "never print key material";
    r = run("--key " + tmpdir() + "/no-such.key " + c.pcap);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("no-such.key"), std::string::npos) << r.err;
    r = run("--tss-mode cluster " + c.pcap);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("need --key"), std::string::npos) << r.err;
    r = run("--key " + short_key + " --tss-mode sideways " + c.pcap);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--tss-mode"), std::string::npos) << r.err;
    r = run("--key " + short_key + " --tss-rekey-shift 48 " + c.pcap);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--tss-rekey-shift"), std::string::npos) << r.err;
}

}  // namespace
