#include "tss/secure_engine.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "wire/uet_tss.hpp"

namespace uet::tss {

std::size_t seal_overhead(const domain_config& cfg) noexcept {
    return (cfg.ssi ? wire::tss_header::wire_size_with_ssi : wire::tss_header::wire_size) +
           icv_size;
}

secure_engine::secure_engine(frame_engine& inner, const domain_config& cfg,
                             std::span<const std::uint8_t, key_size> key,
                             std::size_t max_plain_frame, std::size_t burst)
    : inner_(inner),
      sublayer_(1),
      slot_size_(max_plain_frame + seal_overhead(cfg)),
      burst_(burst),
      tx_buf_(new std::uint8_t[burst * slot_size_]),
      rx_buf_(new std::uint8_t[burst * slot_size_]),
      plain_out_(burst),
      seals_(burst),
      opens_(burst),
      plain_in_(burst) {
    if (burst == 0) throw std::invalid_argument("secure_engine: burst 0");
    domain_ = sublayer_.add_domain(cfg);
    if (!domain_) throw std::invalid_argument("secure_engine: domain refused");
    domain_->set_key(false, key);
    domain_->use_an(false);
}

std::size_t secure_engine::transmit(std::uint64_t now, std::span<tx_frame> out) {
    const std::size_t want = std::min(out.size(), burst_);
    // No rooms: the engine builds in its own memory, and sealing copies each frame once, into
    // the caller's room, as it encrypts.
    const std::span<tx_frame> plain(plain_out_.data(), want);
    for (tx_frame& f : plain)
        f = tx_frame{};
    const std::size_t n = inner_.transmit(now, plain);
    const std::size_t overhead = seal_overhead(domain_->config());
    for (std::size_t k = 0; k < n; ++k) {
        const std::span<std::uint8_t> own(&tx_buf_[k * slot_size_], slot_size_);
        seals_[k].plain = plain[k].data;
        seals_[k].out = out[k].room.size() >= plain[k].data.size() + overhead ? out[k].room : own;
    }
    sublayer_.seal_burst(*domain_, std::span(seals_.data(), n));
    std::size_t m = 0;
    for (std::size_t k = 0; k < n; ++k) {
        if (seals_[k].size == 0) continue;
        out[m].data = seals_[k].out.first(seals_[k].size);
        out[m].payload = {};
        out[m].payload_region = no_payload_region;
        ++m;
    }
    return m;
}

void secure_engine::receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                                  const wire::frame_rest* rests, std::uint64_t now) {
    for (std::size_t at = 0; at < frames.size(); at += burst_) {
        const std::size_t n = std::min(burst_, frames.size() - at);
        std::size_t m = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const std::span<const std::uint8_t> f = frames[at + i];
            const wire::frame_rest rest = rests ? rests[at + i] : wire::frame_rest{};
            if (f.size() > slot_size_ || (rest.at != nullptr && rest.from > f.size())) {
                ++unreadable_;
                continue;
            }
            // Opened in a buffer of ours, which also joins a frame in two pieces: the port's
            // buffers stay as they were received.
            const std::span<std::uint8_t> slot(&rx_buf_[m * slot_size_], f.size());
            if (rest.at != nullptr) {
                std::memcpy(slot.data(), f.data(), rest.from);
                std::memcpy(slot.data() + rest.from, rest.at, f.size() - rest.from);
            } else {
                std::memcpy(slot.data(), f.data(), f.size());
            }
            opens_[m++].frame = slot;
        }
        sublayer_.open_burst(std::span(opens_.data(), m));
        std::size_t k = 0;
        for (std::size_t i = 0; i < m; ++i)
            if (opens_[i].reason == drop_reason::none) plain_in_[k++] = opens_[i].plain;
        if (k != 0) inner_.receive_burst(std::span(plain_in_.data(), k), nullptr, now);
    }
}

counters secure_engine::stats() const noexcept {
    counters c = sublayer_.stats();
    c.drops[static_cast<std::size_t>(drop_reason::malformed)] += unreadable_;
    return c;
}

}  // namespace uet::tss
