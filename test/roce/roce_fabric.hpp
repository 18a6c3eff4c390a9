// sim::roce_fabric (RoCEv2 engines over the fabric model) with a memory_target per host, for
// the roce tests that run over the fabric model.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>

#include "cluster/roce_fabric.hpp"
#include "roce_link.hpp"
#include "roce_memory.hpp"

namespace uet::roce::test {

using roce_fabric_options = sim::roce_fabric_options;

// The hosts' memory, built before the fabric that places into it.
struct fabric_memory {
    std::deque<memory_target> mems;
};

class roce_fabric : private fabric_memory, public sim::roce_fabric {
  public:
    roce_fabric(const netmodel::topology& t,
                const std::function<engine_config(std::uint32_t)>& config, options o = {})
        : sim::roce_fabric(
              t, config, [this](std::uint32_t) -> delivery_target& { return mems.emplace_back(); },
              o) {}

    memory_target& mem(std::uint32_t h) { return mems[h]; }
};

}  // namespace uet::roce::test
