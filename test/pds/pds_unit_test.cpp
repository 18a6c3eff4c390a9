// Unit tests of the PDS/SES pieces and of the engine's PDC life cycle, ACK policy, NACKs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/bit_range.hpp"
#include "core/flat_map.hpp"
#include "core/rx_window.hpp"
#include "engine/request_index.hpp"
#include "pds/pdc.hpp"
#include "pipe/frame_edit.hpp"
#include "ses/message.hpp"
#include "ses/reassembly.hpp"
#include "wire/frame.hpp"
#include "wire/uet_packet.hpp"
#include "workload.hpp"

namespace uet::test {
namespace {

using uet::psn_t;

// ---- rx_window and SACK ----

TEST(rx_window, cumulative_point_moves_over_contiguous_psns) {
    std::vector<std::uint64_t> ring(16);  // 1024 PSNs
    uet::rx_window w;
    w.reset(ring, 1000);
    EXPECT_EQ(w.cack(), 999u);
    EXPECT_EQ(w.classify(1000), uet::rx_window::verdict::fresh);
    w.accept(1002);
    EXPECT_EQ(w.cack(), 999u);
    w.accept(1000);
    EXPECT_EQ(w.cack(), 1000u);
    w.accept(1001);
    EXPECT_EQ(w.cack(), 1002u);
    EXPECT_EQ(w.classify(1001), uet::rx_window::verdict::duplicate);
    EXPECT_EQ(w.classify(1002 + 1024), uet::rx_window::verdict::fresh);
    EXPECT_EQ(w.classify(1002 + 1025), uet::rx_window::verdict::beyond_window);
}

// The word-at-a-time bit ranges (reassembly's packet bits, the receive window) against bit by
// bit, on ranges that start and end anywhere in and across words.
TEST(bit_range, any_in_and_set_range_agree_with_bit_by_bit) {
    std::mt19937_64 rng(64);
    for (int i = 0; i < 20000; ++i) {
        std::array<std::uint64_t, 4> words{};
        for (auto& w : words)
            w = rng() % 3 == 0 ? 0 : rng() & rng() & rng();  // sparse, often empty
        const auto first = static_cast<std::uint32_t>(rng() % 256);
        const auto n = static_cast<std::uint32_t>(rng() % (257 - first));
        bool any = false;
        std::array<std::uint64_t, 4> expected = words;
        for (std::uint32_t b = first; b < first + n; ++b) {
            any = any || ((words[b / 64] >> (b % 64)) & 1);
            expected[b / 64] |= std::uint64_t{1} << (b % 64);
        }
        ASSERT_EQ(bits::any_in(words.data(), first, n), any) << first << " + " << n;
        bits::set_range(words.data(), first, n);
        ASSERT_EQ(words, expected) << first << " + " << n;
    }
}

// Receive runs ask all_fresh() of a run's consecutive PSNs: what classify() says of each, on
// windows of one and of several words with random arrivals, across the ring's wrap and the
// PSNs' wrap through zero.
TEST(rx_window, all_fresh_says_what_classify_says_of_each_psn) {
    std::mt19937_64 rng(2711);
    int fresh = 0, not_fresh = 0;
    for (const std::size_t words : {std::size_t{1}, std::size_t{4}}) {
        std::vector<std::uint64_t> ring(words);
        const auto capacity = static_cast<std::uint32_t>(words * 64);
        for (int round = 0; round < 300; ++round) {
            uet::rx_window w;
            const psn_t start = round % 3 == 0 ? 0xfffffff0u : static_cast<psn_t>(rng());
            w.reset(ring, start);
            // Some accepted, in order or not, so that the cumulative point and the ring move.
            for (int k = 0, m = static_cast<int>(rng() % (3 * capacity)); k < m; ++k) {
                const psn_t psn = w.cack() + 1 + static_cast<psn_t>(rng() % (capacity / 2));
                if (w.classify(psn) == uet::rx_window::verdict::fresh) w.accept(psn);
            }
            for (int q = 0; q < 50; ++q) {
                const psn_t first = w.cack() - 3 + static_cast<psn_t>(rng() % (capacity + 8));
                const auto n = static_cast<std::uint32_t>(1 + rng() % 32);
                bool each = true;
                for (std::uint32_t i = 0; i < n; ++i)
                    each = each && w.classify(first + i) == uet::rx_window::verdict::fresh;
                ASSERT_EQ(w.all_fresh(first, n), each) << first << " + " << n;
                ++(each ? fresh : not_fresh);
            }
        }
    }
    EXPECT_GT(fresh, 1000);
    EXPECT_GT(not_fresh, 1000);
}

// accept_run() sets an out-of-order run's bits a word at a time, split where the ring wraps:
// two windows, one taking each run whole and one packet by packet, must stay the same.
TEST(rx_window, accept_run_leaves_what_accept_of_each_psn_leaves) {
    std::mt19937_64 rng(3301);
    int out_of_order = 0, wrapped = 0;
    for (const std::size_t words : {std::size_t{1}, std::size_t{4}}) {
        std::vector<std::uint64_t> ring_run(words), ring_each(words);
        const auto capacity = static_cast<std::uint32_t>(words * 64);
        for (int round = 0; round < 200; ++round) {
            uet::rx_window run, each;
            const psn_t start = round % 3 == 0 ? 0xfffffff0u : static_cast<psn_t>(rng());
            run.reset(ring_run, start);
            each.reset(ring_each, start);
            for (int q = 0; q < 40; ++q) {
                const psn_t first = run.cack() + 1 + static_cast<psn_t>(rng() % (capacity / 2));
                const auto n = static_cast<std::uint32_t>(1 + rng() % 40);
                if (!run.all_fresh(first, n)) continue;
                out_of_order += first != run.cack() + 1;
                wrapped += (first & (capacity - 1)) + n > capacity;
                run.accept_run(first, n);
                for (std::uint32_t i = 0; i < n; ++i)
                    each.accept(first + i);
                ASSERT_EQ(run.cack(), each.cack());
                ASSERT_EQ(run.highest(), each.highest());
                ASSERT_EQ(ring_run, ring_each) << first << " + " << n;
            }
        }
    }
    EXPECT_GT(out_of_order, 1000);
    EXPECT_GT(wrapped, 100);
}

TEST(rx_window, tracks_a_whole_1024_packet_window_in_reverse_order_across_wrap) {
    std::vector<std::uint64_t> ring(16);
    uet::rx_window w;
    const psn_t start = 0xffffff00u;  // wraps through zero
    w.reset(ring, start);
    for (psn_t i = 1024; i-- > 1;) {
        ASSERT_EQ(w.classify(start + i), uet::rx_window::verdict::fresh) << i;
        w.accept(start + i);
        ASSERT_EQ(w.classify(start + i), uet::rx_window::verdict::duplicate);
    }
    EXPECT_EQ(w.cack(), start - 1);
    w.accept(start);
    EXPECT_EQ(w.cack(), start + 1023);
    EXPECT_EQ(w.classify(start + 1024), uet::rx_window::verdict::fresh);
}

TEST(rx_window, sack_base_is_max_of_epsn_minus_63_and_cack_plus_1) {
    std::vector<std::uint64_t> ring(16);
    uet::rx_window w;
    w.reset(ring, 0);
    w.accept(2);
    w.accept(5);
    auto s = w.sack(5);
    EXPECT_EQ(s.base, 0u);  // cack + 1
    EXPECT_EQ(s.bitmap, (1ull << 2) | (1ull << 5));
    w.accept(200);
    s = w.sack(200);
    EXPECT_EQ(s.base, 137u);  // 200 - 63
    EXPECT_EQ(s.bitmap, 1ull << 63);
}

// The SACK bitmap is read from the ring a word at a time; bit i must still say exactly whether
// base + i is tracked by the ring and received, for any window size, fill and wrap.
TEST(rx_window, sack_bitmap_matches_the_psns_received) {
    rng r(11);
    for (const std::size_t words : {1u, 2u, 16u}) {
        for (int round = 0; round < 200; ++round) {
            std::vector<std::uint64_t> ring(words);
            uet::rx_window w;
            const psn_t start = static_cast<psn_t>(r.uniform(1ull << 32));
            w.reset(ring, start);
            const std::uint32_t cap = w.capacity();
            const int arrivals = static_cast<int>(r.uniform(3 * cap));
            for (int k = 0; k < arrivals; ++k) {
                const psn_t psn = w.cack() + 1 + static_cast<psn_t>(r.uniform(cap));
                if (w.classify(psn) == uet::rx_window::verdict::fresh) w.accept(psn);
            }
            for (const psn_t epsn :
                 {w.cack(), w.highest(), w.cack() + 1 + cap / 2, w.cack() + cap,
                  w.cack() + cap + 40, static_cast<psn_t>(w.cack() + r.uniform(cap + 100))}) {
                const uet::sack_block s = w.sack(epsn);
                for (std::uint32_t i = 0; i < 64; ++i) {
                    const psn_t psn = s.base + i;
                    const std::int32_t ahead = uet::psn_distance(w.cack(), psn);
                    const bool tracked = ahead > 0 && static_cast<std::uint32_t>(ahead) <= cap;
                    ASSERT_EQ((s.bitmap >> i) & 1, tracked && w.received(psn) ? 1u : 0u)
                        << "words " << words << " round " << round << " epsn " << epsn << " bit "
                        << i;
                }
            }
        }
    }
}

// ---- ACK policy ----

TEST(ack_policy, immediate_triggers_and_16k_coalescing) {
    pds::ack_policy p;
    p.configure(16384, 16);
    EXPECT_EQ(p.on_packet(true, false, false, false, 4096), pds::ack_reason::first);
    p.on_ack_sent();
    EXPECT_EQ(p.on_packet(false, false, false, false, 4096), pds::ack_reason::none);
    EXPECT_EQ(p.on_packet(false, false, false, false, 4096), pds::ack_reason::none);
    EXPECT_EQ(p.on_packet(false, false, false, false, 4096), pds::ack_reason::none);
    EXPECT_EQ(p.on_packet(false, false, false, false, 4096), pds::ack_reason::bytes);
    p.on_ack_sent();
    EXPECT_EQ(p.on_packet(false, true, false, false, 1), pds::ack_reason::ack_request);
    EXPECT_EQ(p.on_packet(false, false, true, false, 1), pds::ack_reason::ecn);
    EXPECT_EQ(p.on_packet(false, false, false, true, 0), pds::ack_reason::duplicate);
    p.on_ack_sent();
    for (int i = 0; i < 15; ++i)
        EXPECT_EQ(p.on_packet(false, false, false, false, 1), pds::ack_reason::none);
    EXPECT_EQ(p.on_packet(false, false, false, false, 1), pds::ack_reason::packets);
}

// ---- flat_map ----

using reference_map = std::unordered_map<std::uint64_t, std::uint32_t>;

bool same_lookup(const pds::flat_map& m, const reference_map& ref, std::uint64_t key) {
    const auto found = m.find(key);
    const auto it = ref.find(key);
    if (found.has_value() != (it != ref.end())) return false;
    return !found || *found == it->second;
}

TEST(flat_map, matches_a_reference_map_under_random_inserts_and_erases) {
    pds::flat_map m(500);
    reference_map ref;
    rng r(3);
    for (int i = 0; i < 200000; ++i) {
        const std::uint64_t key = r.uniform(1000);
        if (r.bernoulli(0.5) && ref.size() < 500) {
            ASSERT_TRUE(m.insert(key, static_cast<std::uint32_t>(i)));
            ref[key] = static_cast<std::uint32_t>(i);
        } else {
            ASSERT_EQ(m.erase(key), ref.erase(key) == 1);
        }
        const std::uint64_t probe = r.uniform(1000);
        ASSERT_TRUE(same_lookup(m, ref, probe)) << "key " << probe;
    }
    EXPECT_EQ(m.size(), ref.size());
}

// Message keys as the engine makes them (peer << 24 | mode << 16 | id): several peers each with
// a sliding window of ids in flight, erased out of order, across the 16-bit id wrap.
TEST(flat_map, matches_a_reference_map_under_sliding_windows_of_message_ids) {
    pds::flat_map m(2048);
    reference_map ref;
    rng r(7);
    struct stream {
        std::uint64_t high;
        std::uint16_t next;
        std::vector<std::uint64_t> live;
    };
    std::vector<stream> streams;
    for (std::uint64_t peer : {0ull, 1ull, 2ull, 0x10000ull, 0xffffffull})
        streams.push_back({(peer << 24) | (std::uint64_t{peer % 3} << 16), 65000, {}});
    for (int i = 0; i < 300000; ++i) {
        stream& st = streams[r.uniform(streams.size())];
        if (st.live.size() < 400 && (st.live.empty() || r.bernoulli(0.5))) {
            const std::uint64_t key = st.high | st.next++;
            ASSERT_TRUE(m.insert(key, static_cast<std::uint32_t>(i)));
            ref[key] = static_cast<std::uint32_t>(i);
            st.live.push_back(key);
        } else {
            // Mostly the oldest, sometimes any: completions come nearly in order.
            const std::size_t at = r.bernoulli(0.8) ? 0 : r.uniform(st.live.size());
            const std::uint64_t key = st.live[at];
            st.live.erase(st.live.begin() + static_cast<std::ptrdiff_t>(at));
            ASSERT_TRUE(m.erase(key));
            ASSERT_FALSE(m.erase(key));
            ref.erase(key);
        }
        const stream& probe_stream = streams[r.uniform(streams.size())];
        const std::uint64_t probe =
            probe_stream.high | static_cast<std::uint16_t>(probe_stream.next - r.uniform(800));
        ASSERT_TRUE(same_lookup(m, ref, probe)) << "key " << probe;
    }
    EXPECT_EQ(m.size(), ref.size());
    for (const auto& [key, value] : ref)
        ASSERT_EQ(m.find(key), value);
}

// The engine's requests in flight by (peer, mode, id): rings per peer and mode for RUD and ROD,
// the overflow map for the rest and for requests a newer one pushed out of their ring entry
// (more than ring_size in flight). Against a reference map: streams of ids per peer and mode with
// windows below and above the ring's size, completed mostly in order, across the id wrap.
TEST(request_index, matches_a_reference_map_with_windows_below_and_above_the_ring) {
    request_index index(4096);
    std::map<std::uint64_t, std::uint32_t> ref;
    rng r(9);
    struct stream {
        std::uint32_t peer;
        std::uint8_t mode;
        std::uint16_t next;
        std::size_t window;
        std::vector<ses::message_key> live;
    };
    std::vector<stream> streams;
    for (const std::uint32_t peer : {0u, 1u, 7u, 300u})
        for (const std::uint8_t mode : {0, 1, 2}) {
            const std::size_t window = peer == 1 ? 600 : peer == 7 ? 40 : 200;
            streams.push_back({peer, mode, static_cast<std::uint16_t>(65000 + peer), window, {}});
        }
    std::uint32_t next_index = 0;
    std::size_t most_overflowed = 0;
    std::map<std::uint64_t, std::uint32_t> slot_of;  // insert()'s hint, given to erase()
    for (int i = 0; i < 400000; ++i) {
        stream& st = streams[r.uniform(streams.size())];
        if (st.live.size() < st.window && (st.live.empty() || r.bernoulli(0.55))) {
            const ses::message_key key{st.peer, st.mode, st.next++};
            const std::uint32_t value = next_index++ % 100000;
            const auto [inserted, slot] = index.insert(key, value);
            ASSERT_TRUE(inserted);
            ASSERT_EQ(slot == request_index::none, key.mode > 1);
            ref[key.packed()] = value;
            slot_of[key.packed()] = slot;
            st.live.push_back(key);
        } else if (!st.live.empty()) {
            // Mostly the oldest, sometimes any: completions come nearly in order.
            const std::size_t at = r.bernoulli(0.8) ? 0 : r.uniform(st.live.size());
            const ses::message_key key = st.live[at];
            st.live.erase(st.live.begin() + static_cast<std::ptrdiff_t>(at));
            // With insert()'s hint, which may name an entry a newer request took since.
            index.erase(key, ref.at(key.packed()), slot_of.at(key.packed()));
            ref.erase(key.packed());
            slot_of.erase(key.packed());
        }
        most_overflowed = std::max(most_overflowed, index.overflowed());
        const stream& ps = streams[r.uniform(streams.size())];
        const ses::message_key probe{ps.peer, ps.mode,
                                     static_cast<std::uint16_t>(ps.next - r.uniform(900))};
        const auto found = index.find(probe);
        const auto it = ref.find(probe.packed());
        ASSERT_EQ(found.has_value(), it != ref.end()) << "key " << probe.packed();
        if (found) {
            ASSERT_EQ(*found, it->second);
        }
    }
    for (const auto& [key, value] : ref) {
        const ses::message_key k{static_cast<std::uint32_t>(key >> 24),
                                 static_cast<std::uint8_t>((key >> 16) & 0xff),
                                 static_cast<std::uint16_t>(key)};
        ASSERT_EQ(index.find(k), value);
    }
    // The wide window pushed requests into the overflow map; the others stayed in rings.
    EXPECT_GT(most_overflowed, 0u);
}

TEST(message_key, next_is_the_streams_next_id_and_wraps) {
    const ses::message_key k{0xabcdef, 2, 41};
    EXPECT_EQ(k.next().packed(), k.packed() + 1);
    const ses::message_key last{7, 1, 0xffff};
    EXPECT_EQ(last.next().message_id, 0);
    EXPECT_EQ(last.next().peer, 7u);
    EXPECT_EQ(last.next().mode, 1);
    // The maps prefetch the next key's slot: any key, in the map or not, is a valid hint.
    pds::flat_map m(16);
    m.insert(k.packed(), 1);
    m.prefetch(k.next().packed());
    m.prefetch(last.next().packed());
    EXPECT_EQ(m.find(k.packed()), 1u);
}

// ---- tx_window ----

TEST(tx_window, retransmit_queue_skips_packets_acknowledged_meanwhile) {
    std::vector<uet::tx_entry> ring(8);
    uet::tx_window w;
    w.reset(ring, 10);
    for (int i = 0; i < 4; ++i)
        w.push(uet::tx_kind::data);
    EXPECT_EQ(w.outstanding(), 4u);
    w.queue_retransmit(*w.find(11), uet::retx_cause::sack);
    w.queue_retransmit(*w.find(12), uet::retx_cause::nack);
    w.find(11)->state = uet::tx_state::acked;
    uet::tx_entry* e = w.pop_retransmit();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->psn, 12u);
    EXPECT_EQ(w.pop_retransmit(), nullptr);
    w.find(10)->state = uet::tx_state::acked;
    EXPECT_EQ(w.advance(), 2u);
    EXPECT_EQ(w.una(), 12u);
    EXPECT_EQ(w.find(11), nullptr);
}

// ---- pdc (initiator) ----

struct null_listener final : pds::tx_listener {
    int acked = 0;
    int calls = 0;
    std::vector<pds::acked_message> runs;  // every entry told, in order
    void on_data_acked(pds::pdc&, std::span<const pds::acked_message> told) noexcept override {
        ++calls;
        for (const pds::acked_message& r : told) {
            acked += static_cast<int>(r.packets);
            runs.push_back(r);
        }
    }
};

struct initiator_fixture {
    std::vector<uet::tx_entry> ring = std::vector<uet::tx_entry>(64);
    timer_wheel timers{1000};
    pds::pdc_params params;
    pds::pdc p;
    null_listener listener;

    initiator_fixture(bool rod = false) {
        params.mpr = 64;
        params.ooo_threshold = 3;
        params.max_retransmits = 2;
        params.rto_ns = 10'000;
        params.rto_max_ns = 40'000;
        params.window_bytes = 1 << 20;
        p.ordered = rod;
        p.open_initiator(ring, 100, 0xc001, params);
    }
    uet::tx_entry& send(std::uint64_t now) {
        uet::tx_entry& e = p.tx.push(uet::tx_kind::data);
        e.length = 1000;
        p.on_sent(e, now, timers, params);  // accounts it in flight
        return e;
    }
    pds::ack_outcome ack(psn_t cack, psn_t base, std::uint64_t bits, std::uint64_t now) {
        pds::ack_event ev;
        ev.cack = cack;
        ev.ack_psn = cack;
        ev.sack = {base, bits};
        return p.on_ack(ev, 77, now, timers, listener, params);
    }
};

// A cumulative ACK tells the listener each message it covers once, with its packets, in PSN
// order, in as few calls as the batch allows: 40 one-packet messages and one of 3 packets in two
// calls (32 entries, then 9).
TEST(pdc, an_ack_tells_each_message_once_with_its_packets_in_batches) {
    initiator_fixture f;
    for (std::uint32_t m = 0; m < 40; ++m)
        f.send(0).message = m;
    for (int i = 0; i < 3; ++i)
        f.send(0).message = 40;
    EXPECT_EQ(f.ack(142, 143, 0, 1'000).newly_acked, 43u);
    ASSERT_EQ(f.listener.runs.size(), 41u);
    for (std::uint32_t m = 0; m < 40; ++m) {
        EXPECT_EQ(f.listener.runs[m].message, m);
        EXPECT_EQ(f.listener.runs[m].packets, 1u);
    }
    EXPECT_EQ(f.listener.runs[40].message, 40u);
    EXPECT_EQ(f.listener.runs[40].packets, 3u);
    EXPECT_EQ(f.listener.calls, 2);
    EXPECT_EQ(f.listener.acked, 43);
}

// RFC 6298 5.3: while ACKs make progress a packet's timer restarts from the last progress
// instead of declaring it lost; once they stop it fires one RTO after the last.
TEST(pdc, timer_restarts_on_ack_progress_and_fires_once_acks_stop) {
    initiator_fixture f;
    f.send(0);
    uet::tx_entry& second = f.send(0);
    f.send(0);
    EXPECT_EQ(f.ack(100, 101, 0, 8'000).newly_acked, 1u);
    const std::uint64_t at = 8'000 + f.p.current_rto(f.params);
    EXPECT_EQ(f.p.on_timer(second, 10'000, f.timers, f.params), pds::timeout_action::none);
    EXPECT_EQ(second.deadline, at);
    EXPECT_EQ(f.p.counters.timeouts, 0u);
    EXPECT_EQ(f.p.on_timer(second, at, f.timers, f.params), pds::timeout_action::retransmit);
    EXPECT_EQ(f.p.counters.timeouts, 1u);
}

// The wheel holds one timer per PDC, due at its packets' earliest timeout: sending arms it once,
// acknowledgements touch only the packets, and a drained window leaves nothing scheduled.
TEST(pdc, one_wheel_timer_per_pdc_at_the_earliest_packet_timeout) {
    initiator_fixture f;
    for (std::uint64_t t : {0, 1'000, 2'000})
        f.send(t);
    EXPECT_EQ(f.timers.size(), 1u);
    ASSERT_TRUE(f.p.rto_timer.scheduled());
    EXPECT_EQ(f.p.rto_timer.deadline(), 10'000u);
    EXPECT_EQ(f.ack(100, 101, 0, 3'000).newly_acked, 1u);  // the first one
    EXPECT_EQ(f.p.tx.find(100), nullptr);
    EXPECT_EQ(f.timers.size(), 1u);
    EXPECT_EQ(f.ack(102, 103, 0, 4'000).newly_acked, 2u);
    EXPECT_TRUE(f.p.drained());
    EXPECT_EQ(f.timers.size(), 0u);
}

// When the PDC's timer fires, the packets due are those whose own deadline passed, oldest
// deadline first (ties in transmission order), whatever their PSN order; acknowledged ones and
// later deadlines are left, and the timer moves to the earliest deadline left.
TEST(pdc, due_packets_in_deadline_order_and_the_timer_moves_on) {
    initiator_fixture f;
    uet::tx_entry& a = f.send(0);      // 100, due 10'000
    uet::tx_entry& b = f.send(500);    // 101, due 10'500
    uet::tx_entry& c = f.send(9'000);  // 102, due 19'000
    f.send(600);                       // 103, due 10'600, acknowledged below
    // 100 is resent at 2'000 (due 22'000 with the back-off of one timeout round): now later
    // than 101, before it in PSN order.
    ASSERT_EQ(f.p.on_timer(a, 2'000, f.timers, f.params), pds::timeout_action::retransmit);
    f.p.tx.pop_retransmit();
    f.p.on_sent(a, 2'000, f.timers, f.params);
    EXPECT_EQ(f.ack(99, 103, 0b1, 3'000).newly_acked, 1u);  // SACK of 103 only
    std::vector<std::uint32_t> due(64);
    ASSERT_EQ(f.p.collect_due(25'000, due), 3u);
    EXPECT_EQ(due[0], f.p.tx.slot_of(b));
    EXPECT_EQ(due[1], f.p.tx.slot_of(c));
    EXPECT_EQ(due[2], f.p.tx.slot_of(a));
    EXPECT_EQ(f.p.collect_due(19'999, due), 2u);
    b.deadline = uet::no_deadline;  // as the engine does before handling each
    f.p.rearm(f.timers);
    EXPECT_EQ(f.p.rto_timer.deadline(), c.deadline);
    c.deadline = a.deadline = uet::no_deadline;
    f.p.rearm(f.timers);
    EXPECT_FALSE(f.p.rto_timer.scheduled());
}

TEST(pdc, first_ack_establishes_and_learns_the_target_pdcid) {
    initiator_fixture f;
    EXPECT_TRUE(f.p.syn());
    f.send(0);
    const auto out = f.ack(100, 101, 0, 4000);
    EXPECT_TRUE(out.valid);
    EXPECT_EQ(out.newly_acked, 1u);
    EXPECT_EQ(out.rtt_ns, 4000u);
    EXPECT_EQ(f.p.state, pds::pdc_state::established);
    EXPECT_EQ(f.p.remote_id, 77u);
    EXPECT_TRUE(f.p.drained());
}

TEST(pdc, ack_beyond_what_was_sent_is_rejected) {
    initiator_fixture f;
    f.send(0);
    EXPECT_FALSE(f.ack(105, 106, 0, 10).valid);
    EXPECT_EQ(f.p.state, pds::pdc_state::syn_sent);
}

TEST(pdc, hostile_acks_cost_at_most_the_window) {
    initiator_fixture f;
    for (int i = 0; i < 3; ++i)
        f.send(0);
    for (psn_t far : {0x80000000u, 0x7fffffffu, 0x80000063u, 0xffffff00u}) {
        const auto out = f.ack(100 + far, 100 + far + 1, ~0ull, 10);
        EXPECT_EQ(out.newly_acked, 0u) << far;
    }
    EXPECT_EQ(f.p.tx.outstanding(), 3u);
}

TEST(pdc, sack_infers_a_hole_after_the_out_of_order_threshold) {
    initiator_fixture f;
    for (int i = 0; i < 6; ++i)
        f.send(i);
    // 100 missing while 101..103, sent after it, are SACKed: the threshold (3) is reached.
    auto out = f.ack(99, 100, 0b1110, 10);
    EXPECT_EQ(out.sack_retransmits, 1u);  // threshold 3 reached with 3 later packets acked
    EXPECT_FALSE(f.p.tx.find(101) && f.p.tx.find(101)->state != uet::tx_state::acked);
    uet::tx_entry* e = f.p.tx.pop_retransmit();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->psn, 100u);
    EXPECT_EQ(e->cause, uet::retx_cause::sack);
}

TEST(pdc, trimmed_nack_queues_an_immediate_retransmit) {
    initiator_fixture f;
    f.send(0);
    f.send(0);
    EXPECT_EQ(f.p.on_nack(wire::nack_code::trimmed, 101, 10, f.timers, f.params),
              pds::nack_action::retransmit);
    uet::tx_entry* e = f.p.tx.pop_retransmit();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->psn, 101u);
    EXPECT_EQ(e->cause, uet::retx_cause::nack);
    EXPECT_EQ(e->deadline, uet::no_deadline);  // no timeout needed: it goes out at once
}

TEST(pdc, timer_backs_off_exponentially_then_fails) {
    initiator_fixture f;
    uet::tx_entry& e = f.send(0);
    EXPECT_EQ(e.deadline, 10'000u);
    EXPECT_EQ(f.p.on_timer(e, 10'000, f.timers, f.params), pds::timeout_action::retransmit);
    EXPECT_EQ(f.p.tx.pop_retransmit(), &e);
    f.p.on_sent(e, 10'000, f.timers, f.params);
    EXPECT_EQ(e.deadline, 30'000u);  // 2 x rto
    EXPECT_EQ(f.p.on_timer(e, 30'000, f.timers, f.params), pds::timeout_action::retransmit);
    f.p.tx.pop_retransmit();
    f.p.on_sent(e, 30'000, f.timers, f.params);
    EXPECT_EQ(e.deadline, 70'000u);  // 4 x rto, the cap
    EXPECT_EQ(f.p.on_timer(e, 70'000, f.timers, f.params), pds::timeout_action::failed);
}

TEST(pdc, rto_follows_the_measured_rtt_within_floor_and_cap) {
    initiator_fixture f;
    f.params.rto_min_ns = 2'000;
    f.params.rto_max_ns = 1'000'000;
    // Steady 6 us round trips: srtt -> 6 us, rttvar decays, the RTO falls from 10 us to its floor.
    std::uint64_t now = 0;
    for (int i = 0; i < 40; ++i) {
        uet::tx_entry& e = f.send(now);
        now += 6'000;
        f.ack(e.psn, e.psn + 1, 0, now);
    }
    EXPECT_EQ(f.p.srtt_ns, 6'000u);
    EXPECT_LT(f.p.current_rto(f.params), 7'000u);
    EXPECT_GE(f.p.current_rto(f.params), 6'000u);
    // Queueing raises the RTT to 300 us: the RTO grows past it, no spurious timeout.
    for (int i = 0; i < 40; ++i) {
        uet::tx_entry& e = f.send(now);
        now += 300'000;
        f.ack(e.psn, e.psn + 1, 0, now);
    }
    EXPECT_GT(f.p.current_rto(f.params), 300'000u);
    EXPECT_LE(f.p.current_rto(f.params), 1'000'000u);
}

TEST(pdc, timeouts_of_one_window_count_as_one_round) {
    initiator_fixture f;
    f.params.max_retransmits = 3;
    std::vector<uet::tx_entry*> sent;
    for (int i = 0; i < 20; ++i)
        sent.push_back(&f.send(0));
    // All 20 timers fire: one round, one back-off, one controller/selector signal.
    for (auto* e : sent)
        EXPECT_EQ(f.p.on_timer(*e, 10'000, f.timers, f.params), pds::timeout_action::retransmit);
    EXPECT_EQ(f.p.timeout_rounds, 1u);
    EXPECT_EQ(f.p.current_rto(f.params), 20'000u);
    // Each later round of the same dead peer counts once more; the PDC fails after
    // max_retransmits rounds, not after 20 x max_retransmits timeouts.
    std::uint64_t now = 10'000;
    pds::timeout_action last = pds::timeout_action::none;
    for (int round = 0; round < 4 && last != pds::timeout_action::failed; ++round) {
        while (uet::tx_entry* e = f.p.tx.pop_retransmit())
            f.p.on_sent(*e, now, f.timers, f.params);
        now += f.p.current_rto(f.params);
        for (auto* e : sent) {
            last = f.p.on_timer(*e, now, f.timers, f.params);
            if (last == pds::timeout_action::failed) break;
        }
    }
    EXPECT_EQ(last, pds::timeout_action::failed);
    EXPECT_EQ(f.p.timeout_rounds, 3u);
}

// A link slower than the first RTO (10 us here; a round trip takes 25 us): a packet's timer
// fires, it is resent, and the ACK of its first copy is ambiguous (Karn: no sample). The RTO
// must stay backed off until a clean sample, or every next packet times out as well.
TEST(pdc, the_backoff_lasts_until_a_clean_rtt_sample) {
    initiator_fixture f;
    uet::tx_entry& a = f.send(0);
    ASSERT_EQ(f.p.on_timer(a, 10'000, f.timers, f.params), pds::timeout_action::retransmit);
    ASSERT_EQ(f.p.tx.pop_retransmit(), &a);
    f.p.on_sent(a, 10'000, f.timers, f.params);
    EXPECT_EQ(f.p.current_rto(f.params), 20'000u);
    EXPECT_EQ(f.ack(a.psn, a.psn + 1, 0, 25'000).rtt_ns, 0u);  // resent: no sample
    EXPECT_EQ(f.p.timeout_rounds, 0u);                         // progress: not a dead peer
    EXPECT_EQ(f.p.current_rto(f.params), 20'000u);             // but still backed off
    // A packet sent once and acknowledged 25 us later: a clean sample sets the RTO.
    uet::tx_entry& b = f.send(25'000);
    EXPECT_EQ(f.ack(b.psn, b.psn + 1, 0, 50'000).rtt_ns, 25'000u);
    EXPECT_EQ(f.p.current_rto(f.params), 40'000u);  // srtt + 4 rttvar = 75 us, within rto_max
}

TEST(pdc, static_path_redraws_its_entropy_after_a_timeout_round) {
    initiator_fixture f;
    uet::rng r(5);
    lb::lb_context ctx;
    ctx.rng = &r;
    f.params.lb_ctx = &ctx;
    f.params.lb = lb::algorithm::static_path;
    f.p.open_initiator(f.ring, 100, 0xc001, f.params);
    EXPECT_EQ(f.p.lb->next_entropy(0), 0xc001);
    uet::tx_entry& e = f.send(0);
    e.entropy = 0xc001;
    ASSERT_EQ(f.p.on_timer(e, 10'000, f.timers, f.params), pds::timeout_action::retransmit);
    EXPECT_NE(f.p.lb->next_entropy(10'000), 0xc001);
    EXPECT_EQ(f.p.counters.repaths, 1u);
}

TEST(pdc, no_pdc_avail_backs_off_without_counting_a_loss) {
    initiator_fixture f;
    uet::tx_entry& e = f.send(0);
    EXPECT_EQ(f.p.on_nack(wire::nack_code::no_pdc_avail, 100, 5, f.timers, f.params),
              pds::nack_action::backoff);
    EXPECT_EQ(e.state, uet::tx_state::backoff);
    EXPECT_EQ(f.p.on_timer(e, e.deadline, f.timers, f.params), pds::timeout_action::retransmit);
    EXPECT_EQ(e.retries, 0u);
    EXPECT_EQ(f.p.counters.timeouts, 0u);
}

TEST(pdc, rod_out_of_order_nack_rewinds_in_psn_order) {
    initiator_fixture f(true);
    for (int i = 0; i < 5; ++i)
        f.send(0);
    f.ack(101, 102, 0, 4000);  // 100, 101 in
    EXPECT_EQ(f.p.on_nack(wire::nack_code::rod_ooo, 102, 5000, f.timers, f.params),
              pds::nack_action::rewind);
    for (psn_t want = 102; want < 105; ++want) {
        uet::tx_entry* e = f.p.tx.pop_retransmit();
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(e->psn, want);
        f.p.on_sent(*e, 5000, f.timers, f.params);
    }
    EXPECT_EQ(f.p.tx.pop_retransmit(), nullptr);
    // A NACK left over from the previous round does not rewind again.
    EXPECT_EQ(f.p.on_nack(wire::nack_code::rod_ooo, 102, 5100, f.timers, f.params),
              pds::nack_action::ignored);
}

// ---- SES segments and reassembly ----

TEST(ses, check_segment_refuses_segments_that_do_not_fit) {
    const auto check_segment = [](const wire::ses_standard_request& h, std::size_t payload,
                                  std::uint32_t mtu, std::uint32_t max_message) {
        ses::segment s;
        return ses::check_segment(h, payload, mtu, max_message, s);
    };
    wire::ses_standard_request h;
    h.request_length = 10000;
    h.som = true;
    EXPECT_TRUE(check_segment(h, 4096, 4096, 1 << 20));
    EXPECT_FALSE(check_segment(h, 4000, 4096, 1 << 20));  // short SOM packet
    h.som = false;
    h.message_offset = 8192;
    h.payload_length = 1808;
    h.eom = true;
    EXPECT_TRUE(check_segment(h, 1808, 4096, 1 << 20));
    h.eom = false;
    EXPECT_FALSE(check_segment(h, 1808, 4096, 1 << 20));  // EOM lies
    h.eom = true;
    h.message_offset = 8000;
    EXPECT_FALSE(check_segment(h, 1808, 4096, 1 << 20));  // off the grid
    h.message_offset = 12288;
    h.payload_length = 0;
    EXPECT_FALSE(check_segment(h, 0, 4096, 1 << 20));  // beyond the message
    h.request_length = 2u << 20;
    EXPECT_FALSE(check_segment(h, 0, 4096, 1 << 20));  // too long
}

// Receive runs check the packets after a run's first only where they lie: the same verdict and
// segment as check_segment for every header that differs from the one before only in its
// message_offset, with that offset following the packet before or not.
TEST(ses, check_following_segment_says_what_check_segment_says_of_the_next_packet) {
    std::mt19937_64 rng(1127);
    int followed = 0, refused = 0;
    for (int i = 0; i < 200000; ++i) {
        const std::uint32_t mtu = 64u << (rng() % 5);
        wire::ses_standard_request h;
        h.opcode = wire::ses_opcode::write;
        h.request_length = static_cast<std::uint32_t>(rng() % (mtu * 12));
        h.som = rng() % 8 == 0;
        h.eom = rng() % 4 == 0;
        h.payload_length = rng() % 4 ? mtu : static_cast<std::uint16_t>(rng() % (mtu + 1));
        h.message_offset = static_cast<std::uint32_t>(rng() % 12) * mtu;
        const std::size_t payload = rng() % 8 ? h.payload_length : rng() % (mtu + 1);
        ses::segment prev;
        if (!ses::check_segment(h, payload, mtu, 1 << 20, prev)) continue;
        // The next header: only message_offset differs, most often by one packet.
        const std::uint32_t offset =
            rng() % 4 ? prev.offset + prev.length : static_cast<std::uint32_t>(rng() % (mtu * 13));
        wire::ses_standard_request next = h;
        next.message_offset = offset;
        ses::segment full, quick;
        const bool full_ok = ses::check_segment(next, payload, mtu, 1 << 20, full) && !prev.som &&
                             !prev.eom && offset == prev.offset + prev.length;
        const bool quick_ok = ses::check_following_segment(prev, offset, h.request_length, quick);
        ASSERT_EQ(quick_ok, full_ok) << "iteration " << i;
        if (quick_ok) {
            EXPECT_EQ(quick.offset, full.offset);
            EXPECT_EQ(quick.length, full.length);
            EXPECT_EQ(quick.som, full.som);
            EXPECT_EQ(quick.eom, full.eom);
            ++followed;
        } else {
            ++refused;
        }
    }
    EXPECT_GT(followed, 1000);
    EXPECT_GT(refused, 1000);
}

TEST(reassembly, places_out_of_order_once_and_reuses_buffers) {
    ses::rx_config cfg;
    cfg.slots = 4;
    cfg.mtu = 1024;
    cfg.max_message = 1 << 20;
    ses::reassembly r(cfg);
    const auto data = message_bytes(7, 3000);
    const ses::message_key key{1, 0, 42};
    auto put = [&](std::uint32_t off) {
        ses::segment s;
        s.offset = off;
        s.length = std::min<std::uint32_t>(1024, 3000 - off);
        s.som = off == 0;
        s.eom = off + s.length == 3000;
        return r.place(key, 3000, s, data.subspan(off, s.length), false, 0);
    };
    EXPECT_EQ(put(2048), ses::place_result::placed);
    EXPECT_EQ(put(2048), ses::place_result::duplicate);
    EXPECT_EQ(put(0), ses::place_result::placed);
    EXPECT_EQ(put(1024), ses::place_result::completed);
    ses::delivered_message d;
    ASSERT_TRUE(r.pop_delivered(d));
    EXPECT_TRUE(std::equal(d.data.begin(), d.data.end(), data.begin(), data.end()));
    EXPECT_EQ(r.buffers_allocated(), 1u);
    EXPECT_TRUE(r.release(d.handle));
    EXPECT_FALSE(r.release(d.handle));
    // Same size class again: the buffer comes back from the pool.
    EXPECT_EQ(put(0), ses::place_result::placed);
    EXPECT_EQ(r.buffers_allocated(), 1u);
}

TEST(reassembly, announced_lengths_cannot_exhaust_memory) {
    ses::rx_config cfg;
    cfg.slots = 64;
    cfg.mtu = 1024;
    cfg.max_message = 1 << 20;
    cfg.max_buffer_bytes = 4 << 20;
    ses::reassembly r(cfg);
    const auto data = message_bytes(0, 1024);
    ses::segment first{0, 1024, true, false};
    int refused = 0;
    for (std::uint16_t id = 0; id < 64; ++id)
        if (r.place({1, 0, id}, 1 << 20, first, data, false, 0) == ses::place_result::no_resources)
            ++refused;
    EXPECT_EQ(refused, 60);  // four 1 MiB buffers fit
    EXPECT_LE(r.buffer_bytes(), cfg.max_buffer_bytes);
}

TEST(reassembly, single_packet_messages_never_allocate_and_are_remembered) {
    ses::rx_config cfg;
    cfg.slots = 2;
    cfg.mtu = 1024;
    ses::reassembly r(cfg);
    const auto data = message_bytes(1, 100);
    ses::segment s{0, 100, true, true};
    for (std::uint16_t id = 0; id < 100; ++id) {
        const ses::message_key key{3, 2, id};
        ASSERT_EQ(r.place(key, 100, s, data, true, 0), ses::place_result::completed);
        ASSERT_EQ(r.place(key, 100, s, data, true, 0), ses::place_result::duplicate);
        ses::delivered_message d;
        ASSERT_TRUE(r.pop_delivered(d));
        r.release(d.handle);
    }
    EXPECT_EQ(r.buffers_allocated(), 0u);
}

// Interleaved messages of several packets, in random order, from a few peers, with slots reused
// by new keys as messages complete: place() remembers the slot it found last, and this must
// never put a packet into another message's slot.
TEST(reassembly, interleaved_messages_each_complete_once_with_their_own_bytes) {
    ses::rx_config cfg;
    cfg.slots = 8;
    cfg.mtu = 512;
    cfg.max_message = 1 << 16;
    ses::reassembly r(cfg);
    rng g(17);
    struct pending {
        ses::message_key key;
        std::uint32_t length;
        std::vector<std::uint32_t> offsets;  // still to send
    };
    std::vector<pending> open;
    std::uint16_t next_id = 0;
    std::size_t completed = 0;
    const auto bytes_of = [](const ses::message_key& k, std::uint32_t length) {
        return message_bytes(k.message_id * 7 + k.peer, length);
    };
    for (int step = 0; step < 40000; ++step) {
        if (open.size() < 6 && (open.empty() || g.bernoulli(0.2))) {
            const auto length = static_cast<std::uint32_t>(513 + g.uniform(4000));
            pending p{{static_cast<std::uint32_t>(g.uniform(3)), 0, next_id++}, length, {}};
            for (std::uint32_t off = 0; off < length; off += cfg.mtu)
                p.offsets.push_back(off);
            open.push_back(std::move(p));
        }
        // Mostly the same message again (a burst of one message's packets), sometimes another.
        const std::size_t m = g.bernoulli(0.7) ? open.size() - 1 : g.uniform(open.size());
        pending& p = open[m];
        const std::size_t at = g.uniform(p.offsets.size());
        const std::uint32_t off = p.offsets[at];
        p.offsets.erase(p.offsets.begin() + static_cast<std::ptrdiff_t>(at));
        const ses::segment seg{off, std::min(cfg.mtu, p.length - off), off == 0,
                               off + cfg.mtu >= p.length};
        const auto data = bytes_of(p.key, p.length);
        const auto res = r.place(p.key, p.length, seg, data.subspan(off, seg.length), false, 0);
        if (!p.offsets.empty()) {
            ASSERT_EQ(res, ses::place_result::placed);
            continue;
        }
        ASSERT_EQ(res, ses::place_result::completed);
        ses::delivered_message d;
        ASSERT_TRUE(r.pop_delivered(d));
        ASSERT_EQ(d.key.packed(), p.key.packed());
        ASSERT_TRUE(std::equal(d.data.begin(), d.data.end(), data.begin(), data.end()));
        ASSERT_FALSE(r.pop_delivered(d));
        ASSERT_TRUE(r.release(d.handle));
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(m));
        ++completed;
    }
    EXPECT_GT(completed, 4000u);
}

// Externally placed messages (RMA WRITEs): counted exactly like buffered ones, but no buffer,
// no copy; a packet the caller could not place marks the message failed.
TEST(reassembly, external_messages_hold_no_buffer_and_report_failures) {
    ses::rx_config cfg;
    cfg.slots = 4;
    cfg.mtu = 1024;
    cfg.max_message = 1 << 20;
    ses::reassembly r(cfg);
    const auto data = message_bytes(7, 3000);
    auto put = [&](std::uint16_t id, std::uint32_t off, bool external, std::uint32_t* slot) {
        ses::segment s;
        s.offset = off;
        s.length = std::min<std::uint32_t>(1024, 3000 - off);
        s.som = off == 0;
        s.eom = off + s.length == 3000;
        return r.place({1, 0, id}, 3000, s, data.subspan(off, s.length), false, 0, nullptr,
                       external, slot);
    };
    std::uint32_t slot = ses::no_index;
    EXPECT_EQ(put(1, 2048, true, &slot), ses::place_result::placed);
    EXPECT_NE(slot, ses::no_index);
    EXPECT_EQ(put(1, 2048, true, &slot), ses::place_result::duplicate);
    EXPECT_EQ(put(1, 0, false, &slot), ses::place_result::inconsistent);  // the mode is the same
    EXPECT_EQ(put(1, 0, true, &slot), ses::place_result::placed);
    EXPECT_EQ(put(1, 1024, true, &slot), ses::place_result::completed);
    ses::delivered_message d;
    ASSERT_TRUE(r.pop_delivered(d));
    EXPECT_TRUE(d.external);
    EXPECT_FALSE(d.failed);
    EXPECT_TRUE(d.data.empty());
    EXPECT_TRUE(r.release(d.handle));
    EXPECT_EQ(put(2, 0, true, &slot), ses::place_result::placed);
    r.mark_failed(slot);
    EXPECT_EQ(put(2, 1024, true, &slot), ses::place_result::placed);
    EXPECT_EQ(put(2, 2048, true, &slot), ses::place_result::completed);
    ASSERT_TRUE(r.pop_delivered(d));
    EXPECT_TRUE(d.external && d.failed);
    EXPECT_TRUE(r.release(d.handle));
    // The slot, reused for a buffered message, starts clean.
    EXPECT_EQ(put(3, 0, false, nullptr), ses::place_result::placed);
    EXPECT_EQ(put(3, 1024, false, nullptr), ses::place_result::placed);
    EXPECT_EQ(put(3, 2048, false, nullptr), ses::place_result::completed);
    ASSERT_TRUE(r.pop_delivered(d));
    EXPECT_FALSE(d.external || d.failed);
    EXPECT_TRUE(std::equal(d.data.begin(), d.data.end(), data.begin(), data.end()));
    EXPECT_EQ(r.buffers_allocated(), 1u);  // only the buffered message had one
}

// ---- engine: PDC life cycle on the wire ----

// drain_tx with room offered in every slot (as the DPDK runtime offers its mbufs): the frames
// must be built in the room.
std::vector<std::vector<std::uint8_t>> drain_tx_in_room(engine& e, std::uint64_t now,
                                                        std::size_t room_size) {
    std::vector<std::vector<std::uint8_t>> frames;
    std::vector<std::uint8_t> rooms(64 * room_size);
    std::array<tx_frame, 64> out{};
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i].room = std::span<std::uint8_t>(&rooms[i * room_size], room_size);
    for (std::size_t n; (n = e.transmit(now, out)) > 0;) {
        for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(out[i].data.data(), out[i].room.data());
            frames.emplace_back(out[i].data.begin(), out[i].data.end());
        }
        if (n < out.size()) break;
    }
    return frames;
}

// The single-copy transmit path (headers written and payload copied and summed in the caller's
// room) gives byte for byte the frames of the staged path, data and control frames alike; a
// room too small for the largest frame falls back to the staged frames.
TEST(engine, frames_built_in_the_callers_room_equal_the_staged_frames) {
    const engine_config ca = endpoint_config(1, 5), cb = endpoint_config(2, 6);
    engine a1(ca), a2(ca), a3(ca), b1(cb), b2(cb);
    for (engine* a : {&a1, &a2, &a3}) {
        const peer_id to_b = a->add_peer(cb.mac, cb.ip);
        // Odd sizes and offsets: the payload's sum starts at either parity.
        ASSERT_TRUE(
            a->post_send(to_b, delivery_mode::rud, message_bytes(0, 10 * 4096 + 7), 1).ok());
        ASSERT_TRUE(a->post_send(to_b, delivery_mode::rod, message_bytes(1, 333), 2).ok());
        ASSERT_TRUE(a->post_send(to_b, delivery_mode::rudi, message_bytes(2, 5000), 3).ok());
        ASSERT_TRUE(a->post_send(to_b, delivery_mode::uud, message_bytes(3, 1), 4).ok());
    }
    const auto staged = drain_tx(a1, 0);
    const auto in_room = drain_tx_in_room(a2, 0, 8192);
    ASSERT_GE(staged.size(), 14u);
    EXPECT_EQ(in_room, staged);
    // A room smaller than the largest frame: frames come from engine memory, unchanged.
    std::array<tx_frame, 64> small{};
    std::vector<std::uint8_t> tiny(64 * 256);
    for (std::size_t i = 0; i < small.size(); ++i)
        small[i].room = std::span<std::uint8_t>(&tiny[i * 256], 256);
    const std::size_t n = a3.transmit(0, small);
    ASSERT_EQ(n, staged.size());
    for (std::size_t i = 0; i < n; ++i) {
        EXPECT_NE(small[i].data.data(), small[i].room.data());
        EXPECT_TRUE(std::equal(small[i].data.begin(), small[i].data.end(), staged[i].begin(),
                               staged[i].end()));
    }
    // Control frames (ACKs, RUDI responses) too.
    for (const auto& f : staged) {
        b1.receive(f, 1000);
        b2.receive(f, 1000);
    }
    const auto acks = drain_tx(b1, 1000);
    ASSERT_FALSE(acks.empty());
    EXPECT_EQ(drain_tx_in_room(b2, 1000, 2048), acks);
}

// A stream of one-packet messages, most of one kind as a stream of sends is: each frame,
// decoded in full, must carry its own message's fields, whichever of them change from one
// message to the next (tag, restart token, header data, opcode, job,
// initiator, resource index, length), before and after the SYN phase, on RUD and ROD, with
// UDP checksums and without (where a run's frames after its first are copied from it). Half
// are posted one by one, half in unsignaled lists (post_unsignaled_messages), whose common fields
// change from list to list now and then as they do from message to message.
TEST(engine, one_packet_messages_carry_their_own_fields_after_one_another) {
    for (const auto& run :
         {std::pair{delivery_mode::rud, true}, std::pair{delivery_mode::rod, true},
          std::pair{delivery_mode::rud, false}, std::pair{delivery_mode::rod, false}}) {
        // Named, not a structured binding: the lambdas below capture them (clang refuses those).
        const delivery_mode mode = run.first;
        const bool checksum = run.second;
        SCOPED_TRACE(std::string(to_string(mode)) + (checksum ? " checksum" : " no checksum"));
        engine_config ca = endpoint_config(1, 5), cb = endpoint_config(2, 6);
        ca.answers_in_acks = cb.answers_in_acks = true;
        ca.udp_checksum = cb.udp_checksum = checksum;
        engine a(ca), b(cb);
        const peer_id to_b = a.add_peer(cb.mac, cb.ip);
        std::mt19937_64 rng(11);
        std::vector<ses_fields> posted;
        std::vector<std::uint32_t> sizes;
        // Posted 20 at a time, as their ACKs come back: most leave after the SYN phase.
        auto post_some = [&] {
            for (int k = 0; k < 20 && posted.size() < 600; ++k) {
                ses_fields f;
                // Mostly the same kind of message, as a stream of sends is; now and then another.
                const auto r = rng() % 16;
                f.opcode = r == 0 ? wire::ses_opcode::send : wire::ses_opcode::tagged_send;
                f.job_id = r == 1 ? 77 : 5;
                f.resource_index = r == 2 ? 3 : 0;
                f.initiator = r == 3 ? 0x0a000009 : 0x0a000001;
                f.hd = r == 4 || r == 5;
                f.header_data = f.hd ? rng() : 0;
                f.memory_key = rng();
                f.buffer_offset = rng();
                const std::uint32_t size = r == 6 ? 64 : r == 7 ? 9 : 8;
                if (rng() % 2 == 0) {
                    // A unsignaled list of 1..6 with these common fields, each its own key and
                    // offset (and length, now and then).
                    std::vector<unsignaled_request> list;
                    for (std::size_t n = 1 + rng() % 6; n != 0 && posted.size() < 600; --n) {
                        const std::uint32_t own_size = rng() % 8 == 0 ? 12 : size;
                        const auto i = static_cast<std::uint32_t>(posted.size());
                        f.memory_key = rng();
                        f.buffer_offset = rng();
                        list.push_back(
                            {{f.memory_key, f.buffer_offset}, message_bytes(i, own_size), i});
                        posted.push_back(f);
                        sizes.push_back(own_size);
                    }
                    ASSERT_EQ(a.post_unsignaled_messages(to_b, mode, f, list), list.size());
                    continue;
                }
                const auto i = static_cast<std::uint32_t>(posted.size());
                ASSERT_TRUE(a.post_message(to_b, mode, f, message_bytes(i, size), i).ok());
                posted.push_back(f);
                sizes.push_back(size);
            }
        };
        std::size_t seen = 0, after_syn = 0, answered_by_message = 0;
        // Until every frame was seen and every request ended (the last ACKs come after).
        const auto ended = [&] { return a.counters().messages_completed == posted.size(); };
        for (std::uint64_t now = 0; (seen < 600 || !ended()) && now < 100'000'000; now += 10'000) {
            post_some();
            for (const auto& frame : drain_tx(a, now)) {
                captured c;
                ASSERT_TRUE(decode(frame, c));
                b.receive(frame, now);
                const auto* request = std::get_if<wire::pds_rud_rod_request>(&c.pkt.pds);
                if (!request || request->retx) continue;  // ACKs of b's responses, resends
                const auto& h = *request;
                ASSERT_TRUE(c.pkt.ses.has_value());
                const auto& ses = std::get<wire::ses_standard_request>(*c.pkt.ses);
                ASSERT_LT(seen, posted.size());
                const ses_fields& f = posted[ses.message_id];
                EXPECT_EQ(ses.message_id, seen) << "in order, each once";
                EXPECT_EQ(ses.opcode, f.opcode);
                EXPECT_EQ(ses.job_id, f.job_id);
                EXPECT_EQ(ses.resource_index, f.resource_index);
                EXPECT_EQ(ses.initiator, f.initiator);
                EXPECT_EQ(ses.hd, f.hd);
                EXPECT_EQ(ses.header_data, f.header_data);
                EXPECT_EQ(ses.memory_key, f.memory_key);
                EXPECT_EQ(ses.buffer_offset, f.buffer_offset);
                EXPECT_EQ(ses.request_length, sizes[ses.message_id]);
                EXPECT_TRUE(ses.som && ses.eom);
                const auto bytes = message_bytes(ses.message_id, sizes[ses.message_id]);
                EXPECT_TRUE(std::equal(c.pkt.payload.begin(), c.pkt.payload.end(), bytes.begin(),
                                       bytes.end()));
                EXPECT_EQ(h.type,
                          mode == delivery_mode::rod ? wire::pds_type::rod : wire::pds_type::rud);
                if (!h.syn) ++after_syn;
                ++seen;
            }
            // Answered before the ACKs leave, as the endpoint answers what it delivers: the
            // ACKs carry the answers.
            received_message m;
            while (b.poll_received(m)) {
                if (!b.answer_ok_in_ack(m)) {
                    ++answered_by_message;
                    ses_fields answer;
                    answer.response = true;
                    answer.message_id = m.message_id;
                    answer.job_id = m.ses->job_id;
                    EXPECT_TRUE(b.post_response(m, answer, {}, 0).ok());
                }
                b.release(m.handle);
            }
            for (const auto& ack : drain_tx(b, now + 5'000))
                a.receive(ack, now + 5'000);
            std::array<send_completion, 64> done;
            while (a.poll_send_completions(done) != 0) {
            }
        }
        EXPECT_EQ(seen, posted.size());
        EXPECT_GT(after_syn, posted.size() / 2);
        EXPECT_EQ(b.counters().messages_delivered, posted.size());
        // Every request ended well, unsignaled or not, each answered in an ACK but those answered
        // by a message.
        EXPECT_EQ(a.counters().messages_completed, posted.size());
        EXPECT_EQ(a.counters().answered_by_ack, posted.size() - answered_by_message);
    }
}

TEST(engine, syn_on_every_packet_until_the_first_ack_then_dpdcid) {
    engine_config ca = endpoint_config(1, 5), cb = endpoint_config(2, 6);
    engine a(ca), b(cb);
    const peer_id to_b = a.add_peer(cb.mac, cb.ip);
    ASSERT_TRUE(a.post_send(to_b, delivery_mode::rud, message_bytes(0, 10 * 4096), 1).ok());
    const auto first = drain_tx(a, 0);
    ASSERT_EQ(first.size(), 10u);
    psn_t start = 0;
    std::uint16_t spdcid = 0;
    for (std::size_t i = 0; i < first.size(); ++i) {
        captured c;
        ASSERT_TRUE(decode(first[i], c));
        const auto& h = std::get<wire::pds_rud_rod_request>(c.pkt.pds);
        EXPECT_TRUE(h.syn);
        EXPECT_EQ(h.psn_offset, i);
        EXPECT_EQ(c.l2.ip.ecn, static_cast<std::uint8_t>(wire::ecn_codepoint::ect0));
        if (i == 0) start = h.psn, spdcid = h.spdcid;
        EXPECT_EQ(h.psn, start + i);
        EXPECT_EQ(h.ar, i + 1 == first.size());  // the last one asks for an ACK
    }
    // Only the first packet reaches B: it opens a PDC and acknowledges at once.
    b.receive(first[0], 1000);
    const auto acks = drain_tx(b, 1000);
    ASSERT_EQ(acks.size(), 1u);
    captured ack;
    ASSERT_TRUE(decode(acks[0], ack));
    const auto& a_cc = std::get<wire::pds_ack_cc>(ack.pkt.pds);
    EXPECT_EQ(a_cc.cack_psn, start);
    EXPECT_EQ(a_cc.dpdcid, spdcid);
    a.receive(acks[0], 2000);
    // A's retransmissions (after its timer) now carry B's PDCID and no SYN.
    const auto again = drain_tx(a, 2000 + ca.rto_ns);
    ASSERT_FALSE(again.empty());
    captured c;
    ASSERT_TRUE(decode(again[0], c));
    const auto& h = std::get<wire::pds_rud_rod_request>(c.pkt.pds);
    EXPECT_FALSE(h.syn);
    EXPECT_TRUE(h.retx);
    EXPECT_EQ(h.dpdcid, a_cc.spdcid);
}

TEST(engine, random_start_psn_depends_on_the_seed) {
    std::set<psn_t> starts;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        engine_config ca = endpoint_config(1, seed), cb = endpoint_config(2, 9);
        engine a(ca);
        a.post_send(a.add_peer(cb.mac, cb.ip), delivery_mode::rud, message_bytes(0, 1), 0);
        captured c;
        ASSERT_TRUE(decode(drain_tx(a, 0).at(0), c));
        starts.insert(std::get<wire::pds_rud_rod_request>(c.pkt.pds).psn);
    }
    EXPECT_EQ(starts.size(), 4u);
}

struct pair_fixture {
    engine_config ca = endpoint_config(1, 31), cb = endpoint_config(2, 32);
    std::unique_ptr<engine> a, b;
    std::unique_ptr<pipe::duplex> net;
    std::unique_ptr<harness> h;

    void start(const pipe::impairments& imp) {
        a = std::make_unique<engine>(ca);
        b = std::make_unique<engine>(cb);
        net = std::make_unique<pipe::duplex>(imp, 1, 4096, 9216);
        h = std::make_unique<harness>(*a, *b, *net);
    }
};

TEST(engine, idle_pdc_closes_in_one_round_trip) {
    pair_fixture f;
    pipe::impairments imp;
    imp.delay_ns = 5'000;
    f.start(imp);
    const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
    ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rud, message_bytes(0, 5000), 9).ok());
    send_completion c[4];
    ASSERT_TRUE(f.h->run_until([&] { return f.a->poll_send_completions(c) == 1; }, 1'000'000));
    EXPECT_EQ(f.a->pdcs().size(), 1u);
    EXPECT_EQ(f.b->pdcs().size(), 1u);
    const std::uint64_t done = f.h->now();
    ASSERT_TRUE(f.h->run_until([&] { return f.a->pdcs().empty(); }, 10'000'000));
    // Idle timer, then CLOSE out and its ACK back: one round trip (10 us) after the idle time.
    EXPECT_EQ(f.h->now() - done, f.ca.pdc_idle_close_ns + 10'000);
    EXPECT_TRUE(f.b->pdcs().empty());
    EXPECT_EQ(f.a->counters().pdcs_closed, 1u);
    EXPECT_EQ(f.b->counters().target_pdcs_closed, 1u);
    EXPECT_TRUE(f.a->idle());
}

TEST(engine, receiver_without_a_free_pdc_nacks_and_nothing_is_lost) {
    pair_fixture f;
    f.cb.max_pdcs = 1;  // B's only PDC is busy with its own sending at first
    pipe::impairments imp;
    imp.delay_ns = 2'000;
    f.start(imp);
    const peer_id a_from_b = f.b->add_peer(f.ca.mac, f.ca.ip);
    const peer_id b_from_a = f.a->add_peer(f.cb.mac, f.cb.ip);
    for (int i = 0; i < 20; ++i)
        ASSERT_TRUE(f.b->post_send(a_from_b, delivery_mode::rud, message_bytes(i, 3000), i).ok());
    for (int i = 0; i < 50; ++i)
        ASSERT_TRUE(f.a->post_send(b_from_a, delivery_mode::rud, message_bytes(i, 9000), i).ok());
    std::size_t at_a = 0, at_b = 0, done_a = 0, done_b = 0;
    send_completion c[64];
    received_message m;
    ASSERT_TRUE(f.h->run_until(
        [&] {
            while (f.a->poll_received(m))
                ++at_a, f.a->release(m.handle);
            while (f.b->poll_received(m))
                ++at_b, f.b->release(m.handle);
            done_a += f.a->poll_send_completions(c);
            done_b += f.b->poll_send_completions(c);
            return at_a == 20 && at_b == 50 && done_a == 50 && done_b == 20;
        },
        1'000'000'000));
    EXPECT_GT(f.a->counters().pds.nacks_received_of(pds::nack_slot::no_pdc_avail), 0u);
    EXPECT_EQ(f.a->counters().messages_failed, 0u);
}

TEST(engine, flows_wait_for_a_pdc_when_the_initiator_table_is_full) {
    pair_fixture f;
    f.ca.max_pdcs = 1;  // RUD and ROD to the same peer need two: ROD waits for RUD to close
    pipe::impairments imp;
    imp.delay_ns = 2'000;
    f.start(imp);
    const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rud, message_bytes(i, 6000), i).ok());
        ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rod, message_bytes(i, 6000), i).ok());
    }
    std::size_t received = 0, done = 0;
    send_completion c[32];
    received_message m;
    ASSERT_TRUE(f.h->run_until(
        [&] {
            while (f.b->poll_received(m))
                ++received, f.b->release(m.handle);
            done += f.a->poll_send_completions(c);
            return received == 20 && done == 20;
        },
        1'000'000'000));
    EXPECT_EQ(f.a->counters().pdcs_opened, 2u);
    EXPECT_EQ(f.a->counters().messages_failed, 0u);
}

// parallel_pdcs: RUD messages take the PDCs in turn, each arrives whole and intact, and ROD
// keeps its single PDC. A lossy link makes every PDC recover on its own.
TEST(engine, parallel_pdcs_carry_rud_messages_in_turn) {
    pair_fixture f;
    f.ca.parallel_pdcs = 4;
    pipe::impairments imp;
    imp.delay_ns = 2'000;
    imp.loss = 0.02;
    f.start(imp);
    const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
    constexpr int rud_messages = 24, rod_messages = 6;
    for (int i = 0; i < rud_messages; ++i)
        ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rud, message_bytes(i, 20'000), i).ok());
    for (int i = 0; i < rod_messages; ++i)
        ASSERT_TRUE(
            f.a->post_send(to_b, delivery_mode::rod, message_bytes(100 + i, 9000), 100 + i).ok());
    std::size_t rud_initiators = 0, rod_initiators = 0;
    for (const auto& info : f.a->pdcs()) {
        if (!info.initiator) continue;
        ++(info.mode == delivery_mode::rod ? rod_initiators : rud_initiators);
    }
    EXPECT_EQ(rud_initiators, 4u);
    EXPECT_EQ(rod_initiators, 1u);
    // Which message arrived: the one whose bytes it carries (each starts at its own offset).
    const auto which = [](const received_message& m) {
        const bool rod = m.mode == delivery_mode::rod;
        const int first = rod ? 100 : 0, count = rod ? rod_messages : rud_messages;
        for (int i = first; i < first + count; ++i)
            if (std::ranges::equal(m.data, message_bytes(i, rod ? 9000 : 20'000))) return i;
        return -1;
    };
    std::set<int> seen;
    std::size_t done = 0;
    send_completion c[64];
    received_message m;
    ASSERT_TRUE(f.h->run_until(
        [&] {
            while (f.b->poll_received(m)) {
                const int i = which(m);
                EXPECT_GE(i, 0) << "a message arrived with bytes of none posted";
                seen.insert(i);
                f.b->release(m.handle);
            }
            for (std::size_t k = f.a->poll_send_completions(c); k-- > 0;) {
                EXPECT_TRUE(c[k].result.ok());
                ++done;
            }
            return done == rud_messages + rod_messages &&
                   seen.size() == std::size_t{rud_messages + rod_messages};
        },
        1'000'000'000));
    EXPECT_EQ(seen.size(), std::size_t{rud_messages + rod_messages});
    EXPECT_EQ(f.a->counters().pdcs_opened, 5u);
    EXPECT_EQ(f.a->counters().messages_failed, 0u);
}

TEST(engine, unreachable_peer_completes_with_an_error) {
    pair_fixture f;
    f.ca.max_retransmits = 3;
    f.ca.rto_ns = 10'000;
    pipe::impairments imp;
    imp.loss = 1.0;
    f.start(imp);
    const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
    ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rud, message_bytes(0, 100), 5).ok());
    ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rudi, message_bytes(0, 100), 6).ok());
    std::map<std::uint64_t, status_code> results;
    send_completion c[4];
    ASSERT_TRUE(f.h->run_until(
        [&] {
            for (std::size_t n = f.a->poll_send_completions(c), i = 0; i < n; ++i)
                results[c[i].context] = c[i].result.code;
            return results.size() == 2;
        },
        10'000'000'000ull));
    EXPECT_EQ(results[5], status_code::peer_unreachable);
    EXPECT_EQ(results[6], status_code::retry_limit);
    EXPECT_TRUE(f.a->pdcs().empty());
    EXPECT_TRUE(f.a->idle());
}

// A lone small message completes one round trip after it is posted, in every reliable mode:
// the sender asks for an ACK (AR) when nothing follows it and the target answers at once, with
// no coalescing timer in between.
TEST(engine, lone_small_message_completes_in_one_round_trip) {
    for (const delivery_mode m : {delivery_mode::rud, delivery_mode::rod, delivery_mode::rudi}) {
        pair_fixture f;
        pipe::impairments imp;
        imp.delay_ns = 5'000;  // one way: RTT 10 us
        f.start(imp);
        const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
        for (int i = 0; i < 3; ++i) {  // the first opens a PDC (SYN); later ones reuse it
            f.h->run_to(f.h->now() + 20'000);
            const std::uint64_t posted = f.h->now();
            ASSERT_TRUE(f.a->post_send(to_b, m, message_bytes(i, 8), i).ok());
            send_completion c[2];
            ASSERT_TRUE(f.h->run_until([&] { return f.a->poll_send_completions(c) == 1; },
                                       posted + 10'000'000));
            EXPECT_TRUE(c[0].result.ok());
            EXPECT_LE(f.h->now() - posted, 11'000u) << to_string(m) << " message " << i;
        }
    }
}

// A ROD PDC with a full window to a dead peer fails after max_retransmits timeout rounds of
// backed-off RTOs (about 0.85 s with the defaults), not after a timeout per packet per round.
TEST(engine, rod_to_a_dead_peer_fails_in_bounded_time) {
    pair_fixture f;
    pipe::impairments imp;
    imp.loss = 1.0;
    f.start(imp);
    const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
    ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rod, message_bytes(0, 1 << 20), 1).ok());
    send_completion c[2];
    ASSERT_TRUE(
        f.h->run_until([&] { return f.a->poll_send_completions(c) == 1; }, 100'000'000'000ull));
    EXPECT_EQ(c[0].result.code, status_code::peer_unreachable);
    std::uint64_t bound = 0;  // rounds 0..max_retransmits, each rto x 2^round, capped
    for (std::uint32_t r = 0; r <= f.ca.max_retransmits; ++r)
        bound += std::min(f.ca.rto_ns << std::min(r, 30u), f.ca.rto_max_ns);
    EXPECT_LE(f.h->now(), bound + 1'000'000);
    std::printf("ROD to a dead peer: failed after %.3f s (bound %.3f s)\n", f.h->now() / 1e9,
                bound / 1e9);
}

TEST(engine, uud_refuses_messages_bigger_than_one_packet) {
    engine_config ca = endpoint_config(1, 1), cb = endpoint_config(2, 2);
    engine a(ca);
    const peer_id p = a.add_peer(cb.mac, cb.ip);
    EXPECT_EQ(a.post_send(p, delivery_mode::uud, message_bytes(0, ca.mtu_payload + 1), 0).code,
              status_code::message_too_long);
    EXPECT_TRUE(a.post_send(p, delivery_mode::uud, message_bytes(0, ca.mtu_payload), 0).ok());
    EXPECT_EQ(a.post_send(77, delivery_mode::rud, message_bytes(0, 1), 0).code,
              status_code::unknown_peer);
}

TEST(engine, trimmed_packet_is_nacked_and_resent_without_a_timeout) {
    pair_fixture f;
    pipe::impairments imp;
    imp.delay_ns = 2'000;
    f.start(imp);
    const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
    ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rud, message_bytes(0, 8 * 4096), 1).ok());
    // Trim only the first frame A sends.
    pipe::impairments trim_all = imp;
    trim_all.trim = 1.0;
    f.net->a_to_b.set_impairments(trim_all);
    std::array<tx_frame, 1> one{};
    ASSERT_EQ(f.a->transmit(0, one), 1u);
    f.net->a_to_b.send(one[0].data, 0);
    f.net->a_to_b.set_impairments(imp);
    send_completion c[2];
    received_message m;
    bool delivered = false;
    ASSERT_TRUE(f.h->run_until(
        [&] {
            if (f.b->poll_received(m)) delivered = true, f.b->release(m.handle);
            return delivered && f.a->poll_send_completions(c) == 1;
        },
        100'000'000));
    const auto& p = f.a->counters().pds;
    EXPECT_EQ(p.nacks_received_of(pds::nack_slot::trimmed), 1u);
    EXPECT_EQ(p.retransmitted(uet::retx_cause::nack), 1u);
    EXPECT_EQ(p.timeouts, 0u);
    EXPECT_EQ(f.b->counters().pds.trimmed_received, 1u);
    EXPECT_LT(f.h->now(), f.ca.rto_ns);
}

// ---- path-ID loss detection (engine_config::path_ids) ----

// A sends one RUD message of `packets` full packets to B over two paths that a switch would
// spray over: A's data frames go on path 1 and 2 in turn (path 2 is slower, so the paths
// reorder), each stamped with its path's ID (plus id_offset: out of range when it is above B's
// path_ids), and the drop-th (0-based; -1: none) is lost. Frames that arrive together are
// handed over as one receive burst. B answers over a 2 us link.
struct two_path_result {
    bool completed = false;
    std::uint64_t done_ns = 0;
    engine_counters a, b;
};

two_path_result run_two_paths(std::uint32_t path_ids, int drop, std::uint16_t id_offset = 0,
                              std::uint32_t packets = 16) {
    const engine_config ca = endpoint_config(1, 41);
    engine_config cb = endpoint_config(2, 42);
    cb.path_ids = path_ids;
    engine a(ca), b(cb);
    const peer_id to_b = a.add_peer(cb.mac, cb.ip);
    EXPECT_TRUE(a.post_send(to_b, delivery_mode::rud, message_bytes(0, packets * 4096), 7).ok());
    std::multimap<std::uint64_t, std::vector<std::uint8_t>> to_a, to_b_frames;  // by arrival
    std::uint64_t now = 0;
    int data_frames = 0;
    two_path_result r;
    send_completion c[2];
    received_message m;
    while (now < 100'000'000) {
        for (auto& f : drain_tx(a, now)) {
            captured cap;
            if (decode(f, cap) && cap.pkt.ses) {
                const int path = data_frames % 2;
                if (data_frames++ == drop) continue;
                pipe::set_ip_id(f, static_cast<std::uint16_t>(path + 1 + id_offset));
                to_b_frames.emplace(now + (path == 0 ? 2'000 : 5'000), std::move(f));
            } else {
                to_b_frames.emplace(now + 2'000, std::move(f));
            }
        }
        for (auto& f : drain_tx(b, now))
            to_a.emplace(now + 2'000, std::move(f));
        if (a.poll_send_completions(c) == 1) {
            r.completed = c[0].result.ok();
            r.done_ns = now;
            break;
        }
        while (b.poll_received(m))
            b.release(m.handle);
        std::uint64_t next = std::min(a.next_deadline(), b.next_deadline());
        if (!to_a.empty()) next = std::min(next, to_a.begin()->first);
        if (!to_b_frames.empty()) next = std::min(next, to_b_frames.begin()->first);
        now = std::max(now, next);
        std::vector<std::span<const std::uint8_t>> burst;
        for (auto it = to_b_frames.begin(); it != to_b_frames.end() && it->first <= now; ++it)
            burst.emplace_back(it->second);
        b.receive_burst(burst, now);
        to_b_frames.erase(to_b_frames.begin(), to_b_frames.upper_bound(now));
        for (auto it = to_a.begin(); it != to_a.end() && it->first <= now; it = to_a.erase(it))
            a.receive(it->second, now);
        a.advance(now);
        b.advance(now);
    }
    r.a = a.counters();
    r.b = b.counters();
    return r;
}

std::uint64_t inferred_nacks(const engine_counters& c) {
    return c.pds.nacks_sent[static_cast<std::size_t>(pds::nack_slot::inferred_loss)];
}

// The 14th of 16 packets is lost: too few follow it for the sender's SACK rule (ooo_threshold
// transmissions after it), so without path IDs only the retransmit timeout finds it. With
// them, the two packets after it (one on each path) show it lost: B NACKs it once, A resends it
// and the message completes within a few round trips, long before any timeout.
TEST(engine, path_ids_nack_a_lost_packet_before_the_retransmit_timeout) {
    const two_path_result with = run_two_paths(2, 13);
    ASSERT_TRUE(with.completed);
    EXPECT_EQ(inferred_nacks(with.b), 1u);
    EXPECT_EQ(with.a.pds.nacks_received_of(pds::nack_slot::inferred_loss), 1u);
    EXPECT_EQ(with.a.pds.retransmitted(retx_cause::nack), 1u);
    EXPECT_EQ(with.a.pds.timeouts, 0u);
    EXPECT_EQ(with.b.pds.duplicates, 0u);  // nothing resent that had arrived
    EXPECT_LT(with.done_ns, endpoint_config(1, 41).rto_min_ns);

    const two_path_result without = run_two_paths(0, 13);
    ASSERT_TRUE(without.completed);
    EXPECT_EQ(inferred_nacks(without.b), 0u);
    EXPECT_EQ(without.a.pds.retransmitted(retx_cause::nack), 0u);
    EXPECT_GE(without.a.pds.timeouts, 1u);
    EXPECT_GE(without.done_ns, endpoint_config(1, 41).rto_min_ns);
    std::printf("packet 14 of 16 lost: message done at %.1f us with path IDs, %.1f us without\n",
                with.done_ns / 1e3, without.done_ns / 1e3);
}

// With nothing lost, the slower path's packets arrive after later ones of the faster path
// (holes that are not losses): no NACK, nothing resent, and the message takes as long as
// without path IDs. Path IDs beyond path_ids (a hostile or misconfigured network) are counted
// and ignored: nothing NACKed, even for a real loss, which is then the sender's to find.
TEST(engine, path_ids_change_nothing_without_loss_and_out_of_range_ids_are_ignored) {
    const two_path_result with = run_two_paths(2, -1, 0, 64);
    const two_path_result without = run_two_paths(0, -1, 0, 64);
    ASSERT_TRUE(with.completed && without.completed);
    EXPECT_EQ(inferred_nacks(with.b), 0u);
    EXPECT_EQ(with.b.path_ids_out_of_range, 0u);
    for (const auto cause : {retx_cause::nack, retx_cause::sack, retx_cause::timeout})
        EXPECT_EQ(with.a.pds.retransmitted(cause), 0u);
    EXPECT_EQ(with.done_ns, without.done_ns);

    const two_path_result hostile = run_two_paths(2, 13, 2);
    ASSERT_TRUE(hostile.completed);
    EXPECT_EQ(inferred_nacks(hostile.b), 0u);
    EXPECT_EQ(hostile.b.path_ids_out_of_range, 16u);  // every data packet that arrived
    EXPECT_GE(hostile.a.pds.timeouts, 1u);
}

TEST(engine, ecn_ce_is_echoed_in_the_ack) {
    pair_fixture f;
    pipe::impairments imp;
    imp.delay_ns = 1'000;
    imp.ecn_mark = 1.0;
    f.start(imp);
    f.a->post_send(f.a->add_peer(f.cb.mac, f.cb.ip), delivery_mode::rud, message_bytes(0, 10), 0);
    const auto frames = drain_tx(*f.a, 0);
    f.net->a_to_b.send(frames.at(0), 0);
    f.net->a_to_b.receive(1000, [&](std::span<const std::uint8_t> fr) { f.b->receive(fr, 1000); });
    const auto acks = drain_tx(*f.b, 1000);
    captured c;
    ASSERT_TRUE(decode(acks.at(0), c));
    EXPECT_TRUE(std::get<wire::pds_ack_cc>(c.pkt.pds).m);
}

// A target region for delivery_target::place_write, with guard bytes on both sides; it counts the
// packets it is asked to place.
struct placement_target final : delivery_target {
    static constexpr std::size_t guard = 256;
    static constexpr std::uint64_t key = 77;
    std::vector<std::uint8_t> memory = std::vector<std::uint8_t>(guard + (1 << 20) + guard, 0xab);
    std::uint64_t calls = 0, refused = 0, bytes = 0;

    std::uint64_t size() const { return memory.size() - 2 * guard; }
    bool places_writes() const noexcept override { return true; }
    std::uint8_t* place_write(std::uint32_t, const ses::op_fields& f, std::uint32_t offset,
                              std::uint32_t length) noexcept override {
        placement_target& t = *this;
        ++t.calls;
        if (f.memory_key != key || f.buffer_offset > t.size() ||
            f.request_length > t.size() - f.buffer_offset || offset > f.request_length ||
            length > f.request_length - offset) {
            ++t.refused;
            return nullptr;
        }
        t.bytes += length;
        return t.memory.data() + guard + f.buffer_offset + offset;
    }
    bool guards_intact() const {
        return std::all_of(memory.begin(), memory.begin() + guard,
                           [](std::uint8_t b) { return b == 0xab; }) &&
               std::all_of(memory.end() - guard, memory.end(),
                           [](std::uint8_t b) { return b == 0xab; });
    }
};

// WRITEs go straight to where place_write says, each packet copied exactly once however often the
// network duplicates or reorders it (RUDI: no PDS duplicate suppression, so duplicates reach
// SES); a refused packet is never copied and fails its message; SENDs are buffered as before.
TEST(engine, writes_are_placed_directly_once_per_packet) {
    for (const delivery_mode m : {delivery_mode::rudi, delivery_mode::rud}) {
        pair_fixture f;
        placement_target t;
        f.cb.deliver_to = &t;
        pipe::impairments imp;
        imp.delay_ns = 2'000;
        imp.loss = 0.02;
        imp.duplicate = 0.3;
        imp.reorder = 0.2;
        imp.reorder_max_distance = 8;
        f.start(imp);
        const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
        struct write {
            std::uint64_t offset;
            std::uint32_t length;
            std::uint64_t key;
        };
        const std::vector<write> writes = {{0, 300'000, t.key},   {400'000, 4096, t.key},
                                           {500'000, 100, t.key}, {600'000, 0, t.key},
                                           {700'000, 50'000, 5},  {t.size() - 8192, 12'288, t.key}};
        std::uint64_t expected_packets = 0;
        for (std::size_t i = 0; i < writes.size(); ++i) {
            ses_fields sf;
            sf.opcode = wire::ses_opcode::write;
            sf.memory_key = writes[i].key;
            sf.buffer_offset = writes[i].offset;
            ASSERT_TRUE(f.a->post_message(to_b, m, sf, message_bytes(i, writes[i].length), i).ok());
            if (i < 3)  // the ones that fit (the empty write has no payload to place)
                expected_packets += (writes[i].length + f.cb.mtu_payload - 1) / f.cb.mtu_payload;
        }
        ASSERT_TRUE(f.a->post_send(to_b, m, message_bytes(9, 10'000), 99).ok());
        // A message's SES fields are the engine's until release: its opcode is kept here.
        std::vector<std::pair<received_message, wire::ses_opcode>> got;
        send_completion c[16];
        std::size_t completed = 0;
        ASSERT_TRUE(f.h->run_until(
            [&] {
                completed += f.a->poll_send_completions(c);
                for (received_message r; f.b->poll_received(r);) {
                    got.emplace_back(r, r.ses->opcode);
                    if (r.placed) f.b->release(r.handle);  // nothing held
                }
                return completed == writes.size() + 1 && got.size() == writes.size() + 1;
            },
            2'000'000'000));
        std::size_t placed = 0, failed = 0;
        for (const auto& [r, opcode] : got) {
            if (opcode != wire::ses_opcode::write) {
                EXPECT_FALSE(r.placed);
                EXPECT_EQ(r.data.size(), 10'000u);
                f.b->release(r.handle);
                continue;
            }
            EXPECT_TRUE(r.placed);
            EXPECT_TRUE(r.data.empty());
            ++placed;
            if (r.placement_failed) ++failed;
        }
        EXPECT_EQ(placed, writes.size());
        EXPECT_EQ(failed, 2u) << "the bad key and the write past the end";
        // Packets of the good writes placed once each; the bad ones' refused, none copied.
        EXPECT_EQ(t.calls - t.refused, expected_packets) << to_string(m);
        EXPECT_EQ(t.refused, (50'000u + 4095) / 4096 + 3u) << to_string(m);
        EXPECT_EQ(t.bytes, 300'000u + 4096 + 100) << to_string(m);
        EXPECT_TRUE(t.guards_intact());
        for (std::size_t i = 0; i < 3; ++i) {
            const auto want = message_bytes(i, writes[i].length);
            EXPECT_TRUE(
                std::equal(want.begin(), want.end(), t.memory.begin() + t.guard + writes[i].offset))
                << "write " << i << " " << to_string(m);
        }
        EXPECT_TRUE(std::all_of(t.memory.begin() + t.guard + 700'000,
                                t.memory.begin() + t.guard + 750'000,
                                [](std::uint8_t b) { return b == 0xab; }));
        EXPECT_TRUE(std::all_of(t.memory.end() - t.guard - 8192, t.memory.end(),
                                [](std::uint8_t b) { return b == 0xab; }));
        if (m == delivery_mode::rudi) {
            EXPECT_GT(f.b->counters().pds.duplicates, 0u);  // duplicates did reach SES
        }
    }
}

// Each transmit() call that sent data, or had a PDC with nothing ready, says how it ended: a full
// burst, held by the window, or nothing queued (uet-perf --stats: where a sender's idle polls
// come from).
TEST(engine, transmit_calls_say_why_they_ended) {
    engine_config ca = endpoint_config(1, 1);
    const engine_config cb = endpoint_config(2, 2);
    ca.mpr = 8;
    engine a(ca);
    const peer_id to = a.add_peer(cb.mac, cb.ip);
    std::array<tx_frame, 4> four{};
    std::array<tx_frame, 64> many{};
    EXPECT_EQ(a.transmit(1, many), 0u);  // no PDC, nothing posted: an idle engine, not counted
    ASSERT_TRUE(a.post_send(to, delivery_mode::rud, message_bytes(0, 100'000), 0).ok());
    EXPECT_EQ(a.transmit(2, four), 4u);
    EXPECT_EQ(a.counters().tx_calls_full, 1u);
    EXPECT_EQ(a.transmit(3, many), 4u);  // the window's other four packets, then held
    EXPECT_EQ(a.counters().tx_calls_held_by_window, 1u);
    EXPECT_EQ(a.transmit(4, many), 0u);
    EXPECT_EQ(a.counters().tx_calls_held_by_window, 2u);
    EXPECT_EQ(a.counters().tx_calls_nothing_queued, 0u);

    engine b(endpoint_config(3, 3));
    const peer_id to_b = b.add_peer(cb.mac, cb.ip);
    ASSERT_TRUE(b.post_send(to_b, delivery_mode::rud, message_bytes(0, 100), 0).ok());
    EXPECT_EQ(b.transmit(1, many), 1u);
    EXPECT_EQ(b.transmit(2, many), 0u);  // its PDC waits for the ACK with nothing more to send
    EXPECT_EQ(b.counters().tx_calls_nothing_queued, 2u);
    EXPECT_EQ(b.counters().tx_calls_full + b.counters().tx_calls_held_by_window, 0u);
}

TEST(engine, hostile_frames_are_counted_and_dropped) {
    engine_config ca = endpoint_config(1, 1), cb = endpoint_config(2, 2);
    engine a(ca), b(cb);
    a.post_send(a.add_peer(cb.mac, cb.ip), delivery_mode::rud, message_bytes(0, 20000), 0);
    a.post_send(0, delivery_mode::rudi, message_bytes(0, 5000), 1);
    a.post_send(0, delivery_mode::uud, message_bytes(0, 500), 2);
    auto frames = drain_tx(a, 0);
    rng r(99);
    std::uint64_t now = 1;
    for (int round = 0; round < 20000; ++round) {
        std::vector<std::uint8_t> f = frames[r.uniform(frames.size())];
        // Flip bytes after the IP header and refresh nothing: checksums catch most; with the
        // UDP checksum zeroed, mangled UET headers reach the decoders and the engine.
        const int flips = 1 + static_cast<int>(r.uniform(4));
        for (int i = 0; i < flips; ++i)
            f[34 + r.uniform(f.size() - 34)] ^= 1u << r.uniform(8);
        if (r.bernoulli(0.7)) f[40] = f[41] = 0;
        if (r.bernoulli(0.2)) f.resize(r.uniform(f.size()));
        b.receive(f, now);
        now += 100;
        drain_tx(b, now);
    }
    const auto& c = b.counters();
    std::uint64_t dropped = 0;
    for (auto d : c.drops)
        dropped += d;
    for (auto d : c.rejects)
        dropped += d;
    EXPECT_GT(dropped, 0u);
    EXPECT_EQ(c.frames_rx, 20000u);

    // And the other way: mangled ACKs, NACKs and RUDI responses at the sender.
    engine a2(ca), b2(cb);
    a2.post_send(a2.add_peer(cb.mac, cb.ip), delivery_mode::rud, message_bytes(0, 40000), 0);
    a2.post_send(0, delivery_mode::rod, message_bytes(0, 40000), 1);
    a2.post_send(0, delivery_mode::rudi, message_bytes(0, 5000), 2);
    std::vector<std::vector<std::uint8_t>> replies;
    for (const auto& f : drain_tx(a2, 0)) {
        b2.receive(f, 10);
        for (auto& reply : drain_tx(b2, 10))
            replies.push_back(std::move(reply));
    }
    ASSERT_FALSE(replies.empty());
    for (int round = 0; round < 20000; ++round) {
        std::vector<std::uint8_t> f = replies[r.uniform(replies.size())];
        const int flips = 1 + static_cast<int>(r.uniform(4));
        for (int i = 0; i < flips; ++i)
            f[34 + r.uniform(f.size() - 34)] ^= 1u << r.uniform(8);
        if (r.bernoulli(0.7)) f[40] = f[41] = 0;
        a2.receive(f, now);
        now += 100;
        drain_tx(a2, now);
    }
    EXPECT_EQ(a2.counters().frames_rx, 20000u);
}

}  // namespace
}  // namespace uet::test
