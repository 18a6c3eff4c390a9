#include "tss/cmac.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <stdexcept>

namespace uet::tss {

cmac::cmac(std::size_t key_bytes) : key_bytes_(key_bytes) {
    if (key_bytes != 16 && key_bytes != 32) throw std::invalid_argument("cmac: key of 16 or 32");
    mac_ = EVP_MAC_fetch(nullptr, "CMAC", nullptr);
    if (mac_) ctx_ = EVP_MAC_CTX_new(mac_);
    char aes128[] = "AES-128-CBC", aes256[] = "AES-256-CBC";
    char* cipher = key_bytes == 16 ? aes128 : aes256;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, cipher, 0),
                           OSSL_PARAM_END};
    if (!ctx_ || EVP_MAC_CTX_set_params(ctx_, params) != 1) {
        EVP_MAC_CTX_free(ctx_);
        EVP_MAC_free(mac_);
        throw std::runtime_error("cmac: OpenSSL has no AES-CMAC");
    }
}

cmac::~cmac() {
    EVP_MAC_CTX_free(ctx_);  // frees (and OpenSSL cleanses) the key schedule it holds
    EVP_MAC_free(mac_);
}

bool cmac::mac(std::span<const std::uint8_t> key,
               std::span<const std::span<const std::uint8_t>> parts,
               std::span<std::uint8_t, tag_size> out) noexcept {
    std::size_t len = 0;
    bool ok = key.size() == key_bytes_ && EVP_MAC_init(ctx_, key.data(), key.size(), nullptr) == 1;
    for (auto p : parts)
        ok = ok && EVP_MAC_update(ctx_, p.data(), p.size()) == 1;
    ok = ok && EVP_MAC_final(ctx_, out.data(), &len, out.size()) == 1 && len == tag_size;
    if (!ok) OPENSSL_cleanse(out.data(), out.size());
    return ok;
}

}  // namespace uet::tss
