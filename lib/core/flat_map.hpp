// Fixed-capacity open-addressing hash map from a 64-bit key to a 32-bit value: linear probing
// with backward-shift deletion (no tombstones, so lookups stay short however many erases). It
// allocates once, in its constructor; insert fails when full rather than growing, which is what
// a per-core engine wants from a table sized by configuration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/prefetch.hpp"

namespace uet::pds {

class flat_map {
  public:
    // Room for at least `capacity` keys at a load factor of 1/2 or less.
    explicit flat_map(std::size_t capacity) {
        std::size_t n = 16;
        while (n < capacity * 2)
            n <<= 1;
        slots_.resize(n);
        mask_ = n - 1;
        limit_ = capacity;
    }

    std::optional<std::uint32_t> find(std::uint64_t key) const noexcept {
        for (std::size_t i = home(key);; i = (i + 1) & mask_) {
            const slot& s = slots_[i];
            if (!s.used) return std::nullopt;
            if (s.key == key) return s.value;
        }
    }

    // Inserts or overwrites; false only when the map holds `capacity` keys already.
    bool insert(std::uint64_t key, std::uint32_t value) noexcept {
        std::size_t i = home(key);
        for (;; i = (i + 1) & mask_) {
            if (!slots_[i].used) break;
            if (slots_[i].key == key) {
                slots_[i].value = value;
                return true;
            }
        }
        if (size_ >= limit_) return false;
        slots_[i] = slot{key, value, true};
        ++size_;
        return true;
    }

    bool erase(std::uint64_t key) noexcept {
        std::size_t i = home(key);
        for (;; i = (i + 1) & mask_) {
            if (!slots_[i].used) return false;
            if (slots_[i].key == key) break;
        }
        // Shift later members of the probe run back so no lookup meets a hole before its key.
        for (std::size_t j = (i + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
            const std::size_t h = home(slots_[j].key);
            const bool movable = ((j - h) & mask_) >= ((j - i) & mask_);
            if (movable) {
                slots_[i] = slots_[j];
                i = j;
            }
        }
        slots_[i].used = false;
        --size_;
        return true;
    }

    // Starts loading key's first slot, for a key the caller will insert or erase soon. The maps
    // keyed by message id see one random slot per message, a cache miss the small-message
    // sender would wait for on every map operation, while the next id of a stream is known a
    // whole message ahead.
    void prefetch(std::uint64_t key) const noexcept { prefetch_line(&slots_[home(key)]); }

    std::size_t size() const noexcept { return size_; }
    std::size_t capacity() const noexcept { return limit_; }

  private:
    struct slot {
        std::uint64_t key = 0;
        std::uint32_t value = 0;
        bool used = false;
    };

    std::size_t home(std::uint64_t key) const noexcept {
        key ^= key >> 33;
        key *= 0xff51afd7ed558ccdull;
        key ^= key >> 33;
        return static_cast<std::size_t>(key) & mask_;
    }

    std::vector<slot> slots_;
    std::size_t mask_ = 0;
    std::size_t limit_ = 0;
    std::size_t size_ = 0;
};

}  // namespace uet::pds
