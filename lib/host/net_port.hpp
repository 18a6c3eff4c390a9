// What the providers need of a port, whichever driver moves its frames: DPDK's ethdev
// (providers/dpdk) or uet's own memif (providers/memif).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "host/frame_handler.hpp"
#include "host/steering.hpp"
#include "wire/eth.hpp"

namespace uet::host {

struct port_counters {
    std::uint64_t rx_frames = 0, rx_bytes = 0, rx_multiseg = 0, rx_oversize = 0;
    std::uint64_t tx_frames = 0, tx_bytes = 0, tx_zero_copy = 0, tx_copied = 0;
    std::uint64_t tx_ring_full = 0, tx_alloc_failed = 0, tx_bad_frame = 0;
    std::uint64_t tx_deferred = 0;  // frames the TX ring refused, kept for the next burst
    // Ticks of the TSC in the bursts that moved frames, by stage, where the port was asked to
    // time them (--stats). Receive: the driver's part, then the stack (sorting, the handler,
    // giving the buffers back). Transmit: the stack (buffers for the slots, the handler's
    // frames, their preparation), then the driver's part.
    std::uint64_t rx_driver_ticks = 0, rx_stack_ticks = 0, tx_stack_ticks = 0, tx_driver_ticks = 0;
    std::uint64_t tx_peer_left = 0;       // memif: frames dropped after the peer said it leaves
    std::uint64_t peer_left = 0;          // memif: times the peer left
    std::uint64_t rx_bad_descriptor = 0;  // memif: a descriptor outside the shared memory
    std::uint64_t steered_away = 0;       // software steering: frames left alone (dropped, counted)
    steering_counters steering;           // software steering: every frame by class
};

class net_port {
  public:
    virtual ~net_port() = default;
    // Stops the port and gives back what it holds. Idempotent.
    virtual void close() noexcept = 0;
    virtual packet_io& queue(std::uint16_t q = 0) = 0;
    virtual wire::mac_address mac() const noexcept = 0;
    virtual std::uint32_t mtu() const noexcept = 0;
    virtual io_caps caps() const noexcept = 0;
    // The driver's name ("net_memif", "net_af_packet", "uet_memif"...).
    virtual const std::string& driver() const noexcept = 0;
    // A virtual device copies every frame it sends into a ring or socket of its own.
    virtual bool is_virtual() const noexcept = 0;
    // Memory a tx_frame::ext may point into (only where caps().zero_copy): the region handle.
    virtual std::uint32_t register_memory(const void* addr, std::size_t length) = 0;
    virtual bool unregister_memory(std::uint32_t region) = 0;
    virtual std::uint32_t in_flight(std::uint32_t region) const = 0;
    virtual void reclaim_tx() noexcept = 0;
    virtual port_counters counters() const = 0;
};

}  // namespace uet::host
