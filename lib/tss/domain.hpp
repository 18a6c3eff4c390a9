// A secure domain: what both ends of TSS share under one SDI (the domain key, its mode, the
// epoch and the rekey interval), what the sending side keeps (its TSC) and what the receiving
// side keeps per source (a replay window) and per key (the derived packet keys).
//
// Every table is sized when the domain is made: sealing and opening never allocate.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "tss/kdf.hpp"
#include "tss/replay_window.hpp"
#include "tss/secret.hpp"

namespace uet::tss {

inline constexpr std::uint64_t tsc_max = (std::uint64_t{1} << 48) - 1;

struct domain_config {
    std::uint32_t sdi = 0;  // 24 bits
    domain_mode mode = domain_mode::cluster;
    std::uint16_t epoch = 0;
    // Epochs accepted: the current one and the lifetime - 1 before it (at least 1), and the
    // next one, which a peer may reach first when the epoch moves.
    std::uint16_t lifetime = 2;
    // The rekey field of the KDF context is (TSC & rekey_mask) >> rekey_shift, so the packet key
    // changes every 2^shift packets when the mask covers the bits above the shift. 0: never.
    std::uint64_t rekey_mask = 0;
    std::uint8_t rekey_shift = 0;
    // After this many frames fail authentication the domain accepts nothing more (until
    // reset_failures or a new key).
    std::uint32_t failure_limit = 1024;
    // Sent in every header this host seals (SP = 1), and then the IV's and KDF's source instead
    // of the IPv4 source address. Client/server mode requires it on both sides.
    std::optional<std::uint32_t> ssi = std::nullopt;
    std::uint32_t max_sources = 256;    // replay windows (peers) tracked
    std::uint32_t key_cache_size = 64;  // derived packet keys kept (rounded up to even)
};

class secure_domain {
  public:
    // Throws std::invalid_argument on an SDI over 24 bits, a zero lifetime, a shift over 63,
    // client/server mode without an SSI, or a zero table size.
    explicit secure_domain(const domain_config& cfg);
    secure_domain(const secure_domain&) = delete;
    secure_domain& operator=(const secure_domain&) = delete;

    const domain_config& config() const noexcept { return cfg_; }
    std::uint32_t sdi() const noexcept { return cfg_.sdi; }

    // The key an AN selects. Setting one forgets the packet keys derived from the one it
    // replaces and clears the authentication failures; clearing wipes it.
    void set_key(bool an, std::span<const std::uint8_t, key_size> key) noexcept;
    void clear_key(bool an) noexcept;
    bool has_key(bool an) const noexcept { return has_key_[an]; }
    // The AN this host seals with.
    void use_an(bool an) noexcept { tx_an_ = an; }
    bool tx_an() const noexcept { return tx_an_; }

    std::uint16_t epoch() const noexcept { return cfg_.epoch; }
    void set_epoch(std::uint16_t e) noexcept { cfg_.epoch = e; }
    // Whether a frame of epoch e is accepted now; else whether it is stale or ahead.
    enum class epoch_check { ok, stale, future };
    epoch_check check_epoch(std::uint16_t e) const noexcept;

    std::uint32_t rekey_of(std::uint64_t tsc) const noexcept {
        return static_cast<std::uint32_t>((tsc & cfg_.rekey_mask) >> cfg_.rekey_shift);
    }

    // The next TSC to send (starts at 1, strictly increasing, never reused).
    std::uint64_t next_tsc() const noexcept { return next_tsc_; }
    // Moves the next TSC forward (e.g. past what a previous run of this host sent); false, and
    // no change, when next is behind it or over 48 bits.
    bool advance_tsc(std::uint64_t next) noexcept {
        if (next < next_tsc_ || next > tsc_max) return false;
        next_tsc_ = next;
        return true;
    }

    std::uint32_t failures() const noexcept { return failures_; }
    bool disabled() const noexcept { return failures_ >= cfg_.failure_limit; }
    void reset_failures() noexcept { failures_ = 0; }
    std::uint32_t sources() const noexcept { return sources_; }

  private:
    friend class sublayer;

    // The source a window or key belongs to: the SSI or IPv4 address, and which of the two.
    static std::uint64_t source_tag(std::uint32_t source, bool ssi) noexcept {
        return (std::uint64_t{ssi} << 32) | source | (std::uint64_t{1} << 33);
    }
    struct cached_key {
        std::uint64_t tag = 0;  // source_tag, 0 when empty
        key_context ctx;
        bool an = false;
        std::uint64_t used = 0;
        packet_key key;
    };
    const packet_key* find_key(std::uint64_t tag, bool an, const key_context& ctx) noexcept;
    void store_key(std::uint64_t tag, bool an, const key_context& ctx,
                   const packet_key& key) noexcept;
    replay_window* find_window(std::uint64_t tag) noexcept;
    replay_window* add_window(std::uint64_t tag) noexcept;  // nullptr when the table is full

    domain_config cfg_;
    std::array<key256, 2> keys_;
    std::array<bool, 2> has_key_{};
    bool tx_an_ = false;
    std::uint64_t next_tsc_ = 1;
    std::uint32_t failures_ = 0;

    // The packet key the sender uses now (one key until the rekey field or epoch moves).
    cached_key tx_key_;
    // Receive-side packet keys, two ways per set, the least recently used way replaced.
    std::unique_ptr<cached_key[]> rx_keys_;
    std::size_t rx_sets_ = 0;
    std::uint64_t use_clock_ = 0;
    // Replay windows by source tag, open addressing with linear probing, never removed.
    std::unique_ptr<std::uint64_t[]> window_tags_;
    std::unique_ptr<replay_window[]> windows_;
    std::size_t window_slots_ = 0;
    std::uint32_t sources_ = 0;
};

}  // namespace uet::tss
