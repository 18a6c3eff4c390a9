// Time series of a run: every host's transmit rate (its NIC port) and every uplink's (the
// leaf->spine or edge->aggregation ports, summed by spine / aggregation index), with the bytes
// queued in the fabric, sampled at a fixed virtual-time interval. The samples live in one buffer
// sized when the run starts: when it is full, every other sample is dropped and the interval
// doubles (the samples hold cumulative bytes, so the rates stay exact), so a run of any length
// keeps between capacity / 2 and capacity samples and taking one never allocates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/fabric.hpp"

namespace uet::simcli {

class sampler {
  public:
    sampler(const netmodel::fabric& f, std::uint64_t interval_ns, std::size_t capacity = 512);

    std::uint64_t next_ns() const noexcept { return next_ns_; }
    // The fabric's counters as they are at virtual time next_ns() (every event up to it run).
    void take(const netmodel::fabric& f) noexcept;

    // t_us, queued_bytes (every switch port's data and priority queues), max_queue_bytes (the
    // fullest port), then h<i>_gbps for every host and up<a>_gbps for every uplink index: the
    // rates over the interval that ends at t. Integers and fixed decimals only: the same run
    // gives the same bytes.
    std::string csv() const;

  private:
    std::vector<std::uint32_t> uplink_of_;  // per up port, its spine / aggregation index
    std::uint32_t hosts_ = 0, uplinks_ = 0, columns_ = 0;
    std::uint32_t first_up_ = 0, up_ports_ = 0, first_switch_port_ = 0, ports_ = 0;
    std::size_t capacity_ = 0, n_ = 0;
    std::uint64_t interval_ns_ = 0, next_ns_ = 0;
    // Per sample: time, queued bytes, fullest queue, then the columns' cumulative tx bytes.
    std::vector<std::uint64_t> data_;
};

}  // namespace uet::simcli
