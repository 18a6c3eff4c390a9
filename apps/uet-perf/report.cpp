// Tables and JSON in perftest's layout.
#include "report.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "traffic.hpp"

namespace uet::perf {

namespace {

std::string format(const char* fmt, auto... args) {
    char buf[512];
    const int n = std::snprintf(buf, sizeof buf, fmt, args...);
    return std::string(
        buf, n < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

std::string upper(std::string_view s) {
    std::string u(s);
    for (char& c : u)
        c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    return u;
}

// Percentile by perftest's rule: the sample at rank ceil(p * n) - 1 of the sorted samples.
double percentile(std::span<const std::uint64_t> sorted, double p) {
    const auto n = sorted.size();
    auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
    rank = std::clamp<std::size_t>(rank, 1, n) - 1;
    return static_cast<double>(sorted[rank]) / 1000.0;
}

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            out += format("\\u%04x", c);
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// The send tests' receives: one per message (perftest's), or --multi-recv's buffers, and the
// sizes of -a that fall back to plain receives.
std::string multi_recv_line(const settings& s) {
    if (!s.multi_recv) return " Multi-receive   : OFF\n";
    std::string o = format(" Multi-receive   : ON, %u buffers of %llu[B]", multi_recv_buffers,
                           static_cast<unsigned long long>(multi_recv_buffer_bytes(s)));
    if (s.all_sizes)
        o += format(" (plain receives from %llu[B])",
                    static_cast<unsigned long long>(multi_recv_below));
    return o + "\n";
}

std::string json_number(double v) {
    return std::isfinite(v) ? format("%.6f", v) : "0";
}

}  // namespace

lat_row lat_stats(std::uint64_t size, std::span<std::uint64_t> samples) {
    lat_row r;
    r.size = size;
    r.iterations = samples.size();
    if (samples.empty()) return r;
    std::sort(samples.begin(), samples.end());
    double sum = 0, sumsq = 0;
    for (std::uint64_t s : samples) {
        const double us = static_cast<double>(s) / 1000.0;
        sum += us;
        sumsq += us * us;
    }
    const double n = static_cast<double>(samples.size());
    r.t_min = static_cast<double>(samples.front()) / 1000.0;
    r.t_max = static_cast<double>(samples.back()) / 1000.0;
    r.t_typical = static_cast<double>(samples[samples.size() / 2]) / 1000.0;  // the median
    r.t_avg = sum / n;
    r.t_stdev = std::sqrt(std::max(0.0, sumsq / n - r.t_avg * r.t_avg));
    r.p99 = percentile(samples, 0.99);
    r.p999 = percentile(samples, 0.999);
    return r;
}

double bw_in_unit(double bps, bool gbits) noexcept {
    return gbits ? bps * 8 / 1e9 : bps / (1024.0 * 1024.0);
}

std::string table_rule() {
    return std::string(87, '-') + "\n";
}

std::string queue_pairs_of(const endpoint_attr& a) {
    if (a.transport != transport::roce_rc) return {};
    static constexpr std::array<const char*, 4> names{"rr", "stripe", "cast", "cast-wrr"};
    const auto k = static_cast<std::size_t>(a.qp_sched.scheduler.value_or(qp_scheduler{}));
    return std::to_string(a.qp_sched.qps.value_or(1)) + ", " + (k < names.size() ? names[k] : "?");
}

std::string settings_block(const settings& s, const run_info& info) {
    std::string o = table_rule();
    o += "                    " + title_of(s) + "\n";
    o += format(" Provider        : %-16s Device         : %s\n", info.provider.c_str(),
                info.device.c_str());
    if (s.transport == transport::roce_rc)
        o += format(" QPs per peer    : %-16s Transport type : %s\n", info.queue_pairs.c_str(),
                    transport_name(s).c_str());
    else
        o += format(" Number of PDCs  : %-16u Transport type : %s\n", s.pdcs,
                    transport_name(s).c_str());
    o += format(" Delivery mode   : %-16s Congestion ctl : %s\n", upper(name_of(s.mode)).c_str(),
                std::string(name_of(s.cc)).c_str());
    o += format(" Load balancing  : %-16s Job (-p)       : %u\n",
                std::string(name_of(s.lb)).c_str(), s.job_id);
    o += format(" TX depth        : %u\n", s.tx_depth);
    if (is_bw(s.test)) o += format(" CQ Moderation   : %u\n", cq_mod_for(s, s.size));
    if (s.test == test_kind::send_bw)
        o +=
            format(" Post List       : %-16u Recv Post List : %u\n", s.post_list, s.recv_post_list);
    o += format(" Mtu             : %u[B]\n", s.mtu);
    o += " Link type       : Ethernet\n";
    o += format(" Bidirectional   : %s\n", s.bidirectional ? "ON" : "OFF");
    o += format(" Verify          : %s\n", s.verify ? "ON" : "OFF");
    if (s.tss)
        o += format(" TSS             : on (SDI %u, epoch %u)\n", s.tss_sdi, s.tss_epoch);
    else
        o += " TSS             : off\n";
    if (is_send(s.test)) o += multi_recv_line(s);
    if (is_bw(s.test))
        o += format(" Buffers         : %s\n", shares_buffers(s) ? "cycle of 4096[B] (perftest's)"
                                                                 : "one per operation in flight");
    if (s.duration_ms)
        o += format(" Duration        : %.3f[sec]\n", static_cast<double>(s.duration_ms) / 1000.0);
    o += " Data ex. method : uet (tagged control messages)\n";
    o += table_rule();
    // RoCE carries a key's low 32 bits (the rkey, memory_region::rkey()); UET all 64.
    const std::uint64_t shown = s.transport == uet::transport::roce_rc ? 0xffffffffu : ~0ull;
    o += format(" local address: %s job %u RKey 0x%08" PRIx64 "\n", info.local.c_str(), s.job_id,
                info.local_key & shown);
    o += format(" remote address: %s job %u RKey 0x%08" PRIx64 "\n", info.remote.c_str(), s.job_id,
                info.remote_key & shown);
    o += table_rule();
    return o;
}

std::string bw_header(bool gbits) {
    const char* unit = gbits ? "Gb/sec" : "MiB/sec";
    return format(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
                  unit, unit);
}

std::string bw_line(const bw_row& r, bool gbits) {
    return format(" %-10" PRIu64 " %-14" PRIu64 " %-18.2f %-21.2f %-.6f\n", r.size, r.iterations,
                  bw_in_unit(r.peak_bps, gbits), bw_in_unit(r.avg_bps, gbits), r.msg_rate / 1e6);
}

std::string lat_header() {
    return " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
           "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
}

std::string lat_line(const lat_row& r) {
    return format(
        " %-7" PRIu64 " %-11" PRIu64 "    %-14.2f %-12.2f %-18.2f %-14.2f %-15.2f %-22.2f %.2f\n",
        r.size, r.iterations, r.t_min, r.t_max, r.t_typical, r.t_avg, r.t_stdev, r.p99, r.p999);
}

std::string to_json(const settings& s, const run_info& info, std::span<const bw_row> bw,
                    std::span<const lat_row> lat, const std::string& verify) {
    std::string o = "{\n\"test_info\": {\n";
    o += "\"test\": " + json_string(title_of(s)) + ",\n";
    o += "\"Device\": " + json_string(info.device) + ",\n";
    o += "\"Provider\": " + json_string(info.provider) + ",\n";
    o += format("\"Number_of_qps\": %u,\n", s.pdcs);
    o += "\"Transport_type\": " + json_string(transport_name(s)) + ",\n";
    o += "\"Connection_type\": " + json_string(upper(name_of(s.mode))) + ",\n";
    o += "\"Congestion_control\": " + json_string(name_of(s.cc)) + ",\n";
    o += "\"Load_balancing\": " + json_string(name_of(s.lb)) + ",\n";
    o += format("\"TX_depth\": %u,\n", s.tx_depth);
    if (is_bw(s.test)) o += format("\"CQ_Moderation\": %u,\n", cq_mod_for(s, s.size));
    if (s.test == test_kind::send_bw)
        o += format("\"Post_List\": %u,\n\"Recv_Post_List\": %u,\n", s.post_list, s.recv_post_list);
    o += format("\"Mtu\": %u,\n", s.mtu);
    o += "\"Link_type\": \"Ethernet\",\n";
    o += format("\"Bidirectional\": \"%s\",\n", s.bidirectional ? "ON" : "OFF");
    if (is_send(s.test)) o += format("\"Multi_recv\": \"%s\",\n", s.multi_recv ? "ON" : "OFF");
    o += "\"BW_unit\": " + json_string(s.report_gbits ? "Gb/sec" : "MiB/sec") + ",\n";
    o += "\"Data_ex_method\": \"uet\"\n},\n";
    const bool many = bw.size() + lat.size() > 1;
    o += many ? "\"results\": [\n" : "\"results\": ";
    auto verify_field = [&] { return ",\n\"verify\": " + json_string(verify) + "\n}"; };
    for (std::size_t i = 0; i < bw.size(); ++i) {
        const bw_row& r = bw[i];
        o += format("{\n\"MsgSize\": %" PRIu64 ",\n\"n_iterations\": %" PRIu64 ",\n", r.size,
                    r.iterations);
        o += "\"BW_peak\": " + json_number(bw_in_unit(r.peak_bps, s.report_gbits)) + ",\n";
        o += "\"BW_average\": " + json_number(bw_in_unit(r.avg_bps, s.report_gbits)) + ",\n";
        o += "\"MsgRate\": " + json_number(r.msg_rate / 1e6) + verify_field();
        o += i + 1 < bw.size() ? ",\n" : "\n";
    }
    for (std::size_t i = 0; i < lat.size(); ++i) {
        const lat_row& r = lat[i];
        o += format("{\n\"MsgSize\": %" PRIu64 ",\n\"n_iterations\": %" PRIu64 ",\n", r.size,
                    r.iterations);
        o += "\"t_min\": " + json_number(r.t_min) + ",\n";
        o += "\"t_max\": " + json_number(r.t_max) + ",\n";
        o += "\"t_typical\": " + json_number(r.t_typical) + ",\n";
        o += "\"t_avg\": " + json_number(r.t_avg) + ",\n";
        o += "\"t_stdev\": " + json_number(r.t_stdev) + ",\n";
        o += "\"99%\": " + json_number(r.p99) + ",\n";
        o += "\"99.9%\": " + json_number(r.p999) + verify_field();
        o += i + 1 < lat.size() ? ",\n" : "\n";
    }
    if (bw.empty() && lat.empty()) o += many ? "" : "{}\n";
    o += many ? "]\n}\n" : "}\n";
    return o;
}

}  // namespace uet::perf
