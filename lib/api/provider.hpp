// The fabric's network: how an endpoint's engine meets its peers. Providers implement it from
// outside lib/ (providers/<name>/) and register themselves by name; fabric::open picks one by
// fabric_attr::provider. Two are built in:
//   pipe (providers/pipe): every endpoint of the fabric in this process, joined by impairment
//        links, in virtual time;
//   dpdk (providers/dpdk): the endpoints of one DPDK port or uet memif port, behind its one
//        address (host stack with ARP and ICMP echo under them, told apart by PIDonFEP),
//        progressed inline by the thread that reads a completion queue, in TSC time.
// The endpoint code (endpoint.cpp, endpoint_rx.cpp) never knows which one it runs on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include "engine/engine.hpp"
#include "uet/fabric.hpp"

namespace uet::detail {

struct endpoint_base;

class network {
  public:
    virtual ~network() = default;

    // Before an endpoint's engine is built: fills in what the network decides (address, MAC,
    // PIDonFEP, seed, timers). An error (with set_last_error) when no further endpoint can join,
    // or not this one (attr: its transport and security).
    virtual std::error_code prepare(engine_config& c, const endpoint_attr& attr) = 0;
    // The endpoint's engine exists: frames start to flow. detach: they stop (before the
    // engine goes away). Any transport's endpoint: the network moves the frames of
    // ep.frames() and calls ep.process().
    virtual void attach(endpoint_base& ep) = 0;
    virtual void detach(endpoint_base& ep) noexcept = 0;
    // An endpoint starts talking to ip: a network that resolves addresses may start now.
    virtual void on_new_peer(std::uint32_t /*ip*/) noexcept {}
    // One progress step of every attached endpoint; false when nothing is left to do anywhere.
    virtual bool step() = 0;
    virtual std::uint64_t now() const noexcept = 0;
    virtual fabric_stats stats() const noexcept = 0;
    // fabric::set_impairments: the pipe's links change; a real network cannot.
    virtual std::error_code set_impairments(const link_impairments& /*impairments*/) {
        return make_error_code(errc::unsupported);
    }
    // Memory registered with a domain of this fabric. A network that sends payloads from
    // registered memory without copying them (zero-copy transmit) remembers it; the handle goes
    // back to unregister_memory, which returns once no queued frame references the memory.
    virtual std::uint32_t register_memory(const void* /*addr*/, std::size_t /*length*/) {
        return no_memory_handle;
    }
    virtual void unregister_memory(std::uint32_t /*handle*/) noexcept {}
    static constexpr std::uint32_t no_memory_handle = 0xffffffffu;
};

// A provider as fabric::open sees it. open() validates the attributes it reads and builds the
// network; on failure it returns nullptr with ec set and the reason in last_error().
struct provider {
    const char* name;
    // Its runs are reproducible from fabric_attr::seed (virtual time, no outside entropy): memory
    // keys are then derived from the seed alone; any other provider salts them with the system's
    // entropy, since on a real network they must not be guessable.
    bool deterministic;
    std::unique_ptr<network> (*open)(const fabric_attr& attr, std::error_code& ec);
};

// Called by each provider at load time (see UET_REGISTER_PROVIDER), before main.
void register_provider(const provider& p) noexcept;
const provider* find_provider(std::string_view name) noexcept;
// The registered names, quoted and comma-separated, for error messages.
std::string provider_names();

}  // namespace uet::detail

// Registers a provider when the library that holds it is loaded, as DPDK registers its drivers
// (RTE_PMD_REGISTER_VDEV): lib/ never names a provider.
#define UET_REGISTER_PROVIDER(ident, ...)                       \
    namespace {                                                 \
    [[gnu::constructor]] void uet_register_provider_##ident() { \
        static const ::uet::detail::provider p = __VA_ARGS__;   \
        ::uet::detail::register_provider(p);                    \
    }                                                           \
    }

namespace uet::detail {

// Why the last failed fabric::open / open_endpoint of this thread failed (fabric::last_error()).
void set_last_error(std::string why);
void clear_last_error();
std::string last_error_text_copy();

}  // namespace uet::detail
