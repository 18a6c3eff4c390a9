#include "roce.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace uet::simcli {

sim::roce_cluster_config roce_config(const options& o, const netmodel::topology& t,
                                     const std::vector<flow>& flows, std::uint32_t hosts) {
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> per_pair;
    for (const flow& f : flows)
        ++per_pair[{f.src, f.dst}];
    std::vector<std::uint32_t> qps(hosts, 0);
    std::uint32_t most_flows = 1;
    for (const auto& [pair, n] : per_pair) {
        qps[pair.first] += o.qps;
        qps[pair.second] += o.qps;
        most_flows = std::max(most_flows, n);
    }
    const std::uint32_t most_qps = *std::max_element(qps.begin(), qps.end());
    constexpr std::uint32_t qp_limit = 16384;
    if (most_qps > qp_limit)
        throw usage_error("--transport roce: a host needs " + std::to_string(most_qps) +
                          " QPs (--qps per host pair); an engine holds at most " +
                          std::to_string(qp_limit));
    sim::roce_cluster_config c;
    roce::engine_config& e = c.engine;
    e.max_qps = std::max<std::uint32_t>(most_qps, 1);
    e.seed = o.seed;
    e.qp.mode = o.roce_ooo ? roce::retransmit_mode::out_of_order : roce::retransmit_mode::go_back_n;
    // As the roce tests over the fabric model: a window of 128 packets, quick NAKs.
    e.qp.max_outstanding = 128;
    e.qp.reorder_window_ns = 5000;
    e.qp.nak_repeat_ns = 20000;
    // Every message of every flow of the pair may be out at once, on any of its QPs.
    e.qp.sq_depth = std::clamp<std::uint32_t>(most_flows * o.outstanding, 16, 65536);
    e.spray = o.rlb == roce_lb::spray;
    e.dcqcn = o.dcqcn;
    e.dcqcn_params.line_rate_gbps = o.speed_gbps;
    e.udp_checksum = false;
    c.fabric.nic_backlog_bytes = 2 * (std::uint64_t{o.mtu} + 100);  // about two frames queued
    // The local ACK timeout: twice the round trip with every queue on the longest path full
    // both ways (a deep queue is a slow path, not a lost packet); 131 us with 1-BDP queues.
    auto full = [](const netmodel::link_params& l) {  // ns to drain a full queue
        return double(l.queue_bytes) * 8 / l.rate_gbps;
    };
    const double fabric_ns =
        t.leaves <= 1 ? 0
        : t.pods > 1  ? 2 * full(t.fabric_link) + 2 * full(t.core_link.value_or(t.fabric_link))
                      : 2 * full(t.fabric_link);
    const double full_ns = 2 * (2 * full(t.host_link) + fabric_ns);
    const double wait_ns = 2 * (full_ns + double(sim::base_rtt(t)));
    c.fabric.timeout = 1;
    while (c.fabric.timeout < 31 && double(roce::ack_timeout_ns(c.fabric.timeout)) < wait_ns)
        ++c.fabric.timeout;
    c.qps = o.qps;
    c.sched.set(o.qp_sched);
    c.link_gbps = o.speed_gbps;
    c.base_rtt_ns = sim::base_rtt(t, o.mtu + 80);
    return c;
}

}  // namespace uet::simcli
