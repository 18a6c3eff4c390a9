// Network-byte-order loads/stores and bounds-checked sequential reader/writer.
// Every decoder in lib/wire reads through byte_reader so that no header can make it read past its
// buffer.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace uet::wire {

// std::byteswap is C++23.
constexpr std::uint16_t byteswap(std::uint16_t v) noexcept {
    return __builtin_bswap16(v);
}
constexpr std::uint32_t byteswap(std::uint32_t v) noexcept {
    return __builtin_bswap32(v);
}
constexpr std::uint64_t byteswap(std::uint64_t v) noexcept {
    return __builtin_bswap64(v);
}

// Each load and store is one memory access plus a byte swap. Written byte by byte, GCC merged
// some of them and not others: a header came out as a mix of byte and word stores, and a
// decoder reading it back right after stalled on store forwarding.
template <class T>
inline T load_be(const std::uint8_t* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::endian::native == std::endian::little) v = byteswap(v);
    return v;
}
template <class T>
inline void store_be(std::uint8_t* p, T v) noexcept {
    if constexpr (std::endian::native == std::endian::little) v = byteswap(v);
    std::memcpy(p, &v, sizeof v);
}

inline std::uint16_t load_be16(const std::uint8_t* p) noexcept {
    return load_be<std::uint16_t>(p);
}
inline std::uint32_t load_be24(const std::uint8_t* p) noexcept {
    return (std::uint32_t{load_be16(p)} << 8) | p[2];
}
inline std::uint32_t load_be32(const std::uint8_t* p) noexcept {
    return load_be<std::uint32_t>(p);
}
inline std::uint64_t load_be48(const std::uint8_t* p) noexcept {
    return (std::uint64_t{load_be16(p)} << 32) | load_be32(p + 2);
}
inline std::uint64_t load_be64(const std::uint8_t* p) noexcept {
    return load_be<std::uint64_t>(p);
}

inline void store_be16(std::uint8_t* p, std::uint16_t v) noexcept {
    store_be(p, v);
}
inline void store_be24(std::uint8_t* p, std::uint32_t v) noexcept {
    store_be16(p, static_cast<std::uint16_t>(v >> 8));
    p[2] = static_cast<std::uint8_t>(v);
}
inline void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
    store_be(p, v);
}
inline void store_be48(std::uint8_t* p, std::uint64_t v) noexcept {
    store_be16(p, static_cast<std::uint16_t>(v >> 32));
    store_be32(p + 2, static_cast<std::uint32_t>(v));
}
inline void store_be64(std::uint8_t* p, std::uint64_t v) noexcept {
    store_be(p, v);
}

// Reads big-endian fields in order. A read past the end sets failed() and returns zeros from
// then on, so a decoder may read a whole header and check once at the end.
class byte_reader {
  public:
    explicit byte_reader(std::span<const std::uint8_t> buf) noexcept : buf_(buf) {}

    std::uint8_t u8() noexcept { return take(1) ? buf_[off_ - 1] : 0; }
    std::uint16_t u16() noexcept { return take(2) ? load_be16(&buf_[off_ - 2]) : 0; }
    std::uint32_t u24() noexcept { return take(3) ? load_be24(&buf_[off_ - 3]) : 0; }
    std::uint32_t u32() noexcept { return take(4) ? load_be32(&buf_[off_ - 4]) : 0; }
    std::uint64_t u48() noexcept { return take(6) ? load_be48(&buf_[off_ - 6]) : 0; }
    std::uint64_t u64() noexcept { return take(8) ? load_be64(&buf_[off_ - 8]) : 0; }
    std::span<const std::uint8_t> bytes(std::size_t n) noexcept {
        return take(n) ? buf_.subspan(off_ - n, n) : std::span<const std::uint8_t>{};
    }
    void skip(std::size_t n) noexcept { take(n); }

    bool failed() const noexcept { return failed_; }
    std::size_t offset() const noexcept { return off_; }
    std::size_t remaining() const noexcept { return buf_.size() - off_; }
    std::span<const std::uint8_t> rest() const noexcept { return buf_.subspan(off_); }

  private:
    bool take(std::size_t n) noexcept {
        if (failed_ || n > buf_.size() - off_) {
            failed_ = true;
            return false;
        }
        off_ += n;
        return true;
    }

    std::span<const std::uint8_t> buf_;
    std::size_t off_ = 0;
    bool failed_ = false;
};

// Writes big-endian fields in order. A write past the end sets failed() and writes nothing more.
class byte_writer {
  public:
    explicit byte_writer(std::span<std::uint8_t> buf) noexcept : buf_(buf) {}

    void u8(std::uint8_t v) noexcept {
        if (take(1)) buf_[off_ - 1] = v;
    }
    void u16(std::uint16_t v) noexcept {
        if (take(2)) store_be16(&buf_[off_ - 2], v);
    }
    void u24(std::uint32_t v) noexcept {
        if (take(3)) store_be24(&buf_[off_ - 3], v);
    }
    void u32(std::uint32_t v) noexcept {
        if (take(4)) store_be32(&buf_[off_ - 4], v);
    }
    void u48(std::uint64_t v) noexcept {
        if (take(6)) store_be48(&buf_[off_ - 6], v);
    }
    void u64(std::uint64_t v) noexcept {
        if (take(8)) store_be64(&buf_[off_ - 8], v);
    }
    void bytes(std::span<const std::uint8_t> src) noexcept {
        if (take(src.size()) && !src.empty())
            std::memcpy(&buf_[off_ - src.size()], src.data(), src.size());
    }
    void zeros(std::size_t n) noexcept {
        if (take(n) && n) std::memset(&buf_[off_ - n], 0, n);
    }

    bool failed() const noexcept { return failed_; }
    std::size_t offset() const noexcept { return off_; }
    // Bytes written, or 0 when the buffer was too small: the convention of every encode().
    std::size_t result() const noexcept { return failed_ ? 0 : off_; }

  private:
    bool take(std::size_t n) noexcept {
        if (failed_ || n > buf_.size() - off_) {
            failed_ = true;
            return false;
        }
        off_ += n;
        return true;
    }

    std::span<std::uint8_t> buf_;
    std::size_t off_ = 0;
    bool failed_ = false;
};

}  // namespace uet::wire
