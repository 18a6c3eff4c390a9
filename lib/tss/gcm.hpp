// AES-256-GCM over one OpenSSL EVP_CIPHER_CTX, made once and reused for every packet: the key
// schedule is computed again only when the key (or the direction) changes, so a run of packets
// under one key costs an IV set, the AAD, the bulk pass and the tag, and allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tss/secret.hpp"

struct evp_cipher_ctx_st;

namespace uet::tss {

class gcm {
  public:
    gcm();
    ~gcm();
    gcm(const gcm&) = delete;
    gcm& operator=(const gcm&) = delete;

    // Encrypts in (in place when out == in.data()) to out, which holds in.size() bytes, and
    // writes the tag. False on an OpenSSL failure.
    bool seal(std::span<const std::uint8_t, key_size> key,
              std::span<const std::uint8_t, iv_size> iv, std::span<const std::uint8_t> aad,
              std::span<const std::uint8_t> in, std::uint8_t* out,
              std::span<std::uint8_t, icv_size> tag) noexcept;
    // Decrypts and verifies: false when the tag does not match (out then holds unauthenticated
    // bytes the caller must drop) or on an OpenSSL failure.
    bool open(std::span<const std::uint8_t, key_size> key,
              std::span<const std::uint8_t, iv_size> iv, std::span<const std::uint8_t> aad,
              std::span<const std::uint8_t> in, std::uint8_t* out,
              std::span<const std::uint8_t, icv_size> tag) noexcept;

    // How many times the key schedule was computed (a key or direction change).
    std::uint64_t key_loads() const noexcept { return key_loads_; }

  private:
    bool prepare(std::span<const std::uint8_t, key_size> key, int enc,
                 std::span<const std::uint8_t, iv_size> iv) noexcept;

    evp_cipher_ctx_st* ctx_ = nullptr;
    key256 key_;
    int enc_ = -1;  // the direction the context is keyed for; -1 before the first key
    std::uint64_t key_loads_ = 0;
};

}  // namespace uet::tss
