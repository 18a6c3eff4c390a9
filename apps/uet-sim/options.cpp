#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "fabric/fabric.hpp"

namespace uet::simcli {

namespace {

struct unit {
    std::string_view name;
    double scale;
};

bool same_letters(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

// A non-negative finite number followed by one of the units (case-insensitive; "" is the
// bare number's), scaled. nullopt for anything else.
std::optional<double> quantity(std::string_view text, std::initializer_list<unit> units) {
    double v = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc{} || p == text.data() || !std::isfinite(v) || v < 0) return std::nullopt;
    const std::string_view suffix(p, static_cast<std::size_t>(end - p));
    for (const unit& u : units)
        if (same_letters(suffix, u.name)) return v * u.scale;
    return std::nullopt;
}

std::optional<std::uint64_t> whole(std::optional<double> v, double max) {
    if (!v || *v > max || *v != std::floor(*v)) return std::nullopt;
    return static_cast<std::uint64_t>(*v);
}

[[noreturn]] void fail(const std::string& what) {
    throw usage_error(what);
}

std::uint32_t count(std::string_view opt, std::string_view v, std::uint32_t lo, std::uint32_t hi) {
    const auto n = whole(quantity(v, {{"", 1}}), hi);
    if (!n || *n < lo)
        fail(std::string(opt) + ": '" + std::string(v) + "' is not a whole number in " +
             std::to_string(lo) + ".." + std::to_string(hi));
    return static_cast<std::uint32_t>(*n);
}

double ratio(std::string_view opt, std::string_view v) {
    const auto r = quantity(v, {{"", 1}});
    if (!r || !(*r > 0) || *r > 1000)
        fail(std::string(opt) + ": '" + std::string(v) + "' is not a ratio in (0, 1000]");
    return *r;
}

std::uint64_t bytes(std::string_view opt, std::string_view v, std::uint64_t lo, std::uint64_t hi) {
    const auto n = parse_bytes(v);
    if (!n || *n < lo || *n > hi)
        fail(std::string(opt) + ": '" + std::string(v) + "' is not a size in " +
             std::to_string(lo) + ".." + std::to_string(hi) + " bytes (e.g. 2MB, 64KiB)");
    return *n;
}

std::uint64_t time_ns(std::string_view opt, std::string_view v) {
    const auto n = parse_time_ns(v);
    if (!n) fail(std::string(opt) + ": '" + std::string(v) + "' is not a time (e.g. 10us, 2ms)");
    return *n;
}

// LINK@T, LINK=RATE@T
link_event event(std::string_view opt, std::string_view v, link_event::op what) {
    link_event e;
    e.what = what;
    e.text = std::string(v);
    const std::size_t at = v.rfind('@');
    if (at == std::string_view::npos)
        fail(std::string(opt) + ": '" + e.text + "' has no time (LINK" +
             (what == link_event::op::slow ? "=RATE" : "") + "@TIME)");
    std::string_view link = v.substr(0, at);
    e.at_ns = time_ns(opt, v.substr(at + 1));
    if (what == link_event::op::slow) {
        const std::size_t eq = link.rfind('=');
        if (eq == std::string_view::npos)
            fail(std::string(opt) + ": '" + e.text + "' has no rate (LINK=RATE@TIME)");
        const auto r = parse_rate_gbps(link.substr(eq + 1));
        if (!r || !(*r > 0))
            fail(std::string(opt) + ": '" + std::string(link.substr(eq + 1)) +
                 "' is not a rate > 0 (Gb/s, e.g. 25 or 400Mbps)");
        e.gbps = *r;
        link = link.substr(0, eq);
    }
    if (link.empty()) fail(std::string(opt) + ": '" + e.text + "' names no link");
    e.link = std::string(link);
    return e;
}

// What a library's parser made of v.
template <class T>
T known(std::string_view opt, std::string_view v, std::optional<T> parsed, const char* what,
        const char* names) {
    if (!parsed)
        fail(std::string(opt) + ": unknown " + what + " '" + std::string(v) + "' (" + names + ")");
    return *parsed;
}

// One of the names (the first of each value is the one listed in the message).
template <class T>
T pick(std::string_view opt, std::string_view v, const char* what,
       std::initializer_list<std::pair<std::string_view, T>> names) {
    std::string listed;
    for (const auto& [name, value] : names) {
        if (name == v) return value;
        if (listed.find(std::string(name)) == std::string::npos)
            listed += (listed.empty() ? "" : ", ") + std::string(name);
    }
    fail(std::string(opt) + ": unknown " + what + " '" + std::string(v) + "' (" + listed + ")");
}

// --lb and --cc by the transport's names (they may come before --transport), and the options
// one transport has and the other has not.
void resolve_transport(options& o, const std::set<std::string_view>& given, std::string_view lb,
                       std::string_view cc) {
    const bool roce = o.transport == transport_kind::roce;
    static constexpr std::string_view uet_lbs[] = {"static", "oblivious", "bitmap", "reps"};
    static constexpr std::string_view roce_lbs[] = {"ecmp", "spray", "switch-spray"};
    const auto in = [](std::string_view v, const auto& names) {
        return std::find(std::begin(names), std::end(names), v) != std::end(names);
    };
    const auto other = [&](std::string_view opt, std::string_view v, bool theirs) {
        if (theirs)
            fail(std::string(opt) + ": '" + std::string(v) + "' is " + (roce ? "UET's" : "RoCE's") +
                 (roce ? " (RoCE: " : " (--transport roce; UET: ") +
                 (opt == "--lb"
                      ? (roce ? "ecmp, spray, switch-spray)" : "static, oblivious, bitmap, reps)")
                      : (roce ? "dcqcn, none)" : "nscc, rccc, none)")));
    };
    if (!roce) {
        for (const std::string_view opt : {"--roce-mode", "--qps", "--qp-sched"})
            if (given.count(opt)) fail(std::string(opt) + ": only with --transport roce");
        other("--lb", lb, lb != "ecmp" && in(lb, roce_lbs));  // ecmp: static, for both
        other("--cc", cc, cc == "dcqcn");
        if (!lb.empty())
            o.lb = known("--lb", lb, lb::parse_algorithm(lb), "policy",
                         "static, oblivious, bitmap, reps");
        if (!cc.empty())
            o.cc = known("--cc", cc, cc::parse_algorithm(cc), "congestion control",
                         "nscc, rccc, none");
        return;
    }
    if (given.count("--mode")) fail("--mode: UET's delivery mode (RoCE: --roce-mode gbn|ooo)");
    if (o.mtu != 4096) fail("--mtu: RoCE runs a path MTU of 4096");
    if (given.count("--trim") && o.trimming)
        fail("--trim on: RoCE frames are not trimmed (off only)");
    o.trimming = false;
    other("--lb", lb, lb != "static" && in(lb, uet_lbs));
    other("--cc", cc, cc == "nscc" || cc == "rccc");
    if (!lb.empty())
        o.rlb = pick<roce_lb>("--lb", lb, "policy",
                              {{"ecmp", roce_lb::ecmp},
                               {"static", roce_lb::ecmp},
                               {"spray", roce_lb::spray},
                               {"switch-spray", roce_lb::switch_spray}});
    if (!cc.empty())
        o.dcqcn = pick<bool>("--cc", cc, "congestion control", {{"dcqcn", true}, {"none", false}});
    if (o.rlb == roce_lb::spray && !o.roce_ooo)
        fail(
            "--lb spray: needs --roce-mode ooo (go-back-N takes an overtaken packet for a lost "
            "one; "
            "--lb switch-spray shows it)");
    if (given.count("--qp-sched") && o.qps < 2) fail("--qp-sched: needs --qps 2 or more");
}

}  // namespace

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
    return whole(quantity(text, {{"", 1},
                                 {"B", 1},
                                 {"K", 1e3},
                                 {"KB", 1e3},
                                 {"M", 1e6},
                                 {"MB", 1e6},
                                 {"G", 1e9},
                                 {"GB", 1e9},
                                 {"KiB", 1024.0},
                                 {"MiB", 1048576.0},
                                 {"GiB", 1073741824.0}}),
                 1e15);
}

std::optional<std::uint64_t> parse_time_ns(std::string_view text) {
    const auto v = quantity(text, {{"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}});
    if (!v || *v > 1e15) return std::nullopt;
    return static_cast<std::uint64_t>(std::llround(*v));
}

std::optional<double> parse_rate_gbps(std::string_view text) {
    return quantity(text, {{"", 1}, {"G", 1}, {"Gbps", 1}, {"Mbps", 1e-3}, {"Tbps", 1e3}});
}

const char* usage() noexcept {
    return R"(usage: uet-sim [options]
       uet-sim sweep [grid] [options]   (uet-sim sweep --help)
Runs the real UET engines (one per host) over a fabric model in virtual time and reports flow
completion times. See docs/uet-sim.md.

topology
  --topology leafspine|fattree   (default leafspine)
  --leaves N --spines N --hosts-per-leaf N    leaf-spine size (default 2, 4, 8)
  --oversub R          a leaf's (fat tree: an edge's) hosts send R times what its uplinks
                       carry (hosts x speed / (uplinks x link rate)); default: links at --speed
  --core-oversub R     fat tree: an aggregation switch's edges send R times what its core
                       links carry; default: core links at the uplinks' rate
  --k K | --hosts N    3-tier k-ary fat tree (k^3/4 hosts), or the smallest one with N hosts
  --speed 100|200|400|800        link rate in Gb/s (default 100)
  --hop-latency T      per link (default 1us)
  --queue BYTES        per port (default one BDP of the unloaded RTT)
  --ecn-min BYTES --ecn-max BYTES   ECN marking thresholds (default 20%, 80% of the queue)
  --trim on|off        packet trimming in the switches (default on)
  --mtu BYTES          payload bytes per packet (default 4096)
  --switch-spray on|off   the leaves spray each packet over the spines, whatever its
                       entropy (default off: ECMP on the entropy)
  --path-id on|off     the leaves stamp the spine a packet goes to in its IPv4 identification
                       and receivers NACK a hole at once when every path has delivered past
                       it (default off; leaf-spine only, at most 64 spines)
workload
  --workload permutation|incast|alltoall|cm|ring-allgather|ring-allreduce|uniform
                       (default permutation)
  --size BYTES         bytes per flow (default 1MiB; 2MB, 64KiB, ...); a ring collective's
                       buffer, each step sending --size / N to the next host
  --steps K            ring: only the first K steps (all-gather N - 1, all-reduce 2(N - 1))
  --flows N            uniform: N flows (default 100), Poisson arrivals, random distinct pairs
  --cdf FILE           uniform: flow sizes drawn from FILE, lines "size_bytes probability"
                       (cumulative, rising to 1; apps/uet-sim/cdf/websearch.txt); none: --size
  --incast-degree N    incast senders (default every other host)
  --matrix FILE        flows from FILE (implies --workload cm): "src dst bytes start" per line,
                       or the UEC htsim .cm format ("Nodes N", "Connections C", "0->5 id 1
                       start 0 size 4096", start in us)
  --message BYTES      flows are posted as messages of this size (default 1MiB)
  --outstanding N      messages per flow in flight (default 8)
  --load L             the fraction of hosts that take part, in (0, 1] (default 1): a
                       permutation among them, that share of the incast's senders, a ring
                       over them; uniform: the offered load, a fraction of every host's link
                       rate (default 0.5)
policies
  --lb static|oblivious|bitmap|reps   (default oblivious)
  --cc nscc|rccc|none                 (default nscc)
  --mode rud|rod                      (default rud)
  --transport uet|roce (default uet) roce: RoCEv2 RC queue pairs (--qps per host pair), flows
                       as RDMA WRITEs with immediate, no trimming; then:
    --roce-mode gbn|ooo               go-back-N (default) or out-of-order placement
    --lb ecmp|spray|switch-spray      a source port per QP (default), a random one per packet
                                      (ooo only), or the leaves spraying every packet
    --cc dcqcn|none                   (default dcqcn)
    --qps N              RC QPs per host pair (default 1), each its own source port
    --qp-sched rr|stripe|cast|cast-wrr   how a message is split over them (default cast)
  --seed N             (default 1)
events (LINK: leaf0-spine1 both ways, leaf0->spine1 one way, h3-leaf0 a host's link)
  --fail LINK@T  --slow LINK=RATE@T  --restore LINK@T
output
  --csv FILE           one line per flow (byte-identical for the same seed)
  --json FILE          the summary, the flows and the links
  --summary-csv FILE   the summary's figures as a CSV header and one row
  --links FILE         one line per port (link direction): bytes, drops, trims, marks, queues
  --series FILE        time series: every host's and uplink's rate, bytes queued
  --sample T           the time series' interval (default 1us; doubled as the run grows
                       so that at most 512 samples are kept)
  --plot DIR           all of the above in DIR, and plots (SVG, PNG) by uet_sim_plot.py with
                       python3-matplotlib: FCT CDF, rates over time, per-uplink share
  --time-limit T       stop at this virtual time (default 1s)
  --no-progress        no progress line on stderr
  -h, --help
)";
}

const char* workload_name(workload_kind w) noexcept {
    switch (w) {
        case workload_kind::permutation:
            return "permutation";
        case workload_kind::incast:
            return "incast";
        case workload_kind::alltoall:
            return "alltoall";
        case workload_kind::matrix:
            return "cm";
        case workload_kind::ring_allgather:
            return "ring-allgather";
        case workload_kind::ring_allreduce:
            return "ring-allreduce";
        case workload_kind::uniform:
            return "uniform";
    }
    return "?";
}

options parse_options(int argc, const char* const* argv) {
    options o;
    bool workload_given = false;
    std::string_view lb_text, cc_text;  // resolved by the transport after the loop
    std::set<std::string_view> given;   // options seen (the map's keys, which outlive the call)
    using handler = std::function<void(std::string_view, std::string_view)>;
    const std::map<std::string_view, handler> with_value = {
        {"--topology",
         [&](auto opt, auto v) {
             o.topology = pick<topology_kind>(opt, v, "topology",
                                              {{"leafspine", topology_kind::leafspine},
                                               {"leaf-spine", topology_kind::leafspine},
                                               {"fattree", topology_kind::fattree},
                                               {"fat-tree", topology_kind::fattree}});
         }},
        {"--leaves",
         [&](auto opt, auto v) { o.leaves = count(opt, v, 1, netmodel::fabric::max_leaves); }},
        {"--spines", [&](auto opt, auto v) { o.spines = count(opt, v, 1, 65535); }},
        {"--hosts-per-leaf", [&](auto opt, auto v) { o.hosts_per_leaf = count(opt, v, 1, 255); }},
        {"--oversub", [&](auto opt, auto v) { o.oversubscription = ratio(opt, v); }},
        {"--core-oversub", [&](auto opt, auto v) { o.core_oversubscription = ratio(opt, v); }},
        {"--k", [&](auto opt, auto v) { o.k = count(opt, v, 2, 64); }},
        {"--hosts", [&](auto opt, auto v) { o.hosts = count(opt, v, 2, 65536); }},
        {"--speed",
         [&](auto opt, auto v) {
             const auto r = parse_rate_gbps(v);
             if (!r || (*r != 100 && *r != 200 && *r != 400 && *r != 800))
                 fail(std::string(opt) + ": '" + std::string(v) +
                      "' is not one of 100, 200, 400, 800 (Gb/s)");
             o.speed_gbps = *r;
         }},
        {"--hop-latency", [&](auto opt, auto v) { o.hop_latency_ns = time_ns(opt, v); }},
        {"--queue", [&](auto opt, auto v) { o.queue_bytes = bytes(opt, v, 1, 1ull << 32); }},
        {"--ecn-min", [&](auto opt, auto v) { o.ecn_min_bytes = bytes(opt, v, 0, 1ull << 32); }},
        {"--ecn-max", [&](auto opt, auto v) { o.ecn_max_bytes = bytes(opt, v, 0, 1ull << 32); }},
        {"--trim",
         [&](auto opt, auto v) {
             o.trimming = pick<bool>(opt, v, "setting", {{"on", true}, {"off", false}});
         }},
        {"--switch-spray",
         [&](auto opt, auto v) {
             o.switch_spray = pick<bool>(opt, v, "setting", {{"on", true}, {"off", false}});
         }},
        {"--path-id",
         [&](auto opt, auto v) {
             o.path_id = pick<bool>(opt, v, "setting", {{"on", true}, {"off", false}});
         }},
        {"--mtu",
         [&](auto opt, auto v) { o.mtu = static_cast<std::uint32_t>(bytes(opt, v, 256, 9000)); }},
        {"--workload",
         [&](auto opt, auto v) {
             workload_given = true;
             o.workload = pick<workload_kind>(opt, v, "workload",
                                              {{"permutation", workload_kind::permutation},
                                               {"incast", workload_kind::incast},
                                               {"alltoall", workload_kind::alltoall},
                                               {"all-to-all", workload_kind::alltoall},
                                               {"cm", workload_kind::matrix},
                                               {"matrix", workload_kind::matrix},
                                               {"ring-allgather", workload_kind::ring_allgather},
                                               {"ring-allreduce", workload_kind::ring_allreduce},
                                               {"uniform", workload_kind::uniform}});
         }},
        {"--cdf", [&](auto, auto v) { o.cdf = std::string(v); }},
        {"--flows", [&](auto opt, auto v) { o.flows = count(opt, v, 1, 10'000'000); }},
        {"--steps", [&](auto opt, auto v) { o.steps = count(opt, v, 1, 1u << 20); }},
        {"--size", [&](auto opt, auto v) { o.size_bytes = bytes(opt, v, 1, 1ull << 40); }},
        {"--incast-degree", [&](auto opt, auto v) { o.incast_degree = count(opt, v, 1, 65535); }},
        {"--matrix", [&](auto, auto v) { o.matrix = std::string(v); }},
        {"--message",
         [&](auto opt, auto v) {
             o.message_bytes = static_cast<std::uint32_t>(bytes(opt, v, 1, 16u << 20));
         }},
        {"--outstanding", [&](auto opt, auto v) { o.outstanding = count(opt, v, 1, 4096); }},
        {"--lb", [&](auto, auto v) { lb_text = v; }},
        {"--cc", [&](auto, auto v) { cc_text = v; }},
        {"--transport",
         [&](auto opt, auto v) {
             o.transport = pick<transport_kind>(
                 opt, v, "transport",
                 {{"uet", transport_kind::uet}, {"roce", transport_kind::roce}});
         }},
        {"--roce-mode",
         [&](auto opt, auto v) {
             o.roce_ooo = pick<bool>(opt, v, "RoCE mode", {{"gbn", false}, {"ooo", true}});
         }},
        {"--qps", [&](auto opt, auto v) { o.qps = count(opt, v, 1, 16); }},
        {"--qp-sched",
         [&](auto opt, auto v) {
             if (!qp_sched::parse(v, o.qp_sched))
                 fail(std::string(opt) + ": unknown scheduler '" + std::string(v) +
                      "' (rr, stripe, cast, cast-wrr)");
         }},
        {"--mode",
         [&](auto opt, auto v) {
             o.mode =
                 pick<delivery_mode>(opt, v, "delivery mode",
                                     {{"rud", delivery_mode::rud}, {"rod", delivery_mode::rod}});
         }},
        {"--seed",
         [&](auto opt, auto v) {
             const auto n = whole(quantity(v, {{"", 1}}), 1e18);
             if (!n) fail(std::string(opt) + ": '" + std::string(v) + "' is not a whole number");
             o.seed = *n;
         }},
        {"--fail",
         [&](auto opt, auto v) { o.events.push_back(event(opt, v, link_event::op::fail)); }},
        {"--slow",
         [&](auto opt, auto v) { o.events.push_back(event(opt, v, link_event::op::slow)); }},
        {"--restore",
         [&](auto opt, auto v) { o.events.push_back(event(opt, v, link_event::op::restore)); }},
        {"--load",
         [&](auto opt, auto v) {
             const auto r = quantity(v, {{"", 1}});
             if (!r || !(*r > 0) || *r > 1)
                 fail(std::string(opt) + ": '" + std::string(v) + "' is not a fraction in (0, 1]");
             o.load = *r;
         }},
        {"--csv", [&](auto, auto v) { o.csv = std::string(v); }},
        {"--links", [&](auto, auto v) { o.links_csv = std::string(v); }},
        {"--summary-csv", [&](auto, auto v) { o.summary_csv = std::string(v); }},
        {"--series", [&](auto, auto v) { o.series_csv = std::string(v); }},
        {"--plot", [&](auto, auto v) { o.plot_dir = std::string(v); }},
        {"--sample",
         [&](auto opt, auto v) {
             o.sample_ns = time_ns(opt, v);
             if (o.sample_ns == 0) fail(std::string(opt) + ": must be > 0");
         }},
        {"--json", [&](auto, auto v) { o.json = std::string(v); }},
        {"--time-limit",
         [&](auto opt, auto v) {
             o.time_limit_ns = time_ns(opt, v);
             if (o.time_limit_ns == 0) fail(std::string(opt) + ": must be > 0");
         }},
    };
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            o.help = true;
            continue;
        }
        if (arg == "--no-progress") {
            o.progress = false;
            continue;
        }
        std::string_view value;
        bool inline_value = false;
        if (const std::size_t eq = arg.find('='); arg.starts_with("--") && eq != arg.npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            inline_value = true;
        }
        const auto it = with_value.find(arg);
        if (it == with_value.end()) fail("unknown option '" + std::string(arg) + "' (see --help)");
        if (!inline_value) {
            if (i + 1 >= argc) fail(std::string(arg) + ": needs a value");
            value = argv[++i];
        }
        it->second(arg, value);
        given.insert(it->first);
    }
    resolve_transport(o, given, lb_text, cc_text);
    if (!o.matrix.empty() && !workload_given) o.workload = workload_kind::matrix;
    if (o.workload == workload_kind::matrix && o.matrix.empty())
        fail("--workload cm: needs --matrix FILE");
    if (o.workload != workload_kind::matrix && !o.matrix.empty())
        fail("--matrix: only with --workload cm");
    if (o.workload == workload_kind::matrix && o.load != 1)
        fail("--load: not with a matrix (its flows are as given)");
    const bool uniform = o.workload == workload_kind::uniform;
    for (const std::string_view opt : {"--cdf", "--flows"})
        if (!uniform && given.count(opt)) fail(std::string(opt) + ": only with --workload uniform");
    if (uniform && !given.count("--load")) o.load = 0.5;
    if (given.count("--steps") && !is_ring(o.workload))
        fail("--steps: only with --workload ring-allgather or ring-allreduce");
    if (o.ecn_min_bytes && o.ecn_max_bytes && *o.ecn_min_bytes > *o.ecn_max_bytes)
        fail("--ecn-min: above --ecn-max");
    // Each topology's own size options.
    const bool fat = o.topology == topology_kind::fattree;
    for (const std::string_view opt : {"--leaves", "--spines", "--hosts-per-leaf"})
        if (fat && given.count(opt))
            fail(std::string(opt) + ": leaf-spine only (a fat tree takes --k or --hosts)");
    for (const std::string_view opt : {"--k", "--hosts", "--core-oversub"})
        if (!fat && given.count(opt))
            fail(std::string(opt) + ": fat tree only (--topology fattree)");
    if (fat && o.k != 0 && o.hosts != 0) fail("--k: give --k or --hosts, not both");
    if (o.k % 2 != 0) fail("--k: must be even");
    if (o.path_id && fat) fail("--path-id: leaf-spine only");
    if (o.path_id && o.transport == transport_kind::roce)
        fail("--path-id: UET only (RoCE's responder takes no path IDs)");
    if (o.path_id && o.spines > max_path_ids)
        fail("--path-id: at most " + std::to_string(max_path_ids) + " spines (path IDs)");
    return o;
}

}  // namespace uet::simcli
