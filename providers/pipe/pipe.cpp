#include "pipe/pipe.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "pipe/frame_edit.hpp"

namespace uet::pipe {

namespace {

constexpr std::uint32_t never_count = std::numeric_limits<std::uint32_t>::max();

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) noexcept {
    return a > link::none - b ? link::none : a + b;
}

// Serialisation time in picoseconds, rounded to the nearest (1 Gb/s = 1 bit per ns).
std::uint64_t wire_ps(std::size_t bytes, double rate_gbps) noexcept {
    const double ps = std::round(static_cast<double>(bytes) * 8000.0 / rate_gbps);
    return ps < 1e18 ? static_cast<std::uint64_t>(ps) : std::uint64_t{1'000'000'000'000'000'000};
}

}  // namespace

link::link(const impairments& imp, std::uint64_t seed, std::size_t max_frames_in_flight,
           std::size_t max_frame_size)
    : imp_(imp),
      max_frame_(std::max<std::size_t>(max_frame_size, 1)),
      buffers_(std::make_unique_for_overwrite<std::uint8_t[]>(
          std::max<std::size_t>(max_frames_in_flight, 1) * max_frame_)),
      meta_(std::max<std::size_t>(max_frames_in_flight, 1)),
      departures_(meta_.size()) {
    free_.reserve(meta_.size());
    for (std::size_t i = meta_.size(); i-- > 0;)
        free_.push_back(static_cast<std::uint32_t>(i));
    heap_.reserve(meta_.size());
    // One generator per impairment, so enabling one does not shift the draws of another.
    std::uint64_t state = seed;
    for (rng* r : {&loss_rng_, &burst_rng_, &reorder_rng_, &dup_rng_, &corrupt_rng_, &trim_rng_,
                   &ecn_rng_}) {
        r->reseed(splitmix64(state));
    }
}

void link::send(std::span<const std::uint8_t> frame, std::uint64_t now) noexcept {
    ++stats_.sent;
    if (frame.size() > max_frame_) {
        ++stats_.oversized;
        return;
    }
    if (!imp_.failed_source_ports.empty() && on_failed_path(frame)) {
        ++stats_.path_failed;
        return;
    }
    std::uint64_t arrival = 0;
    if (!serialise(frame.size(), now, arrival)) {
        ++stats_.queue_dropped;
        return;
    }
    if (lose()) return;
    const std::uint32_t s = store(frame);
    if (s == no_slot) {
        ++stats_.queue_dropped;
        return;
    }
    mangle(s);
    const bool hold = reorder_rng_.bernoulli(imp_.reorder);
    std::uint32_t countdown = 0;
    if (hold) {
        ++stats_.reordered;
        const std::uint32_t max = imp_.reorder_max_distance;
        countdown = max ? static_cast<std::uint32_t>(reorder_rng_.between(1, max)) : never_count;
    }
    const bool dup = dup_rng_.bernoulli(imp_.duplicate);
    enqueue(s, arrival, hold, countdown);
    if (dup) {
        const std::uint32_t c = store({data(s), meta_[s].length});
        if (c != no_slot) {
            ++stats_.duplicated;
            enqueue(c, arrival, hold, countdown);
        }
    }
    if (!hold) pass_held(arrival);
}

// FIFO serialisation at rate_gbps; false means tail drop. The link's free time is kept in ns
// plus picoseconds so that back-to-back frames add up exactly at any rate.
bool link::serialise(std::size_t bytes, std::uint64_t now, std::uint64_t& arrival) noexcept {
    if (!(imp_.rate_gbps > 0)) {
        arrival = add_sat(now, imp_.delay_ns);
        return true;
    }
    while (dep_count_ && departures_[dep_head_] <= now) {
        dep_head_ = (dep_head_ + 1) % departures_.size();
        --dep_count_;
    }
    if (imp_.queue_limit && dep_count_ >= imp_.queue_limit) return false;
    if (dep_count_ == departures_.size()) return false;
    if (now > link_free_ns_ || (now == link_free_ns_ && link_free_ps_ == 0)) {
        link_free_ns_ = now;
        link_free_ps_ = 0;
    }
    const std::uint64_t total_ps = link_free_ps_ + wire_ps(bytes, imp_.rate_gbps);
    link_free_ns_ = add_sat(link_free_ns_, total_ps / 1000);
    link_free_ps_ = static_cast<std::uint32_t>(total_ps % 1000);
    const std::uint64_t departure = add_sat(link_free_ns_, link_free_ps_ ? 1 : 0);
    departures_[(dep_head_ + dep_count_) % departures_.size()] = departure;
    ++dep_count_;
    arrival = add_sat(departure, imp_.delay_ns);
    return true;
}

bool link::on_failed_path(std::span<const std::uint8_t> frame) const noexcept {
    const frame_layout l = locate(frame);
    if (!l.is_udp()) return false;
    const auto port = static_cast<std::uint16_t>(frame[l.udp] << 8 | frame[l.udp + 1]);
    return std::find(imp_.failed_source_ports.begin(), imp_.failed_source_ports.end(), port) !=
           imp_.failed_source_ports.end();
}

// Gilbert-Elliott: the state moves first, then a bad state loses the frame; independent loss
// applies on top.
bool link::lose() noexcept {
    if (burst_bad_) {
        if (burst_rng_.bernoulli(imp_.burst_exit)) burst_bad_ = false;
    } else if (burst_rng_.bernoulli(imp_.burst_enter)) {
        burst_bad_ = true;
    }
    if (burst_bad_) {
        ++stats_.lost;
        ++stats_.burst_lost;
        return true;
    }
    if (loss_rng_.bernoulli(imp_.loss)) {
        ++stats_.lost;
        return true;
    }
    return false;
}

std::uint32_t link::store(std::span<const std::uint8_t> frame) noexcept {
    if (free_.empty()) return no_slot;
    const std::uint32_t s = free_.back();
    free_.pop_back();
    if (!frame.empty()) std::memcpy(data(s), frame.data(), frame.size());
    meta_[s].length = static_cast<std::uint32_t>(frame.size());
    return s;
}

// What switches on the path do to the bytes: ECN marking, trimming, else corruption.
void link::mangle(std::uint32_t s) noexcept {
    const std::span<std::uint8_t> f(data(s), meta_[s].length);
    if (ecn_rng_.bernoulli(imp_.ecn_mark) && mark_ce(f)) ++stats_.ecn_marked;
    if (trim_rng_.bernoulli(imp_.trim)) {
        if (std::size_t n = trim_frame(f, imp_.trim_to, imp_.trim_dscp)) {
            meta_[s].length = static_cast<std::uint32_t>(n);
            ++stats_.trimmed;
            return;  // UDP checksum is 0 now: a flipped bit could not be detected
        }
    }
    if (corrupt_rng_.bernoulli(imp_.corrupt) && flip_bit(f, corrupt_rng_)) ++stats_.corrupted;
}

// A held frame goes into the heap at its latest release time (arrival + max hold) and on the
// held list; pass_held() pulls it forward once enough later frames have gone by.
void link::enqueue(std::uint32_t s, std::uint64_t arrival, bool hold,
                   std::uint32_t countdown) noexcept {
    slot_meta& m = meta_[s];
    m.seq = seq_++;
    m.held = hold;
    m.arrival = arrival;
    if (hold) {
        m.natural_arrival = arrival;
        m.arrival = add_sat(arrival, imp_.reorder_max_hold_ns);
        m.countdown = countdown;
        m.held_prev = held_tail_;
        m.held_next = no_slot;
        if (held_tail_ != no_slot) {
            meta_[held_tail_].held_next = s;
        } else {
            held_head_ = s;
        }
        held_tail_ = s;
    }
    heap_push(s);
}

// A frame that was not held has just been sent: it passes every held frame.
void link::pass_held(std::uint64_t arrival) noexcept {
    for (std::uint32_t h = held_head_; h != no_slot;) {
        const std::uint32_t next = meta_[h].held_next;
        slot_meta& m = meta_[h];
        if (m.countdown != never_count && --m.countdown == 0) release_held(h, arrival);
        h = next;
    }
}

// Delivered right after the frame that arrives at after_arrival (the next sequence number),
// but never before its own arrival nor after its hold limit.
void link::release_held(std::uint32_t s, std::uint64_t after_arrival) noexcept {
    unlink_held(s);
    slot_meta& m = meta_[s];
    m.arrival = std::min(std::max(m.natural_arrival, after_arrival), m.arrival);
    m.seq = seq_++;
    heap_fix(m.heap_pos);
}

void link::unlink_held(std::uint32_t s) noexcept {
    slot_meta& m = meta_[s];
    if (m.held_prev != no_slot) {
        meta_[m.held_prev].held_next = m.held_next;
    } else {
        held_head_ = m.held_next;
    }
    if (m.held_next != no_slot) {
        meta_[m.held_next].held_prev = m.held_prev;
    } else {
        held_tail_ = m.held_prev;
    }
    m.held_prev = m.held_next = no_slot;
    m.held = false;
}

std::uint32_t link::pop_due(std::uint64_t now) noexcept {
    if (heap_.empty() || meta_[heap_[0]].arrival > now) return no_slot;
    const std::uint32_t s = heap_pop();
    if (meta_[s].held) unlink_held(s);  // released by its hold limit
    ++stats_.delivered;
    return s;
}

std::uint64_t link::next_arrival() const noexcept {
    return heap_.empty() ? none : meta_[heap_[0]].arrival;
}

// ---- binary min-heap of slots by (arrival, seq), with positions for decrease-key ----

bool link::heap_less(std::uint32_t a, std::uint32_t b) const noexcept {
    const slot_meta& x = meta_[a];
    const slot_meta& y = meta_[b];
    return x.arrival < y.arrival || (x.arrival == y.arrival && x.seq < y.seq);
}

void link::heap_set(std::uint32_t pos, std::uint32_t s) noexcept {
    heap_[pos] = s;
    meta_[s].heap_pos = pos;
}

void link::heap_push(std::uint32_t s) noexcept {
    heap_.push_back(s);  // capacity reserved: every slot is in the heap at most once
    heap_fix(static_cast<std::uint32_t>(heap_.size() - 1));
}

void link::heap_fix(std::uint32_t pos) noexcept {
    const std::uint32_t s = heap_[pos];
    while (pos > 0) {
        const std::uint32_t parent = (pos - 1) / 2;
        if (!heap_less(s, heap_[parent])) break;
        heap_set(pos, heap_[parent]);
        pos = parent;
    }
    const auto n = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
        std::uint32_t child = 2 * pos + 1;
        if (child >= n) break;
        if (child + 1 < n && heap_less(heap_[child + 1], heap_[child])) ++child;
        if (!heap_less(heap_[child], s)) break;
        heap_set(pos, heap_[child]);
        pos = child;
    }
    heap_set(pos, s);
}

std::uint32_t link::heap_pop() noexcept {
    const std::uint32_t top = heap_[0];
    const std::uint32_t last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
        heap_set(0, last);
        heap_fix(0);
    }
    return top;
}

}  // namespace uet::pipe
