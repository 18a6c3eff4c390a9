// The open path of lib/tss against frames an attacker could send: every bit flip, a wrong SDI,
// stale and future epochs, truncation, replays at the window's edges, the failure limit; and
// what a legitimate peer needs: key rotation (AN), rekeying, SSIs, bursts, the key cache.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "tss/sublayer.hpp"
#include "tss_helpers.hpp"
#include "wire/bytes.hpp"

namespace {

using namespace uet::tss;
using uet::tss::test::counting_key;
using uet::tss::test::udp_frame;

std::vector<std::uint8_t> payload_of(std::size_t n, std::uint8_t seed = 1) {
    std::vector<std::uint8_t> p(n);
    for (std::size_t i = 0; i < n; ++i)
        p[i] = static_cast<std::uint8_t>(seed + i * 13);
    return p;
}

// plain sealed by tx under d (empty when refused).
std::vector<std::uint8_t> sealed_by(sublayer& tx, secure_domain& d,
                                    std::span<const std::uint8_t> plain) {
    std::vector<std::uint8_t> out(plain.size() + 64);
    seal_error e{};
    out.resize(tx.seal_frame(d, plain, out, &e));
    EXPECT_EQ(e, seal_error::none) << name(e);
    return out;
}

// A sender and a receiver sharing one domain key (AN 0), cluster mode unless cfg says.
struct pair {
    sublayer tx, rx;
    secure_domain* s = nullptr;
    secure_domain* r = nullptr;
    explicit pair(domain_config cfg = {.sdi = 7}) {
        s = tx.add_domain(cfg);
        cfg.ssi.reset();
        if (cfg.mode == domain_mode::client_server) cfg.ssi = 1;  // the receiver's own
        r = rx.add_domain(cfg);
        s->set_key(false, counting_key());
        r->set_key(false, counting_key());
    }
    std::vector<std::uint8_t> seal(std::span<const std::uint8_t> plain) {
        return sealed_by(tx, *s, plain);
    }
    drop_reason open(std::vector<std::uint8_t> frame) {  // a copy: opened in place
        std::span<std::uint8_t> plain;
        return rx.open_frame(frame, plain);
    }
};

TEST(tss_open, round_trip_gives_back_the_frame) {
    pair p;
    const auto plain = udp_frame(payload_of(300), 0x4242, true);
    auto sealed = p.seal(plain);
    ASSERT_EQ(sealed.size(), plain.size() + 12 + 16);
    std::span<std::uint8_t> out;
    const secure_domain* d = nullptr;
    ASSERT_EQ(p.rx.open_frame(sealed, out, &d), drop_reason::none);
    EXPECT_EQ(d, p.r);
    // As sent, but for the UDP checksum, which the opened frame carries as 0 (none).
    auto want = plain;
    want[40] = want[41] = 0;
    EXPECT_EQ(std::vector(out.begin(), out.end()), want);
    EXPECT_EQ(p.rx.stats().opened, 1u);
    EXPECT_EQ(p.rx.stats().opened_bytes, 300u);
}

// A frame built the TSS header's length into its buffer is sealed where it lies, to the same
// bytes as a copy sealed elsewhere.
TEST(tss_seal, in_place_gives_the_bytes_of_a_copy) {
    for (bool checksum : {false, true}) {
        pair a, b;
        const auto plain = udp_frame(payload_of(1000), 0x4242, checksum);
        const auto copy = a.seal(plain);
        std::vector<std::uint8_t> buf(12 + plain.size() + 16 + 5);
        std::copy(plain.begin(), plain.end(), buf.begin() + 12);
        ASSERT_EQ(tss_header_size(*b.s), 12u);
        const std::size_t n = b.tx.seal_frame(*b.s, std::span(buf).subspan(12, plain.size()), buf);
        ASSERT_EQ(n, copy.size());
        EXPECT_EQ(std::vector(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n)), copy);
        EXPECT_EQ(b.open(std::vector(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n))),
                  drop_reason::none);
    }
}

// Opened into another buffer (the received frame is const): the same plaintext frame as in
// place; a buffer too small for it drops it before authentication moves the window.
TEST(tss_open, into_another_buffer_leaves_the_frame_as_received) {
    pair a, b;
    const auto plain = udp_frame(payload_of(700), 0x4242, true);
    const auto sealed = a.seal(plain);
    auto in_place = sealed;
    std::span<std::uint8_t> want, got;
    ASSERT_EQ(a.rx.open_frame(in_place, want), drop_reason::none);
    std::vector<std::uint8_t> into(2000), small(plain.size() - 1);
    ASSERT_EQ(b.rx.open_frame_into(sealed, small, got), drop_reason::malformed);
    ASSERT_EQ(b.rx.open_frame_into(sealed, into, got), drop_reason::none);
    EXPECT_EQ(got.data(), into.data());
    EXPECT_EQ(std::vector(got.begin(), got.end()), std::vector(want.begin(), want.end()));
    EXPECT_EQ(b.rx.open_frame_into(sealed, into, got), drop_reason::replay);
}

TEST(tss_open, uet_over_ip_seals_after_the_entropy_header) {
    pair p({.sdi = 7, .failure_limit = 100});
    const auto payload = payload_of(200);
    const auto plain = uet::tss::test::ip_frame(payload, 0xbeef);
    const auto sealed = p.seal(plain);
    ASSERT_EQ(sealed.size(), plain.size() + 12 + 16);
    EXPECT_TRUE(std::equal(plain.begin() + 14 + 20, plain.begin() + 38, sealed.begin() + 34));
    EXPECT_EQ(sealed[38], 0x08);  // the TSS header right after the entropy header
    // The entropy header is authenticated (flips tried first: the frame itself is then new).
    for (std::size_t bit = 34 * 8; bit < 38 * 8; ++bit) {
        auto f = sealed;
        f[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
        EXPECT_EQ(p.open(f), drop_reason::bad_icv) << bit;
    }
    auto copy = sealed;
    std::span<std::uint8_t> out;
    ASSERT_EQ(p.rx.open_frame(copy, out), drop_reason::none);
    EXPECT_EQ(std::vector(out.begin(), out.end()), plain);
    // Over UDP the AAD's entropy header is the source port then 16 zero bits: the same packet
    // over UDP with that source port, under the same TSC, has the same ciphertext and ICV.
    pair q({.sdi = 7});
    ASSERT_TRUE(q.s->advance_tsc(p.s->next_tsc() - 1));
    const auto over_udp = q.seal(udp_frame(payload, 0xbeef));
    ASSERT_EQ(over_udp.size(), sealed.size() + 4);
    EXPECT_TRUE(std::equal(sealed.begin() + 38, sealed.end(), over_udp.begin() + 42));
    // An IP packet too short for the entropy header is not sealed.
    auto short_frame = uet::tss::test::ip_frame({});
    short_frame.resize(short_frame.size() - 2);
    uet::wire::store_be16(&short_frame[16], 22);
    uet::wire::ipv4_fill_checksum({&short_frame[14], 20});
    std::vector<std::uint8_t> buf(200);
    seal_error e{};
    EXPECT_EQ(p.tx.seal_frame(*p.s, short_frame, buf, &e), 0u);
    EXPECT_EQ(e, seal_error::malformed);
}

// Not covered: the Ethernet header and the UDP destination port (bytes 36-37), which the AAD
// leaves out (docs/wire-format.md); the IPv4 header is covered by its checksum here, and its
// addresses by the AAD.
TEST(tss_open, every_bit_flip_after_the_ethernet_header_is_dropped) {
    pair p({.sdi = 7, .failure_limit = 1u << 20});
    const auto sealed = p.seal(udp_frame(payload_of(40)));
    std::uint64_t dropped = 0;
    for (std::size_t bit = 14 * 8; bit < sealed.size() * 8; ++bit) {
        if (bit / 8 == 36 || bit / 8 == 37) continue;
        auto f = sealed;
        f[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
        const drop_reason r = p.open(f);
        EXPECT_NE(r, drop_reason::none) << "bit " << bit;
        dropped += r != drop_reason::none;
    }
    const auto& c = p.rx.stats();
    std::uint64_t counted = 0;
    for (auto n : c.drops)
        counted += n;
    EXPECT_EQ(counted, dropped);
    EXPECT_EQ(c.opened, 0u);
    // Flips in the ciphertext and ICV (and in authenticated fields no earlier check reads) fail
    // authentication; each counted against the domain.
    EXPECT_GE(c.drop(drop_reason::bad_icv), (40u + 16u) * 8u);
    EXPECT_EQ(p.r->failures(), c.drop(drop_reason::bad_icv));
    EXPECT_GT(c.drop(drop_reason::malformed), 0u);    // IPv4 header (its checksum)
    EXPECT_GT(c.drop(drop_reason::unknown_sdi), 0u);  // SDI bits
    EXPECT_GT(c.drop(drop_reason::not_tss), 0u);      // type bits
    // Forged frames left no key behind: the frame itself still opens, from a fresh derivation.
    EXPECT_EQ(p.rx.stats().key_cache_hits, 0u);
    EXPECT_EQ(p.open(sealed), drop_reason::none);
}

TEST(tss_open, wrong_sdi_and_wrong_key_are_dropped) {
    pair p;
    const auto plain = udp_frame(payload_of(64));
    sublayer other_tx;
    secure_domain* other = other_tx.add_domain({.sdi = 8});
    other->set_key(false, counting_key());
    EXPECT_EQ(p.open(sealed_by(other_tx, *other, plain)), drop_reason::unknown_sdi);
    // Same SDI, another key.
    secure_domain* impostor = other_tx.add_domain({.sdi = 7});
    impostor->set_key(false, counting_key(1));
    EXPECT_EQ(p.open(sealed_by(other_tx, *impostor, plain)), drop_reason::bad_icv);
    EXPECT_EQ(p.rx.stats().drop(drop_reason::unknown_sdi), 1u);
    EXPECT_EQ(p.rx.stats().drop(drop_reason::bad_icv), 1u);
}

TEST(tss_open, epochs_outside_the_lifetime_are_dropped) {
    pair p({.sdi = 7, .epoch = 10, .lifetime = 3});
    const auto plain = udp_frame(payload_of(32));
    const auto sealed = p.seal(plain);  // epoch 10
    p.r->set_epoch(12);                 // 10 is 2 old: still within 3
    EXPECT_EQ(p.open(sealed), drop_reason::none);
    p.s->set_epoch(9);  // 3 old
    EXPECT_EQ(p.open(p.seal(plain)), drop_reason::stale_epoch);
    p.s->set_epoch(13);  // the next epoch: the peer moved first
    EXPECT_EQ(p.open(p.seal(plain)), drop_reason::none);
    p.s->set_epoch(14);  // two ahead
    EXPECT_EQ(p.open(p.seal(plain)), drop_reason::future_epoch);
    // Across the 16-bit wrap: 0xffff is one before 0.
    p.r->set_epoch(0);
    p.s->set_epoch(0xffff);
    EXPECT_EQ(p.open(p.seal(plain)), drop_reason::none);
    EXPECT_EQ(p.rx.stats().drop(drop_reason::stale_epoch), 1u);
    EXPECT_EQ(p.rx.stats().drop(drop_reason::future_epoch), 1u);
}

// The frame cut by `cut` bytes at its end, its IPv4 and UDP lengths (and checksum) made to
// agree, as a forger would.
std::vector<std::uint8_t> cut_frame(std::vector<std::uint8_t> f, std::size_t cut) {
    f.resize(f.size() - cut);
    using namespace uet::wire;
    store_be16(&f[16], static_cast<std::uint16_t>(load_be16(&f[16]) - cut));
    ipv4_fill_checksum({&f[14], 20});
    store_be16(&f[38], static_cast<std::uint16_t>(load_be16(&f[38]) - cut));
    return f;
}

TEST(tss_open, truncated_icv_is_dropped) {
    pair p;
    const auto empty = p.seal(udp_frame({}));  // TSS header and ICV only
    const auto full = p.seal(udp_frame(payload_of(100)));
    for (std::size_t cut = 1; cut <= icv_size; ++cut) {
        EXPECT_EQ(p.open(cut_frame(empty, cut)), drop_reason::truncated) << cut;
        EXPECT_EQ(p.open(cut_frame(full, cut)), drop_reason::bad_icv) << cut;
    }
    // A header cut short, and a frame whose lengths were not fixed.
    EXPECT_EQ(p.open(cut_frame(empty, icv_size + 4)), drop_reason::truncated);
    auto raw = full;
    raw.pop_back();
    EXPECT_EQ(p.open(raw), drop_reason::malformed);
    EXPECT_EQ(p.open(empty), drop_reason::none);
    EXPECT_EQ(p.open(full), drop_reason::none);
}

TEST(tss_open, replays_at_the_window_edges) {
    pair p;
    const auto plain = udp_frame(payload_of(20));
    const std::uint64_t top = 5000, w = replay_window::size;
    ASSERT_TRUE(p.s->advance_tsc(top - w));
    const auto too_old = p.seal(plain);  // top - 1024
    const auto oldest = p.seal(plain);   // top - 1023
    const auto middle = p.seal(plain);   // top - 1022
    ASSERT_TRUE(p.s->advance_tsc(top));
    const auto newest = p.seal(plain);
    EXPECT_EQ(p.open(newest), drop_reason::none);
    EXPECT_EQ(p.open(newest), drop_reason::replay);
    EXPECT_EQ(p.open(too_old), drop_reason::replay);
    EXPECT_EQ(p.open(middle), drop_reason::none);  // out of order, inside the window
    EXPECT_EQ(p.open(oldest), drop_reason::none);  // the window's left edge
    EXPECT_EQ(p.open(oldest), drop_reason::replay);
    EXPECT_EQ(p.open(middle), drop_reason::replay);
    EXPECT_EQ(p.rx.stats().drop(drop_reason::replay), 4u);
    // Replay is per source: the same TSC from another address is new.
    const auto other = udp_frame(payload_of(20), 0x1234, false, 0x0a000009);
    ASSERT_TRUE(p.s->advance_tsc(top + 1));
    EXPECT_EQ(p.open(p.seal(other)), drop_reason::none);
    EXPECT_EQ(p.r->sources(), 2u);
}

// The window against a model (a set of accepted numbers) over a seeded random walk.
TEST(tss_replay_window, matches_a_model_over_random_sequences) {
    std::mt19937_64 rng(55);
    replay_window w;
    std::set<std::uint64_t> seen;
    std::uint64_t top = 0;
    bool any = false;
    for (int i = 0; i < 200000; ++i) {
        const std::uint64_t base = any ? top : 100000;
        std::uint64_t seq;
        switch (rng() % 4) {
            case 0:
                seq = base + rng() % 70;
                break;  // small step forward
            case 1:
                seq = base + rng() % 3000;
                break;  // jump (clears blocks)
            default:
                seq = base > 1100 ? base - rng() % 1100 : base;  // behind, some too old
        }
        const bool model_rejects =
            any && seq <= top && (top - seq >= replay_window::size || seen.count(seq));
        ASSERT_EQ(w.rejects(seq), model_rejects) << i << " seq " << seq << " top " << top;
        if (!model_rejects) {
            w.accept(seq);
            seen.insert(seq);
            if (!any || seq > top) top = seq;
            any = true;
        }
    }
    EXPECT_EQ(w.highest(), top);
}

TEST(tss_open, failure_limit_disables_the_domain_until_reset) {
    pair p({.sdi = 7, .failure_limit = 3});
    const auto plain = udp_frame(payload_of(48));
    auto forged = p.seal(plain);
    forged.back() ^= 0x80;
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(p.open(forged), drop_reason::bad_icv);
    EXPECT_TRUE(p.r->disabled());
    const auto good = p.seal(plain);
    EXPECT_EQ(p.open(good), drop_reason::disabled);
    EXPECT_EQ(p.rx.stats().drop(drop_reason::disabled), 1u);
    p.r->reset_failures();
    EXPECT_EQ(p.open(good), drop_reason::none);
}

TEST(tss_open, an_selects_one_of_two_keys_during_rotation) {
    pair p;
    const auto plain = udp_frame(payload_of(16));
    const auto old_key = p.seal(plain);
    p.s->set_key(true, counting_key(100));
    p.r->set_key(true, counting_key(100));
    p.s->use_an(true);
    const auto new_key = p.seal(plain);
    EXPECT_EQ(new_key[42] & 1, 1);  // the AN bit
    EXPECT_EQ(p.open(new_key), drop_reason::none);
    EXPECT_EQ(p.open(old_key), drop_reason::none);
    p.r->clear_key(false);
    p.s->use_an(false);
    EXPECT_EQ(p.open(p.seal(plain)), drop_reason::no_key);
    p.s->clear_key(false);
    std::vector<std::uint8_t> out(plain.size() + 64);
    seal_error e{};
    EXPECT_EQ(p.tx.seal_frame(*p.s, plain, out, &e), 0u);
    EXPECT_EQ(e, seal_error::no_key);
}

TEST(tss_open, keys_are_derived_once_per_rekey_interval) {
    // rekey = (TSC & 0xfff0) >> 4: a new key every 16 packets.
    pair p({.sdi = 7, .rekey_mask = 0xfff0, .rekey_shift = 4});
    const auto plain = udp_frame(payload_of(64));
    for (int i = 0; i < 64; ++i)
        ASSERT_EQ(p.open(p.seal(plain)), drop_reason::none) << i;
    // TSCs 1..64 span rekey values 0..4.
    EXPECT_EQ(p.tx.stats().kdf_runs, 5u);
    EXPECT_EQ(p.rx.stats().kdf_runs, 5u);
    EXPECT_EQ(p.rx.stats().key_cache_hits, 59u);
    // Without rekeying one key serves every packet.
    pair q;
    for (int i = 0; i < 64; ++i)
        ASSERT_EQ(q.open(q.seal(plain)), drop_reason::none);
    EXPECT_EQ(q.rx.stats().kdf_runs, 1u);
    EXPECT_EQ(q.tx.stats().kdf_runs, 1u);
}

TEST(tss_open, client_server_mode_needs_the_ssi) {
    pair p({.sdi = 9, .mode = domain_mode::client_server, .ssi = 0x11223344});
    const auto plain = udp_frame(payload_of(80));
    const auto sealed = p.seal(plain);
    ASSERT_EQ(sealed.size(), plain.size() + 16 + 16);
    EXPECT_EQ(sealed[42] & 0x04, 0x04);  // SP
    EXPECT_EQ(uet::wire::load_be32(&sealed[46]), 0x11223344u);
    EXPECT_EQ(p.open(sealed), drop_reason::none);
    // A cluster-mode sender without an SSI under the same SDI is refused before any crypto.
    sublayer tx;
    secure_domain* d = tx.add_domain({.sdi = 9});
    d->set_key(false, counting_key());
    EXPECT_EQ(p.open(sealed_by(tx, *d, plain)), drop_reason::missing_ssi);
    EXPECT_THROW(secure_domain({.sdi = 1, .mode = domain_mode::client_server}),
                 std::invalid_argument);
}

TEST(tss_open, bursts_reuse_one_key_schedule_per_direction) {
    pair p;
    constexpr std::size_t n = 32;
    std::vector<std::vector<std::uint8_t>> plains, outs(n);
    std::vector<seal_item> seals(n);
    for (std::size_t i = 0; i < n; ++i) {
        plains.push_back(udp_frame(payload_of(100 + i, static_cast<std::uint8_t>(i))));
        outs[i].resize(plains[i].size() + 64);
        seals[i].plain = plains[i];
        seals[i].out = outs[i];
    }
    ASSERT_EQ(p.tx.seal_burst(*p.s, seals), n);
    std::vector<std::vector<std::uint8_t>> copies;
    for (std::size_t i = 0; i < n; ++i)
        copies.emplace_back(outs[i].begin(), outs[i].begin() + seals[i].size);
    std::vector<open_item> opens(n);
    for (std::size_t i = 0; i < n; ++i)
        opens[i].frame = std::span(outs[i]).first(seals[i].size);
    std::swap(opens[3], opens[17]);  // out of order within the window
    ASSERT_EQ(p.rx.open_burst(opens), n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t j = i == 3 ? 17 : i == 17 ? 3 : i;
        EXPECT_TRUE(std::equal(opens[i].plain.begin() + 42, opens[i].plain.end(),
                               plains[j].begin() + 42, plains[j].end()))
            << i;
    }
    EXPECT_EQ(p.tx.gcm_key_loads(), 1u);
    EXPECT_EQ(p.rx.gcm_key_loads(), 1u);
    // The whole burst again: every frame a replay.
    for (std::size_t i = 0; i < n; ++i)
        opens[i].frame = copies[i];
    EXPECT_EQ(p.rx.open_burst(opens), 0u);
    EXPECT_EQ(p.rx.stats().drop(drop_reason::replay), n);
}

TEST(tss_seal, tsc_strictly_increases_and_runs_out) {
    pair p;
    const auto plain = udp_frame(payload_of(8));
    const auto a = p.seal(plain), b = p.seal(plain);
    EXPECT_LT(uet::wire::load_be48(&a[48]), uet::wire::load_be48(&b[48]));
    EXPECT_FALSE(p.s->advance_tsc(1));  // never back
    ASSERT_TRUE(p.s->advance_tsc(tsc_max));
    EXPECT_EQ(p.open(p.seal(plain)), drop_reason::none);
    std::vector<std::uint8_t> out(plain.size() + 64);
    seal_error e{};
    EXPECT_EQ(p.tx.seal_frame(*p.s, plain, out, &e), 0u);
    EXPECT_EQ(e, seal_error::tsc_exhausted);
    EXPECT_EQ(p.tx.stats().error(seal_error::tsc_exhausted), 1u);
    // Too small an output, and a frame that is not IPv4/UDP.
    EXPECT_EQ(p.tx.seal_frame(*p.s, plain, std::span(out).first(plain.size() + 27), &e), 0u);
    EXPECT_EQ(e, seal_error::no_room);
    EXPECT_EQ(p.tx.seal_frame(*p.s, std::span(plain).first(30), out, &e), 0u);
    EXPECT_EQ(e, seal_error::malformed);
}

}  // namespace
