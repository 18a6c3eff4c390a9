// A frame_handler in front of another that records every frame it passes, both ways, in a pcap
// file: the frames the port received, before the handler reads them, and the frames the handler
// built for the port to send, as it built them. It is what a user attaches to a bug report
// (fabric_attr::capture_file, uet-perf --pcap); each frame costs a copy into the file's buffer,
// so it is for debugging, not for benchmarks. What it wrote goes to the file at the first
// transmit call that finds nothing to send, so a run that hangs or is killed keeps its frames.
#pragma once

#include <cstdint>

#include "host/frame_handler.hpp"
#include "wire/pcap_file.hpp"

namespace uet::host {

class capture_handler final : public frame_handler {
  public:
    // Frames are stamped now + clock_offset_ns (the handler's clock to the wall clock).
    capture_handler(frame_handler& inner, wire::pcap_writer& out,
                    std::int64_t clock_offset_ns) noexcept
        : inner_(inner), out_(out), offset_(clock_offset_ns) {}

    void on_start(const io_caps& caps) override { inner_.on_start(caps); }
    void on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) override;
    void on_receive_classified(std::span<const std::uint8_t> frame, const classification& c,
                               const steering_config& by, std::uint64_t now) override;
    void on_receive_burst(std::span<const rx_frame> frames, const steering_config* by,
                          std::uint64_t now) override;
    bool takes_split_frames() const noexcept override { return inner_.takes_split_frames(); }
    std::size_t on_transmit(std::uint64_t now, std::span<tx_frame> frames) override;
    std::uint64_t next_deadline() const override { return inner_.next_deadline(); }

  private:
    std::uint64_t stamp(std::uint64_t now) const noexcept {
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(now) + offset_);
    }

    frame_handler& inner_;
    wire::pcap_writer& out_;
    std::int64_t offset_;
    std::uint64_t flushed_ = 0;  // out_.frames() at the last flush
};

}  // namespace uet::host
