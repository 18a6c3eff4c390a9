#include "qp_sched/qp_sched.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace uet::qp_sched {

namespace {

// Subchunks are whole multiples of this, as the document rounds them.
constexpr std::uint64_t granule = 128;

bool read_u64(const char* text, std::uint64_t& out) {
    if (text == nullptr || *text == '\0' || *text == '-') return false;
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 0);
    if (errno != 0 || *end != '\0') return false;
    out = v;
    return true;
}

bool read_double(const char* text, double& out) {
    if (text == nullptr || *text == '\0') return false;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (errno != 0 || *end != '\0' || !std::isfinite(v)) return false;
    out = v;
    return true;
}

}  // namespace

const char* to_string(scheduler s) noexcept {
    switch (s) {
        case scheduler::round_robin:
            return "rr";
        case scheduler::stripe:
            return "stripe";
        case scheduler::cast_stripe:
            return "cast";
        case scheduler::cast_wrr:
            return "cast-wrr";
    }
    return "?";
}

bool parse(std::string_view name, scheduler& out) noexcept {
    for (scheduler s :
         {scheduler::round_robin, scheduler::stripe, scheduler::cast_stripe, scheduler::cast_wrr})
        if (name == to_string(s)) {
            out = s;
            return true;
        }
    return false;
}

scheduler params::kind() const noexcept {
    if (split_data_on_qps) return enable ? scheduler::cast_stripe : scheduler::stripe;
    return enable ? scheduler::cast_wrr : scheduler::round_robin;
}

void params::set(scheduler s) noexcept {
    enable = s == scheduler::cast_stripe || s == scheduler::cast_wrr;
    split_data_on_qps = s == scheduler::stripe || s == scheduler::cast_stripe;
}

std::string params::check() const {
    if (qps_per_connection < 1 || qps_per_connection > max_qps)
        return "NCCL_IB_QPS_PER_CONNECTION must be 1.." + std::to_string(max_qps) + ", not " +
               std::to_string(qps_per_connection);
    if (!(weight >= 0 && weight <= 1))
        return "NCCL_IB_QP_SCHED_WEIGHT must be 0 (the average) or a weight in (0, 1], not " +
               std::to_string(weight);
    if (update_interval_us == 0) return "NCCL_IB_QP_SCHED_UPDATE_INTERVAL must be at least 1 us";
    return {};
}

std::string read_environment(params& p, const std::function<const char*(const char*)>& get) {
    const auto value = [&](const char* name) { return get ? get(name) : std::getenv(name); };
    const auto flag = [&](const char* name, bool& out) -> std::string {
        const char* v = value(name);
        if (v == nullptr) return {};
        std::uint64_t n = 0;
        if (!read_u64(v, n) || n > 1)
            return std::string(name) + " must be 0 or 1, not \"" + v + "\"";
        out = n == 1;
        return {};
    };
    const auto number = [&](const char* name, std::uint64_t& out) -> std::string {
        const char* v = value(name);
        if (v == nullptr) return {};
        if (!read_u64(v, out))
            return std::string(name) + " must be a non-negative integer, not \"" + v + "\"";
        return {};
    };
    std::string e;
    if (!(e = flag("NCCL_IB_QP_SCHED_ENABLE", p.enable)).empty()) return e;
    if (!(e = number("NCCL_IB_QP_SCHED_RESET_INTERVAL", p.reset_interval_ms)).empty()) return e;
    if (!(e = number("NCCL_IB_QP_SCHED_UPDATE_INTERVAL", p.update_interval_us)).empty()) return e;
    if (const char* v = value("NCCL_IB_QP_SCHED_WEIGHT"); v != nullptr && !read_double(v, p.weight))
        return std::string("NCCL_IB_QP_SCHED_WEIGHT must be a number, not \"") + v + "\"";
    if (!(e = number("NCCL_IB_QP_SCHED_SPLIT_DATA_MIN", p.split_data_min)).empty()) return e;
    if (!(e = flag("NCCL_IB_QP_SCHED_WRR_ENABLE", p.wrr_enable)).empty()) return e;
    if (!(e = flag("NCCL_IB_SPLIT_DATA_ON_QPS", p.split_data_on_qps)).empty()) return e;
    std::uint64_t qps = p.qps_per_connection;
    if (!(e = number("NCCL_IB_QPS_PER_CONNECTION", qps)).empty()) return e;
    p.qps_per_connection = static_cast<std::uint32_t>(std::min<std::uint64_t>(qps, 1u << 31));
    return p.check();
}

void cast_weights(std::span<const double> estimate, std::span<const double> min_metric,
                  std::span<const bool> measured, std::span<double> weight) noexcept {
    const std::size_t n = weight.size();
    std::size_t best = n;
    for (std::size_t i = 0; i < n; ++i)
        if (measured[i] && (best == n || estimate[i] < estimate[best])) best = i;
    if (best == n) {
        std::fill(weight.begin(), weight.end(), n ? 1.0 / double(n) : 0.0);
        return;
    }
    const double min_estimate = estimate[best], floor = min_metric[best];
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double gap = measured[i] ? estimate[i] - min_estimate : 0;
        weight[i] = 1.0 / (gap + floor);
        sum += weight[i];
    }
    for (double& w : weight)
        w /= sum;
}

scheduler_state::scheduler_state(const params& p, double line_rate_gbps,
                                 std::uint64_t min_latency_ns)
    : p_(p),
      ns_per_byte_(line_rate_gbps > 0 ? 8.0 / line_rate_gbps : 0),
      min_latency_ns_(double(min_latency_ns)),
      stats_(std::clamp<std::uint32_t>(p.qps_per_connection, 1, params::max_qps)),
      sum_(stats_.size(), 0),
      credit_(stats_.size(), 0) {
    for (qp_stats& s : stats_)
        s.weight = 1.0 / double(stats_.size());
    next_update_ns_ = p_.update_interval_us * 1000;
    next_reset_ns_ = p_.reset_interval_ms * 1'000'000;
}

double scheduler_state::metric(std::uint64_t bytes, std::uint64_t rtt_ns) const noexcept {
    return std::max(1.0, double(rtt_ns) - double(bytes) * ns_per_byte_ - min_latency_ns_);
}

void scheduler_state::on_completion(std::uint32_t qp, std::uint64_t bytes, std::uint64_t rtt_ns,
                                    std::uint64_t now_ns) {
    if (qp >= stats_.size()) return;
    if (p_.reset_interval_ms != 0 && now_ns >= next_reset_ns_) {
        // The average's history restarts; the estimates stand until the next measurement.
        std::fill(sum_.begin(), sum_.end(), 0.0);
        for (qp_stats& s : stats_)
            s.samples = 0;
        next_reset_ns_ = now_ns + p_.reset_interval_ms * 1'000'000;
    }
    qp_stats& s = stats_[qp];
    const double m = metric(bytes, rtt_ns);
    if (p_.weight == 0) {
        sum_[qp] += m;
        s.estimate_ns = sum_[qp] / double(s.samples + 1);
    } else {
        s.estimate_ns = s.samples == 0 && s.min_metric_ns == 0
                            ? m
                            : m * p_.weight + s.estimate_ns * (1 - p_.weight);
    }
    s.min_metric_ns = s.min_metric_ns == 0 ? m : std::min(s.min_metric_ns, m);
    ++s.samples;
}

void scheduler_state::update_weights() noexcept {
    const std::size_t n = stats_.size();
    // Fixed-size scratch: no allocation on the post path.
    double estimate[params::max_qps], floor[params::max_qps], weight[params::max_qps];
    bool measured[params::max_qps];
    for (std::size_t i = 0; i < n; ++i) {
        estimate[i] = stats_[i].estimate_ns;
        // The filter's floor is the lowest RTT less the payload's time, the minimum latency
        // given back (see the header): the weights do not depend on the latency given.
        floor[i] = stats_[i].min_metric_ns + min_latency_ns_;
        measured[i] = stats_[i].min_metric_ns != 0;
    }
    cast_weights({estimate, n}, {floor, n}, {measured, n}, {weight, n});
    for (std::size_t i = 0; i < n; ++i)
        stats_[i].weight = weight[i];
}

std::uint32_t scheduler_state::next_rr() noexcept {
    const std::uint32_t q = rr_;
    rr_ = (rr_ + 1) % qps();
    return q;
}

// Smooth weighted round robin: each pick adds every QP's weight to its credit and takes the QP
// with the most, which then pays 1 (the weights' sum); over any run of picks each QP's share
// stays within one pick of its weight.
std::uint32_t scheduler_state::next_wrr() noexcept {
    std::uint32_t best = 0;
    for (std::uint32_t i = 0; i < qps(); ++i) {
        credit_[i] += stats_[i].weight;
        if (credit_[i] > credit_[best]) best = i;
    }
    credit_[best] -= 1.0;
    return best;
}

std::size_t scheduler_state::stripe(std::uint64_t bytes, bool weighted, std::span<subchunk> out) {
    const std::uint32_t n = std::min<std::uint32_t>(qps(), static_cast<std::uint32_t>(out.size()));
    std::size_t k = 0;
    std::uint64_t placed = 0;
    std::uint32_t largest = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        const double share = weighted ? stats_[i].weight : 1.0 / double(n);
        const auto len = static_cast<std::uint64_t>(double(bytes) * share) / granule * granule;
        if (weighted && stats_[i].weight > stats_[largest].weight) largest = i;
        if (len == 0) continue;
        out[k++] = {i, 0, len};
        placed += len;
    }
    // What rounding down left over goes to the QP of the largest weight (the last one when the
    // weights are equal).
    const std::uint32_t rest_qp = weighted ? largest : n - 1;
    if (placed < bytes) {
        std::size_t j = 0;
        while (j < k && out[j].qp != rest_qp)
            ++j;
        if (j == k) out[k++] = {rest_qp, 0, 0};
        out[j].length += bytes - placed;
    }
    // Offsets in QP order, so the subchunks tile the request.
    std::sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k),
              [](const subchunk& a, const subchunk& b) { return a.qp < b.qp; });
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < k; ++i) {
        out[i].offset = offset;
        offset += out[i].length;
    }
    return k;
}

std::size_t scheduler_state::schedule(std::uint64_t bytes, std::uint64_t now_ns,
                                      std::span<subchunk> out) {
    if (out.empty()) return 0;
    if (p_.enable && now_ns >= next_update_ns_) {
        update_weights();
        next_update_ns_ = now_ns + p_.update_interval_us * 1000;
    }
    const scheduler kind = p_.kind();
    std::size_t k = 0;
    const bool splits = kind == scheduler::stripe || kind == scheduler::cast_stripe;
    if (splits && qps() > 1 && bytes / qps() >= p_.split_data_min) {
        k = stripe(bytes, kind == scheduler::cast_stripe, out);
    } else {
        // One QP: the next by weight (CAST WRR, or a stripe scheduler below its split threshold
        // with wrr_enable), else the next in turn.
        const bool by_weight =
            kind == scheduler::cast_wrr || (kind == scheduler::cast_stripe && p_.wrr_enable);
        out[0] = {by_weight ? next_wrr() : next_rr(), 0, bytes};
        k = 1;
    }
    for (std::size_t i = 0; i < k; ++i) {
        stats_[out[i].qp].bytes += out[i].length;
        ++stats_[out[i].qp].requests;
    }
    return k;
}

}  // namespace uet::qp_sched
