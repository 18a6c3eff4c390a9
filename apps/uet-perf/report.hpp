// Results in perftest's layout and units: the settings block, the BW table (#bytes #iterations
// BW peak BW average MsgRate) and the latency table (t_min t_max t_typical t_avg t_stdev 99%
// 99.9%, usec), and the JSON of --out_json with perftest's keys.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "options.hpp"

namespace uet::perf {

struct bw_row {
    std::uint64_t size = 0;
    std::uint64_t iterations = 0;
    double peak_bps = 0;  // bytes per second
    double avg_bps = 0;
    double msg_rate = 0;  // messages per second
};

struct lat_row {
    std::uint64_t size = 0;
    std::uint64_t iterations = 0;
    double t_min = 0, t_max = 0, t_typical = 0, t_avg = 0, t_stdev = 0, p99 = 0, p999 = 0;  // usec
};

// samples_ns: one per iteration (the order is lost: they are sorted in place).
lat_row lat_stats(std::uint64_t size, std::span<std::uint64_t> samples_ns);

// What the settings block says besides the settings themselves.
struct run_info {
    std::string provider;
    std::string device;
    std::string local;   // "10.9.0.2:4793"
    std::string remote;  // the peer
    std::uint64_t local_key = 0, remote_key = 0;
    std::string queue_pairs;  // roce: the QPs per peer and their scheduler ("4, cast")
};
// run_info::queue_pairs for an endpoint's attributes in effect (empty on transport uet).
std::string queue_pairs_of(const endpoint_attr& a);

std::string settings_block(const settings& s, const run_info& info);
std::string table_rule();
std::string bw_header(bool gbits);
std::string bw_line(const bw_row& r, bool gbits);
std::string lat_header();
std::string lat_line(const lat_row& r);

// Converts bytes per second into the report unit (MiB/sec, or Gb/sec with --report_gbits).
double bw_in_unit(double bytes_per_sec, bool gbits) noexcept;

// JSON: {"test_info": {...}, "results": {...}} (an array of result objects with -a).
std::string to_json(const settings& s, const run_info& info, std::span<const bw_row> bw,
                    std::span<const lat_row> lat, const std::string& verify);

}  // namespace uet::perf
