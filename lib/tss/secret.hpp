// Key material: fixed-size bytes that are wiped with OPENSSL_cleanse when they go away or are
// replaced, so no key outlives the object that held it. Nothing here prints them.
#pragma once

#include <openssl/crypto.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace uet::tss {

template <std::size_t N>
class secret {
  public:
    secret() noexcept = default;
    explicit secret(std::span<const std::uint8_t, N> bytes) noexcept { assign(bytes); }
    secret(const secret& o) noexcept { assign(o.view()); }
    secret& operator=(const secret& o) noexcept {
        if (this != &o) assign(o.view());
        return *this;
    }
    ~secret() { wipe(); }

    void assign(std::span<const std::uint8_t, N> bytes) noexcept {
        std::memcpy(bytes_.data(), bytes.data(), N);
    }
    void wipe() noexcept { OPENSSL_cleanse(bytes_.data(), N); }
    std::span<const std::uint8_t, N> view() const noexcept { return bytes_; }
    std::span<std::uint8_t, N> data() noexcept { return bytes_; }
    // Constant time, so a comparison says nothing about where two keys differ.
    bool same(std::span<const std::uint8_t, N> other) const noexcept {
        return CRYPTO_memcmp(bytes_.data(), other.data(), N) == 0;
    }

  private:
    std::array<std::uint8_t, N> bytes_{};
};

inline constexpr std::size_t key_size = 32;  // AES-256
inline constexpr std::size_t iv_size = 12;   // GCM nonce
inline constexpr std::size_t icv_size = 16;  // GCM tag
using key256 = secret<key_size>;

}  // namespace uet::tss
