#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "workload.hpp"

namespace uet::simcli {

namespace {

// Nearest rank: the smallest value with at least p of the values at or below it.
double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    const auto rank = static_cast<std::size_t>(std::ceil(p * double(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

std::string fixed(double v, int digits) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

}  // namespace

policy_names names_of(const options& o) {
    if (o.transport == transport_kind::roce) {
        static constexpr const char* lbs[] = {"ecmp", "spray", "switch-spray"};
        return {lbs[static_cast<int>(o.rlb)], o.dcqcn ? "dcqcn" : "none",
                o.roce_ooo ? "ooo" : "gbn"};
    }
    return {std::string(lb::algorithm_name(o.lb)), std::string(cc::algorithm_name(o.cc)),
            o.mode == delivery_mode::rod ? "rod" : "rud"};
}

namespace {

// The columns of a flow, shared by the CSV and the JSON.
std::vector<std::pair<const char*, std::string>> columns(std::size_t i, const flow_result& f) {
    return {{"flow", std::to_string(i)},
            {"src", std::to_string(f.src)},
            {"dst", std::to_string(f.dst)},
            {"bytes", std::to_string(f.bytes)},
            {"start_ns", std::to_string(f.start_ns)},
            {"end_ns", std::to_string(f.end_ns)},
            {"fct_ns", std::to_string(f.fct_ns)},
            {"ideal_ns", std::to_string(f.ideal_ns)},
            {"slowdown", fixed(f.slowdown, 4)},
            {"goodput_gbps", fixed(f.gbps, 3)},
            {"messages", std::to_string(f.messages)},
            {"failed", std::to_string(f.failed)}};
}

// The columns of a port (a link direction), shared by the CSV and the JSON.
std::vector<std::pair<const char*, std::string>> link_columns(const netmodel::fabric& f,
                                                              std::uint32_t p) {
    static constexpr const char* kinds[] = {"nic", "to_host", "up", "down", "agg_up", "core_down"};
    const netmodel::topology& t = f.layout();
    const netmodel::port_kind k = f.kind(p);
    const netmodel::port_stats s = f.port_counters(p);
    const auto n = [](std::uint64_t v) { return std::to_string(v); };
    return {{"port", n(p)},
            {"name", f.port_name(p)},
            {"kind", kinds[static_cast<int>(k)]},
            {"uplink", k == netmodel::port_kind::up ? n((p - f.up_port(0, 0)) % t.spines) : ""},
            {"tx_packets", n(s.tx_packets)},
            {"tx_bytes", n(s.tx_bytes)},
            {"dropped", n(s.dropped)},
            {"trimmed", n(s.trimmed)},
            {"ecn_marked", n(s.ecn_marked)},
            {"blackholed", n(s.blackholed)},
            {"peak_queue_bytes", n(s.peak_queue_bytes)},
            {"mean_queue_bytes", fixed(s.mean_queue_bytes, 1)}};
}

// Names joined by commas, then values: a CSV header and its row.
template <class Columns>
void csv_line(std::ostream& out, const Columns& cols, bool names) {
    bool first = true;
    for (const auto& [name, value] : cols) {
        out << (first ? "" : ",") << (names ? std::string(name) : value);
        first = false;
    }
    out << '\n';
}

// The collective's time and bandwidths; the workload's flows are its steps in order.
collective_result collective(const options& o, const netmodel::topology& t, const run_view& c,
                             double overhead) {
    const netmodel::fabric& net = c.net;
    const ring_shape ring = ring_of(o, net.host_count());
    collective_result r{.present = true,
                        .finished = true,
                        .hosts = ring.hosts,
                        .steps = ring.steps,
                        .total_steps = ring.total_steps,
                        .chunk = ring.chunk};
    for (const sim::flow_state& f : c.flows) {
        r.finished = r.finished && f.received();
        r.time_ns = std::max(r.time_ns, f.received_ns);
    }
    // Each hop's ideal step: the chunk's frames back to back, the last one's trip over the hop
    // (the round trip without the ACK's frame, less the ACK's half of the delays).
    const double packets = std::ceil(double(ring.chunk) / o.mtu);
    const double frame = double(std::min<std::uint64_t>(ring.chunk, o.mtu)) + overhead;
    const double wire_ns = (double(ring.chunk) + packets * overhead - frame) * 8 / o.speed_gbps;
    const std::uint32_t n = ring.hosts;
    std::vector<double> hop(2 * n + 1, 0);  // prefix sums over the ring twice
    for (std::uint32_t p = 0; p < 2 * n; ++p) {
        const sim::flow_spec& f = c.flows[p % n].spec;  // step 0, position p
        const std::uint32_t links = net.path_links(f.src, f.dst);
        const double one_way =
            double(sim::path_rtt(t, links, frame, 0)) - double(sim::path_rtt(t, links, 0, 0)) / 2;
        hop[p + 1] = hop[p] + wire_ns + one_way;
    }
    // Step s at position p waits for step s - 1 at p - 1 only: the chains run diagonally, each
    // over K consecutive hops; the ideal is the slowest chain's.
    double ideal = 0;
    for (std::uint32_t p = 0; p < n; ++p) {
        const std::uint32_t rest = ring.steps % n;
        ideal = std::max(ideal,
                         double(ring.steps / n) * hop[n] + hop[p + n + 1] - hop[p + n + 1 - rest]);
    }
    r.ideal_ns = static_cast<std::uint64_t>(ideal);
    const double sent = double(ring.steps) * double(ring.chunk) * 8;  // bits a host sends
    const double factor = double(ring.total_steps) / double(ring.hosts);
    if (r.finished && r.time_ns > 0) {
        r.busbw_gbps = sent / double(r.time_ns);
        r.algbw_gbps = r.busbw_gbps / factor;
    }
    if (r.ideal_ns > 0) r.ideal_busbw_gbps = sent / double(r.ideal_ns);
    return r;
}

}  // namespace

run_result summarise(const options& o, const netmodel::topology& t, const run_view& c,
                     double wall_s, std::uint64_t peak_rss_bytes) {
    run_result r;
    const netmodel::fabric& net = c.net;
    // The ideal: the flow's frames back to back at the host's rate, plus the unloaded round
    // trip of its last frame and the ACK over its path (within the leaf, through a spine or
    // aggregation switch, through a core). A data frame's headers: the largest frame seen less
    // the largest payload a packet took (the MTU, unless every message is shorter).
    std::uint64_t payload = 0;
    for (const sim::flow_state& s : c.flows)
        payload = std::max<std::uint64_t>(payload, std::min(o.mtu, s.spec.message_bytes));
    const double overhead = c.max_frame > payload ? double(c.max_frame - payload) : 110;
    // Per host and direction (0 out, 1 in): earliest start, wire ns, and the least over its
    // flows of the round trip beyond the last frame's serialisation.
    const std::uint32_t hosts = net.host_count();
    std::vector<double> wire_ns(2 * hosts, 0), rtt_min(2 * hosts, 0);
    std::vector<std::uint64_t> start_min(2 * hosts, ~std::uint64_t{0});
    std::vector<double> fct, slow;
    std::uint64_t first = ~std::uint64_t{0}, last = 0, bytes_done = 0;
    double rate_sum = 0;
    for (const sim::flow_state& s : c.flows) {
        flow_result f;
        f.src = s.spec.src;
        f.dst = s.spec.dst;
        f.bytes = s.total_bytes();
        f.start_ns = s.spec.start_ns;
        f.messages = s.spec.messages;
        f.failed = s.failed;
        const double packets = std::ceil(double(f.bytes) / o.mtu);
        const double wire = double(f.bytes) + packets * overhead;
        const double frame = double(std::min<std::uint64_t>(f.bytes, o.mtu)) + overhead;
        const double path = double(sim::path_rtt(t, net.path_links(f.src, f.dst), frame));
        f.ideal_ns = static_cast<std::uint64_t>((wire - frame) * 8 / o.speed_gbps + path);
        const double beyond = path - frame * 8 / o.speed_gbps;
        for (const std::size_t k : {std::size_t{f.src}, std::size_t{hosts} + f.dst}) {
            rtt_min[k] = start_min[k] == ~std::uint64_t{0} ? beyond : std::min(rtt_min[k], beyond);
            start_min[k] = std::min(start_min[k], f.start_ns);
            wire_ns[k] += wire * 8 / o.speed_gbps;
        }
        r.failed_messages += s.failed;
        if (s.finished()) {
            f.end_ns = s.done_ns;
            f.fct_ns = s.done_ns - s.spec.start_ns;
            f.slowdown = double(f.fct_ns) / double(f.ideal_ns);
            f.gbps = s.gbps();
            fct.push_back(double(f.fct_ns) / 1e3);
            slow.push_back(f.slowdown);
            first = std::min(first, f.start_ns);
            last = std::max(last, f.end_ns);
            bytes_done += s.completed_bytes;
            rate_sum += f.gbps;
        } else {
            ++r.unfinished;
        }
        r.flows.push_back(f);
    }
    for (std::size_t k = 0; k < wire_ns.size(); ++k) {
        if (start_min[k] == ~std::uint64_t{0}) continue;
        const double bound = double(start_min[k]) + wire_ns[k] + rtt_min[k];
        r.ideal_last_ns = std::max(r.ideal_last_ns, static_cast<std::uint64_t>(bound));
    }
    r.last_ns = last;
    std::sort(fct.begin(), fct.end());
    std::sort(slow.begin(), slow.end());
    if (!fct.empty()) {
        r.fct_us[0] = fct.front();
        r.fct_us[1] = percentile(fct, 0.5);
        r.fct_us[2] = percentile(fct, 0.99);
        r.fct_us[3] = fct.back();
        r.slowdown[0] = percentile(slow, 0.5);
        r.slowdown[1] = percentile(slow, 0.99);
        r.slowdown[2] = slow.back();
        r.goodput_gbps = last > first ? double(bytes_done) * 8 / double(last - first) : 0;
        r.mean_flow_gbps = rate_sum / double(fct.size());
    }
    if (is_ring(o.workload)) r.collective = collective(o, t, c, overhead);
    r.virtual_ns = c.now;
    r.fabric = net.counters();
    r.engines = c.engines;
    r.steps = c.steps;
    r.fabric_memory_bytes = net.memory_bytes();
    r.pool_high_water = net.pool_high_water();
    r.wall_s = wall_s;
    r.peak_rss_bytes = peak_rss_bytes;
    return r;
}

void print_summary(std::FILE* out, const options& o, const netmodel::topology& t,
                   const run_result& r) {
    if (t.pods) {
        std::fprintf(out,
                     "topology    fattree: k %u, %u hosts (%u an edge), %u edges, %u aggregation "
                     "switches, %u cores; ",
                     t.pods, t.leaves * t.hosts_per_leaf, t.hosts_per_leaf, t.leaves,
                     t.pods * t.spines, t.spines * t.cores_per_agg);
    } else {
        std::fprintf(out, "topology    leafspine: %u leaves x %u hosts, %u spines; ", t.leaves,
                     t.hosts_per_leaf, t.spines);
    }
    std::fprintf(out, "%.0f Gb/s hosts, %.1f Gb/s fabric", t.host_link.rate_gbps,
                 t.fabric_link.rate_gbps);
    if (t.core_link) std::fprintf(out, ", %.1f Gb/s core", t.core_link->rate_gbps);
    std::fprintf(
        out, "; hop %llu ns; queue %llu B; ECN %llu..%llu B; trim %s; mtu %u\n",
        (unsigned long long)t.host_link.delay_ns, (unsigned long long)t.fabric_link.queue_bytes,
        (unsigned long long)t.fabric_link.ecn_kmin_bytes,
        (unsigned long long)t.fabric_link.ecn_kmax_bytes, o.trimming ? "on" : "off", o.mtu);
    const policy_names p = names_of(o);
    std::fprintf(out, "policies    lb %s, cc %s, mode %s, seed %llu%s%s", p.lb.c_str(),
                 p.cc.c_str(), p.mode.c_str(), (unsigned long long)o.seed,
                 o.switch_spray ? ", switch spray" : "", o.path_id ? ", path IDs" : "");
    if (o.transport == transport_kind::roce)
        std::fprintf(out, "; RoCEv2 RC, %u QP%s a host pair%s%s", o.qps, o.qps > 1 ? "s" : "",
                     o.qps > 1 ? ", " : "", o.qps > 1 ? qp_sched::to_string(o.qp_sched) : "");
    std::fputc('\n', out);
    std::fprintf(out, "flows       %zu (%zu unfinished, %llu failed messages)\n", r.flows.size(),
                 r.unfinished, (unsigned long long)r.failed_messages);
    std::fprintf(out, "FCT (us)    min %.1f  p50 %.1f  p99 %.1f  max %.1f\n", r.fct_us[0],
                 r.fct_us[1], r.fct_us[2], r.fct_us[3]);
    std::fprintf(out, "slowdown    p50 %.3f  p99 %.3f  max %.3f  (FCT / ideal FCT)\n",
                 r.slowdown[0], r.slowdown[1], r.slowdown[2]);
    std::fprintf(out, "last        %.1f us, ideal %.1f us, ratio %.3f  (%s)\n",
                 double(r.last_ns) / 1e3, double(r.ideal_last_ns) / 1e3,
                 r.ideal_last_ns ? double(r.last_ns) / double(r.ideal_last_ns) : 0.0,
                 r.unfinished ? "finished flows only" : "the whole workload");
    std::fprintf(out, "goodput     %.1f Gb/s in all, %.1f Gb/s mean per flow\n", r.goodput_gbps,
                 r.mean_flow_gbps);
    if (const collective_result& k = r.collective; k.present) {
        std::fprintf(out, "collective  %s over %u hosts, %u of %u steps of %llu B: ",
                     workload_name(o.workload), k.hosts, k.steps, k.total_steps,
                     (unsigned long long)k.chunk);
        if (k.finished)
            std::fprintf(out,
                         "%.1f us, ideal %.1f us, ratio %.3f; algbw %.1f Gb/s, busbw %.1f Gb/s "
                         "(ideal %.1f)\n",
                         double(k.time_ns) / 1e3, double(k.ideal_ns) / 1e3,
                         double(k.time_ns) / double(k.ideal_ns), k.algbw_gbps, k.busbw_gbps,
                         k.ideal_busbw_gbps);
        else
            std::fprintf(out, "unfinished, ideal %.1f us\n", double(k.ideal_ns) / 1e3);
    }
    using ull = unsigned long long;
    std::fprintf(out, "fabric      drops %llu, trims %llu, ECN marks %llu, blackholed %llu\n",
                 ull(r.fabric.dropped), ull(r.fabric.trimmed), ull(r.fabric.ecn_marked),
                 ull(r.fabric.blackholed));
    std::fprintf(out, "engines     retransmits %llu, timeouts %llu, ", ull(r.engines.retransmits),
                 ull(r.engines.timeouts));
    if (o.transport == transport_kind::roce)
        std::fprintf(out, "go-back-N rounds %llu, CNPs %llu, duplicates %llu",
                     ull(r.engines.go_back_rounds), ull(r.engines.cnps), ull(r.engines.duplicates));
    else
        std::fprintf(out, "trimmed received %llu", ull(r.engines.trimmed_received));
    if (o.path_id)
        std::fprintf(out, ", losses found by path ID %llu (path IDs out of range %llu)",
                     ull(r.engines.inferred_losses), ull(r.engines.path_ids_out_of_range));
    // Frames the engines refused, by reason (none in a healthy run but duplicates' kin).
    const char* sep = "; dropped: ";
    for (std::size_t k = 0; k < drop_reason_count; ++k) {
        if (r.engines.drops[k] == 0) continue;
        std::fprintf(out, "%s%s %llu", sep, to_string(static_cast<drop_reason>(k)),
                     ull(r.engines.drops[k]));
        sep = ", ";
    }
    std::fputc('\n', out);
    const double wall = r.wall_s > 0 ? r.wall_s : 1e-9;
    std::fprintf(out,
                 "run         virtual %.1f us; %llu events, %llu packet hops, %llu steps; wall "
                 "%.2f s, %.2f M events/s, %.0f ns per packet hop; peak RSS %.0f MB (fabric %.0f "
                 "MB, %zu frames at most)\n",
                 double(r.virtual_ns) / 1e3, ull(r.fabric.events), ull(r.fabric.hops), ull(r.steps),
                 r.wall_s, double(r.fabric.events) / wall / 1e6,
                 r.fabric.hops ? wall * 1e9 / double(r.fabric.hops) : 0.0,
                 double(r.peak_rss_bytes) / 1e6, double(r.fabric_memory_bytes) / 1e6,
                 r.pool_high_water);
}

std::string flows_csv(const run_result& r) {
    std::ostringstream out;
    csv_line(out, columns(0, {}), true);
    for (std::size_t i = 0; i < r.flows.size(); ++i)
        csv_line(out, columns(i, r.flows[i]), false);
    return out.str();
}

std::vector<std::pair<const char*, std::string>> summary_columns(const options& o,
                                                                 const run_result& r) {
    const auto n = [](std::uint64_t v) { return std::to_string(v); };
    char load[32];
    std::snprintf(load, sizeof load, "%g", o.load);
    const policy_names p = names_of(o);
    std::vector<std::pair<const char*, std::string>> cols = {
        {"lb", p.lb},
        {"cc", p.cc},
        {"mode", p.mode},
        {"seed", n(o.seed)},
        {"load", load},
        {"speed_gbps", fixed(o.speed_gbps, 0)},
        {"flows", n(r.flows.size())},
        {"unfinished", n(r.unfinished)},
        {"failed_messages", n(r.failed_messages)},
        {"fct_min_us", fixed(r.fct_us[0], 3)},
        {"fct_p50_us", fixed(r.fct_us[1], 3)},
        {"fct_p99_us", fixed(r.fct_us[2], 3)},
        {"fct_max_us", fixed(r.fct_us[3], 3)},
        {"slowdown_p50", fixed(r.slowdown[0], 4)},
        {"slowdown_p99", fixed(r.slowdown[1], 4)},
        {"slowdown_max", fixed(r.slowdown[2], 4)},
        {"last_us", fixed(double(r.last_ns) / 1e3, 3)},
        {"ideal_last_us", fixed(double(r.ideal_last_ns) / 1e3, 3)},
        {"goodput_gbps", fixed(r.goodput_gbps, 3)},
        {"mean_flow_gbps", fixed(r.mean_flow_gbps, 3)},
        {"drops", n(r.fabric.dropped)},
        {"trims", n(r.fabric.trimmed)},
        {"ecn_marks", n(r.fabric.ecn_marked)},
        {"blackholed", n(r.fabric.blackholed)},
        {"retransmits", n(r.engines.retransmits)},
        {"timeouts", n(r.engines.timeouts)},
        {"virtual_us", fixed(double(r.virtual_ns) / 1e3, 3)}};
    if (o.path_id) cols.insert(cols.end() - 1, {"path_id_nacks", n(r.engines.inferred_losses)});
    if (const collective_result& k = r.collective; k.present) {
        cols.insert(cols.end() - 1, {{"collective_us", fixed(double(k.time_ns) / 1e3, 3)},
                                     {"collective_ideal_us", fixed(double(k.ideal_ns) / 1e3, 3)},
                                     {"algbw_gbps", fixed(k.algbw_gbps, 3)},
                                     {"busbw_gbps", fixed(k.busbw_gbps, 3)}});
    }
    return cols;
}

std::string summary_csv(const options& o, const run_result& r) {
    std::ostringstream out;
    const auto cols = summary_columns(o, r);
    csv_line(out, cols, true);
    csv_line(out, cols, false);
    return out.str();
}

std::string to_json(const options& o, const run_result& r, const netmodel::fabric* links) {
    std::ostringstream out;
    using ull = unsigned long long;
    const policy_names p = names_of(o);
    out << "{\n  \"lb\": \"" << p.lb << "\", \"cc\": \"" << p.cc << "\", \"mode\": \"" << p.mode
        << "\", \"seed\": " << o.seed << ",\n  \"flows\": " << r.flows.size()
        << ", \"unfinished\": " << r.unfinished << ", \"failed_messages\": " << r.failed_messages
        << ",\n  \"fct_us\": {\"min\": " << fixed(r.fct_us[0], 3)
        << ", \"p50\": " << fixed(r.fct_us[1], 3) << ", \"p99\": " << fixed(r.fct_us[2], 3)
        << ", \"max\": " << fixed(r.fct_us[3], 3)
        << "},\n  \"slowdown\": {\"p50\": " << fixed(r.slowdown[0], 4)
        << ", \"p99\": " << fixed(r.slowdown[1], 4) << ", \"max\": " << fixed(r.slowdown[2], 4)
        << "},\n  \"last_us\": " << fixed(double(r.last_ns) / 1e3, 3)
        << ", \"ideal_last_us\": " << fixed(double(r.ideal_last_ns) / 1e3, 3)
        << ", \"goodput_gbps\": " << fixed(r.goodput_gbps, 3)
        << ", \"mean_flow_gbps\": " << fixed(r.mean_flow_gbps, 3);
    if (const collective_result& k = r.collective; k.present)
        out << ",\n  \"collective\": {\"workload\": \"" << workload_name(o.workload)
            << "\", \"hosts\": " << k.hosts << ", \"steps\": " << k.steps
            << ", \"total_steps\": " << k.total_steps << ", \"chunk_bytes\": " << k.chunk
            << ", \"finished\": " << (k.finished ? "true" : "false")
            << ", \"us\": " << fixed(double(k.time_ns) / 1e3, 3)
            << ", \"ideal_us\": " << fixed(double(k.ideal_ns) / 1e3, 3)
            << ", \"algbw_gbps\": " << fixed(k.algbw_gbps, 3)
            << ", \"busbw_gbps\": " << fixed(k.busbw_gbps, 3) << "}";
    out << ",\n  \"drops\": " << ull(r.fabric.dropped) << ", \"trims\": " << ull(r.fabric.trimmed)
        << ", \"ecn_marks\": " << ull(r.fabric.ecn_marked)
        << ", \"blackholed\": " << ull(r.fabric.blackholed)
        << ", \"retransmits\": " << ull(r.engines.retransmits)
        << ", \"timeouts\": " << ull(r.engines.timeouts);
    if (o.path_id) out << ", \"path_id_nacks\": " << ull(r.engines.inferred_losses);
    out << ",\n  \"virtual_ns\": " << r.virtual_ns << ", \"events\": " << ull(r.fabric.events)
        << ", \"packet_hops\": " << ull(r.fabric.hops) << ",\n  \"per_flow\": [\n";
    for (std::size_t i = 0; i < r.flows.size(); ++i) {
        out << "    {";
        bool first = true;
        for (const auto& [name, value] : columns(i, r.flows[i])) {
            out << (first ? "" : ", ") << '"' << name << "\": " << value;
            first = false;
        }
        out << (i + 1 < r.flows.size() ? "},\n" : "}\n");
    }
    out << "  ]";
    if (links) {
        out << ",\n  \"per_link\": [\n";
        for (std::uint32_t p = 0; p < links->port_count(); ++p) {
            out << "    {";
            bool first = true;
            for (const auto& [name, value] : link_columns(*links, p)) {
                const std::string_view n = name;
                out << (first ? "" : ", ") << '"' << name << "\": ";
                if (n == "name" || n == "kind")
                    out << '"' << value << '"';  // port names hold no quote or backslash
                else
                    out << (value.empty() ? "null" : value);
                first = false;
            }
            out << (p + 1 < links->port_count() ? "},\n" : "}\n");
        }
        out << "  ]";
    }
    out << "\n}\n";
    return out.str();
}

std::string links_csv(const netmodel::fabric& f) {
    std::ostringstream out;
    csv_line(out, link_columns(f, 0), true);
    for (std::uint32_t p = 0; p < f.port_count(); ++p)
        csv_line(out, link_columns(f, p), false);
    return out.str();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f || !f.write(text.data(), std::streamsize(text.size())) || !f.flush())
        throw usage_error("cannot write '" + path + "'");
}

}  // namespace uet::simcli
