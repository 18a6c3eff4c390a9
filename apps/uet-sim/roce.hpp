// uet-sim --transport roce: the RoCEv2 cluster's configuration from the command line.
#pragma once

#include <cstdint>
#include <vector>

#include "cluster/roce_cluster.hpp"
#include "options.hpp"
#include "workload.hpp"

namespace uet::simcli {

// Engines sized to the workload: a QP for each connection a host has (--qps per host pair it
// sends to or receives from), send queues with room for every message its flows may have out.
// Throws usage_error when a host would need more QPs than an engine holds.
sim::roce_cluster_config roce_config(const options& o, const netmodel::topology& t,
                                     const std::vector<flow>& flows, std::uint32_t hosts);

}  // namespace uet::simcli
