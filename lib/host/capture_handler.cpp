#include "host/capture_handler.hpp"

namespace uet::host {

void capture_handler::on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) {
    out_.write(frame, stamp(now));
    inner_.on_receive(frame, now);
}

void capture_handler::on_receive_classified(std::span<const std::uint8_t> frame,
                                            const classification& c, const steering_config& by,
                                            std::uint64_t now) {
    out_.write(frame, stamp(now));
    inner_.on_receive_classified(frame, c, by, now);
}

void capture_handler::on_receive_burst(std::span<const rx_frame> frames, const steering_config* by,
                                       std::uint64_t now) {
    const std::uint64_t t = stamp(now);
    for (const rx_frame& f : frames) {
        const std::size_t mid_end = f.rest.tail_at ? f.rest.tail_from : f.bytes.size();
        if (f.rest.at == nullptr || f.rest.from > mid_end || mid_end > f.bytes.size())
            out_.write(f.bytes, t);
        else
            out_.write(f.bytes.first(f.rest.from), {f.rest.at, mid_end - f.rest.from}, t,
                       {f.rest.tail_at, f.bytes.size() - mid_end});
    }
    inner_.on_receive_burst(frames, by, now);
}

std::size_t capture_handler::on_transmit(std::uint64_t now, std::span<tx_frame> frames) {
    const std::size_t n = inner_.on_transmit(now, frames);
    if (n == 0 && flushed_ != out_.frames()) {
        out_.flush();
        flushed_ = out_.frames();
    }
    const std::uint64_t t = stamp(now);
    for (std::size_t i = 0; i < n; ++i) {
        const tx_frame& f = frames[i];
        out_.write(f.buffer.first(f.length), {f.ext.data, f.ext.length}, t,
                   {f.ext.tail.data(), f.ext.length != 0 ? f.ext.tail_length : 0u});
    }
    return n;
}

}  // namespace uet::host
