// api_tss: endpoints that join a secure domain (endpoint_attr::tss) over the pipe provider.
// Every frame between them is sealed (AES-256-GCM) and authenticated before the PDS sees it;
// transfers verify under loss, reordering and duplication, a retransmission never reuses a TSC,
// a peer with another key delivers nothing, and bad attributes are refused by name.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "api_helpers.hpp"

using namespace uet;
using namespace uet::test;

namespace {

constexpr std::uint32_t job = 9;
constexpr std::uint32_t sdi = 0x123456;

std::vector<std::byte> key_of(std::uint8_t seed) {
    std::vector<std::byte> k(tss_key_size);
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::byte>(seed * 31 + i * 7);
    return k;
}

endpoint_attr secured(std::uint8_t key_seed, std::uint32_t domain = sdi) {
    endpoint_attr a{.job_id = job};
    a.tss.enabled = true;
    a.tss.sdi = domain;
    a.tss.key = tss_key(key_of(key_seed));
    return a;
}

fabric_attr impaired(std::uint64_t seed, const std::string& capture = {}) {
    fabric_attr f = lossy_fabric(seed);
    f.impairments.duplicate = 0.02;
    f.capture_file = capture;
    return f;
}

void expect_no_forgery_seen(const endpoint_counters& c) {
    EXPECT_EQ(c.tss.dropped(tss_drop::bad_icv), 0u);
    EXPECT_EQ(c.tss.dropped(tss_drop::not_tss), 0u);
    EXPECT_EQ(c.tss.dropped(tss_drop::malformed), 0u);
    EXPECT_EQ(c.tss.seal_failures, 0u);
}

TEST(tss, secured_pair_sends_and_receives_under_loss_reorder_and_duplication) {
    world w{impaired(3), 2, secured(1)};
    for (std::size_t size : {0u, 1u, 100u, 4000u, 8165u, 8192u, 20000u, 300000u}) {
        auto ping = pattern(size, size);
        std::vector<std::byte> got(size + 1);
        ASSERT_FALSE(w.eps[1].recv(got, nullptr));
        ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(ping), nullptr));
        EXPECT_EQ(wait_ok(w.cqs[1]).len, size);
        EXPECT_TRUE(std::equal(ping.begin(), ping.end(), got.begin())) << size;
        wait_ok(w.cqs[0]);
    }
    const endpoint_counters c0 = w.eps[0].counters(), c1 = w.eps[1].counters();
    for (const endpoint_counters* c : {&c0, &c1}) {
        EXPECT_GT(c->tss.sealed, 0u);
        EXPECT_GT(c->tss.opened, 0u);
        // Every frame the PDS got was one the sublayer opened.
        EXPECT_EQ(c->packets_received, c->tss.opened);
        expect_no_forgery_seen(*c);
    }
    // The pipe duplicated frames: the replay window dropped the copies before the PDS.
    EXPECT_GT(c0.tss.dropped(tss_drop::replay) + c1.tss.dropped(tss_drop::replay), 0u);
    EXPECT_GT(c0.retransmits, 0u);
    EXPECT_GT(w.fab.stats().lost, 0u);
}

TEST(tss, secured_pair_writes_and_reads_rma) {
    world w{impaired(4), 2, secured(2)};
    std::vector<std::byte> target(1u << 20);
    auto mr = w.dom.register_memory(target, access::remote_read | access::remote_write, job);
    ASSERT_TRUE(mr);
    std::vector<std::byte> back(target.size());
    for (std::size_t size : {std::size_t{1}, std::size_t{4097}, std::size_t{(1u << 20) - 5}}) {
        auto data = pattern(size, size + 11);
        ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(data), 5, mr->key(), nullptr));
        wait_ok(w.cqs[0]);
        ASSERT_TRUE(std::equal(data.begin(), data.end(), target.begin() + 5)) << size;
        ASSERT_FALSE(
            w.eps[0].read(w.peers[1], std::span(back.data(), size), 5, mr->key(), nullptr));
        EXPECT_EQ(wait_ok(w.cqs[0]).len, size);
        ASSERT_TRUE(std::equal(data.begin(), data.end(), back.begin())) << size;
    }
    expect_no_forgery_seen(w.eps[0].counters());
    expect_no_forgery_seen(w.eps[1].counters());
}

TEST(tss, a_peer_with_another_key_delivers_nothing_and_counts_authentication_failures) {
    world w{fabric_attr{}, 0};
    w.add(secured(1));
    w.add(secured(2));
    std::vector<std::byte> got(1000);
    const auto msg = pattern(1000, 1);
    ASSERT_FALSE(w.eps[1].recv(got, nullptr));
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(msg), nullptr));
    const completion c = wait_error(w.cqs[0]);
    EXPECT_TRUE(c.error);
    completion none;
    EXPECT_EQ(w.cqs[1].read(std::span(&none, 1)), 0u);
    const endpoint_counters c0 = w.eps[0].counters(), c1 = w.eps[1].counters();
    EXPECT_EQ(c1.packets_received, 0u);
    EXPECT_EQ(c1.tss.opened, 0u);
    EXPECT_EQ(c1.tss.sealed, 0u);  // nothing authentic arrived, so nothing was answered
    // Every frame the sender sealed (the first and its retransmissions) failed authentication.
    EXPECT_GT(c0.tss.sealed, 1u);
    EXPECT_EQ(c1.tss.dropped(tss_drop::bad_icv), c0.tss.sealed);
    EXPECT_EQ(c1.tss.dropped_total(), c0.tss.sealed);
}

TEST(tss, another_secure_domain_and_an_unsecured_peer_are_dropped_by_reason) {
    world w{fabric_attr{}, 0};
    w.add(secured(1));
    w.add(secured(1, sdi + 1));
    w.add(endpoint_attr{.job_id = job});
    const std::array<std::byte, 10> msg{};
    ASSERT_FALSE(w.eps[1].send(w.peers[0], msg, nullptr));
    ASSERT_FALSE(w.eps[2].send(w.peers[0], msg, nullptr));
    wait_error(w.cqs[1]);
    wait_error(w.cqs[2]);
    const endpoint_counters c0 = w.eps[0].counters();
    EXPECT_EQ(c0.tss.dropped(tss_drop::unknown_sdi), w.eps[1].counters().tss.sealed);
    EXPECT_EQ(c0.tss.dropped(tss_drop::not_tss), w.eps[2].counters().packets_sent);
    EXPECT_EQ(c0.packets_received, 0u);
}

// The TSC (the low 48 bits of the 8 bytes after the TSS header's SDI) of every frame a source
// sealed, in the order the pipe captured them: each transmission takes the next one.
std::map<std::uint32_t, std::vector<std::uint64_t>> tscs_in(const std::string& pcap) {
    std::ifstream in(pcap, std::ios::binary);
    std::vector<std::uint8_t> b((std::istreambuf_iterator<char>(in)), {});
    std::map<std::uint32_t, std::vector<std::uint64_t>> out;
    std::size_t at = 24;  // the file header
    while (at + 16 <= b.size()) {
        std::uint32_t len;
        std::memcpy(&len, &b[at + 8], 4);  // captured length, little-endian host
        at += 16;
        if (at + len > b.size()) break;
        const std::uint8_t* f = &b[at];
        at += len;
        if (len < 42 + 12) continue;
        const std::uint32_t src =
            (std::uint32_t{f[26]} << 24) | (f[27] << 16) | (f[28] << 8) | f[29];
        const std::uint8_t* tss = f + 42;  // Ethernet 14, IPv4 20, UDP 8
        const bool ssi = (tss[0] & 0x04) != 0;
        const std::uint8_t* et = tss + (ssi ? 8 : 4);
        std::uint64_t v = 0;
        for (int i = 2; i < 8; ++i)
            v = (v << 8) | et[i];
        out[src].push_back(v);
    }
    return out;
}

TEST(tss, retransmissions_take_fresh_tscs) {
    const std::string pcap = ::testing::TempDir() + "api_tss_tsc.pcap";
    {
        world w{impaired(5, pcap), 2, secured(3)};
        auto data = pattern(200000, 5);
        std::vector<std::byte> got(data.size());
        for (int round = 0; round < 4; ++round) {
            ASSERT_FALSE(w.eps[1].recv(got, nullptr));
            ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
            wait_ok(w.cqs[1]);
            wait_ok(w.cqs[0]);
            ASSERT_EQ(got, data);
        }
        EXPECT_GT(w.eps[0].counters().retransmits, 0u);
        EXPECT_EQ(w.fab.stats().captured_frames,
                  w.eps[0].counters().tss.sealed + w.eps[1].counters().tss.sealed);
    }
    const auto tscs = tscs_in(pcap);
    std::remove(pcap.c_str());
    ASSERT_EQ(tscs.size(), 2u);
    for (const auto& [src, seq] : tscs) {
        ASSERT_FALSE(seq.empty());
        EXPECT_EQ(seq.front(), 1u);
        for (std::size_t i = 1; i < seq.size(); ++i)
            ASSERT_EQ(seq[i], seq[i - 1] + 1) << "source " << src << " frame " << i;
    }
}

TEST(tss, client_server_mode_with_a_key_provider_transfers) {
    std::uint32_t asked = 0;
    const auto provider = [&](std::uint32_t d, std::uint16_t epoch,
                              std::span<std::byte, tss_key_size> key) {
        ++asked;
        if (d != sdi || epoch != 4) return false;
        const auto k = key_of(7);
        std::copy(k.begin(), k.end(), key.begin());
        return true;
    };
    world w{impaired(6), 0};
    for (std::uint32_t ssi : {0xaa01u, 0xaa02u}) {
        endpoint_attr a{.job_id = job};
        a.tss.enabled = true;
        a.tss.sdi = sdi;
        a.tss.mode = tss_mode::client_server;
        a.tss.epoch = 4;
        a.tss.ssi = ssi;
        a.tss.key_provider = provider;
        w.add(a);
        EXPECT_TRUE(w.eps.back().attr().tss.key.empty());
    }
    EXPECT_EQ(asked, 2u);
    auto data = pattern(50000, 9);
    std::vector<std::byte> got(data.size());
    ASSERT_FALSE(w.eps[0].recv(got, nullptr));
    ASSERT_FALSE(w.eps[1].send(w.peers[0], as_bytes_of(data), nullptr));
    wait_ok(w.cqs[0]);
    wait_ok(w.cqs[1]);
    EXPECT_EQ(got, data);
    expect_no_forgery_seen(w.eps[0].counters());
}

// open_endpoint refuses the attributes with errc::invalid_argument and a last_error that names
// the field.
void expect_refused(const endpoint_attr& a, const std::string& names) {
    auto fab = fabric::open(fabric_attr{}).value();
    auto dom = fab.open_domain().value();
    auto av = dom.open_av().value();
    auto cq = dom.open_cq(16).value();
    auto ep = dom.open_endpoint(a, cq, av);
    ASSERT_FALSE(ep);
    EXPECT_EQ(ep.error(), errc::invalid_argument);
    EXPECT_NE(fabric::last_error().find(names), std::string::npos) << fabric::last_error();
}

TEST(tss, bad_attributes_are_refused_by_name) {
    endpoint_attr a = secured(1);
    a.tss.key = tss_key(std::span<const std::byte>(key_of(1)).first(31));
    expect_refused(a, "tss.key has 31 bytes");
    a = secured(1);
    a.tss.key = {};
    expect_refused(a, "tss.key is empty");
    a = secured(1);
    a.tss.sdi = 1u << 24;
    expect_refused(a, "tss.sdi 16777216");
    a = secured(1);
    a.tss.mode = tss_mode::client_server;
    expect_refused(a, "tss.ssi");
    a = secured(1);
    a.tss.key_provider = [](std::uint32_t, std::uint16_t, std::span<std::byte, tss_key_size>) {
        return true;
    };
    expect_refused(a, "not both");
    a = secured(1);
    a.tss.key = {};
    a.tss.key_provider = [](std::uint32_t, std::uint16_t, std::span<std::byte, tss_key_size>) {
        return false;
    };
    expect_refused(a, "tss.key_provider gave no key");
    a = secured(1);
    a.transport = transport::roce_rc;
    expect_refused(a, "endpoint_attr.tss");
}

TEST(tss, keys_are_wiped_when_cleared) {
    tss_key k(key_of(1));
    tss_key copy = k;
    EXPECT_EQ(copy.bytes().size(), tss_key_size);
    copy.clear();
    EXPECT_TRUE(copy.empty());
    tss_key moved = std::move(k);
    EXPECT_EQ(moved.bytes().size(), tss_key_size);
    EXPECT_TRUE(k.empty());
}

}  // namespace
