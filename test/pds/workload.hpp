// A message workload between two engines over an impaired duplex, checked end to end: every
// message is identified by its message_id (posted in order from 0), its bytes are a known window
// of a shared pattern, so the receiver can tell delivered / duplicated / corrupted / out of order
// without the sender keeping per-message buffers.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "harness.hpp"

namespace uet::test {

inline const std::vector<std::uint8_t>& pattern() {
    static const std::vector<std::uint8_t> p = [] {
        std::vector<std::uint8_t> v((16u << 20) + 256);
        rng r(0x5eed);
        for (auto& b : v)
            b = static_cast<std::uint8_t>(r.next_u64());
        return v;
    }();
    return p;
}

inline std::span<const std::uint8_t> message_bytes(std::size_t seq, std::uint32_t size) {
    return {pattern().data() + seq % 251, size};
}

// Mostly small, some medium, a few up to 1 MiB; UUD stays within one packet.
inline std::vector<std::uint32_t> mixed_sizes(std::size_t n, std::uint64_t seed,
                                              std::uint32_t one_packet_limit) {
    rng r(seed);
    std::vector<std::uint32_t> sizes(n);
    for (auto& s : sizes) {
        if (one_packet_limit) {
            s = static_cast<std::uint32_t>(r.between(1, one_packet_limit));
            continue;
        }
        const auto pick = r.uniform(100);
        if (pick < 70)
            s = static_cast<std::uint32_t>(r.between(1, 512));
        else if (pick < 90)
            s = static_cast<std::uint32_t>(r.between(513, 16384));
        else if (pick < 98)
            s = static_cast<std::uint32_t>(r.between(16385, 131072));
        else
            s = static_cast<std::uint32_t>(r.between(131073, 1u << 20));
    }
    return sizes;
}

inline engine_config endpoint_config(std::uint8_t host, std::uint64_t seed) {
    engine_config c;
    c.mac = {{0x02, 0, 0, 0, 0, host}};
    c.ip = 0x0a000000u | host;
    c.seed = seed;
    return c;
}

// A named set of link impairments.
struct impairment_cell {
    const char* name;
    pipe::impairments imp;
};

// A 2 us link with what f sets.
template <class F>
pipe::impairments impaired(F f) {
    pipe::impairments i;
    i.delay_ns = 2'000;
    f(i);
    return i;
}

struct workload {
    delivery_mode mode = delivery_mode::rud;
    pipe::impairments imp;
    std::vector<std::uint32_t> sizes;
    std::uint64_t seed = 1;
    std::size_t wave = 100;               // messages posted together
    std::uint64_t wave_gap_ns = 300'000;  // between waves (PDCs close in the gaps)
    std::size_t max_outstanding = 0;      // 0: post waves by time only
    std::uint64_t deadline_ns = 30'000'000'000ull;
    engine_config a_cfg = endpoint_config(1, 11);
    engine_config b_cfg = endpoint_config(2, 22);
    // RMA WRITEs, each to its own range of a target region that b's delivery_target::place_write
    // hands out, instead of SENDs (not UUD).
    bool writes = false;
    std::size_t burst = 0;           // harness::burst: arrivals by receive_burst
    std::uint64_t* trace = nullptr;  // harness::trace
    std::size_t tx_room = 0;         // harness::tx_room
    bool rooms = false;              // harness::rooms
};

// The target region of a workload's WRITEs.
struct write_target final : delivery_target {
    std::vector<std::uint8_t> memory;
    bool places_writes() const noexcept override { return true; }
    std::uint8_t* place_write(std::uint32_t, const ses::op_fields& f, std::uint32_t offset,
                              std::uint32_t length) noexcept override {
        write_target& t = *this;
        const std::size_t size = t.memory.size();
        if (f.buffer_offset > size || f.request_length > size - f.buffer_offset ||
            offset > f.request_length || length > f.request_length - offset)
            return nullptr;
        return t.memory.data() + f.buffer_offset + offset;
    }
};

struct outcome {
    std::size_t expected = 0, delivered = 0, duplicates = 0, corrupted = 0, out_of_order = 0;
    std::size_t completed = 0, failed = 0;
    bool finished = false;   // everything completed before the deadline
    bool quiescent = false;  // afterwards every PDC closed on both sides
    std::uint64_t virtual_ns = 0;
    double wall_ms = 0;
    engine_counters a, b;
    pipe::stats ab, ba;
};

inline outcome run(const workload& w) {
    const auto start = std::chrono::steady_clock::now();
    write_target target;
    std::vector<std::uint64_t> write_at(w.sizes.size() + 1, 0);
    engine_config a_cfg = w.a_cfg, b_cfg = w.b_cfg;
    // Frame by frame: no run taken whole, should receive() ever read bursts of one.
    a_cfg.rx_batches = b_cfg.rx_batches = w.burst != 0;
    if (w.writes) {
        for (std::size_t i = 0; i < w.sizes.size(); ++i)
            write_at[i + 1] = write_at[i] + w.sizes[i];
        target.memory.assign(write_at.back(), 0);
        b_cfg.deliver_to = &target;
    }
    engine a(a_cfg), b(b_cfg);
    // Enough slots for a full window plus go-back-N resends and ACKs; frames up to mtu + headers.
    pipe::duplex net(w.imp, w.seed, 8192, w.a_cfg.mtu_payload + 256);
    harness h(a, b, net);
    h.burst = w.burst;
    h.trace = w.trace;
    h.tx_room = w.tx_room;
    h.rooms = w.rooms;
    const peer_id to_b = a.add_peer(w.b_cfg.mac, w.b_cfg.ip);
    const std::size_t n = w.sizes.size();
    outcome out;
    out.expected = n;
    std::vector<std::uint8_t> seen(n, 0);
    std::size_t posted = 0, next_in_order = 0;
    std::uint64_t next_wave = 0;
    std::vector<send_completion> done(256);

    auto post_some = [&] {
        std::size_t budget = w.wave;
        while (posted < n && budget-- > 0) {
            if (w.max_outstanding && posted - out.completed - out.failed >= w.max_outstanding)
                break;
            ses_fields write;
            write.opcode = wire::ses_opcode::write;
            write.buffer_offset = write_at[posted];
            const auto bytes = message_bytes(posted, w.sizes[posted]);
            const auto st = w.writes ? a.post_message(to_b, w.mode, write, bytes, posted)
                                     : a.post_send(to_b, w.mode, bytes, posted);
            if (!st.ok()) break;
            ++posted;
        }
    };
    auto drain = [&] {
        received_message m;
        while (b.poll_received(m)) {
            const std::size_t id = m.message_id;
            if (m.mode != w.mode || id >= n) {
                ++out.corrupted;
            } else if (seen[id]) {
                ++out.duplicates;
            } else {
                seen[id] = 1;
                ++out.delivered;
                const auto expect = message_bytes(id, w.sizes[id]);
                const std::uint8_t* got = m.data.data();
                std::size_t got_size = m.data.size();
                if (w.writes) {
                    got = target.memory.data() + write_at[id];
                    got_size = m.placed && !m.placement_failed ? w.sizes[id] : 0;
                }
                if (got_size != expect.size() ||
                    (got_size != 0 && std::memcmp(got, expect.data(), expect.size()) != 0))
                    ++out.corrupted;
                if (w.mode == delivery_mode::rod && id != next_in_order) ++out.out_of_order;
                next_in_order = id + 1;
            }
            b.release(m.handle);
        }
        for (std::size_t k; (k = a.poll_send_completions(done)) > 0;)
            for (std::size_t i = 0; i < k; ++i)
                (done[i].result.ok() ? out.completed : out.failed)++;
    };
    auto all_done = [&] {
        drain();
        if (out.completed + out.failed < n) return false;
        if (w.mode == delivery_mode::uud) return net.a_to_b.idle() && net.b_to_a.idle();
        return out.delivered >= n;
    };

    while (!all_done()) {
        if (posted < n && (w.max_outstanding || h.now() >= next_wave)) {
            post_some();
            next_wave = h.now() + w.wave_gap_ns;
        }
        const bool waiting_for_wave = posted < n && !w.max_outstanding;
        const std::uint64_t limit =
            waiting_for_wave ? std::min(next_wave, w.deadline_ns) : w.deadline_ns;
        if (h.step(limit)) continue;
        if (limit >= w.deadline_ns) break;  // nothing left to happen: finished or stalled
        h.run_to(limit);
    }
    out.finished = all_done();
    out.virtual_ns = h.now();
    // Let idle PDCs close; the handshake must leave nothing open on either side.
    h.run_until([&] { return a.idle() && a.pdcs().empty() && b.pdcs().empty(); },
                h.now() + 2'000'000'000ull);
    drain();
    out.quiescent = a.idle() && a.pdcs().empty() && b.pdcs().empty();
    if (!out.quiescent && std::getenv("UET_PDS_DEBUG")) {
        for (const auto& i : a.pdcs())
            std::printf("A pdc %s init=%d id=%u remote=%u tx=%llu\n", i.state, i.initiator,
                        i.local_id, i.remote_id, (unsigned long long)i.counters.tx_packets);
        for (const auto& i : b.pdcs())
            std::printf("B pdc %s init=%d id=%u remote=%u rx=%llu\n", i.state, i.initiator,
                        i.local_id, i.remote_id, (unsigned long long)i.counters.rx_packets);
        std::printf("a idle %d now %llu\n", a.idle(), (unsigned long long)h.now());
    }
    out.a = a.counters();
    out.b = b.counters();
    out.ab = net.a_to_b.counters();
    out.ba = net.b_to_a.counters();
    out.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return out;
}

inline std::size_t env_count(const char* name, std::size_t fallback, std::size_t floor) {
    const char* v = std::getenv(name);
    if (!v) return fallback;
    const auto n = static_cast<std::size_t>(std::strtoull(v, nullptr, 10));
    return n < floor ? floor : n;
}

}  // namespace uet::test
