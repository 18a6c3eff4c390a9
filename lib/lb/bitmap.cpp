#include "lb/bitmap.hpp"

#include <algorithm>

namespace uet::lb {

bitmap::bitmap(lb_context& ctx) noexcept : ctx_(&ctx) {
    walk_.init(*ctx.rng, std::min(ctx.path_bits(), max_path_bits));
}

std::uint8_t bitmap::penalty(std::uint16_t entropy) const noexcept {
    const std::uint16_t path = path_of(entropy);
    const std::uint8_t byte = nibbles_[path / 2];
    return path % 2 ? byte >> 4 : byte & 0x0F;
}

void bitmap::set_penalty(std::uint16_t path, std::uint8_t value) noexcept {
    std::uint8_t& byte = nibbles_[path / 2];
    byte = path % 2 ? static_cast<std::uint8_t>((byte & 0x0F) | (value << 4))
                    : static_cast<std::uint8_t>((byte & 0xF0) | value);
}

void bitmap::add_penalty(std::uint16_t entropy, std::uint8_t amount) noexcept {
    const unsigned sum = unsigned{penalty(entropy)} + amount;
    set_penalty(path_of(entropy), static_cast<std::uint8_t>(std::min<unsigned>(sum, max_penalty)));
}

// Walk on; each penalised value met is decremented and skipped. After a whole round of
// penalised values (every path reported bad) take the value the walk stands on anyway: sending
// somewhere beats not sending.
std::uint16_t bitmap::next_entropy() noexcept {
    std::uint16_t path = walk_.current();
    for (std::uint32_t tries = 0; tries < walk_.count(); ++tries) {
        const std::uint8_t p = penalty(path);
        if (p == 0) break;
        set_penalty(path, static_cast<std::uint8_t>(p - 1));
        walk_.advance(*ctx_->rng);
        path = walk_.current();
    }
    walk_.advance(*ctx_->rng);
    return walk_.value(path);
}

void bitmap::on_ack(std::uint16_t entropy, bool ecn) noexcept {
    if (ecn) add_penalty(entropy, ecn_penalty);
}

void bitmap::on_nack(std::uint16_t entropy) noexcept {
    add_penalty(entropy, nack_penalty);
}

void bitmap::on_path_switch(std::uint16_t entropy) noexcept {
    add_penalty(entropy, ecn_penalty);
}

void bitmap::on_timeout(std::uint16_t entropy) noexcept {
    set_penalty(path_of(entropy), max_penalty);
}

}  // namespace uet::lb
