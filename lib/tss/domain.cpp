#include "tss/domain.hpp"

#include <bit>
#include <stdexcept>

namespace uet::tss {

namespace {
std::size_t mix(std::uint64_t v) noexcept {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    return static_cast<std::size_t>(v);
}
}  // namespace

secure_domain::secure_domain(const domain_config& cfg) : cfg_(cfg) {
    if (cfg.sdi > 0xffffff) throw std::invalid_argument("tss: SDI over 24 bits");
    if (cfg.lifetime == 0) throw std::invalid_argument("tss: lifetime of 0 epochs");
    if (cfg.rekey_shift > 63) throw std::invalid_argument("tss: rekey shift over 63");
    if (cfg.mode == domain_mode::client_server && !cfg.ssi)
        throw std::invalid_argument("tss: client/server mode needs an SSI");
    if (cfg.max_sources == 0 || cfg.key_cache_size == 0 || cfg.failure_limit == 0)
        throw std::invalid_argument("tss: zero-sized table or failure limit");
    rx_sets_ = (cfg.key_cache_size + 1) / 2;
    rx_keys_ = std::make_unique<cached_key[]>(rx_sets_ * 2);
    window_slots_ = std::bit_ceil(std::size_t{cfg.max_sources} * 2);
    window_tags_ = std::make_unique<std::uint64_t[]>(window_slots_);
    windows_ = std::make_unique<replay_window[]>(window_slots_);
}

void secure_domain::set_key(bool an, std::span<const std::uint8_t, key_size> key) noexcept {
    clear_key(an);
    keys_[an].assign(key);
    has_key_[an] = true;
    failures_ = 0;
}

void secure_domain::clear_key(bool an) noexcept {
    keys_[an].wipe();
    has_key_[an] = false;
    auto forget = [](cached_key& c) {
        c.tag = 0;
        c.key.key.wipe();
        c.key.iv_mask.wipe();
    };
    if (tx_key_.an == an) forget(tx_key_);
    for (std::size_t i = 0; i < rx_sets_ * 2; ++i)
        if (rx_keys_[i].an == an) forget(rx_keys_[i]);
}

secure_domain::epoch_check secure_domain::check_epoch(std::uint16_t e) const noexcept {
    const auto age = static_cast<std::uint16_t>(cfg_.epoch - e);
    const auto ahead = static_cast<std::uint16_t>(e - cfg_.epoch);
    if (age < cfg_.lifetime || ahead == 1) return epoch_check::ok;
    return ahead < 0x8000 ? epoch_check::future : epoch_check::stale;
}

const packet_key* secure_domain::find_key(std::uint64_t tag, bool an,
                                          const key_context& ctx) noexcept {
    cached_key* set =
        &rx_keys_[(mix(tag ^ (std::uint64_t{ctx.epoch} << 34) ^ ctx.rekey) % rx_sets_) * 2];
    for (int w = 0; w < 2; ++w)
        if (set[w].tag == tag && set[w].an == an && set[w].ctx == ctx) {
            set[w].used = ++use_clock_;
            return &set[w].key;
        }
    return nullptr;
}

void secure_domain::store_key(std::uint64_t tag, bool an, const key_context& ctx,
                              const packet_key& key) noexcept {
    cached_key* set =
        &rx_keys_[(mix(tag ^ (std::uint64_t{ctx.epoch} << 34) ^ ctx.rekey) % rx_sets_) * 2];
    cached_key& way = set[0].used <= set[1].used ? set[0] : set[1];
    way.tag = tag;
    way.an = an;
    way.ctx = ctx;
    way.used = ++use_clock_;
    way.key = key;
}

replay_window* secure_domain::find_window(std::uint64_t tag) noexcept {
    for (std::size_t i = mix(tag) & (window_slots_ - 1);; i = (i + 1) & (window_slots_ - 1)) {
        if (window_tags_[i] == tag) return &windows_[i];
        if (window_tags_[i] == 0) return nullptr;
    }
}

replay_window* secure_domain::add_window(std::uint64_t tag) noexcept {
    if (sources_ >= cfg_.max_sources) return nullptr;
    std::size_t i = mix(tag) & (window_slots_ - 1);
    while (window_tags_[i] != 0)
        i = (i + 1) & (window_slots_ - 1);
    window_tags_[i] = tag;
    ++sources_;
    return &windows_[i];
}

}  // namespace uet::tss
