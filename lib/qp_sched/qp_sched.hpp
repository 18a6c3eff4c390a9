// The CAST multi-QP scheduler (Broadcom's Congestion-Aware Sprayed Traffic): a connection of
// several RC queue pairs, each its own UDP source port and so its own ECMP path, and a scheduler
// that spreads each request over them. Round robin and striping are what NCCL and RCCL do; CAST
// weights either by how congested each QP's path is, measured by the RTT from post to completion.
// Sans-I/O: the caller measures, posts and passes the time in.
//
// Where the document is silent or says two things:
//  - The jitter filter's floor. The document's metric (RTT - the payload's transmission time -
//    the network's minimum latency) can bring a QP's lowest metric to about 0 on an idle path,
//    and 1 / ((estimate - min_estimate) + min_metric) then gives the best QP nearly everything.
//    RCCL's plugin (net_ib_cast) subtracts only the transmission time, so its floor holds the
//    base RTT. Here the estimates keep the document's metric (what stats() shows) and the floor
//    is the lowest metric plus the minimum latency given back: the weights are RCCL's, whatever
//    minimum latency the caller passes.
//  - The RTT runs from the post to the completion, as the document and RCCL measure it: it holds
//    the wait behind the QP's own earlier work requests, which steers the weights towards the
//    QPs that empty their queue fastest.
//  - What rounding to 128 bytes leaves goes to the QP of the largest weight (RCCL: the last QP).
//  - Weighted round robin is smooth WRR (RCCL counts tokens); QPs not measured yet count as the
//    best one (RCCL keeps the old weights until every QP has a measurement).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace uet::qp_sched {

// The document's four schedulers.
enum class scheduler : std::uint8_t {
    round_robin,  // each request to the next QP
    stripe,       // each request split into equal subchunks, one per QP
    cast_stripe,  // subchunk sizes from the CAST weights
    cast_wrr,     // each request to one QP, each QP's share of requests its weight
};
const char* to_string(scheduler s) noexcept;
// "rr", "stripe", "cast", "cast-wrr" (uet-perf's --qp-sched); false for anything else.
bool parse(std::string_view name, scheduler& out) noexcept;

// The knobs of RCCL's and NCCL's IB plugins with CAST, by their environment variables.
struct params {
    bool enable = false;                      // NCCL_IB_QP_SCHED_ENABLE: CAST's weights
    std::uint64_t reset_interval_ms = 60000;  // NCCL_IB_QP_SCHED_RESET_INTERVAL; 0: never
    std::uint64_t update_interval_us = 50;    // NCCL_IB_QP_SCHED_UPDATE_INTERVAL
    double weight = 0;  // NCCL_IB_QP_SCHED_WEIGHT: the sample's weight; 0: the average
    std::uint64_t split_data_min = 64 * 1024;  // NCCL_IB_QP_SCHED_SPLIT_DATA_MIN (bytes)
    bool wrr_enable = false;         // NCCL_IB_QP_SCHED_WRR_ENABLE: WRR, not RR, when not split
    bool split_data_on_qps = false;  // NCCL_IB_SPLIT_DATA_ON_QPS: stripe, not round robin
    std::uint32_t qps_per_connection = 1;  // NCCL_IB_QPS_PER_CONNECTION (1..max_qps)

    static constexpr std::uint32_t max_qps = 128;
    scheduler kind() const noexcept;
    void set(scheduler s) noexcept;  // enable and split_data_on_qps for s
    // Empty when every value is in range, else what is wrong, naming the variable.
    std::string check() const;
};

// Reads the variables that are set (get: std::getenv or a test's map) over p. Empty on success;
// else the first bad value, naming its variable; p keeps what was read before it.
std::string read_environment(params& p,
                             const std::function<const char*(const char*)>& get = nullptr);

// One piece of a request: `length` bytes from `offset`, posted on QP `qp` (0..qps-1).
struct subchunk {
    std::uint32_t qp = 0;
    std::uint64_t offset = 0, length = 0;
};

struct qp_stats {
    std::uint64_t bytes = 0, requests = 0;  // posted on this QP (subchunks)
    std::uint64_t samples = 0;              // completions measured
    double estimate_ns = 0;                 // the metric's estimate
    double min_metric_ns = 0;               // the lowest metric measured (0: none yet)
    double weight = 0;                      // the current scheduler weight (they sum to 1)
};

class scheduler_state {
  public:
    // line_rate_gbps: the port's rate, for the payload's transmission time; min_latency_ns: the
    // network's lowest latency (the metric subtracts both from the RTT).
    scheduler_state(const params& p, double line_rate_gbps, std::uint64_t min_latency_ns);

    std::uint32_t qps() const noexcept { return static_cast<std::uint32_t>(stats_.size()); }
    const params& config() const noexcept { return p_; }
    const qp_stats& stats(std::uint32_t qp) const noexcept { return stats_[qp]; }

    // Splits a request of `bytes` into out (qps() entries at most) and counts them as posted;
    // how many subchunks. The weights are refreshed first when update_interval has passed.
    std::size_t schedule(std::uint64_t bytes, std::uint64_t now_ns, std::span<subchunk> out);
    // A subchunk of `bytes` posted on qp completed `rtt_ns` after its post.
    void on_completion(std::uint32_t qp, std::uint64_t bytes, std::uint64_t rtt_ns,
                       std::uint64_t now_ns);
    // The metric of one measurement: RTT - the payload's transmission time - the minimum
    // latency, at least 1 ns.
    double metric(std::uint64_t bytes, std::uint64_t rtt_ns) const noexcept;
    // Recomputes the weights from the estimates now (schedule() does when they are due).
    void update_weights() noexcept;

  private:
    std::uint32_t next_rr() noexcept;
    std::uint32_t next_wrr() noexcept;
    std::size_t stripe(std::uint64_t bytes, bool weighted, std::span<subchunk> out);

    params p_;
    double ns_per_byte_;
    double min_latency_ns_;
    std::vector<qp_stats> stats_;
    std::vector<double> sum_;     // the average's history per QP
    std::vector<double> credit_;  // smooth weighted round robin's running credit
    std::uint32_t rr_ = 0;
    std::uint64_t next_update_ns_ = 0, next_reset_ns_ = 0;
};

// The document's weights with its jitter filter: with m the QP of the lowest estimate,
// w[i] = 1 / ((estimate[i] - estimate[m]) + min_metric[m]), normalised to sum to 1. QPs without
// a measurement count as the best one; with none measured the weights are equal. (The scheduler
// passes each QP's lowest metric plus the minimum latency as min_metric: see the top.)
void cast_weights(std::span<const double> estimate, std::span<const double> min_metric,
                  std::span<const bool> measured, std::span<double> weight) noexcept;

}  // namespace uet::qp_sched
