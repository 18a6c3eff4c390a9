// uet-sim: the real UET engines, one per host, over the fabric model in virtual time
// (sim/cluster). Builds the topology and the workload from the command line, runs until every
// flow is done (or the time limit), and reports flow completion times. docs/uet-sim.md.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster.hpp"
#include "options.hpp"
#include "plot.hpp"
#include "report.hpp"
#include "roce.hpp"
#include "series.hpp"
#include "sweep.hpp"
#include "workload.hpp"

namespace uet::simcli {
namespace {

constexpr std::uint32_t frame_overhead = 110;  // Ethernet, IPv4, UDP, PDS and SES headers

std::uint64_t bdp_bytes(const netmodel::topology& t, std::uint32_t mtu, double gbps) {
    return static_cast<std::uint64_t>(double(sim::base_rtt(t, mtu + frame_overhead)) * gbps / 8);
}

netmodel::link_params link(const options& o, double gbps, std::uint64_t queue) {
    netmodel::link_params p = netmodel::uet_link(gbps, o.hop_latency_ns, queue);
    p.trimming = o.trimming;
    if (o.ecn_min_bytes) p.ecn_kmin_bytes = *o.ecn_min_bytes;
    if (o.ecn_max_bytes) p.ecn_kmax_bytes = *o.ecn_max_bytes;
    if (p.ecn_kmin_bytes > p.ecn_kmax_bytes)
        throw usage_error("--ecn-min: " + std::to_string(p.ecn_kmin_bytes) +
                          " bytes is above the ECN maximum, " + std::to_string(p.ecn_kmax_bytes));
    return p;
}

// A k-ary fat tree: k pods of k/2 edges and k/2 aggregation switches, (k/2)^2 cores, k/2 hosts
// an edge; or, given a host count, the smallest k with room for it, its edges holding
// ceil(hosts / edges) hosts each.
void fat_tree(const options& o, netmodel::topology& t) {
    std::uint32_t k = o.k;
    if (k == 0) {
        const std::uint32_t want = o.hosts ? o.hosts : 128;
        for (k = 2; std::uint64_t{k} * k * k / 4 < want;)
            k += 2;
    }
    const std::uint32_t edges = k * k / 2;
    t.pods = k;
    t.leaves = edges;
    t.spines = k / 2;
    t.cores_per_agg = k / 2;
    t.hosts_per_leaf = o.hosts ? (o.hosts + edges - 1) / edges : k / 2;
}

netmodel::topology build_topology(const options& o) {
    netmodel::topology t;
    if (o.topology == topology_kind::fattree) {
        fat_tree(o, t);
    } else {
        t.leaves = o.leaves;
        t.spines = o.spines;
        t.hosts_per_leaf = o.hosts_per_leaf;
    }
    t.seed = o.seed;
    t.leaf_spray =
        o.switch_spray || (o.transport == transport_kind::roce && o.rlb == roce_lb::switch_spray);
    t.stamp_path_id = o.path_id;
    t.max_frame_bytes = o.mtu + 256;
    // The fabric carries each frame's headers only: nobody reads the payload (WRITEs placed in
    // one sink, UDP checksum 0), and whole frames in flight at 1,024 hosts take ~300 MB.
    // RoCE's ICRC covers the payload: its frames go whole.
    t.carried_bytes = o.transport == transport_kind::roce ? 0 : 256;
    // --oversub: a leaf's (edge's) hosts send R times what its uplinks carry; --core-oversub: an
    // aggregation switch's edges send R times what its core links carry.
    const double fabric_gbps = o.oversubscription > 0 ? double(t.hosts_per_leaf) * o.speed_gbps /
                                                            (double(t.spines) * o.oversubscription)
                                                      : o.speed_gbps;
    const double core_gbps = o.core_oversubscription > 0
                                 ? double(t.leaves / std::max(t.pods, 1u)) * fabric_gbps /
                                       (double(t.cores_per_agg) * o.core_oversubscription)
                                 : fabric_gbps;
    t.host_link.rate_gbps = o.speed_gbps;
    t.host_link.delay_ns = t.fabric_link.delay_ns = o.hop_latency_ns;
    t.fabric_link.rate_gbps = fabric_gbps;
    auto queue = [&](double gbps) {
        return o.queue_bytes ? o.queue_bytes : bdp_bytes(t, o.mtu, gbps);
    };
    t.host_link = link(o, o.speed_gbps, queue(o.speed_gbps));
    t.fabric_link = link(o, fabric_gbps, queue(fabric_gbps));
    if (core_gbps != fabric_gbps) t.core_link = link(o, core_gbps, queue(core_gbps));
    return t;
}

// "a->b": that port; "a-b": both directions. Names as the fabric prints its ports.
std::vector<std::uint32_t> resolve_link(const std::map<std::string, std::uint32_t>& ports,
                                        const link_event& e) {
    const char* opt = e.what == link_event::op::fail   ? "--fail"
                      : e.what == link_event::op::slow ? "--slow"
                                                       : "--restore";
    std::vector<std::string> names;
    if (const std::size_t arrow = e.link.find("->"); arrow != std::string::npos) {
        names.push_back(e.link);
    } else if (const std::size_t dash = e.link.find('-'); dash != std::string::npos) {
        const std::string a = e.link.substr(0, dash), b = e.link.substr(dash + 1);
        names = {a + "->" + b, b + "->" + a};
    }
    std::vector<std::uint32_t> out;
    for (const auto& n : names) {
        const auto it = ports.find(n);
        if (it == ports.end()) break;
        out.push_back(it->second);
    }
    if (names.empty() || out.size() != names.size())
        throw usage_error(std::string(opt) + ": link '" + e.link +
                          "' does not exist (e.g. leaf0-spine1, leaf0->spine1, h3-leaf0)");
    return out;
}

void schedule_events(const options& o, netmodel::fabric& f) {
    if (o.events.empty()) return;
    std::map<std::string, std::uint32_t> ports;
    for (std::uint32_t p = 0; p < f.port_count(); ++p)
        ports.emplace(f.port_name(p), p);
    for (const link_event& e : o.events) {
        for (const std::uint32_t p : resolve_link(ports, e)) {
            switch (e.what) {
                case link_event::op::fail:
                    f.fail_port(p, e.at_ns);
                    break;
                case link_event::op::slow:
                    f.set_port_rate(p, e.gbps, e.at_ns);
                    break;
                case link_event::op::restore:
                    f.restore_port(p, e.at_ns);
                    break;
            }
        }
    }
}

engine_config host_config(const options& o, const netmodel::topology& t,
                          const std::vector<flow>& flows, std::uint32_t hosts) {
    // A host needs room for all of its flows' messages at once, and a PDC (and a peer) for
    // each host it sends to or receives from: flows between one pair share them (a ring's
    // steps, a matrix's repeated pairs).
    std::vector<std::uint32_t> out(hosts, 0), in(hosts, 0), peers(hosts, 0);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    pairs.reserve(flows.size());
    for (const flow& f : flows) {
        ++out[f.src];
        ++in[f.dst];
        pairs.emplace_back(f.src, f.dst);
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (const auto& [src, dst] : pairs) {
        ++peers[src];
        ++peers[dst];
    }
    std::uint32_t most = 0, most_in = 0, most_out = 0;
    for (std::uint32_t h = 0; h < hosts; ++h) {
        most = std::max(most, peers[h]);
        most_in = std::max(most_in, in[h]);
        most_out = std::max(most_out, out[h]);
    }
    if (most > 4000)
        throw usage_error("--workload: a host exchanges with " + std::to_string(most) +
                          " hosts; the engine holds at most 4095 PDCs");
    engine_config e;
    e.cc = o.cc;
    e.lb = o.lb;
    e.link_gbps = o.speed_gbps;
    e.base_rtt_ns = sim::base_rtt(t, o.mtu + frame_overhead);
    e.trimming = o.trimming;
    e.mtu_payload = o.mtu;
    e.seed = o.seed;
    e.path_ids = o.path_id ? t.spines : 0;
    // Tables sized to the workload, not to the engine's defaults (which are for a host with
    // thousands of peers): a thousand engines must fit in a few hundred MB.
    const auto room = [](std::uint64_t n, std::uint64_t lo, std::uint64_t hi) {
        return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(n, lo, hi));
    };
    e.max_pdcs = room(most + 4, 8, 4095);
    e.max_peers = room(most + 4, 8, 4095);
    // A PDC's packets in flight: 2 BDPs (NSCC opens its window to 1.5), rounded up to a power
    // of two; every PDC slot holds a ring of this many.
    const double bdp_packets = double(e.base_rtt_ns) * o.speed_gbps / 8 / o.mtu;
    e.mpr = room(std::bit_ceil(static_cast<std::uint64_t>(2 * bdp_packets) + 1), 32, 4095);
    e.max_pending_messages = room(std::uint64_t{most_out} * o.outstanding + 8, 16, 65536);
    e.max_rx_messages = room(std::uint64_t{most_in} * o.outstanding + 8, 16, 65536);
    e.max_message_size = o.message_bytes;
    e.remembered_messages = 64;  // RUDI and UUD only: not used here
    e.rudi_max_in_flight = 16;
    e.control_queue = room(std::uint64_t{most_in} * 128, 256, 65536);
    e.tx_burst = 16;         // each engine stages this many frames
    e.udp_checksum = false;  // no wire to corrupt a frame: summing payloads is wasted work
    return e;
}

double wall_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct plot_tools {
    std::string python, script;
};

// Runs the flows on either cluster (sim::cluster or sim::roce_cluster) and writes the outputs.
template <class Cluster>
int drive(const options& o, const netmodel::topology& t, Cluster& c, const std::vector<flow>& flows,
          const plot_tools& plotter, std::chrono::steady_clock::time_point t0) {
    schedule_events(o, c.net());
    for (const flow& f : flows) {
        const auto message =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(o.message_bytes, f.bytes));
        c.add_flow({.src = f.src,
                    .dst = f.dst,
                    .message_bytes = message,
                    .outstanding = o.outstanding,
                    .start_ns = f.start_ns,
                    .mode = o.mode,
                    .bytes = f.bytes,
                    .after = f.after});
    }

    // The time series: the run stops at each sample time (an event-free stop changes nothing).
    const bool sampling = !o.series_csv.empty() || !o.plot_dir.empty();
    std::optional<sampler> series;
    if (sampling) series.emplace(c.net(), o.sample_ns);
    const bool tty = isatty(STDERR_FILENO);
    double last_report = 0;
    bool reported = false;
    while (!c.all_finished()) {
        const std::uint64_t limit =
            series ? std::min(o.time_limit_ns, series->next_ns()) : o.time_limit_ns;
        if (!c.step(limit)) {
            if (limit == o.time_limit_ns) break;
            series->take(c.net());
            continue;
        }
        if (!o.progress || (c.steps() & 4095) != 0) continue;
        const double wall = wall_since(t0);
        if (wall < 2 || wall - last_report < 1) continue;
        last_report = wall;
        reported = true;
        // ETA: the rest of the bytes at the rate so far (start-up included, so it errs long).
        std::uint64_t done = 0, total = 0;
        for (const sim::flow_state& f : c.flows()) {
            done += f.completed_bytes;
            total += f.total_bytes();
        }
        char eta[32] = "ETA -";
        if (done > 0)
            std::snprintf(eta, sizeof eta, "ETA %.0f s",
                          wall * double(total - done) / double(done));
        std::fprintf(stderr, "uet-sim: virtual %.1f us, %zu/%zu flows done, %.2f M events/s, %s%s",
                     double(c.now()) / 1e3, c.finished_flows(), c.flows().size(),
                     double(c.net().counters().events) / wall / 1e6, eta, tty ? "   \r" : "\n");
    }
    if (reported && tty) std::fputc('\n', stderr);

    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const run_result r =
        summarise(o, t, view_of(c), wall_since(t0), std::uint64_t(ru.ru_maxrss) * 1024);
    print_summary(stdout, o, t, r);
    if (!o.csv.empty()) write_file(o.csv, flows_csv(r));
    if (!o.json.empty()) write_file(o.json, to_json(o, r, &c.net()));
    if (!o.summary_csv.empty()) write_file(o.summary_csv, summary_csv(o, r));
    if (!o.links_csv.empty()) write_file(o.links_csv, links_csv(c.net()));
    if (!o.series_csv.empty()) write_file(o.series_csv, series->csv());
    if (!o.plot_dir.empty()) {
        write_file(o.plot_dir + "/flows.csv", flows_csv(r));
        write_file(o.plot_dir + "/summary.json", to_json(o, r));
        write_file(o.plot_dir + "/links.csv", links_csv(c.net()));
        write_file(o.plot_dir + "/series.csv", series->csv());
        plot(plotter.python, plotter.script, "run", o.plot_dir);
    }
    return r.unfinished == 0 ? 0 : 1;
}

int run(const options& o) {
    const auto t0 = std::chrono::steady_clock::now();
    // --plot: everything it needs is checked before the run, not after it.
    plot_tools plotter;
    if (!o.plot_dir.empty()) {
        plotter = {find_python(), plot_script()};
        make_dir("--plot", o.plot_dir);
    }
    const netmodel::topology t = build_topology(o);
    const std::uint32_t hosts = t.leaves * t.hosts_per_leaf;
    const std::vector<flow> flows = make_flows(o, hosts);
    if (o.transport == transport_kind::roce) {
        sim::roce_cluster c(t, roce_config(o, t, flows, hosts));
        return drive(o, t, c, flows, plotter, t0);
    }
    sim::cluster c(t, host_config(o, t, flows, hosts), 0, sim::payload_kind::placed_writes);
    return drive(o, t, c, flows, plotter, t0);
}

}  // namespace
}  // namespace uet::simcli

int main(int argc, char** argv) {
    using namespace uet::simcli;
    try {
        if (argc > 1 && std::string_view(argv[1]) == "sweep") {
            const sweep_options s = parse_sweep(argc - 1, argv + 1);
            if (s.help) {
                std::fputs(sweep_usage(), stdout);
                return 0;
            }
            return run_sweep(s);
        }
        const options o = parse_options(argc, argv);
        if (o.help) {
            std::fputs(usage(), stdout);
            return 0;
        }
        return run(o);
    } catch (const usage_error& e) {
        std::fprintf(stderr, "uet-sim: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uet-sim: %s\n", e.what());
        return 1;
    }
}
