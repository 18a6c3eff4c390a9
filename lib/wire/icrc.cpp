#include "wire/icrc.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

#if defined(__x86_64__)
// CRC-32 by folding (Intel, "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", for
// the reflected IEEE polynomial, as Linux's crc32-pclmul): four 128-bit lanes are each multiplied
// by x^(512+64) and x^512 mod P and added to the next 64 bytes, then folded into one lane, reduced
// to 64 and 32 bits, and Barrett-reduced to the CRC. (Runs of 16 to 63 bytes skip the four lanes.)
constexpr std::uint64_t fold_512_lo = 0x154442bd4, fold_512_hi = 0x1c6e41596;
constexpr std::uint64_t fold_128_lo = 0x1751997d0, fold_128_hi = 0x0ccaa009e;
constexpr std::uint64_t fold_64_to_32 = 0x163cd6124;
constexpr std::uint64_t barrett_poly = 0x1db710641, barrett_mu = 0x1f7011641;

[[gnu::target("pclmul,sse4.1"), gnu::always_inline]] inline __m128i fold_into(__m128i x, __m128i k,
                                                                              __m128i next) {
    return _mm_xor_si128(
        _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

[[gnu::target("pclmul,sse4.1"), gnu::always_inline]] inline __m128i load16(const std::uint8_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// 16 bytes at p + at, also stored at out + at when copying.
template <bool copy>
[[gnu::target("pclmul,sse4.1"), gnu::always_inline]] inline __m128i take16(const std::uint8_t* p,
                                                                           std::uint8_t* out,
                                                                           std::size_t at) {
    const __m128i v = load16(p + at);
    if constexpr (copy) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + at), v);
    return v;
}

// The 128 bits left after folding to the CRC: 128 to 64 bits (appending the 32 zero bits a CRC's
// register implies), then 64 to 32, then Barrett.
[[gnu::target("pclmul,sse4.1"), gnu::always_inline]] inline std::uint32_t crc32_reduce(__m128i x1) {
    const __m128i k128 = _mm_set_epi64x(fold_128_hi, fold_128_lo);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k128, 0x10));
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    x1 = _mm_xor_si128(
        _mm_clmulepi64_si128(_mm_and_si128(x1, low32), _mm_set_epi64x(0, fold_64_to_32), 0x00),
        _mm_srli_si128(x1, 4));
    const __m128i barrett = _mm_set_epi64x(barrett_mu, barrett_poly);
    __m128i q = _mm_clmulepi64_si128(_mm_and_si128(x1, low32), barrett, 0x10);
    q = _mm_clmulepi64_si128(_mm_and_si128(q, low32), barrett, 0x00);
    return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(q, x1), 1));
}

// Folds n bytes at p (n >= 16, a multiple of 16); with `copy`, stores each loaded vector at out
// too, so the bytes are read once for both.
template <bool copy>
[[gnu::target("pclmul,sse4.1")]] std::uint32_t crc32_fold(std::uint32_t state,
                                                          const std::uint8_t* p, std::size_t n,
                                                          std::uint8_t* out = nullptr) {
    __m128i x1 = _mm_xor_si128(take16<copy>(p, out, 0), _mm_cvtsi32_si128(static_cast<int>(state)));
    const __m128i k128 = _mm_set_epi64x(fold_128_hi, fold_128_lo);
    std::size_t at = 16;
    if (n >= 64) {  // four lanes 64 bytes apart; shorter runs fold 16 bytes at a time
        __m128i x2 = take16<copy>(p, out, 16), x3 = take16<copy>(p, out, 32),
                x4 = take16<copy>(p, out, 48);
        at = 64;
        const __m128i k512 = _mm_set_epi64x(fold_512_hi, fold_512_lo);
        for (; n - at >= 64; at += 64) {
            x1 = fold_into(x1, k512, take16<copy>(p, out, at));
            x2 = fold_into(x2, k512, take16<copy>(p, out, at + 16));
            x3 = fold_into(x3, k512, take16<copy>(p, out, at + 32));
            x4 = fold_into(x4, k512, take16<copy>(p, out, at + 48));
        }
        x1 = fold_into(fold_into(fold_into(x1, k128, x2), k128, x3), k128, x4);
    }
    for (; n - at >= 16; at += 16)
        x1 = fold_into(x1, k128, take16<copy>(p, out, at));
    return crc32_reduce(x1);
}

// The same fold four times as wide (VPCLMULQDQ on 512-bit registers): four registers of four
// lanes take 256 bytes a step, each lane multiplied by x^(2048+64) and x^2048 mod P; then the
// registers fold into one with the 512-bit constants, its four lanes into x1 with the 128-bit
// ones, and what is left goes the 128-bit way. n >= 256 and a multiple of 16.
constexpr std::uint64_t fold_2048_lo = 0x11542778a, fold_2048_hi = 0x1322d1430;

#define UET_WIDE_TARGET "vpclmulqdq,avx512f,avx512vl,pclmul,sse4.1"

[[gnu::target(UET_WIDE_TARGET), gnu::always_inline]] inline __m512i fold_into512(__m512i x,
                                                                                 __m512i k,
                                                                                 __m512i next) {
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                     _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

template <bool copy>
[[gnu::target(UET_WIDE_TARGET), gnu::always_inline]] inline __m512i take64(const std::uint8_t* p,
                                                                           std::uint8_t* out,
                                                                           std::size_t at) {
    const __m512i v = _mm512_loadu_si512(p + at);
    if constexpr (copy) _mm512_storeu_si512(out + at, v);
    return v;
}

template <bool copy>
[[gnu::target(UET_WIDE_TARGET)]] std::uint32_t crc32_fold_wide(std::uint32_t state,
                                                               const std::uint8_t* p, std::size_t n,
                                                               std::uint8_t* out = nullptr) {
    // No broadcasts, casts or lane extracts: GCC 12's read an undefined vector
    // (-Wuninitialized), so constants are set whole and lanes leave through memory.
    __m512i z1 = _mm512_xor_si512(
        take64<copy>(p, out, 0),
        _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, static_cast<int>(state)));
    __m512i z2 = take64<copy>(p, out, 64), z3 = take64<copy>(p, out, 128),
            z4 = take64<copy>(p, out, 192);
    std::size_t at = 256;
    const __m512i k2048 = _mm512_set_epi64(fold_2048_hi, fold_2048_lo, fold_2048_hi, fold_2048_lo,
                                           fold_2048_hi, fold_2048_lo, fold_2048_hi, fold_2048_lo);
    for (; n - at >= 256; at += 256) {
        z1 = fold_into512(z1, k2048, take64<copy>(p, out, at));
        z2 = fold_into512(z2, k2048, take64<copy>(p, out, at + 64));
        z3 = fold_into512(z3, k2048, take64<copy>(p, out, at + 128));
        z4 = fold_into512(z4, k2048, take64<copy>(p, out, at + 192));
    }
    const __m512i k512 = _mm512_set_epi64(fold_512_hi, fold_512_lo, fold_512_hi, fold_512_lo,
                                          fold_512_hi, fold_512_lo, fold_512_hi, fold_512_lo);
    z1 = fold_into512(fold_into512(fold_into512(z1, k512, z2), k512, z3), k512, z4);
    alignas(64) __m128i lanes[4];
    _mm512_store_si512(lanes, z1);
    const __m128i k128 = _mm_set_epi64x(fold_128_hi, fold_128_lo);
    __m128i x1 =
        fold_into(fold_into(fold_into(lanes[0], k128, lanes[1]), k128, lanes[2]), k128, lanes[3]);
    for (; n - at >= 16; at += 16)
        x1 = fold_into(x1, k128, take16<copy>(p, out, at));
    return crc32_reduce(x1);
}

// Before this is set (another TU's static initializer), crc32_update takes the table path.
const bool cpu_folds = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}();
const bool cpu_folds_wide = [] {
    __builtin_cpu_init();
    return cpu_folds && __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512vl");
}();
#else
constexpr bool cpu_folds = false;
constexpr bool cpu_folds_wide = false;
#endif

}  // namespace

bool crc32_folds() noexcept {
    return cpu_folds;
}

bool crc32_folds_wide() noexcept {
    return cpu_folds_wide;
}

std::uint32_t crc32_update(std::uint32_t state, std::span<const std::uint8_t> data) noexcept {
#if defined(__x86_64__)
    if (data.size() >= 16 && cpu_folds) {
        const std::size_t folded = data.size() & ~std::size_t{15};
        state = folded >= 256 && cpu_folds_wide ? crc32_fold_wide<false>(state, data.data(), folded)
                                                : crc32_fold<false>(state, data.data(), folded);
        data = data.subspan(folded);
    }
#endif
    return crc32_update_table(state, data);
}

std::uint32_t crc32_copy(std::uint32_t state, std::uint8_t* dst, const std::uint8_t* src,
                         std::size_t n) noexcept {
#if defined(__x86_64__)
    if (n >= 16 && cpu_folds) {
        const std::size_t folded = n & ~std::size_t{15};
        state = folded >= 256 && cpu_folds_wide ? crc32_fold_wide<true>(state, src, folded, dst)
                                                : crc32_fold<true>(state, src, folded, dst);
        src += folded;
        dst += folded;
        n -= folded;
    }
#endif
    if (n == 0) return state;
    std::memcpy(dst, src, n);
    return crc32_update_table(state, std::span(src, n));
}

std::uint32_t crc32_update_table(std::uint32_t state, std::span<const std::uint8_t> data) noexcept {
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
    return crc32_finish(roce_icrc_state(ip_packet));
}

std::uint32_t roce_icrc_state(std::span<const std::uint8_t> ip_packet) noexcept {
    // The 8 bytes of 1s, then a copy of the headers that have masked fields, masked: one run
    // (48 bytes without IP options, folded); then the rest in place.
    constexpr std::size_t ones = 8;
    const std::size_t ihl = ip_packet.empty() ? 0 : std::size_t{ip_packet[0] & 0x0fu} * 4;
    const std::size_t masked_len = std::min(ihl + udp_size + bth_size, ip_packet.size());
    std::array<std::uint8_t, ones + max_masked> hdr;
    std::memset(hdr.data(), 0xff, ones);
    if (masked_len != 0) std::memcpy(hdr.data() + ones, ip_packet.data(), masked_len);
    auto mask = [&](std::size_t off, std::size_t len) {
        for (std::size_t i = off; i < off + len && i < masked_len; ++i)
            hdr[ones + i] = 0xff;
    };
    mask(1, 1);                   // TOS: DSCP and ECN
    mask(8, 1);                   // TTL
    mask(10, 2);                  // header checksum
    mask(ihl + 6, 2);             // UDP checksum
    mask(ihl + udp_size + 4, 1);  // BTH resv8a (FECN, BECN)
    const std::uint32_t state = crc32_update(crc32_init, std::span(hdr.data(), ones + masked_len));
    return crc32_update(state, ip_packet.subspan(masked_len));
}

}  // namespace uet::wire
