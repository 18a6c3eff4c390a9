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
      plain_in_(burst) {
    if (burst == 0) throw std::invalid_argument("secure_engine: burst 0");
    domain_ = sublayer_.add_domain(cfg);
    if (!domain_) throw std::invalid_argument("secure_engine: domain refused");
    domain_->set_key(false, key);
    domain_->use_an(false);
}

std::size_t secure_engine::transmit(std::uint64_t now, std::span<tx_frame> out) {
    const std::size_t want = std::min(out.size(), burst_);
    const std::size_t th = tss_header_size(*domain_), overhead = th + icv_size;
    // The engine builds each frame into the caller's room (the port's buffer) the TSS header's
    // length in, leaving the ICV's room at the end, and the frame is sealed where it lies: its
    // body encrypted in place, its headers moved down over the room left for the TSS header.
    // A room too small for that (or none) leaves the engine to build in its own memory; the
    // frame is then sealed into the room or a buffer of ours as it is copied.
    const std::span<tx_frame> plain(plain_out_.data(), want);
    for (std::size_t k = 0; k < want; ++k) {
        const std::span<std::uint8_t> room = out[k].room;
        plain[k] = tx_frame{};
        if (room.size() >= slot_size_) plain[k].room = room.subspan(th, room.size() - overhead);
    }
    const std::size_t n = inner_.transmit(now, plain);
    for (std::size_t k = 0; k < n; ++k) {
        const std::span<const std::uint8_t> f = plain[k].data;
        const std::span<std::uint8_t> own(&tx_buf_[k * slot_size_], slot_size_);
        seals_[k].plain = f;
        if (!plain[k].room.empty() && f.data() == plain[k].room.data())
            seals_[k].out = out[k].room;  // in place
        else
            seals_[k].out = out[k].room.size() >= f.size() + overhead ? out[k].room : own;
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
        std::size_t k = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const std::span<const std::uint8_t> f = frames[at + i];
            const wire::frame_rest rest = rests ? rests[at + i] : wire::frame_rest{};
            if (f.size() > slot_size_ || (rest.at != nullptr && rest.from > f.size())) {
                ++unreadable_;
                continue;
            }
            // Opened into a buffer of ours: the port's buffers stay as they were received,
            // and the ciphertext is read once. A frame in two pieces is joined there first and
            // opened in place.
            const std::span<std::uint8_t> slot(&rx_buf_[k * slot_size_], slot_size_);
            std::span<std::uint8_t> plain;
            drop_reason r;
            if (rest.at != nullptr) {
                std::memcpy(slot.data(), f.data(), rest.from);
                std::memcpy(slot.data() + rest.from, rest.at, f.size() - rest.from);
                r = sublayer_.open_frame(slot.first(f.size()), plain);
            } else {
                r = sublayer_.open_frame_into(f, slot, plain);
            }
            if (r == drop_reason::none) plain_in_[k++] = plain;
        }
        if (k != 0) inner_.receive_burst(std::span(plain_in_.data(), k), nullptr, now);
    }
}

counters secure_engine::stats() const noexcept {
    counters c = sublayer_.stats();
    c.drops[static_cast<std::size_t>(drop_reason::malformed)] += unreadable_;
    return c;
}

}  // namespace uet::tss
