// A server and a client of uet-perf in one process over the pipe provider, as the tool's
// --provider pipe mode runs them, with settings of their own (to test mismatches) and a driver
// that can interrupt the client mid-run.
#pragma once

#include <memory>
#include <string>

#include "options.hpp"
#include "roles.hpp"
#include "runner.hpp"

namespace uet::perf::test {

inline settings pipe_settings(test_kind t, std::uint64_t size, std::uint64_t n) {
    settings s;
    s.provider = "pipe";
    s.test = t;
    s.size = is_atomic(t) ? 8 : size;
    s.iterations = n;
    if (!is_bw(t)) s.tx_depth = 1;
    s.verify = true;
    return s;
}

struct pipe_pair {
    fabric fab;
    std::unique_ptr<station> srv, cli;
    std::unique_ptr<server_role> server;
    std::unique_ptr<client_role> client;

    // server_settings: nullopt-like flag `with_server` false leaves the server endpoint without a
    // role (it never answers).
    pipe_pair(const settings& cs, const settings& ss, bool with_server = true) {
        fab = fabric::open(pipe_fabric_attr(cs)).value();
        srv = open_station(fab, ss, steady_ns).value();
        cli = open_station(fab, cs, steady_ns).value();
        if (with_server)
            server =
                std::make_unique<server_role>(*srv->sd, ss,
                                              run_info{"pipe", "test", to_string(srv->ep.address()),
                                                       "", 0, 0, queue_pairs_of(srv->ep.attr())},
                                              srv->av);
        const peer_addr p = cli->av.insert(srv->ep.address()).value();
        client = std::make_unique<client_role>(
            *cli->sd, cs,
            run_info{"pipe", "test", to_string(cli->ep.address()), to_string(srv->ep.address()), 0,
                     0, queue_pairs_of(cli->ep.attr())},
            p, session_nonce(fab, cli->ep.address()));
    }
    // A client whose server address has no endpoint at all.
    pipe_pair(const settings& cs, endpoint_address nowhere) {
        fab = fabric::open(pipe_fabric_attr(cs)).value();
        cli = open_station(fab, cs, steady_ns).value();
        const peer_addr p = cli->av.insert(nowhere).value();
        client = std::make_unique<client_role>(
            *cli->sd, cs,
            run_info{"pipe", "test", to_string(cli->ep.address()), to_string(nowhere), 0, 0,
                     queue_pairs_of(cli->ep.attr())},
            p, session_nonce(fab, cli->ep.address()));
    }

    void run() { drive_pipe(fab, client.get(), server.get()); }
};

}  // namespace uet::perf::test
