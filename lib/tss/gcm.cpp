#include "tss/gcm.hpp"

#include <openssl/evp.h>

#include <climits>
#include <stdexcept>

namespace uet::tss {

gcm::gcm() {
    ctx_ = EVP_CIPHER_CTX_new();
    if (!ctx_ || EVP_CipherInit_ex(ctx_, EVP_aes_256_gcm(), nullptr, nullptr, nullptr, 1) != 1) {
        EVP_CIPHER_CTX_free(ctx_);
        throw std::runtime_error("gcm: OpenSSL has no AES-256-GCM");
    }
}

gcm::~gcm() {
    EVP_CIPHER_CTX_free(ctx_);  // cleanses the key schedule; key_ wipes itself
}

bool gcm::prepare(std::span<const std::uint8_t, key_size> key, int enc,
                  std::span<const std::uint8_t, iv_size> iv) noexcept {
    if (enc_ < 0 || !key_.same(key)) {
        key_.assign(key);
        enc_ = enc;
        ++key_loads_;
        return EVP_CipherInit_ex(ctx_, nullptr, nullptr, key.data(), iv.data(), enc) == 1;
    }
    if (enc_ != enc) {
        // A NULL key keeps the schedule (OpenSSL 3's GCM init only re-keys when given a key).
        enc_ = enc;
        ++key_loads_;
    }
    return EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, iv.data(), enc) == 1;
}

bool gcm::seal(std::span<const std::uint8_t, key_size> key,
               std::span<const std::uint8_t, iv_size> iv, std::span<const std::uint8_t> aad,
               std::span<const std::uint8_t> in, std::uint8_t* out,
               std::span<std::uint8_t, icv_size> tag) noexcept {
    if (aad.size() > INT_MAX || in.size() > INT_MAX) return false;
    int len = 0;
    bool ok = prepare(key, 1, iv);
    ok = ok && EVP_EncryptUpdate(ctx_, nullptr, &len, aad.data(), static_cast<int>(aad.size()));
    ok = ok && EVP_EncryptUpdate(ctx_, out, &len, in.data(), static_cast<int>(in.size()));
    ok = ok && EVP_EncryptFinal_ex(ctx_, out + len, &len) == 1;
    return ok && EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_GET_TAG, icv_size, tag.data()) == 1;
}

bool gcm::open(std::span<const std::uint8_t, key_size> key,
               std::span<const std::uint8_t, iv_size> iv, std::span<const std::uint8_t> aad,
               std::span<const std::uint8_t> in, std::uint8_t* out,
               std::span<const std::uint8_t, icv_size> tag) noexcept {
    if (aad.size() > INT_MAX || in.size() > INT_MAX) return false;
    int len = 0;
    bool ok = prepare(key, 0, iv);
    ok = ok && EVP_DecryptUpdate(ctx_, nullptr, &len, aad.data(), static_cast<int>(aad.size()));
    ok = ok && EVP_DecryptUpdate(ctx_, out, &len, in.data(), static_cast<int>(in.size()));
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_TAG, icv_size,
                                   const_cast<std::uint8_t*>(tag.data())) == 1;
    return ok && EVP_DecryptFinal_ex(ctx_, out + len, &len) == 1;
}

}  // namespace uet::tss
