// The control exchange between client and server, carried by uet itself: tagged messages on the
// same endpoint as the data (data sends are untagged, so the two never match each other).
//
//   client                                  server
//   HELLO (settings, address, region) --->
//                                      <--- HELLO_ACK (ok | why not, region key and size)
//   per size:  START (size) ------------->  prepares (receives, pattern)
//                                      <--- READY
//              ... traffic ...
//   STOP (what it sent) ----------------->  stops, waits for its own operations
//                                      <--- STOP_ACK (what it sent, drain count for the client)
//   DRAIN (drain count for the server) -->  both send drain messages into leftover receives;
//                                           once drained, checks its memory (--verify)
//                                      <--- RESULT (its figures, verification)
//   REPORT (the row) -------------------->  prints the same row
//                                      <--- ACK
//   BYE --------------------------------->
//                                      <--- ACK
// Every client message is answered before the next goes, so the two never cross (RUD does
// not keep the order of messages in flight together).
// Either side may send ABORT (with a reason) at any time.
//
// Remote input is hostile: decode() checks magic, version, kind and lengths and says why not.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "options.hpp"

namespace uet::perf {

enum class ctrl_kind : std::uint8_t {
    hello = 1,
    hello_ack,
    start,
    ready,
    stop,
    stop_ack,
    drain,
    result,
    report,
    bye,
    abort,
    ack,  // the answer to REPORT and BYE
};
inline constexpr std::uint8_t ctrl_kind_max = static_cast<std::uint8_t>(ctrl_kind::ack);
std::string_view name_of(ctrl_kind k) noexcept;

// Control messages are tagged with this tag (the low byte is the kind, for wire readers).
inline constexpr std::uint64_t ctrl_tag = 0x7545'5450'0000'0000ull;  // "uETP"
inline constexpr std::uint64_t ctrl_tag_ignore = 0xff;

struct ctrl_msg {
    static constexpr std::size_t values = 24;
    static constexpr std::size_t text_max = 200;
    static constexpr std::size_t header_bytes = 8;
    static constexpr std::size_t wire_bytes = header_bytes + values * 8 + 2 + text_max;

    ctrl_kind kind = ctrl_kind::hello;
    std::array<std::uint64_t, values> v{};
    std::string text;  // at most text_max bytes (a reason, a mismatch)
};

using ctrl_buffer = std::array<std::byte, ctrl_msg::wire_bytes>;

// Returns the bytes used in out.
std::size_t encode(const ctrl_msg& m, ctrl_buffer& out) noexcept;
// The message, or why it is not one (in error).
std::optional<ctrl_msg> decode(std::span<const std::byte> in, std::string& error);

// HELLO: the settings both sides must agree on, the client's address and its region.
ctrl_msg make_hello(const settings& s, const endpoint_address& client, std::uint64_t key,
                    std::uint64_t region_bytes);
struct hello_info {
    settings s;  // the shared fields only
    endpoint_address client;
    std::uint64_t key = 0, region_bytes = 0;
};
// Fails (error) on values out of range.
std::optional<hello_info> read_hello(const ctrl_msg& m, std::string& error);
// Empty when they agree; else the first difference, both values ("-s: client 65536, server 4096").
std::string compare_settings(const settings& client, const settings& server);

}  // namespace uet::perf
