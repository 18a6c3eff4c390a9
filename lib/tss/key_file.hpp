// Secure domain keys as tools read them: 32 raw bytes, or 64 hex digits with optional whitespace
// around them (what `openssl rand -hex 32` prints). Errors name what was wrong, never a key byte.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tss/secret.hpp"

namespace uet::tss {

// The key as 64 hex digits (white space around them ignored); nullopt when it is not.
std::optional<key256> parse_hex_key(std::string_view text);
// The key in text (64 hex digits) or raw form (exactly 32 bytes); nullopt and error set when
// neither ("holds N bytes: ...").
std::optional<key256> parse_key(std::span<const std::uint8_t> bytes, std::string& error);
// The key in a file, as parse_key reads it; error says what was wrong (the caller names the
// file).
std::optional<key256> read_key_file(const std::string& path, std::string& error);

}  // namespace uet::tss
