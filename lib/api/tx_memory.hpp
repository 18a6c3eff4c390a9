// The memory a provider may send payloads from without copying them (zero-copy transmit): the
// ranges the application registered with a domain, each with its handle on the port. The engine
// asks once per data packet (engine_config::zero_copy -> tx_memory::find), so finding
// a range is a hit on the last range found or a binary search by address, never a walk of every
// registration. DPDK-free: the provider owns the port handles, this only maps addresses to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/engine.hpp"

namespace uet::detail {

class tx_memory final : public payload_memory {
  public:
    // Payloads shorter than this are copied (a chained mbuf costs more than copying them).
    void set_min_bytes(std::uint32_t n) noexcept { min_bytes_ = n; }
    // Remembers [addr, addr + length) as port_region; returns a handle for remove().
    std::uint32_t add(const void* addr, std::size_t length, std::uint32_t port_region);
    // Forgets a range (no later lookup finds it); false for an unknown handle.
    bool remove(std::uint32_t handle) noexcept;
    std::uint32_t port_region(std::uint32_t handle) const noexcept {
        return handle < slots_.size() ? slots_[handle].port_region : no_payload_region;
    }
    // The port region holding all of [data, data + length), or no_payload_region (also for
    // payloads under min_bytes).
    std::uint32_t find(const std::uint8_t* data, std::size_t length) noexcept override;
    std::size_t size() const noexcept { return by_addr_.size(); }

  private:
    struct range {
        const std::uint8_t* addr = nullptr;
        std::size_t length = 0;
        std::uint32_t port_region = no_payload_region;
        bool live = false;
    };
    bool holds(std::uint32_t handle, const std::uint8_t* data, std::size_t length) const noexcept;

    std::vector<range> slots_;            // by handle; dead slots are reused
    std::vector<std::uint32_t> by_addr_;  // live handles, sorted by start address
    std::uint32_t last_ = 0;              // the handle found last
    std::uint32_t min_bytes_ = 0;
};

}  // namespace uet::detail
