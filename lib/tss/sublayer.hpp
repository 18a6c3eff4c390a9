// The transport security sublayer of one core: its secure domains, the OpenSSL contexts it
// reuses for every frame (one CMAC for the KDF, one AES-GCM context per direction), and the
// counters. Sans-I/O: it turns whole UET frames into sealed ones and back, and never reads a
// clock, sends or logs (and never prints a key).
//
// A sealed frame is Ethernet | IPv4 | UDP | TSS header | ciphertext | ICV over UDP, and
// Ethernet | IPv4 (protocol 253) | entropy header | TSS header | ciphertext | ICV over IP: the
// TSS header where the PDS header was and everything from the PDS header on encrypted
// (docs/wire-format.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "tss/cmac.hpp"
#include "tss/domain.hpp"
#include "tss/gcm.hpp"

namespace uet::tss {

// Why open_frame refused a frame; each has a counter.
enum class drop_reason : std::uint8_t {
    none,
    malformed,         // not UET over IPv4/UDP or IP, or a bad IPv4 or UDP checksum
    truncated,         // too short for the TSS header and a 16-byte ICV
    not_tss,           // the UDP payload does not start with a TSS header
    unknown_sdi,       // no secure domain with that SDI
    disabled,          // the domain reached its authentication failure limit
    missing_ssi,       // client/server domain, header without an SSI
    stale_epoch,       // epoch older than the domain's lifetime allows
    future_epoch,      // epoch more than one ahead of the domain's
    no_key,            // the AN selects a key the domain does not hold
    replay,            // sequence number seen before or left of the window
    bad_icv,           // authentication failed
    too_many_sources,  // authentic, but the domain tracks no more sources' windows
    crypto_error,      // OpenSSL failed (not a property of the frame)
    count_
};
inline constexpr std::size_t drop_reason_count = static_cast<std::size_t>(drop_reason::count_);
std::string_view name(drop_reason r) noexcept;

// Why seal_frame refused to seal.
enum class seal_error : std::uint8_t {
    none,
    malformed,      // not a UET frame over IPv4/UDP or IP (protocol 253)
    no_room,        // out cannot hold the sealed frame, or it would exceed one IPv4 packet
    no_key,         // the domain holds no key for its tx AN
    tsc_exhausted,  // the 48-bit TSC is used up: the domain needs a new key
    crypto_error,
    count_
};
inline constexpr std::size_t seal_error_count = static_cast<std::size_t>(seal_error::count_);
std::string_view name(seal_error e) noexcept;

struct counters {
    std::uint64_t sealed = 0, opened = 0;
    std::uint64_t sealed_bytes = 0, opened_bytes = 0;  // plaintext bytes (PDS header on)
    std::uint64_t kdf_runs = 0;                        // packet keys derived
    std::uint64_t key_cache_hits = 0;                  // received frames whose key was cached
    std::array<std::uint64_t, drop_reason_count> drops{};
    std::array<std::uint64_t, seal_error_count> seal_errors{};
    std::uint64_t drop(drop_reason r) const noexcept { return drops[static_cast<std::size_t>(r)]; }
    std::uint64_t error(seal_error e) const noexcept {
        return seal_errors[static_cast<std::size_t>(e)];
    }
};

// Bytes a sealed frame adds: the TSS header (12, or 16 with an SSI) and the ICV.
std::size_t seal_overhead(const secure_domain& d) noexcept;
// The TSS header alone: how far into out a frame sealed in place starts (seal_frame).
std::size_t tss_header_size(const secure_domain& d) noexcept;

// One frame of a burst.
struct seal_item {
    std::span<const std::uint8_t> plain = {};  // the frame to seal
    std::span<std::uint8_t> out = {};          // where the sealed frame goes (see seal_frame)
    std::size_t size = 0;                      // set: the sealed frame's length (0 when error)
    seal_error error = seal_error::none;       // set
};
struct open_item {
    std::span<std::uint8_t> frame = {};      // a received frame, opened in place
    std::span<std::uint8_t> plain = {};      // set: the plaintext frame inside it
    drop_reason reason = drop_reason::none;  // set
    const secure_domain* domain = nullptr;   // set: the domain that authenticated it
};

class sublayer {
  public:
    explicit sublayer(std::size_t max_domains = 16);
    sublayer(const sublayer&) = delete;
    sublayer& operator=(const sublayer&) = delete;

    // Control path (allocates): nullptr when the SDI is taken or max_domains are in use.
    secure_domain* add_domain(const domain_config& cfg);
    bool remove_domain(std::uint32_t sdi) noexcept;
    secure_domain* find_domain(std::uint32_t sdi) noexcept;

    // Seals a UET frame (over UDP, or over IP with its entropy header) under d with the next
    // TSC: writes to out the frame with the TSS header after UDP (or the entropy header), the
    // rest encrypted and the ICV after it, the IPv4 (and UDP) lengths and the IPv4 checksum
    // updated; the UDP checksum is recomputed when plain had one.
    // Returns the sealed length, 0 on an error (counted, and written to *err when given).
    // out and plain do not overlap, but for sealing in place: plain starts exactly
    // tss_header_size(d) bytes into out (the room for the TSS header before it), so that the
    // body is encrypted where it lies and only the headers before it move.
    std::size_t seal_frame(secure_domain& d, std::span<const std::uint8_t> plain,
                           std::span<std::uint8_t> out, seal_error* err = nullptr) noexcept;
    // Authenticates and decrypts frame in place. On success plain is the frame as it was before
    // sealing (its UDP checksum 0: the ICV covered every byte), inside frame's buffer.
    drop_reason open_frame(std::span<std::uint8_t> frame, std::span<std::uint8_t>& plain,
                           const secure_domain** domain = nullptr) noexcept;
    // The same, frame left as it is: the plaintext frame is written at the start of into (one
    // pass over the ciphertext, no copy of the frame first). A frame whose plaintext does not
    // fit into is dropped as malformed.
    drop_reason open_frame_into(std::span<const std::uint8_t> frame, std::span<std::uint8_t> into,
                                std::span<std::uint8_t>& plain,
                                const secure_domain** domain = nullptr) noexcept;

    // The same for a burst, reusing the contexts across it; return how many succeeded.
    std::size_t seal_burst(secure_domain& d, std::span<seal_item> items) noexcept;
    std::size_t open_burst(std::span<open_item> items) noexcept;

    const counters& stats() const noexcept { return stats_; }
    // Key schedules computed by the two GCM contexts (a key change each).
    std::uint64_t gcm_key_loads() const noexcept { return tx_.key_loads() + rx_.key_loads(); }

  private:
    // into == nullptr: in place (frame is then writable).
    drop_reason open_checked(std::span<const std::uint8_t> frame, std::uint8_t* into,
                             std::size_t into_size, std::span<std::uint8_t>& plain,
                             const secure_domain*& domain) noexcept;
    drop_reason open_counted(std::span<const std::uint8_t> frame, std::uint8_t* into,
                             std::size_t into_size, std::span<std::uint8_t>& plain,
                             const secure_domain** domain) noexcept;
    seal_error seal_checked(secure_domain& d, std::span<const std::uint8_t> plain,
                            std::span<std::uint8_t> out, std::size_t& size) noexcept;

    std::size_t max_domains_;
    std::vector<std::unique_ptr<secure_domain>> domains_;
    cmac prf_;
    gcm tx_, rx_;
    counters stats_;
};

}  // namespace uet::tss
