// The control exchange between client and server, carried by uet itself: tagged messages on the
// same endpoint as the data (data sends are untagged, so the two never match each other).
//
//   client                                  server
//   HELLO (settings, address, region) --->
//                                      <--- HELLO_ACK (ok | why not, region key and size)
//   per size:  START (size) ------------->  prepares (receives, pattern); the first START binds
//                                      <--- READY
//              ... traffic ...
//              KEEPALIVE ---------------->  (every --timeout / 4 while measuring; not answered)
//   STOP (what it sent) ----------------->  stops, waits for its own operations
//                                      <--- STOP_ACK (what it sent, drain count for the client)
//   DRAIN (drain count for the server) -->  both send drain messages into leftover receives;
//                                           once drained, checks its memory (--verify)
//                                      <--- RESULT (its figures, verification)
//   REPORT (the row) -------------------->  prints the same row
//                                      <--- ACK
//   BYE --------------------------------->
//                                      <--- ACK
// Every client message but KEEPALIVE is answered before the next goes, so the two never cross
// (RUD does not keep the order of messages in flight together); a KEEPALIVE only says the client
// is alive, so it may arrive in any order. Either side may send ABORT (with a reason) at any time.
//
// Sessions: the client draws a 64-bit nonce for its HELLO, and every later message of either side
// carries it. The server answers each HELLO at the address the HELLO names, and binds to the
// first client that answers back from that address with its nonce (its START, or an ABORT): a
// HELLO replayed from elsewhere names an address that never answers with that nonce. From then
// on it takes control messages only from that address with that nonce; both sides drop anything
// else and count it by reason (ctrl_counters), and never stop a run for it.
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
    ack,        // the answer to REPORT and BYE
    keepalive,  // the client measures and is alive (the server's bound on a silent client)
};
inline constexpr std::uint8_t ctrl_kind_max = static_cast<std::uint8_t>(ctrl_kind::keepalive);
std::string_view name_of(ctrl_kind k) noexcept;

// Control messages are tagged with this tag (the low byte is the kind, for wire readers).
inline constexpr std::uint64_t ctrl_tag = 0x7545'5450'0000'0000ull;  // "uETP"
inline constexpr std::uint64_t ctrl_tag_ignore = 0xff;

struct ctrl_msg {
    static constexpr std::size_t values = 24;
    static constexpr std::size_t text_max = 200;
    static constexpr std::size_t header_bytes = 16;  // magic, version, kind, 2 spare, nonce
    static constexpr std::size_t wire_bytes = header_bytes + values * 8 + 2 + text_max;

    ctrl_kind kind = ctrl_kind::hello;
    std::uint64_t nonce = 0;  // the session's (the client's HELLO draws it); never 0 in a session
    std::array<std::uint64_t, values> v{};
    std::string text;  // at most text_max bytes (a reason, a mismatch)
};

using ctrl_buffer = std::array<std::byte, ctrl_msg::wire_bytes>;

// Returns the bytes used in out.
std::size_t encode(const ctrl_msg& m, ctrl_buffer& out) noexcept;
// The message, or why it is not one (in error).
std::optional<ctrl_msg> decode(std::span<const std::byte> in, std::string& error);

// HELLO: the settings both sides must agree on, the client's address and its region, and the
// session nonce.
ctrl_msg make_hello(const settings& s, const endpoint_address& client, std::uint64_t key,
                    std::uint64_t region_bytes, std::uint64_t nonce);
struct hello_info {
    settings s;  // the shared fields only
    endpoint_address client;
    std::uint64_t key = 0, region_bytes = 0;
};
// Fails (error) on values out of range and on a nonce of 0.
std::optional<hello_info> read_hello(const ctrl_msg& m, std::string& error);
// Empty when they agree; else the first difference, both values ("-s: client 65536, server 4096").
std::string compare_settings(const settings& client, const settings& server);

// What one side's control channel did not take, by reason (--stats), and the server's HELLOs that
// never led to a run. None of these stops a run: a stranger must not be able to end one.
struct ctrl_counters {
    std::uint64_t from_stranger = 0;   // from an address that is not the peer's
    std::uint64_t bad_nonce = 0;       // from the peer's address, with another session's nonce
    std::uint64_t replayed_hello = 0;  // a HELLO once bound, or one already answered
    std::uint64_t malformed = 0;       // not a control message this uet-perf reads (or too long)
    std::uint64_t hellos_refused = 0;  // settings that differ: refused, the server waits on
    // Answered HELLOs whose client never answered back: the answer undeliverable, no START
    // within --timeout, or pushed out by newer HELLOs.
    std::uint64_t hellos_lapsed = 0;
    std::uint64_t ignored() const noexcept {
        return from_stranger + bad_nonce + replayed_hello + malformed;
    }
};

}  // namespace uet::perf
