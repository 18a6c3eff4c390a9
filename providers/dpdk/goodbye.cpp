#include "dpdk/goodbye.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace uet::dpdk::goodbye {

namespace {

// After the Ethernet header: a magic that no other user of the experimental ethertype is
// likely to send, then the kind.
constexpr std::array<std::uint8_t, 8> magic{'u', 'e', 't', '-', 'l', 'i', 'n', 'k'};
constexpr std::size_t eth_header = 14;
constexpr std::size_t kind_offset = eth_header + magic.size();

}  // namespace

std::size_t build(std::span<std::uint8_t> out, const wire::mac_address& sender, kind k) noexcept {
    if (out.size() < frame_size) return 0;
    std::fill_n(out.begin(), frame_size, std::uint8_t{0});
    const auto dst = wire::mac_address::broadcast();
    std::copy(dst.octets.begin(), dst.octets.end(), out.begin());
    std::copy(sender.octets.begin(), sender.octets.end(), out.begin() + 6);
    out[12] = ethertype >> 8;
    out[13] = ethertype & 0xff;
    std::copy(magic.begin(), magic.end(), out.begin() + eth_header);
    out[kind_offset] = static_cast<std::uint8_t>(k);
    return frame_size;
}

std::optional<message> parse(std::span<const std::uint8_t> frame) noexcept {
    if (!maybe(frame) || frame.size() <= kind_offset) return std::nullopt;
    if (std::memcmp(frame.data() + eth_header, magic.data(), magic.size()) != 0)
        return std::nullopt;
    const std::uint8_t k = frame[kind_offset];
    if (k != static_cast<std::uint8_t>(kind::leaving) && k != static_cast<std::uint8_t>(kind::ack))
        return std::nullopt;
    message m{static_cast<kind>(k), {}};
    std::copy_n(frame.begin() + 6, 6, m.sender.octets.begin());
    return m;
}

}  // namespace uet::dpdk::goodbye
