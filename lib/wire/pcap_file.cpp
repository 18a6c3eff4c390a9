#include "wire/pcap_file.hpp"

#include <algorithm>
#include <array>

namespace uet::wire {

namespace {

constexpr std::uint32_t pcap_magic_us = 0xa1b2c3d4;
constexpr std::uint32_t linktype_ethernet = 1;

// pcap fields are in the writer's byte order; write little-endian explicitly so files are the
// same on every host (readers detect the order from the magic).
template <std::size_t N>
void put_le32(std::array<std::uint8_t, N>& b, std::size_t off, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        b[off + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

bool pcap_writer::open(const std::string& path) {
    close();
    frames_ = 0;
    failed_ = false;
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) return false;
    std::array<std::uint8_t, 24> h{};
    put_le32(h, 0, pcap_magic_us);
    h[4] = 2;  // version 2.4
    h[6] = 4;
    // thiszone and sigfigs stay 0
    put_le32(h, 16, snaplen);
    put_le32(h, 20, linktype_ethernet);
    if (std::fwrite(h.data(), 1, h.size(), file_) != h.size()) {
        close();
        return false;
    }
    return true;
}

bool pcap_writer::write(std::span<const std::uint8_t> head, std::span<const std::uint8_t> rest,
                        std::uint64_t timestamp_ns, std::span<const std::uint8_t> trailer) {
    if (!file_) return false;
    const std::array<std::span<const std::uint8_t>, 3> pieces{head, rest, trailer};
    const std::size_t length = head.size() + rest.size() + trailer.size();
    const auto caplen = static_cast<std::uint32_t>(std::min<std::size_t>(length, snaplen));
    std::array<std::uint8_t, 16> r{};
    put_le32(r, 0, static_cast<std::uint32_t>(timestamp_ns / 1'000'000'000));
    put_le32(r, 4, static_cast<std::uint32_t>(timestamp_ns % 1'000'000'000 / 1000));
    put_le32(r, 8, caplen);
    put_le32(r, 12, static_cast<std::uint32_t>(length));
    bool ok = std::fwrite(r.data(), 1, r.size(), file_) == r.size();
    std::size_t left = caplen;
    for (const auto& piece : pieces) {
        const std::size_t n = std::min(piece.size(), left);
        ok = ok && (n == 0 || std::fwrite(piece.data(), 1, n, file_) == n);
        left -= n;
    }
    if (!ok) {
        failed_ = true;
        close();
        return false;
    }
    ++frames_;
    return true;
}

void pcap_writer::close() {
    if (file_) {
        std::fclose(file_);
        file_ = nullptr;
    }
}

}  // namespace uet::wire
