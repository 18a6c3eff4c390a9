// Indexed min-heap of (time, id) for a fixed set of ids (the fabric's ports): each id is in
// the heap at most once, and its time can be moved either way in O(log n). Keys live in the heap
// array itself and positions in a compact side array, so sifting touches only these two arrays,
// never the owners' (large) records. arity is a knob: a wider heap has fewer levels but more
// comparisons per level, and for the fabric's heaps the two cancel out. Ties are broken by id,
// which keeps runs deterministic.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace uet::netmodel {

class event_heap {
  public:
    static constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();

    explicit event_heap(std::uint32_t ids = 0) : pos_(ids, absent) {}

    bool empty() const noexcept { return heap_.empty(); }
    std::size_t size() const noexcept { return heap_.size(); }
    std::uint64_t top_time() const noexcept { return heap_.empty() ? never : heap_[0].time; }
    std::uint32_t top_id() const noexcept { return heap_[0].id; }
    std::size_t memory_bytes() const noexcept {
        return heap_.capacity() * sizeof(entry) + pos_.capacity() * sizeof(std::uint32_t);
    }

    // The ids that come to the top if the top's time moves later (its children; absent if
    // none): for prefetching what their events will touch.
    static constexpr std::uint32_t absent = std::numeric_limits<std::uint32_t>::max();
    std::uint32_t next_id(std::uint32_t k) const noexcept {
        return 1 + k < heap_.size() ? heap_[1 + k].id : absent;
    }

    // Inserts id, moves it to the new time, or (time == never) removes it.
    void set(std::uint32_t id, std::uint64_t time) noexcept {
        std::uint32_t p = pos_[id];
        if (time == never) {
            if (p != absent) remove_at(p);
            return;
        }
        if (p == absent) {
            heap_.push_back({time, id});
            up(static_cast<std::uint32_t>(heap_.size() - 1));
            return;
        }
        const bool later = time > heap_[p].time;
        heap_[p].time = time;
        later ? down(p) : up(p);
    }

  private:
    static constexpr std::uint32_t arity = 2;

    struct entry {
        std::uint64_t time;
        std::uint32_t id;
    };

    static bool less(const entry& a, const entry& b) noexcept {
        return a.time != b.time ? a.time < b.time : a.id < b.id;
    }

    void place(std::uint32_t p, const entry& e) noexcept {
        heap_[p] = e;
        pos_[e.id] = p;
    }

    void up(std::uint32_t p) noexcept {
        const entry e = heap_[p];
        while (p > 0) {
            const std::uint32_t parent = (p - 1) / arity;
            if (!less(e, heap_[parent])) break;
            place(p, heap_[parent]);
            p = parent;
        }
        place(p, e);
    }

    void down(std::uint32_t p) noexcept {
        const entry e = heap_[p];
        const auto n = static_cast<std::uint32_t>(heap_.size());
        for (;;) {
            const std::uint32_t first = arity * p + 1;
            if (first >= n) break;
            std::uint32_t child = first;
            const std::uint32_t end = first + arity < n ? first + arity : n;
            for (std::uint32_t c = first + 1; c < end; ++c)
                if (less(heap_[c], heap_[child])) child = c;
            if (!less(heap_[child], e)) break;
            place(p, heap_[child]);
            p = child;
        }
        place(p, e);
    }

    void remove_at(std::uint32_t p) noexcept {
        pos_[heap_[p].id] = absent;
        const entry last = heap_.back();
        heap_.pop_back();
        if (p == heap_.size()) return;
        place(p, last);
        up(p);
        down(pos_[last.id]);
    }

    std::vector<entry> heap_;
    std::vector<std::uint32_t> pos_;
};

}  // namespace uet::netmodel
