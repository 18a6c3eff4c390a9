// Running the roles: opening the provider's objects, driving the state machines, and the end
// of a run (summary, --stats, JSON, exit status).
#pragma once

#include <csignal>
#include <memory>
#include <string>

#include <uet/uet.hpp>

#include "options.hpp"
#include "roles.hpp"
#include "traffic.hpp"

namespace uet::perf {

// Set by SIGINT; the drivers poll it.
extern volatile std::sig_atomic_t interrupt_requested;
void install_interrupt_handler();

endpoint_attr endpoint_attr_for(const settings& s);
fabric_attr pipe_fabric_attr(const settings& s);

// One endpoint with its queue, address vector and side.
struct station {
    domain dom;
    completion_queue cq;
    address_vector av;
    endpoint ep;
    std::unique_ptr<side> sd;
    // The endpoint ends before the side's buffers go (its messages point into them).
    ~station() { ep.close(); }
};
// Opens a station on the fabric with the settings (and registers its region). On the heap: the
// side keeps references to the station's objects.
result<std::unique_ptr<station>> open_station(fabric& fab, const settings& s, clock_fn clock);

// A client's session nonce (control.hpp): from the system's entropy, so that nobody can predict
// it and answer for the client; on the pipe provider, whose runs are deterministic by design,
// from the fabric's seed and the client's address (as the pipe's memory keys are). Never 0.
std::uint64_t session_nonce(const fabric& fab, const endpoint_address& client);

// Drives a client and/or a server (either may be null) in one thread over the pipe provider:
// when nothing is runnable and neither role moved, the control clock jumps to the earliest role
// deadline, so a peer that never answers fails at once in wall time, deterministically.
// print: called with each piece of output (may be null).
void drive_pipe(fabric& fab, client_role* client, server_role* server,
                void (*print)(const std::string&) = nullptr);

// The end of a run for one role: rule, verify line, stats, JSON; returns the exit status.
int finish(const role_base& role, const endpoint& ep, const fabric* fab, std::string& out);
// --stats: the endpoint's counters, the control channel's drops (ctrl), the fabric's (if given).
std::string stats_text(const endpoint& ep, const ctrl_counters& ctrl, const fabric* fab);

// The whole program past option parsing.
int run(const settings& s);

}  // namespace uet::perf
