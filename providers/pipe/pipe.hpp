// In-memory, one-direction link in virtual time with deterministic, seeded impairments: the
// test bed of the protocol core and the simulator's link model. No clock, no sleeping: send()
// and receive() take the current time in nanoseconds.
//
// Path of a frame through send(frame, now):
//  1. serialisation (rate_gbps > 0): tail drop if queue_limit frames are already waiting or on
//     the wire (queue_dropped); otherwise departure = max(now, link free) + bytes * 8 / rate,
//     kept to the picosecond so rates do not drift, and arrival = ceil(departure) + delay_ns.
//     With rate 0 the frame departs at once. Frames lost later still used the link.
//  2. loss: Gilbert-Elliott (burst_enter/burst_exit; every frame in the bad state is lost) then
//     independent loss. lost counts both; burst_lost the Gilbert-Elliott part.
//  3. a copy goes into a preallocated slot (pool full: queue_dropped; larger than
//     max_frame_size: oversized).
//  4. ECN: an ECT(0)/ECT(1) IPv4 packet is re-marked CE with probability ecn_mark (IP checksum
//     patched).
//  5. trimming (IPv4/UDP only, see frame_edit.hpp): payload cut to trim_to, DSCP trim_dscp,
//     lengths and IP checksum fixed, UDP checksum 0.
//  6. corruption (frames not trimmed): one bit of the UDP payload flipped, so a non-zero UDP
//     checksum catches it (parse_l2l4 says bad_udp_checksum). Frames sent with UDP checksum 0
//     (RoCEv2) carry the flip to the receiver; the ICRC is what catches it there.
//  7. reordering: with probability reorder the frame is held back until k later frames have been
//     sent (k uniform in [1, reorder_max_distance]), and is then delivered right after the k-th;
//     or, at the latest, reorder_max_hold_ns after its own arrival time. Later frames that were
//     themselves held do not count towards k, so with overlapping holds the observed distance
//     can exceed k. reorder_max_distance 0 means release by the hold time only.
//  8. duplication: with probability duplicate a second copy is delivered right after the first
//     (a held frame's copy is held with it).
// Every impairment draws from its own generator derived from the seed, so switching one on does
// not change which frames another one hits. Same seed and same calls: same deliveries.
//
// Counters: sent counts send() calls; delivered counts frames handed out (copies included). Once
// idle(): sent + duplicated == delivered + lost + queue_dropped + oversized + path_failed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "core/rng.hpp"

namespace uet::pipe {

struct impairments {
    double loss = 0;                                // independent drop probability
    double burst_enter = 0, burst_exit = 1;         // Gilbert-Elliott: P(good->bad), P(bad->good)
    double reorder = 0;                             // probability a packet is held back
    std::uint32_t reorder_max_distance = 0;         // released after k in [1, max] later packets
    std::uint64_t reorder_max_hold_ns = 1'000'000;  // released at the latest after this long
    double duplicate = 0;                           // probability a packet is delivered twice
    double corrupt = 0;                             // probability one UDP payload bit is flipped
    double trim = 0;                                // probability the packet is trimmed
    std::uint16_t trim_to = 64;                     // UDP payload bytes kept by a trim
    std::uint8_t trim_dscp = 0x3b;                  // DSCP a trimmed packet is re-marked with
    std::uint64_t delay_ns = 0;                     // propagation delay
    double rate_gbps = 0;                           // serialisation rate; 0 = infinite
    std::uint32_t queue_limit = 0;                  // frames waiting or on the wire; 0 = unlimited
    double ecn_mark = 0;                            // probability an ECT packet is re-marked CE
    // UDP source ports whose frames are all lost, as on an ECMP path through a failed link.
    std::vector<std::uint16_t> failed_source_ports;
};

struct stats {
    std::uint64_t sent = 0, delivered = 0, lost = 0, burst_lost = 0, reordered = 0, duplicated = 0,
                  corrupted = 0, trimmed = 0, ecn_marked = 0, queue_dropped = 0;
    std::uint64_t oversized = 0;    // frames longer than max_frame_size (dropped)
    std::uint64_t path_failed = 0;  // lost on a failed path (impairments::failed_source_ports)
};

class link {
  public:
    static constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();

    // Allocates everything up front: max_frames_in_flight slots of max_frame_size bytes (memory
    // the kernel maps lazily: only slots actually used are touched, and the free list is LIFO).
    link(const impairments& imp, std::uint64_t seed, std::size_t max_frames_in_flight = 65536,
         std::size_t max_frame_size = 9216);
    link(const link&) = delete;
    link& operator=(const link&) = delete;
    link(link&&) noexcept = default;
    link& operator=(link&&) noexcept = default;

    // Takes a copy of the frame (no allocation). now must not go backwards.
    void send(std::span<const std::uint8_t> frame, std::uint64_t now) noexcept;

    // Hands every frame whose arrival time <= now to deliver(std::span<const std::uint8_t>),
    // in arrival order (ties in send order); the view is valid during the call. deliver may
    // call send() on this link. Returns the number delivered.
    template <class F>
    std::size_t receive(std::uint64_t now, F&& deliver);

    std::uint64_t next_arrival() const noexcept;  // none when nothing is in flight
    bool idle() const noexcept { return heap_.empty(); }
    const stats& counters() const noexcept { return stats_; }
    const impairments& current() const noexcept { return imp_; }
    std::size_t in_flight() const noexcept { return heap_.size(); }
    // Changes the impairments from now on (e.g. a link slowed or failed at time t). Frames in
    // flight keep their arrival times; the Gilbert-Elliott state and held frames carry over.
    void set_impairments(const impairments& imp) { imp_ = imp; }

  private:
    static constexpr std::uint32_t no_slot = std::numeric_limits<std::uint32_t>::max();

    struct slot_meta {
        std::uint64_t arrival = 0;  // heap key, with seq
        std::uint64_t seq = 0;
        std::uint64_t natural_arrival = 0;  // held frames: arrival without the hold
        std::uint32_t length = 0;
        std::uint32_t countdown = 0;  // held frames: later frames still to let pass
        std::uint32_t heap_pos = 0;
        std::uint32_t held_prev = no_slot, held_next = no_slot;
        bool held = false;
    };

    bool serialise(std::size_t bytes, std::uint64_t now, std::uint64_t& arrival) noexcept;
    bool lose() noexcept;
    bool on_failed_path(std::span<const std::uint8_t> frame) const noexcept;
    std::uint32_t store(std::span<const std::uint8_t> frame) noexcept;
    void mangle(std::uint32_t s) noexcept;
    void enqueue(std::uint32_t s, std::uint64_t arrival, bool hold,
                 std::uint32_t countdown) noexcept;
    void pass_held(std::uint64_t arrival) noexcept;
    void release_held(std::uint32_t s, std::uint64_t after_arrival) noexcept;
    void unlink_held(std::uint32_t s) noexcept;
    std::uint32_t pop_due(std::uint64_t now) noexcept;
    void free_slot(std::uint32_t s) noexcept { free_.push_back(s); }
    std::uint8_t* data(std::uint32_t s) noexcept { return &buffers_[std::size_t{s} * max_frame_]; }

    bool heap_less(std::uint32_t a, std::uint32_t b) const noexcept;
    void heap_push(std::uint32_t s) noexcept;
    void heap_fix(std::uint32_t pos) noexcept;
    std::uint32_t heap_pop() noexcept;
    void heap_set(std::uint32_t pos, std::uint32_t s) noexcept;

    impairments imp_;
    stats stats_;
    std::size_t max_frame_;
    std::unique_ptr<std::uint8_t[]> buffers_;
    std::vector<slot_meta> meta_;
    std::vector<std::uint32_t> free_;  // LIFO stack of free slots
    std::vector<std::uint32_t> heap_;  // min-heap of slots by (arrival, seq)
    // Departure times (ns, rounded up) of frames waiting or on the wire, oldest first: a ring.
    std::vector<std::uint64_t> departures_;
    std::size_t dep_head_ = 0, dep_count_ = 0;
    std::uint32_t held_head_ = no_slot, held_tail_ = no_slot;
    std::uint64_t link_free_ns_ = 0;  // when the link finishes the frame on the wire...
    std::uint32_t link_free_ps_ = 0;  // ...plus this many picoseconds
    std::uint64_t seq_ = 0;
    bool burst_bad_ = false;
    rng loss_rng_, burst_rng_, reorder_rng_, dup_rng_, corrupt_rng_, trim_rng_, ecn_rng_;
};

template <class F>
std::size_t link::receive(std::uint64_t now, F&& deliver) {
    std::size_t n = 0;
    for (std::uint32_t s; (s = pop_due(now)) != no_slot; ++n) {
        // Frees the slot even if deliver throws.
        struct release {
            link* l;
            std::uint32_t s;
            ~release() { l->free_slot(s); }
        } guard{this, s};
        deliver(std::span<const std::uint8_t>(data(s), meta_[s].length));
    }
    return n;
}

// Two links, one per direction, seeded differently.
struct duplex {
    duplex(const impairments& imp, std::uint64_t seed, std::size_t max_frames_in_flight = 65536,
           std::size_t max_frame_size = 9216)
        : duplex(imp, imp, seed, max_frames_in_flight, max_frame_size) {}
    duplex(const impairments& a_to_b_imp, const impairments& b_to_a_imp, std::uint64_t seed,
           std::size_t max_frames_in_flight = 65536, std::size_t max_frame_size = 9216)
        : a_to_b(a_to_b_imp, seed, max_frames_in_flight, max_frame_size),
          b_to_a(b_to_a_imp, seed ^ 0x5bd1e9955bd1e995ull, max_frames_in_flight, max_frame_size) {}

    link a_to_b, b_to_a;
};

}  // namespace uet::pipe
