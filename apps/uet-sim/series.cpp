#include "series.hpp"

#include <algorithm>
#include <cstdio>

namespace uet::simcli {

namespace {
constexpr std::size_t head = 3;  // time, queued bytes, fullest queue
}

sampler::sampler(const netmodel::fabric& f, std::uint64_t interval_ns, std::size_t capacity)
    : hosts_(f.host_count()),
      ports_(f.port_count()),
      capacity_(std::max<std::size_t>(capacity & ~std::size_t{1}, 2)),
      interval_ns_(std::max<std::uint64_t>(interval_ns, 1)),
      next_ns_(interval_ns_) {
    const netmodel::topology& t = f.layout();
    uplinks_ = t.leaves > 1 ? t.spines : 0;
    first_switch_port_ = f.nic_port(0) + hosts_;
    if (uplinks_ != 0) {
        first_up_ = f.up_port(0, 0);
        up_ports_ = t.leaves * t.spines;
    }
    columns_ = hosts_ + uplinks_;
    data_.assign(capacity_ * (head + columns_), 0);
}

void sampler::take(const netmodel::fabric& f) noexcept {
    if (n_ == capacity_) {
        // Keep the samples at even multiples of the interval, then double it.
        const std::size_t row = head + columns_;
        for (std::size_t j = 1, k = 0; j < n_; j += 2, ++k)
            std::copy_n(&data_[j * row], row, &data_[k * row]);
        n_ /= 2;
        interval_ns_ *= 2;
        next_ns_ = (n_ + 1) * interval_ns_;
        return;  // next_ns_ is now later than the time this sample was for
    }
    std::uint64_t* row = &data_[n_ * (head + columns_)];
    row[0] = next_ns_;
    std::uint64_t queued = 0, fullest = 0;
    for (std::uint32_t p = first_switch_port_; p < ports_; ++p) {
        const netmodel::port_stats s = f.port_counters(p);
        queued += s.queue_bytes + s.priority_bytes;
        fullest = std::max(fullest, s.queue_bytes + s.priority_bytes);
    }
    row[1] = queued;
    row[2] = fullest;
    std::uint64_t* col = row + head;
    for (std::uint32_t h = 0; h < hosts_; ++h)
        col[h] = f.port_counters(f.nic_port(h)).tx_bytes;
    for (std::uint32_t a = 0; a < uplinks_; ++a)
        col[hosts_ + a] = 0;
    for (std::uint32_t i = 0; i < up_ports_; ++i)
        col[hosts_ + i % uplinks_] += f.port_counters(first_up_ + i).tx_bytes;
    ++n_;
    next_ns_ = (n_ + 1) * interval_ns_;
}

std::string sampler::csv() const {
    std::string out = "t_us,queued_bytes,max_queue_bytes";
    for (std::uint32_t h = 0; h < hosts_; ++h)
        out += ",h" + std::to_string(h) + "_gbps";
    for (std::uint32_t a = 0; a < uplinks_; ++a)
        out += ",up" + std::to_string(a) + "_gbps";
    out += '\n';
    const std::size_t row = head + columns_;
    char b[64];
    for (std::size_t i = 0; i < n_; ++i) {
        const std::uint64_t* r = &data_[i * row];
        const std::uint64_t* prev = i > 0 ? &data_[(i - 1) * row] : nullptr;
        const double span_ns = double(r[0] - (prev ? prev[0] : 0));
        std::snprintf(b, sizeof b, "%.3f,%llu,%llu", double(r[0]) / 1e3, (unsigned long long)r[1],
                      (unsigned long long)r[2]);
        out += b;
        for (std::uint32_t c = 0; c < columns_; ++c) {
            const std::uint64_t bytes = r[head + c] - (prev ? prev[head + c] : 0);
            std::snprintf(b, sizeof b, ",%.3f", double(bytes) * 8 / span_ns);
            out += b;
        }
        out += '\n';
    }
    return out;
}

}  // namespace uet::simcli
