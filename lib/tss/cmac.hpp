// AES-CMAC (NIST SP 800-38B, RFC 4493) over OpenSSL 3's EVP_MAC. The MAC and its context are
// fetched once; each mac() call re-keys the same context, so deriving a key allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

struct evp_mac_st;
struct evp_mac_ctx_st;

namespace uet::tss {

class cmac {
  public:
    static constexpr std::size_t tag_size = 16;
    // key_bytes: 16 (AES-128, for RFC 4493's examples) or 32 (AES-256, what TSS uses).
    explicit cmac(std::size_t key_bytes = 32);
    ~cmac();
    cmac(const cmac&) = delete;
    cmac& operator=(const cmac&) = delete;

    std::size_t key_bytes() const noexcept { return key_bytes_; }
    // The tag of the concatenation of the parts under key (key_bytes() long). False on a wrong
    // key length or an OpenSSL failure (out is then zeroed).
    bool mac(std::span<const std::uint8_t> key,
             std::span<const std::span<const std::uint8_t>> parts,
             std::span<std::uint8_t, tag_size> out) noexcept;

  private:
    std::size_t key_bytes_;
    evp_mac_st* mac_ = nullptr;
    evp_mac_ctx_st* ctx_ = nullptr;
};

}  // namespace uet::tss
