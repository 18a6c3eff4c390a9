// Holds of registered regions (ses::mr_table::hold) by the responses read from them, each named
// by a small index the engine carries back once the response is done with the region: the UET
// responder's read responses (responder.cpp) and the RoCE endpoint's READ responses
// (roce_rx.cpp). Sized when the endpoint is built; no allocation after that.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "api/op_pool.hpp"
#include "ses/mr_table.hpp"

namespace uet::detail {

class region_holds {
  public:
    explicit region_holds(std::uint32_t capacity) : slots_(capacity, none) {
        free_.reserve(capacity);
        for (std::uint32_t i = capacity; i-- > 0;)
            free_.push_back(i);
    }

    // The hold on the region slot `slot` that t.hold() just took (none: it found no region), or
    // none when every hold is in use; the region is then let go again.
    std::uint32_t take(ses::mr_table& t, std::uint32_t slot) noexcept {
        if (slot == none) return none;
        if (free_.empty()) {
            t.release(slot);
            return none;
        }
        const std::uint32_t h = free_.back();
        free_.pop_back();
        slots_[h] = slot;
        return h;
    }
    // Gives the region of hold h back; a hold that is not taken is ignored.
    void release(ses::mr_table& t, std::uint32_t h) noexcept {
        if (h >= slots_.size() || slots_[h] == none) return;
        t.release(std::exchange(slots_[h], none));
        free_.push_back(h);
    }
    // The engine is gone, and the responses with it.
    void release_all(ses::mr_table& t) noexcept {
        for (std::uint32_t h = 0; h < slots_.size(); ++h)
            release(t, h);
    }

  private:
    std::vector<std::uint32_t> slots_;  // per hold: the region's slot, none when free
    std::vector<std::uint32_t> free_;
};

}  // namespace uet::detail
