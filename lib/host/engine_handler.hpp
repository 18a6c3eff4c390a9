// An engine (UET's PDS engine or the RoCEv2 engine: any frame_engine) as a host::frame_handler,
// so a poll_loop can drive it on a DPDK port (usually under a host_stack, which resolves and
// fills the Ethernet addresses of its frames).
//
// Copies: each slot's buffer (an mbuf's data room) is offered to the engine as room, and the
// engine builds the frame there: headers written in place, the payload copied once from the
// sender's memory while its UDP checksum is summed. Only a frame the engine could not build in
// the room (a room smaller than its largest frame) is copied here from engine memory
// (engine_handler_stats::bytes_copied_tx). With engine_config::zero_copy set, a payload
// in registered memory is not copied at all: the slot carries the headers and tx_frame::ext
// points at the payload, which the port chains as an external buffer (or copies, where it
// cannot chain: io_caps::zero_copy). Received frames go to the engine straight from the
// mbuf; the engine copies each payload once into its reassembly buffer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "host/frame_handler.hpp"
#include "wire/frame_engine.hpp"

namespace uet::host {

struct engine_handler_stats {
    std::uint64_t frames_rx = 0, frames_tx = 0;
    std::uint64_t bytes_copied_tx = 0;  // engine memory -> port's slot (frames not built in place)
    std::uint64_t tx_too_large = 0;     // engine frame larger than the slot: dropped
    std::uint64_t frames_by_reference = 0;  // payload left in registered memory (tx_frame::ext)
};

class engine_handler final : public frame_handler {
  public:
    explicit engine_handler(frame_engine& e) noexcept : engine_(e) {}

    void on_start(const io_caps& caps) override;
    void on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) override;
    void on_receive_burst(std::span<const rx_frame> frames, const steering_config* by,
                          std::uint64_t now) override;
    bool takes_split_frames() const noexcept override { return true; }
    std::size_t on_transmit(std::uint64_t now, std::span<tx_frame> frames) override;
    std::uint64_t next_deadline() const override;

    frame_engine& engine() noexcept { return engine_; }
    const engine_handler_stats& stats() const noexcept { return stats_; }
    const io_caps& caps() const noexcept { return caps_; }

  private:
    frame_engine& engine_;
    io_caps caps_;
    std::array<uet::tx_frame, burst_size> out_{};
    engine_handler_stats stats_;
    // Frames in three pieces joined for an engine that does not take them, a burst's worth.
    std::vector<std::uint8_t> joined_;
    std::size_t joined_slot_ = 0;
};

}  // namespace uet::host
