#include "tss/key_file.hpp"

#include <openssl/crypto.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace uet::tss {

namespace {

int hex_value(std::uint8_t c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool is_space(std::uint8_t c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

std::optional<key256> parse_hex_key(std::string_view text) {
    while (!text.empty() && is_space(static_cast<std::uint8_t>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && is_space(static_cast<std::uint8_t>(text.back())))
        text.remove_suffix(1);
    if (text.size() != 2 * key_size) return std::nullopt;
    std::array<std::uint8_t, key_size> raw{};
    bool hex = true;
    for (std::size_t i = 0; hex && i < key_size; ++i) {
        const int hi = hex_value(static_cast<std::uint8_t>(text[2 * i]));
        const int lo = hex_value(static_cast<std::uint8_t>(text[2 * i + 1]));
        hex = hi >= 0 && lo >= 0;
        raw[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    std::optional<key256> key;
    if (hex) key.emplace(std::span<const std::uint8_t, key_size>(raw));
    OPENSSL_cleanse(raw.data(), raw.size());
    return key;
}

std::optional<key256> parse_key(std::span<const std::uint8_t> bytes, std::string& error) {
    auto key =
        parse_hex_key(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    if (!key && bytes.size() == key_size) key.emplace(bytes.first<key_size>());
    if (!key)
        error = "holds " + std::to_string(bytes.size()) +
                " bytes: a key is 32 raw bytes or 64 hex digits";
    return key;
}

std::optional<key256> read_key_file(const std::string& path, std::string& error) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        error = std::strerror(errno);
        return std::nullopt;
    }
    // Longer than any key form allows, so an oversized file is refused, not truncated.
    std::array<std::uint8_t, 4 * key_size> buf{};
    const std::size_t n = std::fread(buf.data(), 1, buf.size(), f);
    const bool read_error = std::ferror(f) != 0;
    std::fclose(f);
    std::optional<key256> key;
    if (read_error) {
        error = "read error";
    } else if (n == buf.size()) {
        error = "holds " + std::to_string(n) + "+ bytes: a key is 32 raw bytes or 64 hex digits";
    } else {
        key = parse_key(std::span(buf).first(n), error);
    }
    OPENSSL_cleanse(buf.data(), buf.size());
    return key;
}

}  // namespace uet::tss
