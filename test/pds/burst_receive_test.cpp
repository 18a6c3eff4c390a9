// Runs on both sides against the packet-by-packet paths, over the same workload and impaired
// links (same seeds).
// - engine::receive_burst against engine::receive: arrivals handed over one frame at a time in
//   one run and in bursts in the other must make both engines send exactly the same frames in
//   the same order and end with the same counters and the same delivered bytes; and the bursts
//   must really have been taken as runs.
// - transmit runs: transmit() given one room per call (never a run) and many rooms (runs) must
//   send exactly the same frames and end with the same counters.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workload.hpp"

namespace uet::test {
namespace {

std::vector<impairment_cell> cells() {
    return {
        {"clean", impaired([](auto&) {})},
        {"loss 5%", impaired([](auto& i) { i.loss = 0.05; })},
        {"reorder", impaired([](auto& i) {
             i.reorder = 0.05;
             i.reorder_max_distance = 40;
         })},
        {"dup 5%", impaired([](auto& i) { i.duplicate = 0.05; })},
        {"ecn 50%", impaired([](auto& i) { i.ecn_mark = 0.5; })},
        {"trim 5%", impaired([](auto& i) { i.trim = 0.05; })},
        {"all", impaired([](auto& i) {
             i.loss = 0.02;
             i.reorder = 0.05;
             i.reorder_max_distance = 40;
             i.duplicate = 0.05;
             i.corrupt = 0.01;
             i.trim = 0.05;
             i.ecn_mark = 0.05;
         })},
    };
}

struct result {
    outcome out;
    std::uint64_t trace = 0xcbf29ce484222325ull;
};

result run_with(workload w, std::size_t burst, std::size_t tx_room = 0, bool rooms = false) {
    result r;
    w.burst = burst;
    w.tx_room = tx_room;
    w.rooms = rooms;
    w.trace = &r.trace;
    r.out = run(w);
    return r;
}

void expect_same_counters(const engine_counters& x, const engine_counters& y, const char* side) {
    SCOPED_TRACE(side);
    EXPECT_EQ(x.frames_rx, y.frames_rx);
    EXPECT_EQ(x.bytes_rx, y.bytes_rx);
    EXPECT_EQ(x.frames_tx, y.frames_tx);
    EXPECT_EQ(x.bytes_tx, y.bytes_tx);
    EXPECT_EQ(x.frames_predicted, y.frames_predicted);
    EXPECT_EQ(x.messages_delivered, y.messages_delivered);
    EXPECT_EQ(x.drops, y.drops);
    EXPECT_EQ(x.rejects, y.rejects);
    EXPECT_EQ(x.pds.rx_packets, y.pds.rx_packets);
    EXPECT_EQ(x.pds.rx_bytes, y.pds.rx_bytes);
    EXPECT_EQ(x.pds.rx_data_packets, y.pds.rx_data_packets);
    EXPECT_EQ(x.pds.duplicates, y.pds.duplicates);
    EXPECT_EQ(x.pds.acks_sent, y.pds.acks_sent);
    EXPECT_EQ(x.pds.nacks_sent, y.pds.nacks_sent);
    EXPECT_EQ(x.pds.trimmed_received, y.pds.trimmed_received);
    EXPECT_EQ(x.pds.tx_packets, y.pds.tx_packets);
    EXPECT_EQ(x.pds.tx_bytes, y.pds.tx_bytes);
    EXPECT_EQ(x.pds.tx_data_packets, y.pds.tx_data_packets);
    EXPECT_EQ(x.pds.retransmits, y.pds.retransmits);
    EXPECT_EQ(x.pds.timeouts, y.pds.timeouts);
    EXPECT_EQ(x.pds.acks_received, y.pds.acks_received);
    EXPECT_EQ(x.messages_completed, y.messages_completed);
    EXPECT_EQ(x.messages_failed, y.messages_failed);
}

void expect_same_run(const result& many, const result& one) {
    EXPECT_EQ(many.trace, one.trace) << "the frames sent differ";
    EXPECT_EQ(many.out.delivered, one.out.delivered);
    EXPECT_EQ(many.out.corrupted, 0u);
    EXPECT_EQ(many.out.duplicates, one.out.duplicates);
    EXPECT_EQ(many.out.out_of_order, one.out.out_of_order);
    EXPECT_EQ(many.out.completed, one.out.completed);
    EXPECT_EQ(many.out.failed, one.out.failed);
    EXPECT_EQ(many.out.virtual_ns, one.out.virtual_ns);
    expect_same_counters(many.out.a, one.out.a, "a");
    expect_same_counters(many.out.b, one.out.b, "b");
}

// The workload of one cell of the tests below, and its name in their traces.
workload cell_workload(delivery_mode mode, bool writes, const impairment_cell& c,
                       std::uint64_t seed) {
    workload w;
    w.mode = mode;
    w.writes = writes;
    w.imp = c.imp;
    w.seed = seed;
    return w;
}

std::string cell_name(delivery_mode mode, bool writes, const impairment_cell& c) {
    return std::string(to_string(mode)) + (writes ? " write " : " send ") + c.name;
}

TEST(receive_burst, sends_and_counts_exactly_as_frame_by_frame) {
    for (const delivery_mode mode : {delivery_mode::rud, delivery_mode::rod}) {
        for (const bool writes : {false, true}) {
            for (const impairment_cell& c : cells()) {
                workload w = cell_workload(mode, writes, c, 7);
                w.sizes = mixed_sizes(120, 31, 0);
                w.sizes[0] = 1 << 20;  // at least one long run of packets
                SCOPED_TRACE(cell_name(mode, writes, c));
                const result one = run_with(w, 0);
                ASSERT_TRUE(one.out.finished);
                EXPECT_EQ(one.out.delivered, w.sizes.size());
                EXPECT_EQ(one.out.corrupted, 0u);
                EXPECT_EQ(one.out.b.frames_in_runs, 0u);
                // Bursts of 5 too where the cell has everything (and on a clean link).
                const bool both = std::string(c.name) == "clean" || std::string(c.name) == "all";
                for (const std::size_t burst : {std::size_t{32}, std::size_t{5}}) {
                    if (burst == 5 && !both) continue;
                    SCOPED_TRACE("burst " + std::to_string(burst));
                    const result many = run_with(w, burst);
                    expect_same_run(many, one);
                    // Runs were taken; on a clean link, most data packets arrive in them.
                    EXPECT_GT(many.out.b.frames_in_runs, 0u);
                    if (std::string(c.name) == "clean") {
                        EXPECT_GT(many.out.b.frames_in_runs, many.out.b.frames_predicted / 2);
                    }
                }
            }
        }
    }
}

TEST(transmit_run, sends_and_counts_exactly_as_packet_by_packet) {
    for (const delivery_mode mode : {delivery_mode::rud, delivery_mode::rod}) {
        for (const bool writes : {false, true}) {
            std::uint64_t runs = 0;
            // Heavy loss too, so that packets sent in runs time out (their deadlines count).
            std::vector<impairment_cell> all_cells = cells();
            all_cells.push_back({"loss 25%", impaired([](auto& i) { i.loss = 0.25; })});
            // Mixed sizes, and a stream of one-packet messages (runs of whole messages).
            for (const bool small : {false, true}) {
                for (const impairment_cell& c : all_cells) {
                    workload w = cell_workload(mode, writes, c, 11);
                    w.sizes = small ? mixed_sizes(400, 37, 1024) : mixed_sizes(80, 31, 0);
                    w.wave = small ? 200 : 40;
                    // Long messages in both waves; a window of 64 packets ends the SYN phase early
                    // (its packets take no template, so no runs).
                    if (!small) w.sizes[0] = w.sizes[50] = 1 << 19;
                    w.a_cfg.mpr = 64;
                    SCOPED_TRACE(cell_name(mode, writes, c) +
                                 (small ? ", one-packet messages" : ""));
                    // One room per transmit() call: every packet in a batch of one.
                    const result one = run_with(w, 0, 1);
                    ASSERT_TRUE(one.out.finished);
                    EXPECT_EQ(one.out.delivered, w.sizes.size());
                    EXPECT_EQ(one.out.corrupted, 0u);
                    EXPECT_EQ(one.out.a.frames_sent_in_runs, 0u);
                    // In rooms of their own (as a port's mbufs) everywhere; in the engine's
                    // staging buffer, and 5 frames per call, where the cell has everything (and on
                    // a clean link).
                    const bool both =
                        std::string(c.name) == "clean" || std::string(c.name) == "all";
                    struct variant {
                        std::size_t frames;
                        bool rooms;
                    };
                    for (const variant v :
                         {variant{64, true}, variant{64, false}, variant{5, true}}) {
                        if ((!v.rooms || v.frames == 5) && !both) continue;
                        SCOPED_TRACE(std::to_string(v.frames) + (v.rooms ? " rooms" : " staged"));
                        const result many = run_with(w, 0, v.frames, v.rooms);
                        expect_same_run(many, one);
                        // Runs were built: on a clean link, for most data packets (under ROD a
                        // loss or reordering makes go-back-N resends that leave few, if any).
                        runs += many.out.a.frames_sent_in_runs;
                        if (std::string(c.name) == "clean") {
                            EXPECT_GT(many.out.a.frames_sent_in_runs,
                                      many.out.a.pds.tx_data_packets / 2);
                        }
                    }
                    if (std::string(c.name) == "all") {
                        SCOPED_TRACE("runs on both sides");
                        expect_same_run(run_with(w, 32, 64, true), run_with(w, 0, 64, true));
                    }
                }
            }
            EXPECT_GT(runs, 0u);
        }
    }
}

// Without UDP checksums (memif's default), a run's frames after its first are copied from it
// with the changing fields written in: byte for byte what packet-by-packet sending makes.
TEST(transmit_run, copies_its_first_frame_without_udp_checksums_as_packet_by_packet) {
    for (const delivery_mode mode : {delivery_mode::rud, delivery_mode::rod}) {
        for (const bool writes : {false, true}) {
            for (const impairment_cell& c : cells()) {
                workload w = cell_workload(mode, writes, c, 13);
                w.imp.corrupt = 0;  // nothing would find it without the checksum
                w.sizes = mixed_sizes(80, 31, 0);
                w.sizes[0] = w.sizes[50] = 1 << 19;
                w.wave = 40;
                w.a_cfg.mpr = 64;
                w.a_cfg.udp_checksum = w.b_cfg.udp_checksum = false;
                w.a_cfg.lb = lb::algorithm::oblivious;  // every packet its own entropy
                SCOPED_TRACE(cell_name(mode, writes, c));
                const result one = run_with(w, 0, 1);
                ASSERT_TRUE(one.out.finished);
                EXPECT_EQ(one.out.delivered, w.sizes.size());
                EXPECT_EQ(one.out.corrupted, 0u);
                for (const bool rooms : {true, false}) {
                    SCOPED_TRACE(rooms ? "rooms" : "staged");
                    const result many = run_with(w, 0, 64, rooms);
                    expect_same_run(many, one);
                    if (std::string(c.name) == "clean") {
                        EXPECT_GT(many.out.a.frames_sent_in_runs,
                                  many.out.a.pds.tx_data_packets / 2);
                    }
                }
            }
        }
    }
}

using frame_list = std::vector<std::vector<std::uint8_t>>;

void mend_ip_checksum(std::vector<std::uint8_t>& f) {
    f[24] = f[25] = 0;
    std::uint32_t sum = 0;
    for (std::size_t i = 14; i < 34; i += 2)
        sum += (std::uint32_t{f[i]} << 8) | f[i + 1];
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    f[24] = static_cast<std::uint8_t>(~sum >> 8);
    f[25] = static_cast<std::uint8_t>(~sum);
}

// What the sender of compare_receivers() posts: eight messages (one of 256 whole packets, whose
// runs reach to its end), or 300 one-packet messages (small sends of 64 bytes, every 40th of 65,
// each with a tag of its own, as uet-perf send_bw -s 64 with tags would send them).
enum class shape { large, small };
constexpr std::size_t small_messages = 300;

void post_messages(engine& sender, peer_id to, shape s) {
    if (s == shape::large) {
        for (std::uint32_t m = 0; m < 8; ++m) {
            const std::uint32_t size = m == 3 ? 1u << 20 : 60'000 + m;
            EXPECT_TRUE(sender.post_send(to, delivery_mode::rud, message_bytes(m, size), m).ok());
        }
        return;
    }
    for (std::uint32_t m = 0; m < small_messages; ++m) {
        ses_fields f;
        f.opcode = wire::ses_opcode::tagged_send;
        f.memory_key = 0x5eed0000u + m * 7;
        f.buffer_offset = std::uint64_t{m} << 32;
        const std::uint32_t size = m % 40 == 39 ? 65 : 64;
        EXPECT_TRUE(sender.post_message(to, delivery_mode::rud, f, message_bytes(m, size), m).ok());
    }
}

// The messages of post_messages() from a sender to two receivers, the frames of each of the
// sender's rounds altered by `alter`: one receiver takes them frame by frame, the other in
// bursts. After every burst both must send the same frames, and at the end hold the same counters
// and messages. The sender hears their ACKs (the same from both), so its PDC leaves the SYN phase
// and the packets after it can be predicted. Returns the messages delivered.
// configure, if given, changes the receivers' configuration.
template <class Alter>
std::size_t compare_receivers(Alter&& alter, std::size_t burst, shape s = shape::large,
                              void (*configure)(engine_config&) = nullptr) {
    engine_config ca = endpoint_config(1, 1), cb = endpoint_config(2, 2);
    ca.mpr = 40;  // the SYN phase (no prediction) ends after the first 40 packets
    ca.lb = lb::algorithm::oblivious;  // every packet its own entropy, which its ACK echoes
    // ACKs by count rarely, so that the ACK timer has its part
    cb.ack_every_packets = 24;
    cb.ack_every_bytes = 1 << 20;
    if (configure) configure(cb);
    engine_config cb_one = cb;
    cb_one.rx_batches = false;  // frame by frame: no run taken whole
    engine sender(ca), one(cb_one), many(cb);
    const peer_id to = sender.add_peer(cb.mac, cb.ip);
    post_messages(sender, to, s);
    std::uint64_t now = 10;
    std::size_t sent = 0;
    for (int round = 0; round < 200 && !sender.idle(); ++round, now += 20'000) {
        frame_list frames = drain_tx(sender, now);
        alter(frames);
        sent += frames.size();
        frame_list acks;
        for (std::size_t i = 0; i < frames.size(); i += burst) {
            std::vector<std::span<const std::uint8_t>> spans;
            for (std::size_t k = i; k < std::min(frames.size(), i + burst); ++k) {
                one.receive(frames[k], now);
                spans.emplace_back(frames[k]);
            }
            many.receive_burst(spans, now);
            frame_list answer = drain_tx(one, now);
            EXPECT_EQ(drain_tx(many, now), answer) << "round " << round << ", burst at " << i;
            acks.insert(acks.end(), answer.begin(), answer.end());
        }
        frame_list later = drain_tx(one, now + 15'000);  // the ACK timer's
        EXPECT_EQ(drain_tx(many, now + 15'000), later) << "round " << round;
        acks.insert(acks.end(), later.begin(), later.end());
        for (const auto& a : acks)
            sender.receive(a, now + 19'000);
        if (::testing::Test::HasFailure()) return 0;
    }
    EXPECT_GT(sent, 40u);
    expect_same_counters(many.counters(), one.counters(), "receiver");
    EXPECT_GT(many.counters().frames_in_runs, 0u);
    received_message x, y;
    std::size_t delivered = 0;
    while (one.poll_received(x)) {
        if (!many.poll_received(y)) {
            ADD_FAILURE() << "a message delivered frame by frame only";
            break;
        }
        EXPECT_EQ(x.message_id, y.message_id);
        EXPECT_EQ(x.ses->memory_key, y.ses->memory_key);
        EXPECT_EQ(x.ses->buffer_offset, y.ses->buffer_offset);
        EXPECT_TRUE(std::equal(x.data.begin(), x.data.end(), y.data.begin(), y.data.end()));
        ++delivered;
    }
    EXPECT_FALSE(many.poll_received(y));
    return delivered;
}

// The frames altered as a network (or an attacker) might.
TEST(receive_burst, altered_bursts_answer_as_frame_by_frame) {
    struct alteration {
        const char* name;
        void (*apply)(frame_list&);
    };
    const alteration alterations[] = {
        {"as sent", [](frame_list&) {}},
        {"all CE",
         [](frame_list& fs) {
             for (auto& f : fs) {
                 f[15] |= 3;
                 mend_ip_checksum(f);
             }
         }},
        {"AR and retx flags",
         [](frame_list& fs) {
             for (std::size_t i = 0; i < fs.size(); i += 7) {
                 fs[i][42 + wire::request_flags_byte] |= wire::request_changing_flags;
                 fs[i][40] = fs[i][41] = 0;  // no UDP checksum to mend
             }
         }},
        {"no AR flags",
         [](frame_list& fs) {
             for (auto& f : fs) {
                 f[42 + wire::request_flags_byte] &= ~wire::request_changing_flags;
                 f[40] = f[41] = 0;
             }
         }},
        {"duplicates",
         [](frame_list& fs) {
             for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(fs.size()) - 1; i > 2; i -= 5)
                 fs.insert(fs.begin() + i, fs[static_cast<std::size_t>(i) - 2]);
         }},
        {"swaps and a gap",
         [](frame_list& fs) {
             for (std::size_t i = 3; i + 1 < fs.size(); i += 9)
                 std::swap(fs[i], fs[i + 1]);
             if (fs.size() > 20) fs.erase(fs.begin() + 20);
         }},
        {"a corrupt header",
         [](frame_list& fs) {
             for (std::size_t i = 10; i < fs.size(); i += 11) {
                 fs[i][60 + i % 30] ^= 0x40;
                 fs[i][40] = fs[i][41] = 0;
             }
         }},
    };
    for (const shape s : {shape::large, shape::small}) {
        for (const alteration& alt : alterations) {
            for (const std::size_t burst : {std::size_t{32}, std::size_t{6}}) {
                SCOPED_TRACE(std::string(s == shape::large ? "large" : "small") + " messages, " +
                             alt.name + ", bursts of " + std::to_string(burst));
                const std::size_t delivered = compare_receivers(alt.apply, burst, s);
                if (std::string(alt.name) == "as sent") {
                    EXPECT_EQ(delivered, s == shape::large ? 8u : small_messages);
                }
            }
        }
    }
}

// A target with answers in ACKs whose requests are never answered: every ACK announces the
// answers it still owes, until there is no room to owe more (max_pending_messages announced);
// from then on each request is dropped (no_rx_buffer) until an answer goes. A burst of
// one-packet messages must be refused then, as each of its frames is alone.
TEST(receive_burst, one_packet_messages_without_room_to_owe_answers_as_frame_by_frame) {
    const std::size_t delivered = compare_receivers([](frame_list&) {}, 32, shape::small,
                                                    [](engine_config& c) {
                                                        c.answers_in_acks = true;
                                                        c.max_pending_messages = 8;
                                                    });
    EXPECT_GT(delivered, 0u);
    EXPECT_LT(delivered, small_messages);  // the room ran out
}

// Random alterations: a header byte changed (the IPv4 checksum mended or not, the UDP checksum
// taken out), frames lost, repeated and swapped, in random bursts.
TEST(receive_burst, randomly_altered_bursts_answer_as_frame_by_frame) {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        rng r(seed);
        auto alter = [&](frame_list& fs) {
            frame_list out;
            for (auto& f : fs) {
                if (r.bernoulli(0.03)) continue;
                if (r.bernoulli(0.05)) {
                    // Within the 98 header bytes of a data packet (control frames are shorter).
                    const std::size_t span = std::min<std::size_t>(84, f.size() - 14);
                    f[14 + r.uniform(span)] ^= static_cast<std::uint8_t>(1 + r.uniform(255));
                    if (r.bernoulli(0.5)) mend_ip_checksum(f);
                    f[40] = f[41] = 0;
                }
                out.push_back(f);
                if (r.bernoulli(0.03)) out.push_back(f);
                if (out.size() >= 2 && r.bernoulli(0.03))
                    std::swap(out.back(), out[out.size() - 2]);
            }
            fs.swap(out);
        };
        compare_receivers(alter, 1 + r.uniform(40), seed % 2 ? shape::large : shape::small);
        if (HasFailure()) return;
    }
}

}  // namespace
}  // namespace uet::test
