// Parsing "uet_memif0,role=...,socket=..." (no system call: unit-tested on its own).
#include <charconv>

#include "memif/memif_port.hpp"

namespace uet::memif {

namespace {

constexpr std::string_view prefix = "uet_memif";

bool parse_number(std::string_view text, std::uint64_t max, std::uint64_t& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size() && out <= max;
}

bool parse_yes_no(std::string_view text, bool& out) {
    if (text == "yes" || text == "1") return out = true, true;
    if (text == "no" || text == "0") return out = false, true;
    return false;
}

// One "key=value" of the device string into cfg; false with the reason in why.
bool apply(std::string_view key, std::string_view value, port_config& cfg, std::string& why) {
    std::uint64_t n = 0;
    const std::string what = std::string(key) + "=" + std::string(value);
    if (key == "role") {
        if (value != "server" && value != "client" && value != "master" && value != "slave") {
            why = what + ": the role is server or client";
            return false;
        }
        cfg.server = value == "server" || value == "master";
    } else if (key == "socket") {
        if (value.empty() || value.size() > 100) {
            why = what + ": the socket path is 1 to 100 characters";
            return false;
        }
        cfg.socket = std::string(value);
    } else if (key == "socket-abstract") {
        if (!parse_yes_no(value, cfg.abstract_socket)) {
            why = what + ": yes or no";
            return false;
        }
    } else if (key == "id") {
        if (!parse_number(value, UINT32_MAX, n)) {
            why = what + ": the interface id is a 32-bit number";
            return false;
        }
        cfg.id = static_cast<std::uint32_t>(n);
    } else if (key == "rsize") {
        if (!parse_number(value, 14, n) || n < 4) {
            why = what + ": rsize is the log2 of the ring size, 4 to 14";
            return false;
        }
        cfg.log2_ring_size = static_cast<std::uint8_t>(n);
    } else if (key == "bsize") {
        if (!parse_number(value, 65536, n) || n < 128) {
            why = what + ": bsize is the buffer size in bytes, 128 to 65536";
            return false;
        }
        cfg.buffer_size = static_cast<std::uint32_t>(n);
    } else if (key == "mac") {
        const auto mac = wire::mac_address::parse(value);
        if (!mac) {
            why = what + ": not a MAC address (aa:bb:cc:dd:ee:ff)";
            return false;
        }
        cfg.mac = *mac;
    } else {
        why = what + ": unknown key (role, socket, socket-abstract, id, rsize, bsize, mac)";
        return false;
    }
    return true;
}

}  // namespace

bool is_uet_memif(std::string_view device) noexcept {
    return device.starts_with(prefix);
}

std::optional<port_config> parse_device(std::string_view device, std::string& why) {
    if (!is_uet_memif(device)) {
        why = "not a uet_memif device";
        return std::nullopt;
    }
    port_config cfg;
    std::size_t comma = device.find(',');
    cfg.name = std::string(device.substr(0, comma));
    bool sized = false;
    while (comma != std::string_view::npos) {
        const std::size_t start = comma + 1;
        comma = device.find(',', start);
        const std::string_view item = device.substr(start, comma - start);
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos) {
            why = "\"" + std::string(item) + "\": expected key=value";
            return std::nullopt;
        }
        if (!apply(item.substr(0, eq), item.substr(eq + 1), cfg, why)) return std::nullopt;
        sized = sized || item.starts_with("bsize=");
    }
    if (!sized) cfg.buffer_size = 0;  // open() sizes the buffers for the MTU
    return cfg;
}

}  // namespace uet::memif
