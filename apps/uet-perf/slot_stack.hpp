// The free tx or rx slots of a run: a stack of slot numbers of fixed capacity. Unlike a vector it
// never grows, so its push has no growing path: the completion handler that pushes a slot for every
// message stays a leaf without a stack frame (a vector's inlined reallocation path would make it
// save registers on every call). A push on a full stack is refused: more slots freed than were
// taken means a completion came twice, which the caller reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace uet::perf {

class slot_stack {
  public:
    // Room for n slots; empties the stack.
    void reserve(std::size_t n) {
        if (n > capacity_) {
            slots_ = std::make_unique<std::uint32_t[]>(n);
            capacity_ = n;
        }
        size_ = 0;
    }
    [[nodiscard]] bool push_back(std::uint32_t slot) noexcept {
        if (size_ == capacity_) return false;
        slots_[size_++] = slot;
        return true;
    }
    std::uint32_t back() const noexcept { return slots_[size_ - 1]; }
    void pop_back() noexcept { --size_; }
    // Drops the last `n` slots (n <= size()): those a list just took from data()'s end.
    void drop(std::size_t n) noexcept { size_ -= n; }
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }
    const std::uint32_t* data() const noexcept { return slots_.get(); }
    std::uint32_t operator[](std::size_t i) const noexcept { return slots_[i]; }

  private:
    std::unique_ptr<std::uint32_t[]> slots_;
    std::size_t size_ = 0, capacity_ = 0;
};

}  // namespace uet::perf
