// Hierarchical timing wheel for nanosecond deadlines, driven by the time the caller passes in.
//
// Geometry: 4 levels of 256 slots. Level 0 slots are one tick wide (tick_ns, default 1 us);
// level l slots are 256^l ticks wide, so the wheel spans 2^32 ticks (~71 minutes at 1 us).
// Later deadlines wait in an overflow list that is folded in as time approaches them.
// Timers are intrusive nodes the owner embeds; the wheel never allocates. schedule, cancel and
// reschedule are O(1). advance() walks only to ticks that hold timers (occupancy bitmaps), so a
// jump of hours of virtual time over an empty wheel costs a few steps.
//
// Guarantees:
//  - a timer never fires before its deadline: advance(now) fires exactly the timers whose
//    deadline <= now;
//  - timers fire in (deadline, schedule order) order within each tick, and ticks in order;
//  - handlers may schedule, reschedule and cancel any timer, the one firing included. A timer
//    (re)armed from a handler with a deadline <= now fires within the same advance(), after the
//    batch already being fired; so a handler must not re-arm at <= now forever;
//  - after advance(now) returns, no scheduled timer has a deadline <= now.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace uet {

class timer_wheel;

// Embedded by the owner of a timer. The wheel links it into its lists; it must not be destroyed
// while scheduled (cancel it first). Copying yields an unscheduled node with the same cookie, so
// owners stay copyable; a scheduled node's links are never copied.
struct timer_node {
    std::uint64_t cookie = 0;  // owner's dispatch key; the wheel never reads it

    timer_node() noexcept = default;
    explicit timer_node(std::uint64_t c) noexcept : cookie(c) {}
    timer_node(const timer_node& o) noexcept : cookie(o.cookie) {}
    timer_node& operator=(const timer_node& o) noexcept {
        cookie = o.cookie;
        return *this;
    }

    bool scheduled() const noexcept { return list_ != no_list; }
    // The deadline it was last scheduled for (meaningful while scheduled or inside its handler).
    std::uint64_t deadline() const noexcept { return deadline_; }

  private:
    friend class timer_wheel;
    static constexpr std::uint16_t no_list = 0xffff;

    timer_node* next_ = nullptr;
    timer_node* prev_ = nullptr;
    std::uint64_t deadline_ = 0;
    std::uint64_t seq_ = 0;  // schedule order: breaks deadline ties first-scheduled-first
    std::uint16_t list_ = no_list;
};

class timer_wheel {
  public:
    static constexpr unsigned level_bits = 8;
    static constexpr unsigned levels = 4;
    static constexpr unsigned slots_per_level = 1u << level_bits;
    static constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();

    // tick_ns: width of a level-0 slot (0 is taken as 1). start_ns: the current time; deadlines
    // far beyond start_ns + span land in the overflow list until time gets closer.
    explicit timer_wheel(std::uint64_t tick_ns = 1000, std::uint64_t start_ns = 0) noexcept;
    // Does not touch the nodes (owners often destroy them first). Nodes that outlive the wheel
    // while scheduled keep reporting scheduled(): call clear() first if that matters.
    ~timer_wheel() = default;
    timer_wheel(const timer_wheel&) = delete;
    timer_wheel& operator=(const timer_wheel&) = delete;

    // Arms n for deadline_ns, moving it if it is already scheduled. A deadline that has already
    // passed fires on the next advance(). O(1).
    void schedule(timer_node& n, std::uint64_t deadline_ns) noexcept;
    void reschedule(timer_node& n, std::uint64_t deadline_ns) noexcept { schedule(n, deadline_ns); }
    // Returns whether n was scheduled. O(1).
    bool cancel(timer_node& n) noexcept;
    // Unschedules everything.
    void clear() noexcept;

    // Fires on_expire(timer_node&) for every timer with deadline <= now (the node is already
    // unscheduled when the handler runs). Returns how many fired. Not re-entrant: a handler must
    // not call advance().
    template <class Handler>
    std::size_t advance(std::uint64_t now, Handler&& on_expire);

    // A lower bound of the earliest deadline, never later than it: exact when that timer sits in
    // level 0 (due within 256 ticks), the start of its slot otherwise; the last answer while it
    // is still a bound (a cancel leaves it early) and not yet passed by advance(). never when
    // empty.
    std::uint64_t next_deadline() const noexcept;

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    std::uint64_t tick_ns() const noexcept { return tick_ns_; }

  private:
    static constexpr std::uint16_t wheel_lists = levels * slots_per_level;
    static constexpr std::uint16_t overflow_list = wheel_lists;
    static constexpr std::uint16_t firing_list = wheel_lists + 1;
    static constexpr std::uint16_t list_count = wheel_lists + 2;
    static constexpr std::uint64_t span_ticks = std::uint64_t{1} << (levels * level_bits);
    static constexpr std::uint64_t top_slot_ticks = span_ticks >> level_bits;

    std::uint64_t tick_of(std::uint64_t deadline) const noexcept { return deadline / tick_ns_; }
    bool within_span(std::uint64_t tick) const noexcept {
        return tick <= base_ || tick - base_ < span_ticks;
    }
    static bool fires_before(const timer_node& a, const timer_node& b) noexcept {
        return a.deadline_ < b.deadline_ || (a.deadline_ == b.deadline_ && a.seq_ < b.seq_);
    }
    static timer_node* merge(timer_node* a, timer_node* b) noexcept;
    void place(timer_node& n) noexcept;
    void link(timer_node& n, std::uint16_t list) noexcept;
    void unlink(timer_node& n) noexcept;
    void set_occupied(std::uint16_t list, bool on) noexcept;
    std::size_t find_next(unsigned level, unsigned start) const noexcept;
    std::uint64_t next_event_tick(std::uint64_t target) const noexcept;
    // next_event_tick(never), kept between calls: most advances move time by a tick or two with
    // nothing due, and a scan of four levels' bitmaps on each would find the same answer again.
    std::uint64_t next_event() noexcept {
        if (next_event_ <= base_) next_event_ = next_event_tick(never);
        return next_event_;
    }
    // A timer placed at `tick` may bring the next event forward (place() calls it).
    void note_event(std::uint64_t tick) noexcept { next_event_ = std::min(next_event_, tick); }
    void arrive(std::uint64_t tick) noexcept;
    void cascade(std::uint16_t list) noexcept;
    void fold_overflow() noexcept;
    void take_all() noexcept;
    bool take_due(std::uint64_t now) noexcept;
    void load_firing(timer_node* chain) noexcept;
    timer_node* pop_firing() noexcept;
    std::uint64_t slot_min(std::uint16_t list) const noexcept;
    std::uint64_t scan_next_deadline() const noexcept;

    std::uint64_t tick_ns_;
    std::uint64_t base_;  // current tick: every earlier level-0 slot has been emptied
    std::uint64_t seq_ = 0;
    std::size_t size_ = 0;
    std::uint64_t overflow_min_tick_ = never;  // lower bound (may be stale-low after cancels)
    // The first tick after base_ at which something happens (a level-0 slot's timers, an
    // occupied higher slot's cascade, the overflow's fold), or at most that: cancels only make
    // it early, which costs a recount. Stale (recounted) once base_ reaches it.
    std::uint64_t next_event_ = 0;
    std::array<timer_node*, list_count> heads_{};
    std::array<std::array<std::uint64_t, slots_per_level / 64>, levels> occupied_{};
    // next_deadline()'s last answer, kept while it is still a lower bound: scheduling lowers it
    // to the new deadline, cancels and firings only raise the true minimum. Once advance() has
    // passed it (nothing at or before that time is left) it is recounted; 0, never past
    // advanced_to_, is "not known". A busy sender's poll loop asks on every poll (whether the
    // engine has anything due), too often to scan four levels' bitmaps each time.
    mutable std::uint64_t deadline_bound_ = 0;
    std::uint64_t advanced_to_ = 0;  // the latest advance(now)
};

template <class Handler>
std::size_t timer_wheel::advance(std::uint64_t now, Handler&& on_expire) {
    std::size_t fired = 0;
    auto fire_all = [&] {
        while (timer_node* n = pop_firing()) {
            ++fired;
            on_expire(*n);
        }
    };
    const std::uint64_t target = tick_of(now);
    // Whole ticks before target: everything in them is due. The slot is detached before the
    // wheel moves on, so handlers schedule relative to the new position.
    while (base_ < target) {
        take_all();
        arrive(std::min(next_event(), target));
        fire_all();
    }
    // The target tick only partly: its timers up to now. Repeat for timers handlers re-armed.
    while (take_due(now))
        fire_all();
    advanced_to_ = std::max(advanced_to_, now);
    return fired;
}

}  // namespace uet
