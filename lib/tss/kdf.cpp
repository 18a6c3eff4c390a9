#include "tss/kdf.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstring>

namespace uet::tss {

bool kdf_ctr_cmac(cmac& prf, std::span<const std::uint8_t> key, std::span<const std::uint8_t> label,
                  std::span<const std::uint8_t> context, std::span<std::uint8_t> out) noexcept {
    const std::size_t blocks = (out.size() + cmac::tag_size - 1) / cmac::tag_size;
    if (blocks == 0 || blocks > 255 || out.size() > 0x1fffffff) return false;
    const std::uint32_t bits = static_cast<std::uint32_t>(out.size() * 8);
    const std::uint8_t sep[1] = {0};
    const std::uint8_t length[4] = {
        static_cast<std::uint8_t>(bits >> 24), static_cast<std::uint8_t>(bits >> 16),
        static_cast<std::uint8_t>(bits >> 8), static_cast<std::uint8_t>(bits)};
    std::uint8_t counter[1];
    const std::span<const std::uint8_t> parts[] = {counter, label, sep, context, length};
    std::array<std::uint8_t, cmac::tag_size> block;
    bool ok = true;
    for (std::size_t i = 0; ok && i < blocks; ++i) {
        counter[0] = static_cast<std::uint8_t>(i + 1);
        ok = prf.mac(key, parts, block);
        const std::size_t at = i * cmac::tag_size;
        std::memcpy(out.data() + at, block.data(), std::min(block.size(), out.size() - at));
    }
    OPENSSL_cleanse(block.data(), block.size());
    if (!ok) OPENSSL_cleanse(out.data(), out.size());
    return ok;
}

std::array<std::uint8_t, key_context_size> encode(const key_context& c) noexcept {
    return {static_cast<std::uint8_t>(c.epoch >> 8),   static_cast<std::uint8_t>(c.epoch),
            static_cast<std::uint8_t>(c.rekey >> 24),  static_cast<std::uint8_t>(c.rekey >> 16),
            static_cast<std::uint8_t>(c.rekey >> 8),   static_cast<std::uint8_t>(c.rekey),
            static_cast<std::uint8_t>(c.source >> 24), static_cast<std::uint8_t>(c.source >> 16),
            static_cast<std::uint8_t>(c.source >> 8),  static_cast<std::uint8_t>(c.source)};
}

bool derive_packet_key(cmac& prf, std::span<const std::uint8_t, key_size> domain_key,
                       domain_mode mode, const key_context& ctx, packet_key& out) noexcept {
    static constexpr std::uint8_t cluster_label[] = {'U', '1'}, client_server_label[] = {'U', '2'};
    const auto context = encode(ctx);
    secret<key_size + iv_size> material;
    const bool ok = kdf_ctr_cmac(prf, domain_key,
                                 mode == domain_mode::cluster ? cluster_label : client_server_label,
                                 context, material.data());
    const auto m = material.view();
    out.key.assign(m.first<key_size>());
    out.iv_mask.assign(m.subspan<key_size, iv_size>());
    return ok;
}

}  // namespace uet::tss
