// Option parsing in perftest's habits: short options with a separate value ("-s 65536"),
// long ones with a separate value or "=value", the test name first, the server address last.
#include "options.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

namespace uet::perf {

std::string transport_name(const settings& s) {
    if (s.transport == transport::uet) return "UET";
    return s.roce_mode == roce_mode::go_back_n ? "RoCEv2 RC go-back-N" : "RoCEv2 RC out-of-order";
}

namespace {

struct test_names {
    test_kind kind;
    std::string_view name;
    std::string_view title;
};
constexpr std::array<test_names, test_count> tests{{
    {test_kind::write_bw, "write_bw", "RDMA_Write BW Test"},
    {test_kind::read_bw, "read_bw", "RDMA_Read BW Test"},
    {test_kind::send_bw, "send_bw", "Send BW Test"},
    {test_kind::atomic_bw, "atomic_bw", "Atomic %s BW Test"},
    {test_kind::write_lat, "write_lat", "RDMA_Write Latency Test"},
    {test_kind::read_lat, "read_lat", "RDMA_Read Latency Test"},
    {test_kind::send_lat, "send_lat", "Send Latency Test"},
    {test_kind::atomic_lat, "atomic_lat", "Atomic %s Latency Test"},
}};

// Reads an unsigned decimal in [lo, hi]; false on anything else.
bool parse_u64(std::string_view text, std::uint64_t lo, std::uint64_t hi, std::uint64_t& out) {
    if (text.empty() || text[0] == '-' || text[0] == '+') return false;
    const std::string s(text);
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno || end != s.c_str() + s.size() || v < lo || v > hi) return false;
    out = v;
    return true;
}

bool qp_sched_given(const qp_sched_attr& q) {
    return q.qps || q.scheduler || q.reset_interval_ms || q.update_interval_us || q.weight ||
           q.split_data_min || q.wrr_enable;
}

bool parse_seconds(std::string_view text, double& out) {
    const std::string s(text);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (errno || s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v <= 0 ||
        v > 86400)
        return false;
    out = v;
    return true;
}

bool parse_ipv4_prefix(std::string_view text, bool need_prefix) {
    const auto slash = text.find('/');
    if (need_prefix != (slash != std::string_view::npos)) return false;
    const std::string_view ip = text.substr(0, slash);
    if (!parse_endpoint_address(std::string(ip) + ":1")) return false;
    if (!need_prefix) return true;
    std::uint64_t len = 0;
    return parse_u64(text.substr(slash + 1), 1, 32, len);
}

template <class E, std::size_t N>
bool pick(std::string_view text, const std::array<std::pair<std::string_view, E>, N>& names,
          E& out) {
    for (const auto& [n, v] : names)
        if (n == text) {
            out = v;
            return true;
        }
    return false;
}

constexpr std::array<std::pair<std::string_view, delivery>, 4> modes{{{"rud", delivery::rud},
                                                                      {"rod", delivery::rod},
                                                                      {"rudi", delivery::rudi},
                                                                      {"uud", delivery::uud}}};
constexpr std::array<std::pair<std::string_view, transport>, 2> transports{
    {{"uet", transport::uet}, {"roce", transport::roce_rc}}};
constexpr std::array<std::pair<std::string_view, qp_scheduler>, 4> qp_schedulers{
    {{"rr", qp_scheduler::round_robin},
     {"stripe", qp_scheduler::stripe},
     {"cast", qp_scheduler::cast_stripe},
     {"cast-wrr", qp_scheduler::cast_wrr}}};
constexpr std::array<std::pair<std::string_view, roce_mode>, 2> roce_modes{
    {{"gbn", roce_mode::go_back_n}, {"ooo", roce_mode::out_of_order}}};
constexpr std::array<std::pair<std::string_view, congestion_control>, 3> ccs{
    {{"none", congestion_control::none},
     {"nscc", congestion_control::nscc},
     {"rccc", congestion_control::rccc}}};
constexpr std::array<std::pair<std::string_view, path_policy>, 4> lbs{
    {{"static", path_policy::static_path},
     {"oblivious", path_policy::oblivious},
     {"bitmap", path_policy::bitmap},
     {"reps", path_policy::reps}}};

class parser {
  public:
    parser(int argc, const char* const* argv) : argc_(argc), argv_(argv) {}
    parse_result run();

  private:
    bool take_value(std::string_view opt, std::string_view inline_value, std::string_view& v);
    bool option(std::string_view arg);
    bool numeric(std::string_view opt, std::string_view v);
    bool uet_option(std::string_view opt, std::string_view v);
    bool fail(std::string msg) {
        r_.error = std::move(msg);
        return false;
    }
    bool check();

    int argc_;
    const char* const* argv_;
    int i_ = 1;
    parse_result r_;
    bool check_tss();

    bool iterations_given_ = false, depth_given_ = false, size_given_ = false, mtu_given_ = false;
    bool tss_sdi_given_ = false, tss_epoch_given_ = false, atomic_type_given_ = false;
    std::string tss_key_file_;
};

bool parser::take_value(std::string_view opt, std::string_view inline_value, std::string_view& v) {
    if (!inline_value.empty()) {
        v = inline_value;
        return true;
    }
    if (i_ + 1 >= argc_) return fail(std::string(opt) + " needs a value");
    v = argv_[++i_];
    return true;
}

bool parser::numeric(std::string_view opt, std::string_view v) {
    settings& s = r_.s;
    std::uint64_t n = 0;
    if (opt == "-s" || opt == "--size") {
        if (!parse_u64(v, 1, std::uint64_t{1} << 31, n))
            return fail("-s: message size must be 1 .. 2147483648 bytes, not '" + std::string(v) +
                        "'");
        s.size = n;
        size_given_ = true;
    } else if (opt == "-n" || opt == "--iters") {
        if (!parse_u64(v, 1, std::uint64_t{1} << 40, n))
            return fail("-n: iterations must be a positive number, not '" + std::string(v) + "'");
        s.iterations = n;
        iterations_given_ = true;
    } else if (opt == "-D" || opt == "--duration") {
        double sec = 0;
        if (!parse_seconds(v, sec))
            return fail("-D: duration must be a positive number of seconds, not '" +
                        std::string(v) + "'");
        s.duration_ms = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(sec * 1000));
    } else if (opt == "-t" || opt == "--tx-depth") {
        if (!parse_u64(v, 1, 4096, n))
            return fail("-t: tx depth must be 1 .. 4096, not '" + std::string(v) + "'");
        s.tx_depth = static_cast<std::uint32_t>(n);
        depth_given_ = true;
    } else if (opt == "-Q" || opt == "--cq-mod") {
        if (!parse_u64(v, 1, 4096, n))
            return fail(
                "-Q: CQ moderation must be 1 .. 4096 operations per completion entry, not '" +
                std::string(v) + "'");
        s.cq_mod = static_cast<std::uint32_t>(n);
        s.cq_mod_given = true;
    } else if (opt == "-l" || opt == "--post_list") {
        if (!parse_u64(v, 1, 4096, n))
            return fail("-l: post list length must be 1 .. 4096 sends, not '" + std::string(v) +
                        "'");
        s.post_list = static_cast<std::uint32_t>(n);
    } else if (opt == "--recv_post_list") {
        if (!parse_u64(v, 1, 4096, n))
            return fail("--recv_post_list: list length must be 1 .. 4096 receives, not '" +
                        std::string(v) + "'");
        s.recv_post_list = static_cast<std::uint32_t>(n);
    } else if (opt == "-m" || opt == "--mtu") {
        if (!parse_u64(v, 64, 8192, n))
            return fail("-m: MTU (SES payload bytes per packet) must be 64 .. 8192, not '" +
                        std::string(v) + "'");
        s.mtu = static_cast<std::uint32_t>(n);
        mtu_given_ = true;
    } else if (opt == "--tss-sdi") {
        if (!parse_u64(v, 0, 0xffffff, n))
            return fail(
                "--tss-sdi must be a secure domain identifier 0 .. 16777215 (24 bits), not '" +
                std::string(v) + "'");
        s.tss_sdi = static_cast<std::uint32_t>(n);
        tss_sdi_given_ = true;
    } else if (opt == "--tss-epoch") {
        if (!parse_u64(v, 0, 0xffff, n))
            return fail("--tss-epoch must be 0 .. 65535 (16 bits), not '" + std::string(v) + "'");
        s.tss_epoch = static_cast<std::uint16_t>(n);
        tss_epoch_given_ = true;
    } else if (opt == "--port-mtu") {
        if (!parse_u64(v, 576, 9000, n))
            return fail("--port-mtu must be 576 .. 9000, not '" + std::string(v) + "'");
        s.port_mtu = static_cast<std::uint32_t>(n);
    } else if (opt == "--zero-copy-min") {
        if (!parse_u64(v, 0, 0xffffffff, n))
            return fail("--zero-copy-min must be a number of bytes (0: always copy), not '" +
                        std::string(v) + "'");
        s.zero_copy_min = static_cast<std::uint32_t>(n);
    } else if (opt == "--ack-every") {
        if (!parse_u64(v, 1, 256, n))
            return fail("--ack-every must be 1 .. 256 packets, not '" + std::string(v) + "'");
        s.ack_every = static_cast<std::uint32_t>(n);
    } else if (opt == "-p" || opt == "--port") {
        if (!parse_u64(v, 1, 0xffffff, n))
            return fail("-p: port (the uet job id of the run) must be 1 .. 16777215, not '" +
                        std::string(v) + "'");
        s.job_id = static_cast<std::uint32_t>(n);
    } else if (opt == "--pdcs") {
        if (!parse_u64(v, 1, 16, n))
            return fail("--pdcs must be 1 .. 16, not '" + std::string(v) + "'");
        s.pdcs = static_cast<std::uint32_t>(n);
    } else if (opt == "-u" || opt == "--qp-timeout") {
        if (!parse_u64(v, 0, 31, n))
            return fail("-u: QP timeout must be 0 .. 31 (4.096 us x 2^N), not '" + std::string(v) +
                        "'");
        s.roce.ack_timeout = static_cast<std::uint8_t>(n);
        s.roce_attr_given = true;
    } else if (opt == "--retry_count") {
        if (!parse_u64(v, 0, 7, n))
            return fail("--retry_count must be 0 .. 7, not '" + std::string(v) + "'");
        s.roce.retry_cnt = static_cast<std::uint8_t>(n);
        s.roce_attr_given = true;
    } else if (opt == "--rnr_retry") {
        if (!parse_u64(v, 0, 7, n))
            return fail("--rnr_retry must be 0 .. 7 (7: for ever), not '" + std::string(v) + "'");
        s.roce.rnr_retry = static_cast<std::uint8_t>(n);
        s.roce_attr_given = true;
    } else if (opt == "--min_rnr_timer") {
        if (!parse_u64(v, 0, 31, n))
            return fail("--min_rnr_timer must be an IBTA code 0 .. 31, not '" + std::string(v) +
                        "'");
        s.roce.min_rnr_timer = static_cast<std::uint8_t>(n);
        s.roce_attr_given = true;
    } else if (opt == "--qps") {
        if (!parse_u64(v, 1, 128, n))
            return fail("--qps: queue pairs per connection must be 1 .. 128, not '" +
                        std::string(v) + "'");
        s.qp_sched.qps = static_cast<std::uint32_t>(n);
    } else if (opt == "--qp-split-min") {
        if (!parse_u64(v, 0, std::uint64_t{1} << 40, n))
            return fail("--qp-split-min must be a number of bytes, not '" + std::string(v) + "'");
        s.qp_sched.split_data_min = n;
    } else if (opt == "--qp-update-us") {
        if (!parse_u64(v, 1, std::uint64_t{1} << 40, n))
            return fail("--qp-update-us must be a positive number of microseconds, not '" +
                        std::string(v) + "'");
        s.qp_sched.update_interval_us = n;
    } else if (opt == "--qp-reset-ms") {
        if (!parse_u64(v, 0, std::uint64_t{1} << 40, n))
            return fail("--qp-reset-ms must be a number of milliseconds (0: never), not '" +
                        std::string(v) + "'");
        s.qp_sched.reset_interval_ms = n;
    } else if (opt == "--qp-weight") {
        double w = 0;  // parse_seconds takes any number in (0, 86400]
        if (v != "0" && (!parse_seconds(v, w) || w > 1))
            return fail("--qp-weight must be 0 (the average) or in (0, 1], not '" + std::string(v) +
                        "'");
        s.qp_sched.weight = w;
    } else if (opt == "--corrupt") {
        if (!parse_u64(v, 1, std::uint64_t{1} << 40, n))
            return fail("--corrupt: iteration must be a positive number");
        s.corrupt_iteration = n;
    } else if (opt == "--timeout") {
        if (!parse_seconds(v, s.timeout_s))
            return fail("--timeout must be a positive number of seconds");
    } else {
        return false;
    }
    return true;
}

bool parser::uet_option(std::string_view opt, std::string_view v) {
    settings& s = r_.s;
    if (opt == "--dev") {
        s.dev = v;
    } else if (opt == "--eal") {
        s.eal = v;
    } else if (opt == "--ip") {
        if (!parse_ipv4_prefix(v, true))
            return fail(
                "--ip wants this side's address with its prefix length, A.B.C.D/LEN, not '" +
                std::string(v) + "'");
        s.ip = v;
    } else if (opt == "--gw") {
        if (!parse_ipv4_prefix(v, false))
            return fail("--gw wants an IPv4 address, not '" + std::string(v) + "'");
        s.gw = v;
    } else if (opt == "--mode") {
        if (!pick(v, modes, s.mode))
            return fail("--mode must be rud, rod, rudi or uud, not '" + std::string(v) + "'");
    } else if (opt == "--cc") {
        if (!pick(v, ccs, s.cc))
            return fail("--cc must be none, nscc or rccc, not '" + std::string(v) + "'");
    } else if (opt == "--lb") {
        if (!pick(v, lbs, s.lb))
            return fail("--lb must be static, oblivious, bitmap or reps, not '" + std::string(v) +
                        "'");
    } else if (opt == "--transport") {
        if (!pick(v, transports, s.transport))
            return fail("--transport must be uet or roce, not '" + std::string(v) + "'");
    } else if (opt == "-A" || opt == "--atomic_type") {
        if (v != "CMP_AND_SWAP" && v != "FETCH_AND_ADD")
            return fail("-A must be CMP_AND_SWAP or FETCH_AND_ADD, not '" + std::string(v) + "'");
        s.compare_and_swap = v == "CMP_AND_SWAP";
        atomic_type_given_ = true;
    } else if (opt == "--roce-mode") {
        if (!pick(v, roce_modes, s.roce_mode))
            return fail("--roce-mode must be gbn or ooo, not '" + std::string(v) + "'");
    } else if (opt == "--qp-sched") {
        qp_scheduler q{};
        if (!pick(v, qp_schedulers, q))
            return fail("--qp-sched must be rr, stripe, cast or cast-wrr, not '" + std::string(v) +
                        "'");
        s.qp_sched.scheduler = q;
    } else if (opt == "--provider") {
        if (v != "pipe" && v != "dpdk")
            return fail("--provider must be pipe or dpdk, not '" + std::string(v) + "'");
        s.provider = v;
    } else if (opt == "--out_json_file") {
        s.out_json_file = v;
        s.out_json = true;
    } else if (opt == "--pcap") {
        s.pcap_file = v;
    } else if (opt == "--tss-key-file") {
        tss_key_file_ = v;
    } else {
        return false;
    }
    return true;
}

bool parser::option(std::string_view arg) {
    std::string_view opt = arg, inline_value;
    if (arg.starts_with("--")) {
        const auto eq = arg.find('=');
        if (eq != std::string_view::npos) {
            opt = arg.substr(0, eq);
            inline_value = arg.substr(eq + 1);
            if (inline_value.empty()) return fail(std::string(opt) + " needs a value");
        }
    }
    settings& s = r_.s;
    if (opt == "-a" || opt == "--all") {
        s.all_sizes = true;
    } else if (opt == "-b" || opt == "--bidirectional") {
        s.bidirectional = true;
    } else if (opt == "-F" || opt == "--CPU-freq") {
        // Accepted for perftest habits: uet-perf converts the TSC to ns itself (no MHz check).
    } else if (opt == "--report_gbits") {
        s.report_gbits = true;
    } else if (opt == "--out_json") {
        s.out_json = true;
    } else if (opt == "--verify") {
        s.verify = true;
    } else if (opt == "--distinct-buffers") {
        s.distinct_buffers = true;
    } else if (opt == "--multi-recv") {
        s.multi_recv = true;
    } else if (opt == "--stats") {
        s.stats = true;
    } else if (opt == "--time-stages") {
        s.stats = s.time_stages = true;  // shown in the counters
    } else if (opt == "--trust-link-mtu") {
        s.trust_link_mtu = true;
    } else if (opt == "--no-busy-poll") {
        s.busy_poll = false;
    } else if (opt == "--no-udp-checksum") {
        s.udp_checksum = checksum_policy::off;
    } else if (opt == "--udp-checksum") {
        s.udp_checksum = checksum_policy::on;
    } else if (opt == "--zero-copy") {
        s.zero_copy = zero_copy_policy::on;
    } else if (opt == "--no-zero-copy") {
        s.zero_copy = zero_copy_policy::off;
    } else if (opt == "--no-ack-answers") {
        s.ack_answers = false;
    } else if (opt == "--tss") {
        s.tss = true;
    } else if (opt == "--qp-wrr") {
        s.qp_sched.wrr_enable = true;
    } else if (opt == "-h" || opt == "--help") {
        s.help = true;
    } else {
        static constexpr std::array<std::string_view, 51> valued{"-s",
                                                                 "--size",
                                                                 "-n",
                                                                 "--iters",
                                                                 "-D",
                                                                 "--duration",
                                                                 "-t",
                                                                 "--tx-depth",
                                                                 "-m",
                                                                 "--mtu",
                                                                 "-p",
                                                                 "--port",
                                                                 "--pdcs",
                                                                 "--corrupt",
                                                                 "--timeout",
                                                                 "--dev",
                                                                 "--eal",
                                                                 "--ip",
                                                                 "--gw",
                                                                 "--mode",
                                                                 "--cc",
                                                                 "--lb",
                                                                 "--provider",
                                                                 "--out_json_file",
                                                                 "--port-mtu",
                                                                 "--zero-copy-min",
                                                                 "--ack-every",
                                                                 "-Q",
                                                                 "--cq-mod",
                                                                 "-l",
                                                                 "--post_list",
                                                                 "--recv_post_list",
                                                                 "--pcap",
                                                                 "--transport",
                                                                 "--roce-mode",
                                                                 "-A",
                                                                 "--atomic_type",
                                                                 "--qps",
                                                                 "--qp-sched",
                                                                 "--qp-split-min",
                                                                 "--qp-update-us",
                                                                 "--qp-reset-ms",
                                                                 "--qp-weight",
                                                                 "-u",
                                                                 "--qp-timeout",
                                                                 "--retry_count",
                                                                 "--rnr_retry",
                                                                 "--min_rnr_timer",
                                                                 "--tss-sdi",
                                                                 "--tss-epoch",
                                                                 "--tss-key-file"};
        bool known = false;
        for (auto k : valued)
            known = known || k == opt;
        if (!known) return fail("unknown option '" + std::string(arg) + "' (see --help)");
        std::string_view v;
        if (!take_value(opt, inline_value, v)) return false;
        if (numeric(opt, v)) return true;
        if (!r_.error.empty()) return false;
        return uet_option(opt, v);
    }
    if (!inline_value.empty()) return fail(std::string(opt) + " takes no value");
    return true;
}

bool parser::check() {
    settings& s = r_.s;
    if (s.pdcs > 1 && s.mode != delivery::rud)
        return fail("--pdcs " + std::to_string(s.pdcs) +
                    ": parallel PDCs carry RUD only (ROD's order is one PDC's, RUDI has none)");
    if (s.mode == delivery::uud && test_kind::send_lat != s.test && test_kind::send_bw != s.test)
        return fail("--mode uud carries sends only (no RMA or atomics): use send_bw or send_lat");
    if (s.mode == delivery::uud)
        return fail(
            "--mode uud is unreliable: a lost message would stall the ping-pong and the "
            "count; uet-perf needs a reliable mode (rud, rod, rudi)");
    if (is_atomic(s.test)) {
        if (size_given_ && s.size != 8)
            return fail("atomic tests use 8-byte operands (a uint64): -s must be 8");
        if (s.all_sizes) return fail("-a does not apply to atomic tests (8 bytes only)");
        s.size = 8;
        // Compare-and-swaps on one slot must run in the order they were posted (see
        // settings::compare_and_swap); RUD, RUDI and several queue pairs reorder them.
        const char* env_qps = std::getenv("NCCL_IB_QPS_PER_CONNECTION");
        const bool one_qp =
            s.qp_sched.qps ? *s.qp_sched.qps == 1 : !env_qps || std::string_view(env_qps) == "1";
        const bool ordered = s.transport == transport::roce_rc ? one_qp : s.mode == delivery::rod;
        if (s.compare_and_swap && s.verify && !ordered)
            return fail(
                "-A CMP_AND_SWAP --verify needs operations executed in the order posted: "
                "use --mode rod, or --transport roce with one queue pair");
    } else if (atomic_type_given_) {
        return fail("-A applies to atomic_bw and atomic_lat only");
    }
    if (s.all_sizes && size_given_) return fail("-a and -s exclude each other");
    if (s.duration_ms && iterations_given_) return fail("-D and -n exclude each other");
    if (!is_bw(s.test)) {
        if (!iterations_given_) s.iterations = 1000;
        if (depth_given_ && s.tx_depth != 1)
            return fail("-t: latency tests keep one operation in flight");
        s.tx_depth = 1;
        if (s.bidirectional) return fail("-b applies to bandwidth tests only");
    }
    if (s.corrupt_iteration && !s.verify) return fail("--corrupt needs --verify");
    if (s.recv_post_list > 1) {
        if (s.test != test_kind::send_bw)
            return fail("--recv_post_list: post lists of receives are send_bw's only");
        if (s.multi_recv)
            return fail(
                "--recv_post_list and --multi-recv exclude each other (a multi-receive "
                "buffer takes many messages; it is posted alone)");
        if (s.recv_post_list > s.tx_depth)
            return fail("--recv_post_list " + std::to_string(s.recv_post_list) +
                        " is longer than the depth (-t " + std::to_string(s.tx_depth) + ")");
    }
    if (s.post_list > 1) {
        if (s.test != test_kind::send_bw)
            return fail("-l: post lists are of sends (endpoint::send_list): send_bw only");
        if (s.post_list > s.tx_depth)
            return fail("-l " + std::to_string(s.post_list) + " is longer than the tx depth (-t " +
                        std::to_string(s.tx_depth) + ")");
        // perftest's rule: the list's last send asks for the entry.
        if (!s.cq_mod_given)
            s.cq_mod = s.post_list;
        else if (s.post_list % s.cq_mod != 0)
            return fail("-l " + std::to_string(s.post_list) + " must be a multiple of -Q " +
                        std::to_string(s.cq_mod));
    }
    if (s.multi_recv) {
        if (!is_send(s.test))
            return fail(
                "--multi-recv applies to send_bw and send_lat only (the receives of sends; "
                "writes, reads and atomics post none)");
        // -a goes on past the limit: those sizes fall back to plain receives (and say so).
        if (!s.all_sizes && s.size >= multi_recv_below)
            return fail("--multi-recv: messages of " + std::to_string(multi_recv_below) +
                        " bytes or more go as deferrable sends, which multi-receive buffers do "
                        "not take: give -s below " +
                        std::to_string(multi_recv_below) +
                        (size_given_ ? "" : " (the default -s is 65536)"));
    }
    if (s.transport == transport::roce_rc) {
        // What means nothing on RC queue pairs (endpoint_attr's refusals, said with options).
        if (s.multi_recv) return fail("--multi-recv: roce_rc has no multi-receive buffers");
        if (s.mode != delivery::rud) return fail("--mode: RoCE RC is reliable and ordered");
        if (s.pdcs != 1) return fail("--pdcs: roce_rc takes --qps (queue pairs per peer)");
        if (!s.ack_answers) return fail("--no-ack-answers applies to UET only");
        if (s.cc == congestion_control::rccc) return fail("--cc rccc applies to UET only");
        if (s.lb == path_policy::bitmap)
            return fail("--lb bitmap: roce_rc takes static, or oblivious with --roce-mode ooo");
        if (s.lb == path_policy::oblivious && s.roce_mode != roce_mode::out_of_order)
            return fail(
                "--lb oblivious sprays packets, which go-back-N takes as losses: add "
                "--roce-mode ooo");
    }
    if (s.transport != transport::roce_rc && qp_sched_given(s.qp_sched))
        return fail("--qps, --qp-sched and the --qp-* knobs apply to --transport roce only");
    if (s.transport != transport::roce_rc && s.roce_attr_given)
        return fail(
            "-u, --retry_count, --rnr_retry and --min_rnr_timer are QP attributes: --transport "
            "roce only");
    if (s.provider == "dpdk" && s.dev.empty())
        return fail("--dev is required with the dpdk provider (or use --provider pipe)");
    if (s.provider == "dpdk" && s.ip.empty())
        return fail("--ip A.B.C.D/LEN is required with the dpdk provider");
    if (s.provider == "dpdk" && !mtu_given_) {
        // The largest multiple of 64 that leaves room for the headers (-m's own limit, 8192,
        // at --port-mtu 9000; --trust-link-mtu alone does not raise it).
        s.mtu = largest_dpdk_mtu(s.port_mtu ? s.port_mtu : 1500);
    }
    if (!s.server.empty() && s.provider == "pipe")
        return fail("--provider pipe runs server and client in this process: give no address");
    return check_tss();
}

bool parser::check_tss() {
    settings& s = r_.s;
    if (!s.tss) {
        if (tss_sdi_given_ || tss_epoch_given_ || !tss_key_file_.empty())
            return fail("--tss-sdi, --tss-epoch and --tss-key-file apply with --tss only");
        return true;
    }
    if (s.transport != transport::uet) return fail("--tss applies to --transport uet only");
    std::string why;
    if (!tss_key_file_.empty()) {
        if (auto k = tss_key::from_file(tss_key_file_, why)) {
            s.tss_key_bytes = std::move(*k);
            return true;
        }
        return fail("--tss-key-file " + tss_key_file_ + ": " + why);
    }
    const char* env = std::getenv("UET_TSS_KEY");
    if (env == nullptr)
        return fail(
            "--tss needs the secure domain's key: --tss-key-file FILE (32 bytes, or 64 hex "
            "digits) or UET_TSS_KEY (64 hex digits); never on the command line");
    if (auto k = tss_key::from_hex(env)) {
        s.tss_key_bytes = std::move(*k);
        return true;
    }
    return fail("UET_TSS_KEY must be 64 hex digits (a 32-byte key)");
}

parse_result parser::run() {
    if (argc_ < 2) {
        r_.error =
            "no test given (write_bw, read_bw, send_bw, atomic_bw, write_lat, read_lat, "
            "send_lat, atomic_lat)";
        return r_;
    }
    bool have_test = false;
    for (; i_ < argc_; ++i_) {
        const std::string_view arg = argv_[i_];
        if (arg.size() > 1 && arg[0] == '-') {
            if (!option(arg)) return r_;
            if (r_.s.help) return r_;
            continue;
        }
        if (!have_test) {
            bool found = false;
            for (const auto& t : tests)
                if (t.name == arg) {
                    r_.s.test = t.kind;
                    found = true;
                }
            if (!found) {
                r_.error = "unknown test '" + std::string(arg) +
                           "' (write_bw, read_bw, send_bw, atomic_bw, write_lat, read_lat, "
                           "send_lat, atomic_lat)";
                return r_;
            }
            have_test = true;
        } else if (r_.s.server.empty()) {
            const std::string a(arg);
            if (!parse_endpoint_address(a.find(':') == std::string::npos ? a + ":4793" : a)) {
                r_.error = "server address must be A.B.C.D or A.B.C.D:PORT, not '" + a + "'";
                return r_;
            }
            r_.s.server = a;
        } else {
            r_.error = "unexpected argument '" + std::string(arg) + "'";
            return r_;
        }
    }
    if (!have_test) {
        r_.error = "no test given (write_bw, ... see --help)";
        return r_;
    }
    check();
    return r_;
}

}  // namespace

std::string_view name_of(test_kind t) noexcept {
    return tests[static_cast<std::size_t>(t)].name;
}
std::string_view title_of(test_kind t) noexcept {
    return tests[static_cast<std::size_t>(t)].title;
}
std::string title_of(const settings& s) {
    std::string t(title_of(s.test));
    if (const auto at = t.find("%s"); at != std::string::npos)
        t.replace(at, 2, s.compare_and_swap ? "CMP_AND_SWAP" : "FETCH_AND_ADD");
    return t;
}
bool is_atomic(test_kind t) noexcept {
    return t == test_kind::atomic_bw || t == test_kind::atomic_lat;
}
std::string_view name_of(delivery d) noexcept {
    return modes[static_cast<std::size_t>(d)].first;
}
std::string_view name_of(congestion_control c) noexcept {
    return ccs[static_cast<std::size_t>(c)].first;
}
std::string_view name_of(path_policy p) noexcept {
    return lbs[static_cast<std::size_t>(p)].first;
}

std::vector<std::uint64_t> settings::sizes() const {
    if (!all_sizes) return {size};
    std::vector<std::uint64_t> v;
    for (std::uint64_t s = 2; s <= (std::uint64_t{1} << 23); s <<= 1)
        v.push_back(s);
    return v;
}

parse_result parse_options(int argc, const char* const* argv) {
    return parser(argc, argv).run();
}

std::string usage() {
    return "usage: uet-perf TEST [options]                 (server)\n"
           "       uet-perf TEST [options] SERVER-ADDRESS  (client; the same options)\n"
           "       uet-perf TEST --provider pipe [options]  (both in this process, no DPDK)\n"
           "TEST: write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat atomic_lat\n"
           "\n"
           "  -s SIZE            message size in bytes (default 65536; atomics: 8)\n"
           "  -A TYPE            atomic tests: FETCH_AND_ADD (default) or CMP_AND_SWAP\n"
           "  -a                 all sizes 2 .. 2^23\n"
           "  -n N               iterations (default 5000 for BW tests, 1000 for latency tests)\n"
           "  -D SECONDS         run for a duration instead of -n\n"
           "  -t DEPTH           operations in flight (BW tests; default 128)\n"
           "  -Q N, --cq-mod N   BW tests: one operation in N asks for a completion entry, the\n"
           "                     others are counted without one (default 100, at most the depth;\n"
           "                     1 with --verify or --distinct-buffers); failures always report\n"
           "  -l N               --post_list N: send_bw posts its sends in lists of N, one\n"
           "                     call each (endpoint::send_list); -Q is N unless given, and\n"
           "                     must divide it\n"
           "  --recv_post_list N send_bw: the receiving side posts its receives in lists of N\n"
           "                     (endpoint::recv_list)\n"
           "  -m MTU             SES payload bytes per packet, 64 .. 8192 (default 4096)\n"
           "  -b                 bidirectional (BW tests): both sides send, the sum is reported\n"
           "  -p PORT            the uet job id of the run (default 4793): concurrent runs\n"
           "                     on one network use different -p\n"
           "  -F                 accepted (no CPU frequency check: timing uses the TSC in ns)\n"
           "  --report_gbits     BW in Gb/sec instead of MiB/sec\n"
           "  --out_json         print the results as JSON too\n"
           "  --out_json_file F  write them to F\n"
           "  --pcap F           record every frame of the run in pcap file F (this side's;\n"
           "                     pipe: both sides'), to read with uet-dump or Wireshark\n"
           "UET:\n"
           "  --provider P       dpdk (default) or pipe (in-process, virtual network)\n"
           "  --dev DEV          DPDK vdev string, interface name (af_packet), xdp:IFACE\n"
           "                     (af_xdp) or PCI address\n"
           "  --eal \"ARGS\"       extra EAL arguments\n"
           "  --ip A.B.C.D/LEN   this side's uet address\n"
           "  --gw A.B.C.D       next hop for a server outside the prefix\n"
           "  --port-mtu N       the DPDK port's IP MTU (default 1500; -m defaults to what fits)\n"
           "  --zero-copy-min N  payloads of N bytes or more leave registered memory without a\n"
           "                     copy where the port chains buffers (default 1024; 0: copy)\n"
           "  --zero-copy        chain from --zero-copy-min on virtual devices too (memif,\n"
           "                     af_packet...: by default from 4096 bytes only there)\n"
           "  --no-zero-copy     copy every payload\n"
           "  --trust-link-mtu   af_packet: use the interface's MTU (jumbo frames)\n"
           "  --no-udp-checksum  send UDP checksum 0 (trusted links): no payload summed\n"
           "  --udp-checksum     sum every frame, memif too (default: off on memif, on elsewhere)\n"
           "  --no-ack-answers   answer every request with a response message, not in the ACK\n"
           "  --ack-every N      the receiver owes an ACK every N packets (N x MTU bytes), 1..256\n"
           "                     (default 16 packets or 16 KiB); owed ACKs leave once per burst\n"
           "  --mode M           rud (default), rod, rudi\n"
           "  --cc C             nscc (default), rccc, none\n"
           "  --lb L             reps (default), oblivious, bitmap, static\n"
           "                     (--cc none --lb static: the fixed-window, one-path baseline,\n"
           "                     for point-to-point benchmarks; not for a shared fabric)\n"
           "  --pdcs N           parallel RUD PDCs to the peer, 1..16 (default 1)\n"
           "  --verify           check every byte received against its pattern (own buffers)\n"
           "  --distinct-buffers a buffer per operation in flight on each side (default:\n"
           "                     perftest's 4 KiB cycle buffer; one buffer above 2 KiB)\n"
           "  --corrupt N        self-test of --verify: corrupt iteration N at its source\n"
           "  --multi-recv       send_bw, send_lat: the receiving side keeps 2 multi-receive\n"
           "                     buffers posted (FI_MULTI_RECV), many messages each, instead of\n"
           "                     a receive per message; -s below 65536 (-a: plain receives\n"
           "                     from 65536 up)\n"
           "  --transport T      uet (default) or roce: RoCEv2 RC queue pairs, one per peer\n"
           "  --roce-mode M      with roce: gbn (go-back-N, the default) or ooo (out-of-order)\n"
           "  -u, --qp-timeout N with roce: local ACK timeout 4.096 us x 2^N (0..31, 14)\n"
           "  --retry_count N    with roce: timeouts without progress before an error (0..7, 7)\n"
           "  --rnr_retry N      with roce: RNR NAKs taken before an error (0..7; 7 for ever)\n"
           "  --min_rnr_timer N  with roce: the wait an RNR NAK asks for (IBTA code 0..31, 1)\n"
           "  --qps N            with roce: queue pairs per connection, 1..128 (each its own\n"
           "                     ECMP path; NCCL_IB_QPS_PER_CONNECTION, default 1)\n"
           "  --qp-sched S       how writes and reads use them: rr (each to the next QP), stripe\n"
           "                     (split evenly), cast (split by RTT weights), cast-wrr (each to\n"
           "                     one QP by weight); default from NCCL_IB_QP_SCHED_ENABLE and\n"
           "                     NCCL_IB_SPLIT_DATA_ON_QPS, else rr\n"
           "  --qp-split-min B   smallest subchunk, else the request goes whole (65536)\n"
           "  --qp-update-us U   CAST weights refreshed every U us (50)\n"
           "  --qp-reset-ms M    the RTT average restarts every M ms (60000; 0 never)\n"
           "  --qp-weight W      0: the RTT average (default); else a moving average's weight\n"
           "  --qp-wrr           below the split size, pick the QP by weight (not in turn)\n"
           "  --tss              seal every frame (UET's TSS, AES-256-GCM); both sides must\n"
           "                     use it with the same key and SDI. The key: --tss-key-file or\n"
           "                     UET_TSS_KEY (64 hex digits), never the command line\n"
           "  --tss-key-file F   the secure domain's key: 32 bytes, or 64 hex digits\n"
           "  --tss-sdi N        the secure domain identifier, 0..16777215 (default 1)\n"
           "  --tss-epoch N      the domain's epoch, 0..65535 (default 0): frames of an epoch\n"
           "                     older than the one before it are dropped (stale_epoch)\n"
           "  --stats            endpoint counters at the end\n"
           "  --time-stages      --stats with the port's time per frame by stage (dpdk)\n"
           "  --timeout S        give up on a peer that does not answer (default 10 s)\n"
           "  --no-busy-poll     let an idle port back off\n";
}

}  // namespace uet::perf
