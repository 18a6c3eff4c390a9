#include "core/timer_wheel.hpp"

#include <algorithm>
#include <bit>

namespace uet {

namespace {

constexpr std::uint64_t max_u64 = std::numeric_limits<std::uint64_t>::max();
constexpr unsigned slot_mask = timer_wheel::slots_per_level - 1;

// block << shift, saturating instead of wrapping (deadlines near 2^64 stay "far away").
std::uint64_t shl_sat(std::uint64_t block, unsigned shift) noexcept {
    return block > (max_u64 >> shift) ? max_u64 : block << shift;
}

std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) noexcept {
    return (b != 0 && a > max_u64 / b) ? max_u64 : a * b;
}

std::uint16_t list_of(unsigned level, std::uint64_t tick) noexcept {
    const auto slot = static_cast<unsigned>(tick >> (level * timer_wheel::level_bits)) & slot_mask;
    return static_cast<std::uint16_t>(level * timer_wheel::slots_per_level + slot);
}

}  // namespace

timer_wheel::timer_wheel(std::uint64_t tick_ns, std::uint64_t start_ns) noexcept
    : tick_ns_(tick_ns ? tick_ns : 1), base_(start_ns / tick_ns_) {}

void timer_wheel::schedule(timer_node& n, std::uint64_t deadline_ns) noexcept {
    if (n.scheduled()) cancel(n);
    n.deadline_ = deadline_ns;
    n.seq_ = seq_++;
    ++size_;
    place(n);
    deadline_bound_ = std::min(deadline_bound_, deadline_ns);
}

bool timer_wheel::cancel(timer_node& n) noexcept {
    if (!n.scheduled()) return false;
    unlink(n);
    --size_;
    return true;
}

void timer_wheel::clear() noexcept {
    for (auto& head : heads_) {
        while (head) {
            unlink(*head);
        }
    }
    size_ = 0;
    overflow_min_tick_ = never;
    next_event_ = 0;
    deadline_bound_ = 0;
}

// Level by distance from the current tick, as in the classic (Varghese & Lauck) wheel: a timer
// d ticks away sits at the lowest level whose span covers d, in the slot of its own tick. It is
// cascaded one level down when the wheel reaches the start of that slot.
// The events it makes: its own tick at level 0, the start of its slot (its cascade) above.
void timer_wheel::place(timer_node& n) noexcept {
    const std::uint64_t t = tick_of(n.deadline_);
    if (t <= base_) return link(n, list_of(0, base_));  // due now (or overdue)
    const std::uint64_t d = t - base_;
    for (unsigned level = 0; level < levels; ++level) {
        if (d < (std::uint64_t{1} << ((level + 1) * level_bits))) {
            const unsigned shift = level * level_bits;
            note_event(t >> shift << shift);
            return link(n, list_of(level, t));
        }
    }
    overflow_min_tick_ = std::min(overflow_min_tick_, t);
    next_event_ = 0;  // its fold: recounted by next_event_tick
    link(n, overflow_list);
}

void timer_wheel::set_occupied(std::uint16_t list, bool on) noexcept {
    std::uint64_t& word = occupied_[list / slots_per_level][(list % slots_per_level) / 64];
    const std::uint64_t bit = std::uint64_t{1} << (list % 64);
    word = on ? (word | bit) : (word & ~bit);
}

void timer_wheel::link(timer_node& n, std::uint16_t list) noexcept {
    n.prev_ = nullptr;
    n.next_ = heads_[list];
    if (n.next_) n.next_->prev_ = &n;
    heads_[list] = &n;
    n.list_ = list;
    if (list < wheel_lists) set_occupied(list, true);
}

void timer_wheel::unlink(timer_node& n) noexcept {
    const std::uint16_t list = n.list_;
    if (n.prev_) {
        n.prev_->next_ = n.next_;
    } else {
        heads_[list] = n.next_;
    }
    if (n.next_) n.next_->prev_ = n.prev_;
    n.next_ = n.prev_ = nullptr;
    n.list_ = timer_node::no_list;
    if (heads_[list]) return;
    if (list < wheel_lists) {
        set_occupied(list, false);
    } else if (list == overflow_list) {
        overflow_min_tick_ = never;
    }
}

// Distance from slot `start` (cyclically) to the next occupied slot of a level; 256 if none.
std::size_t timer_wheel::find_next(unsigned level, unsigned start) const noexcept {
    const auto& words = occupied_[level];
    unsigned w = start / 64;
    std::uint64_t bits = words[w] & (max_u64 << (start % 64));
    // Five visits: the start word's high part, the other three, then its low part.
    for (unsigned i = 0; i < 5; ++i) {
        if (bits) {
            const unsigned slot = w * 64 + static_cast<unsigned>(std::countr_zero(bits));
            return (slot - start) & slot_mask;
        }
        w = (w + 1) % 4;
        bits = words[w];
    }
    return slots_per_level;
}

// The first tick in (base_, target] where something happens: a level-0 slot with timers, the
// cascade of an occupied higher slot, or the overflow list coming within range. Ticks skipped
// over hold nothing, and so do the higher slots whose cascades they would have triggered.
std::uint64_t timer_wheel::next_event_tick(std::uint64_t target) const noexcept {
    std::uint64_t best = target;
    if (std::size_t d = find_next(0, (base_ + 1) & slot_mask); d < slots_per_level) {
        best = std::min(best, base_ + 1 + d);
    }
    for (unsigned level = 1; level < levels; ++level) {
        const unsigned shift = level * level_bits;
        const std::uint64_t block = base_ >> shift;
        const std::size_t d = find_next(level, (block + 1) & slot_mask);
        if (d < slots_per_level) best = std::min(best, shl_sat(block + 1 + d, shift));
    }
    if (heads_[overflow_list]) {
        // Folded in at the first top-slot boundary from which it is less than the span away.
        const std::uint64_t lo =
            overflow_min_tick_ >= span_ticks ? overflow_min_tick_ - span_ticks + 1 : 0;
        const std::uint64_t from = std::max(base_ + 1, lo);
        const std::uint64_t up = from + (top_slot_ticks - 1);
        const std::uint64_t boundary = up < from ? max_u64 : up & ~(top_slot_ticks - 1);
        best = std::min(best, boundary);
    }
    return best;
}

// Moves the wheel to `tick` and performs the cascades that fall on it, top level first so that
// timers come down through every level they pass.
void timer_wheel::arrive(std::uint64_t tick) noexcept {
    base_ = tick;
    if (tick % top_slot_ticks == 0 && heads_[overflow_list] && within_span(overflow_min_tick_)) {
        fold_overflow();
    }
    for (unsigned level = levels - 1; level >= 1; --level) {
        const unsigned shift = level * level_bits;
        if ((tick & ((std::uint64_t{1} << shift) - 1)) == 0) cascade(list_of(level, tick));
    }
}

void timer_wheel::cascade(std::uint16_t list) noexcept {
    while (timer_node* n = heads_[list]) {
        unlink(*n);
        place(*n);
    }
}

// Re-places every overflow timer now within the span, and recomputes the exact minimum of the
// rest (cancels may have left the bound stale).
void timer_wheel::fold_overflow() noexcept {
    timer_node* n = heads_[overflow_list];
    std::uint64_t rest_min = never;
    while (n) {
        timer_node* next = n->next_;
        const std::uint64_t t = tick_of(n->deadline_);
        if (within_span(t)) {
            unlink(*n);
            place(*n);
        } else {
            rest_min = std::min(rest_min, t);
        }
        n = next;
    }
    overflow_min_tick_ = rest_min;
}

// Merges two chains (next_ only) sorted by (deadline, schedule order).
timer_node* timer_wheel::merge(timer_node* a, timer_node* b) noexcept {
    timer_node head;
    timer_node* tail = &head;
    while (a && b) {
        timer_node*& pick = fires_before(*b, *a) ? b : a;
        tail->next_ = pick;
        tail = pick;
        pick = pick->next_;
    }
    tail->next_ = a ? a : b;
    return head.next_;
}

// Sorts the detached chain and makes it the firing list, in order. Bottom-up merge sort with
// binary bins: no allocation, O(k log k) for a slot of k timers.
void timer_wheel::load_firing(timer_node* chain) noexcept {
    timer_node* bins[64] = {};
    while (chain) {
        timer_node* carry = chain;
        chain = chain->next_;
        carry->next_ = nullptr;
        unsigned i = 0;
        for (; bins[i]; ++i) {
            carry = merge(bins[i], carry);
            bins[i] = nullptr;
        }
        bins[i] = carry;
    }
    timer_node* sorted = nullptr;
    for (timer_node* bin : bins) {
        if (bin) sorted = merge(bin, sorted);
    }
    timer_node* prev = nullptr;
    for (timer_node* n = sorted; n; n = n->next_) {
        n->prev_ = prev;
        n->list_ = firing_list;
        prev = n;
    }
    heads_[firing_list] = sorted;
}

// Detaches the whole current level-0 slot: all of it is due when the wheel is past this tick.
void timer_wheel::take_all() noexcept {
    const std::uint16_t list = list_of(0, base_);
    timer_node* chain = heads_[list];
    if (!chain) return;
    heads_[list] = nullptr;
    set_occupied(list, false);
    load_firing(chain);
}

// Detaches the timers of the current slot with deadline <= now; false if there were none.
bool timer_wheel::take_due(std::uint64_t now) noexcept {
    const std::uint16_t list = list_of(0, base_);
    timer_node* chain = nullptr;
    for (timer_node* n = heads_[list]; n;) {
        timer_node* next = n->next_;
        if (n->deadline_ <= now) {
            unlink(*n);
            n->next_ = chain;
            chain = n;
        }
        n = next;
    }
    if (!chain) return false;
    load_firing(chain);
    return true;
}

timer_node* timer_wheel::pop_firing() noexcept {
    timer_node* n = heads_[firing_list];
    if (!n) return nullptr;
    unlink(*n);
    --size_;
    return n;
}

std::uint64_t timer_wheel::slot_min(std::uint16_t list) const noexcept {
    std::uint64_t best = never;
    for (const timer_node* n = heads_[list]; n; n = n->next_)
        best = std::min(best, n->deadline_);
    return best;
}

std::uint64_t timer_wheel::next_deadline() const noexcept {
    if (size_ == 0) return never;
    // Timers detached for firing (a handler is asking) are the earliest of all.
    if (const timer_node* f = heads_[firing_list]) return f->deadline_;
    if (deadline_bound_ > advanced_to_) return deadline_bound_;
    deadline_bound_ = scan_next_deadline();
    return deadline_bound_;
}

std::uint64_t timer_wheel::scan_next_deadline() const noexcept {
    std::uint64_t best = never;
    // Level 0 holds one tick per slot, in order from the current one: its first occupied slot
    // holds the level's minimum, found exactly.
    if (std::size_t d = find_next(0, base_ & slot_mask); d < slots_per_level) {
        best = slot_min(list_of(0, base_ + d));
    }
    // Higher levels: the start of the first occupied slot is a lower bound for all of it.
    for (unsigned level = 1; level < levels; ++level) {
        const unsigned shift = level * level_bits;
        const std::uint64_t block = base_ >> shift;
        const std::size_t d = find_next(level, (block + 1) & slot_mask);
        if (d < slots_per_level) {
            best = std::min(best, mul_sat(shl_sat(block + 1 + d, shift), tick_ns_));
        }
    }
    if (heads_[overflow_list]) best = std::min(best, mul_sat(overflow_min_tick_, tick_ns_));
    return best;
}

}  // namespace uet
