#include "wire/icrc.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace uet::wire {

namespace {

constexpr std::uint32_t crc32_poly_reflected = 0xedb88320u;

// Slice-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes, so eight input
// bytes are folded per step with eight independent lookups (the ICRC is on the data path).
using crc_tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr crc_tables make_tables() {
    crc_tables t{};
    for (std::uint32_t b = 0; b < 256; ++b) {
        std::uint32_t c = b;
        for (int i = 0; i < 8; ++i)
            c = (c & 1) ? (c >> 1) ^ crc32_poly_reflected : c >> 1;
        t[0][b] = c;
    }
    for (std::size_t k = 1; k < 8; ++k)
        for (std::size_t b = 0; b < 256; ++b)
            t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    return t;
}

constexpr crc_tables tables = make_tables();

constexpr std::size_t bth_size = 12;
constexpr std::size_t udp_size = 8;
constexpr std::size_t max_masked = 60 + udp_size + bth_size;  // IHL 15 is the largest header

}  // namespace

std::uint32_t crc32_update(std::uint32_t state, std::span<const std::uint8_t> data) noexcept {
    const std::uint8_t* p = data.data();
    std::size_t n = data.size();
    while (n >= 8) {
        std::uint32_t lo = state ^ load_le32(p);
        std::uint32_t hi = load_le32(p + 4);
        state = tables[7][lo & 0xff] ^ tables[6][(lo >> 8) & 0xff] ^ tables[5][(lo >> 16) & 0xff] ^
                tables[4][lo >> 24] ^ tables[3][hi & 0xff] ^ tables[2][(hi >> 8) & 0xff] ^
                tables[1][(hi >> 16) & 0xff] ^ tables[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--)
        state = (state >> 8) ^ tables[0][(state ^ *p++) & 0xff];
    return state;
}

std::uint32_t roce_icrc(std::span<const std::uint8_t> ip_packet) noexcept {
    static constexpr std::uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    std::uint32_t state = crc32_update(crc32_init, ones);
    if (ip_packet.empty()) return crc32_finish(state);

    // Copy the headers that have masked fields, mask them, then run over the rest in place.
    std::size_t ihl = std::size_t{ip_packet[0] & 0x0fu} * 4;
    std::size_t masked_len = std::min(ihl + udp_size + bth_size, ip_packet.size());
    std::array<std::uint8_t, max_masked> hdr;
    std::memcpy(hdr.data(), ip_packet.data(), masked_len);
    auto mask = [&](std::size_t off, std::size_t len) {
        for (std::size_t i = off; i < off + len && i < masked_len; ++i)
            hdr[i] = 0xff;
    };
    mask(1, 1);                   // TOS: DSCP and ECN
    mask(8, 1);                   // TTL
    mask(10, 2);                  // header checksum
    mask(ihl + 6, 2);             // UDP checksum
    mask(ihl + udp_size + 4, 1);  // BTH resv8a (FECN, BECN)
    state = crc32_update(state, std::span(hdr.data(), masked_len));
    state = crc32_update(state, ip_packet.subspan(masked_len));
    return crc32_finish(state);
}

}  // namespace uet::wire
