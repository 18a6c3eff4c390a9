// uet-itest-api-peer: the public API (include/uet/uet.hpp only) on a DPDK port. Shared pieces of
// the server and client roles: options, the plan of one phase, byte patterns, control messages
// and bounded waiting.
//
// A run is a list of phases, one per delivery mode; each phase opens an endpoint of that mode on
// the one fabric (one port) with its own job id (so a message of the next phase can never be
// taken for one of this phase: the other job answers BAD_JOB_ID), does its transfers, and closes
// the endpoint. Everything the two sides need to agree on (memory keys, "done", the verdict)
// travels over uet itself as tagged control messages.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "uet/uet.hpp"

namespace itest_api {

using clock = std::chrono::steady_clock;

struct options {
    std::string role, name, dev, address, gateway, eal, ready_file, progress_file;
    std::vector<std::string> neighbors;
    std::string peer;  // the other side's IPv4 address
    // One phase each: a delivery mode of UET, or roce (transport roce_rc, RoCEv2 RC queue pairs).
    struct phase_kind {
        uet::delivery mode = uet::delivery::rud;
        bool roce = false;
    };
    std::vector<phase_kind> modes{
        {uet::delivery::rud}, {uet::delivery::rod}, {uet::delivery::rudi}, {uet::delivery::uud}};
    std::vector<std::size_t> sizes{1u << 10, 64u << 10, 1u << 20, 64u << 20};
    std::uint32_t mtu = 1344, port_mtu = 0, job = 100, timeout_s = 120;
    std::uint32_t rto_us = 0, retries = 0, progress_after = 20;
    bool fault = false, busy_poll = false, trust_link_mtu = false;
};

options parse_options(int argc, char** argv);
const char* mode_name(uet::delivery d);
std::string size_name(std::size_t n);

// ---- tags and contexts ----

enum class ctl : std::uint64_t { hello = 1, welcome, done, verdict, bye };
constexpr std::uint64_t ctl_tag(ctl k, std::uint32_t phase) {
    return 0xC000'0000'0000'0000ull | (static_cast<std::uint64_t>(k) << 32) | phase;
}
// Tagged data: exact tags, and tags a wildcard receive (ignore the low 16 bits) takes.
constexpr std::uint64_t exact_tag_base = 0xE000'0000'0000'0000ull;
constexpr std::uint64_t wild_tag_base = 0xA000'0000'0000'0000ull;
constexpr std::uint64_t wild_ignore = 0xffff;

// An operation's context: what it is (kind) and which one (index).
inline void* ctx(std::uint32_t kind, std::uint32_t index) {
    return reinterpret_cast<void*>((std::uintptr_t{kind} << 32) | index);
}
inline std::uint32_t ctx_kind(const void* c) {
    return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(c) >> 32);
}
inline std::uint32_t ctx_index(const void* c) {
    return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(c));
}

// ---- the plan of one phase (both sides compute it from the same options) ----

struct item {
    std::size_t size = 0;
    std::uint64_t seed = 0;
    std::uint64_t offset = 0;  // RMA: where in the peer's region
};

struct phase_plan {
    std::uint32_t phase = 0;
    uet::delivery mode = uet::delivery::rud;
    // transport roce_rc: no bxor (RoCE has fetch-and-add and compare-and-swap only), and the
    // write_data values fit the 32-bit immediate.
    bool roce = false;
    const char* name = "rud";  // the mode's name, or "roce"
    std::vector<item> sends, tagged, writes, write_data, reads;
    std::size_t region_bytes = 0;  // the write target and the read source (same layout)
    std::uint32_t fetch_adds = 16, xors = 16;
};

phase_plan make_plan(const options& o, std::uint32_t phase);

// ---- patterns: every byte depends on seed and position; the first 8 bytes are the seed ----

void fill(std::span<std::byte> buf, std::uint64_t seed);
std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed);
// The seed written in buf, if the rest of buf is that seed's pattern.
std::optional<std::uint64_t> check(std::span<const std::byte> buf);
std::uint64_t make_seed(std::uint32_t phase, char what, std::uint32_t index);

// ---- control messages ----

constexpr std::uint64_t magic = 0x7565742d61706921ull;  // "uet-api!"

struct hello_msg {
    std::uint64_t magic = 0;
    std::uint32_t phase = 0, attempt = 0;
};

// The answer to a hello; it names the hello, so a late answer to an earlier one (a server that
// died since) is not taken for the current one.
struct welcome_msg {
    std::uint64_t magic = 0;
    std::uint64_t write_key = 0, read_key = 0, atomic_key = 0;
    std::uint32_t phase = 0, mode = 0;
    std::uint32_t hello_attempt = 0, pad = 0;
};

struct done_msg {
    std::uint64_t magic = 0;
    std::uint32_t phase = 0, failures = 0;
    std::uint64_t sum = 0, swapped = 0, xored = 0;  // the atomic words' expected values
    std::uint64_t sends = 0, tagged = 0;            // messages the client completed
};

struct verdict_msg {
    std::uint64_t magic = 0;
    std::uint32_t phase = 0, ok = 0;
    std::uint64_t received = 0, expected = 0;
    char text[160] = {};
};

template <class T>
std::span<const std::byte> bytes_of(const T& v) {
    return {reinterpret_cast<const std::byte*>(&v), sizeof(T)};
}
template <class T>
std::span<std::byte> bytes_of(T& v) {
    return {reinterpret_cast<std::byte*>(&v), sizeof(T)};
}

// ---- one side of a connection: the fabric (one port) and the current phase's endpoint ----

struct side {
    const options& o;
    uet::fabric fab;
    uet::domain dom;
    uet::completion_queue cq;
    uet::address_vector av;
    uet::endpoint ep;
    uet::peer_addr peer{};
    clock::time_point deadline;

    explicit side(const options& opts) : o(opts) {}
    bool open_fabric();
    bool open_endpoint(const phase_plan& p, std::uint32_t job);
    void close_endpoint();
    void arm() { deadline = clock::now() + std::chrono::seconds(o.timeout_s); }
    // The next completion (success or error entry) within slice; nullopt if none came. Fails
    // (expired() true) once the deadline passed.
    std::optional<uet::completion> next(std::chrono::milliseconds slice);
    bool expired() const { return clock::now() >= deadline; }
    void say(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
    // The "PORT ..." line the scripts read the ARP and drop counters from.
    void say_port_counters() const;
};

int run_server(const options& o);
int run_client(const options& o);

}  // namespace itest_api
