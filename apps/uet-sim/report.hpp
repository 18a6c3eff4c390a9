// What a run produced: per-flow completion times against the ideal, fabric and engine
// counters, and the summary table, CSV and JSON made from them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cluster/cluster.hpp"
#include "options.hpp"

namespace uet::simcli {

struct flow_result {
    std::uint32_t src = 0, dst = 0;
    std::uint64_t bytes = 0, start_ns = 0, end_ns = 0;  // end 0: not finished
    std::uint64_t fct_ns = 0, ideal_ns = 0;
    double slowdown = 0, gbps = 0;
    std::uint32_t messages = 0, failed = 0;
};

// A ring collective (--workload ring-*): from the start to the last chunk received, against
// the ideal (every step a chunk's frames back to back at the host link's rate plus their one-way
// trip over the ring's longest hop), and nccl-tests' bandwidths: busbw = bytes a host sent / time;
// algbw = --size / time, scaled by steps / total steps when --steps cut the collective short
// (busbw / (N-1)/N for an all-gather, / 2(N-1)/N for an all-reduce).
struct collective_result {
    bool present = false, finished = false;
    std::uint32_t hosts = 0, steps = 0, total_steps = 0;
    std::uint64_t chunk = 0, time_ns = 0, ideal_ns = 0;
    double algbw_gbps = 0, busbw_gbps = 0, ideal_busbw_gbps = 0;
};

struct run_result {
    std::vector<flow_result> flows;
    std::size_t unfinished = 0;
    std::uint64_t failed_messages = 0;
    double fct_us[4] = {};    // min, p50, p99, max over finished flows
    double slowdown[3] = {};  // p50, p99, max
    // The last completion (0: none finished), and its ideal, the largest over hosts of: the
    // host's earliest flow start plus all the frames it sends (or receives) back to back at its
    // link's rate, plus the unloaded round trip of its shortest path (an incast's receiver, a
    // permutation's slowest flow). Frames counted as in the flows' ideal FCT: full-size, or a
    // flow shorter than the MTU as its payload plus the headers.
    std::uint64_t last_ns = 0, ideal_last_ns = 0;
    double goodput_gbps = 0;  // bytes of finished flows over first start .. last completion
    double mean_flow_gbps = 0;
    collective_result collective;
    std::uint64_t virtual_ns = 0;
    netmodel::fabric_stats fabric;
    sim::engine_totals engines;
    std::uint64_t steps = 0;
    std::size_t fabric_memory_bytes = 0, pool_high_water = 0;  // frames held at once, at most
    double wall_s = 0;
    std::uint64_t peak_rss_bytes = 0;
};

// The run's lb, cc and mode by its transport's names (RoCE: ecmp, dcqcn, gbn, ...).
struct policy_names {
    std::string lb, cc, mode;
};
policy_names names_of(const options& o);

// What summarise reads of a run, from sim::cluster or sim::roce_cluster.
struct run_view {
    const netmodel::fabric& net;
    const std::vector<sim::flow_state>& flows;
    std::size_t max_frame = 0;
    sim::engine_totals engines;
    std::uint64_t steps = 0, now = 0;
};
template <class Cluster>
run_view view_of(const Cluster& c) {
    return {c.net(), c.flows(), c.max_frame(), c.totals(), c.steps(), c.now()};
}

run_result summarise(const options& o, const netmodel::topology& t, const run_view& c,
                     double wall_s, std::uint64_t peak_rss_bytes);
void print_summary(std::FILE* out, const options& o, const netmodel::topology& t,
                   const run_result& r);
// No wall-clock figure in either: the same seed gives the same bytes.
std::string flows_csv(const run_result& r);
// With links: every port's counters too, under per_link (the columns of links_csv).
std::string to_json(const options& o, const run_result& r, const netmodel::fabric* links = nullptr);
// The summary's figures (no wall-clock one) as (name, value): lb, cc, mode, seed, load, flows,
// ..., virtual_us; and as a CSV header and one row (--summary-csv, what a sweep collects).
std::vector<std::pair<const char*, std::string>> summary_columns(const options& o,
                                                                 const run_result& r);
std::string summary_csv(const options& o, const run_result& r);
// One line per port (a link direction): port, name, kind (nic, to_host, up, down, agg_up,
// core_down), uplink (up ports: the spine / aggregation index; empty otherwise), counters.
std::string links_csv(const netmodel::fabric& f);
// Throws usage_error naming the file if it cannot be written.
void write_file(const std::string& path, const std::string& text);

}  // namespace uet::simcli
