// The matching engine's queues: receives posted before their message, messages that arrived
// before their receive, sends deferred until a receive is posted. Each is a bounded FIFO over a
// preallocated node array (no allocation after construction); matching scans from the oldest,
// so the first posted receive that matches a message gets it, as libfabric orders them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace uet::ses {

inline constexpr std::uint32_t any_source = 0xffffffffu;

// What a receive accepts: untagged messages, or tagged ones whose tag equals `tag` in every bit
// not set in `ignore`; from one source or any.
struct match_rule {
    bool tagged = false;
    std::uint64_t tag = 0;
    std::uint64_t ignore = 0;
    std::uint32_t source = any_source;

    bool matches(bool msg_tagged, std::uint64_t msg_tag, std::uint32_t from) const noexcept {
        if (tagged != msg_tagged) return false;
        if (source != any_source && source != from) return false;
        return !tagged || ((tag ^ msg_tag) & ~ignore) == 0;
    }
};

template <class T>
class bounded_fifo {
  public:
    explicit bounded_fifo(std::size_t capacity) : nodes_(capacity), capacity_(capacity) {
        free_.reserve(capacity);
        for (std::size_t i = capacity; i-- > 0;)
            free_.push_back(static_cast<std::uint32_t>(i));
    }

    bool full() const noexcept { return free_.empty(); }
    bool empty() const noexcept { return head_ == none; }  // cheaper than size() == 0
    // capacity_ rather than nodes_.size(), which divides by sizeof(node).
    std::size_t size() const noexcept { return capacity_ - free_.size(); }

    bool push(const T& value) noexcept {
        if (free_.empty()) return false;
        const std::uint32_t i = free_.back();
        free_.pop_back();
        nodes_[i] = node{value, tail_, none};
        if (tail_ == none)
            head_ = i;
        else
            nodes_[tail_].next = i;
        tail_ = i;
        return true;
    }

    // Removes and returns the oldest element for which pred holds.
    template <class Pred>
    std::optional<T> take_first(Pred&& pred) noexcept {
        const std::uint32_t i = find_first(pred);
        if (i == none) return std::nullopt;
        T value = nodes_[i].value;
        unlink(i);
        return value;
    }

    // The oldest element for which pred holds, left in place: its node (none if there is none),
    // for at() and take_at(). A multi-receive buffer stays posted, where it was, after a match.
    template <class Pred>
    std::uint32_t find_first(Pred&& pred) const noexcept {
        for (std::uint32_t i = head_; i != none; i = nodes_[i].next)
            if (pred(nodes_[i].value)) return i;
        return none;
    }
    std::uint32_t first() const noexcept { return head_; }  // the oldest's node, or none
    const T& at(std::uint32_t node) const noexcept { return nodes_[node].value; }
    void take_at(std::uint32_t node) noexcept { unlink(node); }
    // Removes every element, oldest first, handing each to f.
    template <class F>
    void drain(F&& f) {
        while (head_ != none) {
            const std::uint32_t i = head_;
            T value = nodes_[i].value;
            unlink(i);
            f(value);
        }
    }

    static constexpr std::uint32_t none = 0xffffffffu;

  private:
    struct node {
        T value{};
        std::uint32_t prev = none, next = none;
    };

    // Once per message received (a posted receive taken).
    void unlink(std::uint32_t i) noexcept {
        node& n = nodes_[i];
        if (n.prev == none)
            head_ = n.next;
        else
            nodes_[n.prev].next = n.next;
        if (n.next == none)
            tail_ = n.prev;
        else
            nodes_[n.next].prev = n.prev;
        free_.push_back(i);
    }

    std::vector<node> nodes_;
    std::size_t capacity_;
    std::vector<std::uint32_t> free_;
    std::uint32_t head_ = none, tail_ = none;
};

// Posted receives, the tagged and the untagged apart: a message of one kind never matches a
// receive of the other (match_rule), so a message need not scan past the other kind's receives
// (an application with a tagged control receive posted first and untagged data receives behind
// it paid a step per data message; one with many tagged receives, one per receive). Order holds
// within each kind, which is all matching can see. At most `capacity` of both kinds together.
template <class T>
class receive_queues {
  public:
    explicit receive_queues(std::size_t capacity)
        : untagged_(capacity), tagged_(capacity), capacity_(capacity) {}

    std::size_t size() const noexcept { return size_; }

    bool push(bool tagged, const T& value) noexcept {
        if (size_ == capacity_ || !of(tagged).push(value)) return false;
        ++size_;
        return true;
    }

    // The oldest receive of that kind for which pred holds.
    template <class Pred>
    std::optional<T> take_first(bool tagged, Pred&& pred) noexcept {
        const std::uint32_t node = find_first(tagged, pred);
        if (node == bounded_fifo<T>::none) return std::nullopt;
        T value = at(tagged, node);
        take_at(tagged, node);
        return value;
    }

    // find_first, left in place (bounded_fifo): the node, or none.
    template <class Pred>
    std::uint32_t find_first(bool tagged, Pred&& pred) noexcept {
        return of(tagged).find_first(pred);
    }
    const T& at(bool tagged, std::uint32_t node) noexcept { return of(tagged).at(node); }
    void take_at(bool tagged, std::uint32_t node) noexcept {
        of(tagged).take_at(node);
        --size_;
    }
    // Every receive, untagged then tagged, each kind oldest first.
    template <class F>
    void drain(F&& f) {
        untagged_.drain(f);
        tagged_.drain(f);
        size_ = 0;
    }

  private:
    bounded_fifo<T>& of(bool tagged) noexcept { return tagged ? tagged_ : untagged_; }

    bounded_fifo<T> untagged_, tagged_;
    std::size_t capacity_;
    std::size_t size_ = 0;  // of both kinds (a sum of the two would be four vector sizes)
};

}  // namespace uet::ses
