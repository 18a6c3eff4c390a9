// uet-sim's command line: what to build (topology, links), what to run (workload, policies,
// link events) and where the results go. Every bad value is a usage_error naming the option.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cc/cc_factory.hpp"
#include "engine/engine.hpp"
#include "lb/lb_factory.hpp"
#include "qp_sched/qp_sched.hpp"

namespace uet::simcli {

// A bad option or input file: one line, exit status 2.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class topology_kind : std::uint8_t { leafspine, fattree };
enum class transport_kind : std::uint8_t { uet, roce };
// RoCE's --lb: one UDP source port per QP, a random one per packet (out-of-order mode only), or
// the leaves spraying each packet to the next spine in turn.
enum class roce_lb : std::uint8_t { ecmp, spray, switch_spray };
enum class workload_kind : std::uint8_t {
    permutation,
    incast,
    alltoall,
    matrix,
    ring_allgather,  // N - 1 steps of --size / N to the ring's next host
    ring_allreduce,  // reduce-scatter then all-gather: 2(N - 1) such steps
    uniform,         // Poisson arrivals, random pairs, sizes from --cdf
};
constexpr bool is_ring(workload_kind w) {
    return w == workload_kind::ring_allgather || w == workload_kind::ring_allreduce;
}
const char* workload_name(workload_kind w) noexcept;

struct link_event {
    enum class op : std::uint8_t { fail, slow, restore };
    op what = op::fail;
    std::string link;  // "leaf0-spine1" (both directions) or "leaf0->spine1" (one)
    double gbps = 0;   // slow only
    std::uint64_t at_ns = 0;
    std::string text;  // as given, for messages
};

struct options {
    topology_kind topology = topology_kind::leafspine;
    std::uint32_t leaves = 2, spines = 4, hosts_per_leaf = 8;
    double oversubscription = 0;       // 0: fabric links at --speed
    double core_oversubscription = 0;  // fat tree: 0: core links at the fabric links' rate
    std::uint32_t k = 0, hosts = 0;    // fat tree: k-ary, or the smallest k with this many hosts
    double speed_gbps = 100;
    std::uint64_t hop_latency_ns = 1000;
    std::uint64_t queue_bytes = 0;  // 0: one BDP of the unloaded RTT at the link's rate
    std::optional<std::uint64_t> ecn_min_bytes, ecn_max_bytes;  // default 20% / 80% of the queue
    bool trimming = true;
    std::uint32_t mtu = 4096;   // SES payload bytes per packet
    bool switch_spray = false;  // leaves spray each packet over the spines (topology::leaf_spray)
    bool path_id = false;       // leaves stamp path IDs, receivers detect loss by them

    workload_kind workload = workload_kind::permutation;
    std::uint64_t size_bytes = 1 << 20;
    std::uint32_t incast_degree = 0;  // 0: every other host
    std::string matrix;
    std::uint32_t message_bytes = 1 << 20;  // a flow is posted as messages of this size
    std::uint32_t outstanding = 8;          // messages of a flow posted and not completed
    // The fraction of hosts that take part (permutation, incast, all-to-all, ring); uniform: the
    // offered load, a fraction of every host link's rate (default 0.5 there).
    double load = 1;
    std::uint32_t steps = 0;    // ring: run only the first this many steps (0: all)
    std::string cdf;            // uniform: flow sizes from this CDF (none: every flow --size)
    std::uint32_t flows = 100;  // uniform: how many

    lb::algorithm lb = lb::algorithm::oblivious;
    cc::algorithm cc = cc::algorithm::nscc;
    delivery_mode mode = delivery_mode::rud;
    std::uint64_t seed = 1;
    // --transport roce: RoCEv2 RC engines (roce.hpp) with these in place of lb, cc and mode.
    transport_kind transport = transport_kind::uet;
    roce_lb rlb = roce_lb::ecmp;
    bool dcqcn = true;      // --cc dcqcn|none
    bool roce_ooo = false;  // --roce-mode ooo (out-of-order placement) | gbn (go-back-N)
    std::uint32_t qps = 1;  // RC QPs per host pair, --qp-sched splitting messages over them
    qp_sched::scheduler qp_sched = qp_sched::scheduler::cast_stripe;
    std::vector<link_event> events;
    std::uint64_t time_limit_ns = 1'000'000'000;  // virtual

    std::string csv, json;
    std::string links_csv, series_csv;  // per port; time series (series.hpp)
    std::string summary_csv;            // the summary as a CSV header and row
    std::string plot_dir;               // every CSV, the summary JSON and the plots
    std::uint64_t sample_ns = 1000;     // the time series' first interval (series.hpp)
    bool progress = true;
    bool help = false;
};

// Throws usage_error.
options parse_options(int argc, const char* const* argv);
const char* usage() noexcept;

// Values: bytes with an optional unit (B, KB/MB/GB decimal, KiB/MiB/GiB binary: "2MB",
// "64KiB"); times with an optional unit (ns when none: "1500", "10us", "2ms", "1s"); rates in
// Gb/s with an optional unit ("25", "25G", "25Gbps", "400Mbps"). nullopt when unparsable,
// negative or out of range.
std::optional<std::uint64_t> parse_bytes(std::string_view text);
std::optional<std::uint64_t> parse_time_ns(std::string_view text);
std::optional<double> parse_rate_gbps(std::string_view text);

}  // namespace uet::simcli
