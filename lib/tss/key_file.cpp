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

std::optional<key256> parse_key(std::span<const std::uint8_t> bytes, std::string& error) {
    std::array<std::uint8_t, key_size> raw{};
    std::optional<key256> key;
    std::size_t begin = 0, end = bytes.size();
    while (begin < end && is_space(bytes[begin]))
        ++begin;
    while (end > begin && is_space(bytes[end - 1]))
        --end;
    const auto text = bytes.subspan(begin, end - begin);
    bool hex = text.size() == 2 * key_size;
    for (std::size_t i = 0; hex && i < key_size; ++i) {
        const int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
        hex = hi >= 0 && lo >= 0;
        raw[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    if (hex) {
        key.emplace(std::span<const std::uint8_t, key_size>(raw));
    } else if (bytes.size() == key_size) {
        key.emplace(bytes.first<key_size>());
    } else {
        error = "a key is 64 hex digits or 32 raw bytes, not " + std::to_string(bytes.size()) +
                " bytes of that";
    }
    OPENSSL_cleanse(raw.data(), raw.size());
    return key;
}

std::optional<key256> read_key_file(const std::string& path, std::string& error) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        error = "key file " + path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    // Longer than any key form allows, so an oversized file is refused, not truncated.
    std::array<std::uint8_t, 4 * key_size> buf{};
    const std::size_t n = std::fread(buf.data(), 1, buf.size(), f);
    const bool read_error = std::ferror(f) != 0;
    std::fclose(f);
    std::optional<key256> key;
    if (read_error) {
        error = "key file " + path + ": read error";
    } else if (n == buf.size()) {
        error = "key file " + path + ": longer than any key";
    } else if (key = parse_key(std::span(buf).first(n), error); !key) {
        error = "key file " + path + ": " + error;
    }
    OPENSSL_cleanse(buf.data(), buf.size());
    return key;
}

}  // namespace uet::tss
