// Two host stacks of a test joined by an in-memory wire: one transmit burst of a stack handed to
// the other, each frame lost with a given probability. The frame buffers are made once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "host/host_stack.hpp"

namespace uet::test {

class lossy_wire {
  public:
    explicit lossy_wire(std::uint64_t seed)
        : loss_(seed),
          bufs_(host::burst_size, std::vector<std::uint8_t>(9216)),
          frames_(host::burst_size) {}

    // One transmit burst of `from` into `to`, each frame lost with probability p.
    void transfer(host::host_stack& from, host::host_stack& to, std::uint64_t now, double p) {
        for (std::size_t i = 0; i < frames_.size(); ++i)
            frames_[i].reset(bufs_[i], nullptr);
        const std::size_t n = from.on_transmit(now, frames_);
        for (std::size_t i = 0; i < n; ++i)
            if (loss_.uniform(1'000'000) >= p * 1e6)
                to.on_receive(std::span(frames_[i].buffer.data(), frames_[i].length), now);
    }

  private:
    uet::rng loss_;
    std::vector<std::vector<std::uint8_t>> bufs_;
    std::vector<host::tx_frame> frames_;
};

}  // namespace uet::test
