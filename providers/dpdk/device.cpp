#include "dpdk/device.hpp"

#include <algorithm>
#include <cctype>

namespace uet::dpdk {

namespace {

bool is_hex(char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// "DDDD:BB:DD.F" or "BB:DD.F" (domain 0000 implied).
std::optional<std::string> pci_address(std::string_view s) {
    std::string full(s);
    if (full.size() == 7) full = "0000:" + full;
    if (full.size() != 12 || full[4] != ':' || full[7] != ':' || full[10] != '.') return {};
    for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u, 11u}) {
        if (!is_hex(full[i])) return {};
    }
    std::transform(full.begin(), full.end(), full.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return full;
}

// Linux interface names: 1..15 bytes, no '/', no whitespace, no ',' or '=' (they would break
// the devargs we build).
bool valid_ifname(std::string_view s) {
    if (s.empty() || s.size() > 15 || s == "." || s == "..") return false;
    return std::none_of(s.begin(), s.end(), [](char c) {
        return c == '/' || c == ',' || c == '=' || c == ':' ||
               std::isspace(static_cast<unsigned char>(c)) != 0 ||
               std::iscntrl(static_cast<unsigned char>(c)) != 0;
    });
}

// One queue pair, and ring frames big enough for a 9000-byte MTU plus the TPACKET header
// (blocks of two frames: the block size must be a multiple of the page size).
constexpr std::string_view af_packet_jumbo = ",qpairs=1,blocksz=20480,framesz=10240,framecnt=512";

}  // namespace

std::optional<device_spec> parse_device(std::string_view text) {
    if (text.empty()) return {};
    if (text.starts_with("net_")) {
        const auto comma = text.find(',');
        device_spec d;
        d.name = std::string(text.substr(0, comma));
        if (comma != std::string_view::npos) d.args = std::string(text.substr(comma + 1));
        return d;
    }
    if (auto pci = pci_address(text)) return device_spec{device_spec::kind::pci, *pci, {}};
    if (text.starts_with("xdp:")) {
        const auto ifname = text.substr(4);
        if (!valid_ifname(ifname)) return {};
        return device_spec{device_spec::kind::vdev, "net_af_xdp_" + std::string(ifname),
                           "iface=" + std::string(ifname)};
    }
    if (!valid_ifname(text)) return {};
    return device_spec{device_spec::kind::vdev, "net_af_packet_" + std::string(text),
                       "iface=" + std::string(text) + std::string(af_packet_jumbo)};
}

}  // namespace uet::dpdk
