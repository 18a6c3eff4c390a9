// Opening the provider, driving the roles, and the end of a run.
#include "runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

namespace uet::perf {

volatile std::sig_atomic_t interrupt_requested = 0;

namespace {

void on_sigint(int) {
    // A second Ctrl-C while the first is being handled ends the process at once.
    if (interrupt_requested) {
        std::signal(SIGINT, SIG_DFL);
        std::raise(SIGINT);
        return;
    }
    interrupt_requested = 1;
}

void print_stdout(const std::string& s) {
    if (s.empty()) return;
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
}

// How busy this side's core was: a side busy nearly all the time is the bottleneck, and its
// busy time per frame is what a frame costs it.
std::string polling_line(const fabric_stats& f) {
    const std::uint64_t total = f.busy_ns + f.idle_ns;
    const std::uint64_t frames = f.rx_frames + f.tx_frames;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  " Polling: %llu polls (%llu idle); busy %.3f s, idle %.3f s (%.1f%% busy); "
                  "%.0f ns busy per frame\n",
                  (unsigned long long)f.polls, (unsigned long long)f.idle_polls, f.busy_ns / 1e9,
                  f.idle_ns / 1e9, total ? 100.0 * f.busy_ns / total : 0.0,
                  frames ? double(f.busy_ns) / frames : 0.0);
    return buf;
}

// The port's time per frame by stage (dpdk.time_stages): where each side's busy time goes.
std::string stages_line(const fabric_stats& f) {
    if (f.rx_driver_ns + f.rx_stack_ns + f.tx_stack_ns + f.tx_driver_ns == 0) return {};
    const auto per = [](std::uint64_t ns, std::uint64_t frames) {
        return frames ? double(ns) / double(frames) : 0.0;
    };
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  " Stages (ns per frame): receive driver %.1f, stack %.1f; transmit stack %.1f, "
                  "driver %.1f\n",
                  per(f.rx_driver_ns, f.rx_frames), per(f.rx_stack_ns, f.rx_frames),
                  per(f.tx_stack_ns, f.tx_frames), per(f.tx_driver_ns, f.tx_frames));
    return buf;
}

// What the control channel did not take, by reason: a stranger's messages, another session's,
// replayed HELLOs, garbage; and on a server the HELLOs that led to no run.
std::string control_line(const ctrl_counters& c) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  " Control messages ignored: from strangers %llu, bad nonce %llu, replayed HELLO "
                  "%llu, malformed %llu; HELLOs refused %llu, lapsed %llu\n",
                  (unsigned long long)c.from_stranger, (unsigned long long)c.bad_nonce,
                  (unsigned long long)c.replayed_hello, (unsigned long long)c.malformed,
                  (unsigned long long)c.hellos_refused, (unsigned long long)c.hellos_lapsed);
    return buf;
}

// --stats: the pipe's links or the DPDK port, polling and stages (nothing without a fabric).
std::string fabric_lines(const fabric* fab) {
    if (!fab) return {};
    std::string out;
    char buf[1024];
    const fabric_stats f = fab->stats();
    if (fab->attr().provider == "pipe") {
        std::snprintf(buf, sizeof buf,
                      " Pipe links: frames %llu, lost %llu, reordered %llu, duplicated %llu, "
                      "unroutable %llu\n",
                      (unsigned long long)f.frames, (unsigned long long)f.lost,
                      (unsigned long long)f.reordered, (unsigned long long)f.duplicated,
                      (unsigned long long)f.unroutable);
        out += buf;
    } else {
        std::snprintf(buf, sizeof buf,
                      " Port: rx frames %llu, tx frames %llu (zero-copy %llu), rx dropped %llu, "
                      "tx dropped %llu, ARP requests %llu, replies %llu; ACKs every %u packets "
                      "or %u bytes; UDP checksum %s; ",
                      (unsigned long long)f.rx_frames, (unsigned long long)f.tx_frames,
                      (unsigned long long)f.tx_zero_copy, (unsigned long long)f.rx_dropped,
                      (unsigned long long)f.tx_dropped, (unsigned long long)f.arp_requests,
                      (unsigned long long)f.arp_replies, f.ack_every_packets, f.ack_every_bytes,
                      f.udp_checksum ? "on" : "off");
        out += buf;
        if (f.zero_copy_from == 0)
            out += "zero-copy transmit off\n";
        else
            out += "zero-copy transmit from " + std::to_string(f.zero_copy_from) + " bytes\n";
        out += polling_line(f);
        out += stages_line(f);
    }
    return out;
}

// --stats on UET: the received frames refused and dropped, by reason, those that happened only.
std::string refused_line(const endpoint_counters& c) {
    std::string out = " Refused frames:";
    const auto add = [&out](const char* name, std::uint64_t n) {
        if (n != 0) out += std::string(" ") + name + " " + std::to_string(n) + ",";
    };
    for (std::size_t i = 0; refused_frame_reason(i); ++i)
        add(refused_frame_reason(i), c.refused_by_reason[i]);
    if (out.back() == ',') out.pop_back();
    out += "; dropped packets:";
    for (std::size_t i = 0; dropped_packet_reason(i); ++i)
        add(dropped_packet_reason(i), c.dropped_by_reason[i]);
    if (out.back() == ',') out.pop_back();
    return out + "\n";
}

// --stats on roce_rc: the queue pairs' counters, summed.
std::string roce_lines(const endpoint_counters& c) {
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  " RoCE: packets sent %llu, received %llu, dropped %llu; resent %llu (after a "
                  "NAK %llu, timeout %llu); go-back-N rounds %llu; timeouts %llu; NAKs sent "
                  "%llu, received %llu; RNR NAKs sent %llu, received %llu; ACKs sent %llu, "
                  "received %llu; duplicates %llu; placed ahead of a hole %llu; CNPs sent %llu, "
                  "received %llu; paced %llu; QPs connected %llu\n",
                  (unsigned long long)c.packets_sent, (unsigned long long)c.packets_received,
                  (unsigned long long)c.packets_dropped, (unsigned long long)c.retransmits,
                  (unsigned long long)c.retransmits_nack, (unsigned long long)c.retransmits_timeout,
                  (unsigned long long)c.roce.go_back_rounds, (unsigned long long)c.timeouts,
                  (unsigned long long)c.nacks_sent, (unsigned long long)c.nacks_received,
                  (unsigned long long)c.roce.rnr_naks_sent,
                  (unsigned long long)c.roce.rnr_naks_received,
                  (unsigned long long)c.roce.acks_sent, (unsigned long long)c.roce.acks_received,
                  (unsigned long long)c.duplicates, (unsigned long long)c.roce.placed_early,
                  (unsigned long long)c.roce.cnps_sent, (unsigned long long)c.roce.cnps_received,
                  (unsigned long long)c.roce.paced, (unsigned long long)c.roce.qps_connected);
    return buf;
}

// Why an endpoint did not open: the error, and what the library said of it (the field or the
// environment variable at fault).
std::string open_error(const std::error_code& ec) {
    const std::string why = fabric::last_error();
    return why.empty() ? ec.message() : ec.message() + ": " + why;
}

// --stats on roce_rc: the connection's queue pairs, as its scheduler sees them.
std::string queue_pair_lines(const endpoint& ep, peer_addr peer) {
    std::string out;
    char buf[256];
    const std::vector<qp_counters> qps = ep.queue_pairs(peer);
    for (std::size_t i = 0; i < qps.size(); ++i) {
        const qp_counters& q = qps[i];
        std::snprintf(buf, sizeof buf,
                      " QP %zu (QPN %u): requests %llu, bytes %llu; RTT estimate %.1f us (%llu "
                      "samples); weight %.3f\n",
                      i, q.qp_num, (unsigned long long)q.requests, (unsigned long long)q.bytes,
                      q.rtt_estimate_ns / 1e3, (unsigned long long)q.rtt_samples, q.weight);
        out += buf;
    }
    return out;
}

std::string tss_line(const endpoint_counters& c) {
    std::string out = " TSS: sealed " + std::to_string(c.tss.sealed) + ", opened " +
                      std::to_string(c.tss.opened) + ", seal failures " +
                      std::to_string(c.tss.seal_failures) + "; dropped " +
                      std::to_string(c.tss.dropped_total());
    const char* sep = " (";
    for (std::size_t i = 0; i < tss_drop_count; ++i) {
        if (c.tss.drops[i] == 0) continue;
        out += sep;
        out += to_string(static_cast<tss_drop>(i));
        out += " " + std::to_string(c.tss.drops[i]);
        sep = ", ";
    }
    if (c.tss.dropped_total() != 0) out += ")";
    return out + "\n";
}

}  // namespace

std::string stats_text(const endpoint& ep, const ctrl_counters& ctrl, const fabric* fab) {
    const endpoint_counters c = ep.counters();
    char buf[1024];
    std::snprintf(
        buf, sizeof buf,
        " Endpoint %s counters: rejected_job %llu, rejected_key %llu, unexpected %llu, "
        "deferred %llu, ready_to_receive %llu, resent_after_rtr %llu, rendezvous %llu, "
        "stale_responses %llu, unanswerable %llu, kept for queue room %llu; answers in "
        "ACKs %llu, as messages %llu, answered by ACK %llu; completed without an entry "
        "%llu; unsignaled sends %llu (adopted %llu); delivered directly %llu\n",
        to_string(ep.address()).c_str(), (unsigned long long)c.rejected_job,
        (unsigned long long)c.rejected_key, (unsigned long long)c.unexpected,
        (unsigned long long)c.deferred, (unsigned long long)c.ready_to_receive,
        (unsigned long long)c.resent_after_rtr, (unsigned long long)c.rendezvous,
        (unsigned long long)c.stale_responses, (unsigned long long)c.unanswerable,
        (unsigned long long)c.kept_for_queue_room, (unsigned long long)c.answers_in_acks,
        (unsigned long long)c.answers_as_messages, (unsigned long long)c.answered_by_ack,
        (unsigned long long)ep.silent_completions(), (unsigned long long)c.unsignaled_sends,
        (unsigned long long)c.unsignaled_sends_adopted, (unsigned long long)c.delivered_directly);
    std::string out = buf;
    if (ep.attr().transport == transport::roce_rc)
        return out + roce_lines(c) + control_line(ctrl) + fabric_lines(fab);
    std::snprintf(buf, sizeof buf,
                  " PDS: packets sent %llu (in runs %llu), received %llu (headers predicted %llu, "
                  "in runs %llu), dropped %llu; "
                  "retransmits %llu (sack "
                  "%llu, timeout %llu, nack %llu); timeouts %llu; nacks sent %llu, received %llu; "
                  "duplicates %llu; RTT min %.1f us, mean %.1f us (%llu samples); writes placed "
                  "directly %llu, write packets refused %llu\n",
                  (unsigned long long)c.packets_sent, (unsigned long long)c.packets_sent_in_runs,
                  (unsigned long long)c.packets_received, (unsigned long long)c.headers_predicted,
                  (unsigned long long)c.packets_in_runs, (unsigned long long)c.packets_dropped,
                  (unsigned long long)c.retransmits, (unsigned long long)c.retransmits_sack,
                  (unsigned long long)c.retransmits_timeout, (unsigned long long)c.retransmits_nack,
                  (unsigned long long)c.timeouts, (unsigned long long)c.nacks_sent,
                  (unsigned long long)c.nacks_received, (unsigned long long)c.duplicates,
                  c.rtt_min_ns / 1e3, c.rtt_mean_ns / 1e3, (unsigned long long)c.rtt_samples,
                  (unsigned long long)c.writes_placed_directly,
                  (unsigned long long)c.write_packets_refused);
    out += buf;
    std::snprintf(
        buf, sizeof buf,
        " Dropped by reason: unknown source %llu, forged CLOSE %llu, peer table full "
        "%llu, unvalidated reply %llu; foreign responses %llu; peers learned %llu, "
        "forgotten %llu; PDCs opened %llu, target PDCs opened %llu\n",
        (unsigned long long)c.dropped_unknown_source, (unsigned long long)c.dropped_forged_close,
        (unsigned long long)c.dropped_peer_table_full,
        (unsigned long long)c.dropped_unvalidated_reply, (unsigned long long)c.foreign_responses,
        (unsigned long long)c.peers_learned, (unsigned long long)c.peers_forgotten,
        (unsigned long long)c.pdcs_opened, (unsigned long long)c.target_pdcs_opened);
    out += buf;
    if (ep.attr().tss.enabled) out += tss_line(c);
    out += refused_line(c);
    if (c.transmit_full + c.transmit_held_by_window + c.transmit_nothing_queued != 0) {
        std::snprintf(buf, sizeof buf,
                      " Transmit calls: burst full %llu, held by the window %llu, nothing queued "
                      "%llu\n",
                      (unsigned long long)c.transmit_full,
                      (unsigned long long)c.transmit_held_by_window,
                      (unsigned long long)c.transmit_nothing_queued);
        out += buf;
    }
    return out + control_line(ctrl) + fabric_lines(fab);
}

namespace {

bool interrupted(const client_role& c) {
    return c.was_interrupted();
}

}  // namespace

void install_interrupt_handler() {
    std::signal(SIGINT, on_sigint);
}

endpoint_attr endpoint_attr_for(const settings& s) {
    endpoint_attr a;
    a.job_id = s.job_id;
    a.mode = s.mode;
    a.tx_depth = 2 * std::size_t{s.tx_depth} + 16;  // operations, pongs, drains, control
    a.rx_depth = std::size_t{s.tx_depth} + 16;
    a.cc = s.cc;
    a.lb = s.lb;
    a.parallel_pdcs = s.pdcs;
    a.answers_in_acks = s.ack_answers;
    a.transport = s.transport;
    a.roce = s.roce;
    a.roce.mode = s.roce_mode;
    a.qp_sched = s.qp_sched;
    if (s.tss) {
        a.tss.enabled = true;
        a.tss.sdi = s.tss_sdi;
        a.tss.epoch = s.tss_epoch;
        a.tss.key = s.tss_key_bytes;
    }
    return a;
}

fabric_attr pipe_fabric_attr(const settings& s) {
    fabric_attr fa;
    fa.provider = "pipe";
    fa.mtu = s.mtu;
    fa.capture_file = s.pcap_file;
    return fa;
}

result<std::unique_ptr<station>> open_station(fabric& fab, const settings& s, clock_fn clock) {
    auto st = std::make_unique<station>();
    auto dom = fab.open_domain();
    if (!dom) return dom.error();
    st->dom = std::move(*dom);
    auto cq = st->dom.open_cq(2 * std::size_t{s.tx_depth} + 64);
    if (!cq) return cq.error();
    st->cq = std::move(*cq);
    auto av = st->dom.open_av();
    if (!av) return av.error();
    st->av = std::move(*av);
    auto ep = st->dom.open_endpoint(endpoint_attr_for(s), st->cq, st->av);
    if (!ep) return ep.error();
    st->ep = std::move(*ep);
    st->sd = std::make_unique<side>(st->ep, st->cq, st->av, st->dom, clock);
    if (const auto ec = st->sd->setup(s)) return ec;
    return st;
}

std::uint64_t session_nonce(const fabric& fab, const endpoint_address& client) {
    std::uint64_t n = 0;
    if (fab.attr().provider == "pipe") {
        // splitmix64 of the seed and the address: reproducible, and no two clients alike.
        n = fab.attr().seed ^ (std::uint64_t{client.ip} << 16 | client.port);
        n += 0x9e3779b97f4a7c15ull;
        n = (n ^ (n >> 30)) * 0xbf58476d1ce4e5b9ull;
        n = (n ^ (n >> 27)) * 0x94d049bb133111ebull;
        n ^= n >> 31;
    } else {
        std::random_device entropy;
        n = (std::uint64_t{entropy()} << 32) ^ entropy();
    }
    return n ? n : 1;  // 0 is no session
}

void drive_pipe(fabric& fab, client_role* client, server_role* server,
                void (*print)(const std::string&)) {
    std::uint64_t skip = 0, last_activity = ~std::uint64_t{0};
    auto finished = [&] {
        return (!client || client->finished()) && (!server || server->finished());
    };
    auto flush = [&] {
        // With both roles here, the client speaks for the run (the server's rows are the same).
        std::string server_out = server ? server->take_output() : std::string();
        if (!print) return;
        if (client)
            print(client->take_output());
        else
            print(server_out);
    };
    while (!finished()) {
        const std::uint64_t now = fab.now_ns() + skip;
        if (server) server->step(now);
        if (client) client->step(now);
        flush();
        if (interrupt_requested == 1) {
            interrupt_requested = 2;
            if (client)
                client->interrupt();
            else if (server)
                server->interrupt();
        }
        const std::uint64_t activity =
            (client ? client->activity() : 0) + (server ? server->activity() : 0);
        const bool busy = fab.progress();
        if (busy || activity != last_activity) {
            last_activity = activity;
            continue;
        }
        // Nothing runnable and nobody moved: only a deadline can change anything now.
        std::uint64_t d = no_deadline;
        if (client) d = std::min(d, client->deadline());
        if (server) d = std::min(d, server->deadline());
        if (d == no_deadline) break;  // one role failed and the other waits without a deadline
        if (d > now) skip += d - now;
    }
    flush();
}

int finish(const role_base& role, const endpoint& ep, const fabric* fab, std::string& out) {
    const settings& s = role.config();
    out += table_rule();
    // A failed run says so here too: "not completed", never an OK for the checks it got to.
    if (s.verify) out += " Verify: " + role.verify_summary() + "\n";
    if (s.stats) {
        out += stats_text(ep, role.control_counters(), fab);
        out += queue_pair_lines(ep, role.peer());
    }
    if (!s.pcap_file.empty() && fab) {
        const fabric_stats st = fab->stats();
        out += " Capture: " + std::to_string(st.captured_frames) + " frames in " + s.pcap_file +
               (st.capture_failed ? " (a write failed: the file ends there)\n" : "\n");
    }
    if (s.out_json) {
        const std::string json =
            to_json(s, role.info(), role.bw_rows(), role.lat_rows(), role.verify_summary());
        if (s.out_json_file.empty()) {
            out += json;
        } else {
            std::ofstream f(s.out_json_file);
            f << json;
            if (!f) {
                out += " cannot write " + s.out_json_file + "\n";
                return 1;
            }
        }
    }
    if (role.failed()) return 1;
    return role.verify_failed() ? 1 : 0;
}

namespace {

int run_pipe(const settings& s) {
    auto fab = fabric::open(pipe_fabric_attr(s));
    if (!fab) {
        const std::string why = fabric::last_error();
        std::fprintf(stderr, "uet-perf: pipe provider: %s%s%s\n", fab.error().message().c_str(),
                     why.empty() ? "" : ": ", why.c_str());
        return 1;
    }
    auto srv = open_station(*fab, s, steady_ns);
    auto cli = srv ? open_station(*fab, s, steady_ns) : srv.error();
    if (!srv || !cli) {
        std::fprintf(stderr, "uet-perf: cannot open the endpoints: %s\n",
                     open_error(srv ? cli.error() : srv.error()).c_str());
        return 1;
    }
    station& sv = **srv;
    station& cl = **cli;
    const run_info si{"pipe", "in-process pipe",           to_string(sv.ep.address()), "", 0,
                      0,      queue_pairs_of(sv.ep.attr())};
    run_info ci{"pipe",
                "in-process pipe",
                to_string(cl.ep.address()),
                to_string(sv.ep.address()),
                0,
                0,
                queue_pairs_of(cl.ep.attr())};
    ci.local_key = cl.sd->region_key();
    run_info si2 = si;
    si2.local_key = sv.sd->region_key();
    server_role server(*sv.sd, s, si2, sv.av);
    auto peer = cl.av.insert(sv.ep.address());
    if (!peer) return 1;
    client_role client(*cl.sd, s, ci, *peer, session_nonce(*fab, cl.ep.address()));
    std::printf(" uet-perf: server %s and client %s in this process (pipe provider)\n",
                si.local.c_str(), ci.local.c_str());
    drive_pipe(*fab, &client, &server, print_stdout);
    std::string out;
    if (interrupted(client))
        out += " Interrupted (Ctrl-C): the last row covers what completed before it\n";
    const int rc = finish(client, cl.ep, &*fab, out);
    if (s.stats) out += stats_text(sv.ep, server.control_counters(), nullptr);
    print_stdout(out);
    for (const role_base* r :
         {static_cast<const role_base*>(&client), static_cast<const role_base*>(&server)})
        if (r->failed())
            std::fprintf(stderr, "uet-perf %s: %s\n", r == &client ? "client" : "server",
                         r->error().c_str());
    return rc || server.failed() ? 1 : 0;
}

int run_dpdk(const settings& s) {
    fabric_attr fa;
    fa.provider = "dpdk";
    fa.mtu = s.mtu;
    fa.dpdk.device = s.dev;
    fa.dpdk.eal_args = s.eal;
    fa.dpdk.address = s.ip;
    fa.dpdk.gateway = s.gw;
    fa.dpdk.busy_poll = s.busy_poll;
    fa.dpdk.port_mtu = s.port_mtu;
    fa.dpdk.zero_copy_min = s.zero_copy_min;
    fa.dpdk.ack_every = s.ack_every;
    fa.dpdk.zero_copy = s.zero_copy;
    fa.dpdk.udp_checksum = s.udp_checksum;
    fa.dpdk.trust_link_mtu = s.trust_link_mtu;
    fa.dpdk.time_stages = s.time_stages;  // the Stages line of --stats
    fa.capture_file = s.pcap_file;
    auto fab = fabric::open(fa);
    if (!fab) {
        const std::string why = fabric::last_error();
        std::fprintf(stderr, "uet-perf: cannot open the dpdk provider on %s: %s%s%s\n",
                     s.dev.c_str(), fab.error().message().c_str(), why.empty() ? "" : ": ",
                     why.c_str());
        return 1;
    }
    const fabric* clock_source = &*fab;
    const clock_fn clock = [clock_source] { return clock_source->now_ns(); };
    auto st = open_station(*fab, s, clock);
    if (!st) {
        std::fprintf(stderr, "uet-perf: cannot open the endpoint: %s\n",
                     open_error(st.error()).c_str());
        return 1;
    }
    station& me = **st;
    run_info info{"dpdk",
                  s.dev,
                  to_string(me.ep.address()),
                  "",
                  me.sd->region_key(),
                  0,
                  queue_pairs_of(me.ep.attr())};
    std::unique_ptr<client_role> client;
    std::unique_ptr<server_role> server;
    role_base* role = nullptr;
    if (s.is_client()) {
        const std::string a =
            s.server.find(':') == std::string::npos ? s.server + ":4793" : s.server;
        const auto addr = parse_endpoint_address(a);
        auto peer = me.av.insert(*addr);
        if (!peer) {
            std::fprintf(stderr, "uet-perf: %s: %s\n", a.c_str(), peer.error().message().c_str());
            return 1;
        }
        info.remote = a;
        client = std::make_unique<client_role>(*me.sd, s, info, *peer,
                                               session_nonce(*fab, me.ep.address()));
        role = client.get();
    } else {
        server = std::make_unique<server_role>(*me.sd, s, info, me.av);
        role = server.get();
        std::printf(
            "************************************\n"
            "* Waiting for client to connect... *\n"
            "************************************\n");
        std::fflush(stdout);
    }
    while (!role->finished()) {
        const std::uint64_t now = clock();
        if (client) client->step(now);
        if (server) server->step(now);
        if (server && server->unsignaled())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        print_stdout(role->take_output());
        if (interrupt_requested == 1) {
            interrupt_requested = 2;
            if (client) client->interrupt();
            if (server) server->interrupt();
        }
    }
    print_stdout(role->take_output());
    std::string out;
    if (client && interrupted(*client))
        out += " Interrupted (Ctrl-C): the last row covers what completed before it\n";
    const int rc = finish(*role, me.ep, &*fab, out);
    print_stdout(out);
    if (role->failed()) std::fprintf(stderr, "uet-perf: %s\n", role->error().c_str());
    return rc;
}

}  // namespace

int run(const settings& s) {
    install_interrupt_handler();
    return s.provider == "pipe" ? run_pipe(s) : run_dpdk(s);
}

}  // namespace uet::perf
