#include "api/tx_memory.hpp"

#include <algorithm>

namespace uet::detail {

std::uint32_t tx_memory::add(const void* addr, std::size_t length, std::uint32_t port_region) {
    const range r{static_cast<const std::uint8_t*>(addr), length, port_region, true};
    std::uint32_t handle = 0;
    while (handle < slots_.size() && slots_[handle].live)
        ++handle;
    if (handle == slots_.size())
        slots_.push_back(r);
    else
        slots_[handle] = r;
    const auto at = std::upper_bound(
        by_addr_.begin(), by_addr_.end(), r.addr,
        [this](const std::uint8_t* a, std::uint32_t h) { return a < slots_[h].addr; });
    by_addr_.insert(at, handle);
    return handle;
}

bool tx_memory::remove(std::uint32_t handle) noexcept {
    if (handle >= slots_.size() || !slots_[handle].live) return false;
    slots_[handle].live = false;
    by_addr_.erase(std::find(by_addr_.begin(), by_addr_.end(), handle));
    return true;
}

bool tx_memory::holds(std::uint32_t handle, const std::uint8_t* data,
                      std::size_t length) const noexcept {
    const range& r = slots_[handle];
    return r.live && data >= r.addr && length <= r.length &&
           static_cast<std::size_t>(data - r.addr) <= r.length - length;
}

std::uint32_t tx_memory::find(const std::uint8_t* data, std::size_t length) noexcept {
    if (length < min_bytes_ || length == 0 || by_addr_.empty()) return no_payload_region;
    if (last_ < slots_.size() && holds(last_, data, length)) return slots_[last_].port_region;
    // Ranges starting at or before data, nearest first. Registrations rarely overlap, so the
    // first is almost always the answer; a range nested in a larger one may hide it, hence the
    // walk.
    auto it = std::upper_bound(
        by_addr_.begin(), by_addr_.end(), data,
        [this](const std::uint8_t* a, std::uint32_t h) { return a < slots_[h].addr; });
    while (it != by_addr_.begin()) {
        --it;
        if (holds(*it, data, length)) {
            last_ = *it;
            return slots_[last_].port_region;
        }
    }
    return no_payload_region;
}

}  // namespace uet::detail
