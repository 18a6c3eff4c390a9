// A port's time per stage of a burst (port_counters::*_ticks, shown by uet-perf --stats): TSC
// ticks from one lap to the next, added to the stage's counter; reads no clock when off.
#pragma once

#include <cstdint>

#include "core/cycles.hpp"

namespace uet::host {

class stage_clock {
  public:
    explicit stage_clock(bool on) noexcept : last_(on ? read_cycles() : 0) {}
    void lap(std::uint64_t& stage) noexcept {
        if (last_ == 0) return;
        const std::uint64_t t = read_cycles();
        stage += t - last_;
        last_ = t;
    }

  private:
    std::uint64_t last_;
};

}  // namespace uet::host
