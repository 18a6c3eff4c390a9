// uet-itest-peer: one end of the integration tests. Opens a DPDK port, resolves the peer by ARP
// through host::host_stack, optionally floods the peer with malformed frames, then runs the
// verified frame exchange (exchange.hpp) and prints what it saw:
//   OFFLOADS / STEERING lines when the port opens,
//   RESOLVED when ARP answered, RESULT ok|FAIL with the counters, DROPS by reason, RATE.
// Every wait is bounded by --timeout and says what it waited for when it gives up.
//
// Usage: uet-itest-peer --dev DEV --ip A.B.C.D/LEN --peer A.B.C.D [--gw A.B.C.D]
//          [--count N] [--min-frame N] [--max-frame N] [--mtu N] [--garbage N] [--rounds N]
//          [--done-file F] [--serve-until F] [--timeout S] [--no-backoff] [--trust-link-mtu]
//          [--lcore N] [--progress-file F (written once 1000 frames came in)]
//          [--eal "EAL ARGS"] [--name LABEL]
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/poll_loop.hpp"
#include "dpdk/port.hpp"
#include "exchange.hpp"
#include "garbage.hpp"
#include "host/host_stack.hpp"
#include "host/icmp.hpp"
#include "peer_options.hpp"
#include "wire/bytes.hpp"
#include "wire/frame.hpp"

namespace {

using namespace uet;

struct options : itest::common_options {
    options() { mtu = 9000; }
    std::uint32_t count = 3000, min_frame = 64, max_frame = 9014, rounds = 1;
    int lcore = -1;
};

options parse(int argc, char** argv) {
    options o;
    itest::arg_cursor args(argc, argv, "uet-itest-peer");
    while (args.next()) {
        const std::string k = args.key();
        if (itest::parse_common_option(k, args, o)) continue;
        if (k == "--count")
            o.count = args.number();
        else if (k == "--min-frame")
            o.min_frame = args.number();
        else if (k == "--max-frame")
            o.max_frame = args.number();
        else if (k == "--rounds")
            o.rounds = args.number();
        else if (k == "--lcore")
            o.lcore = static_cast<int>(args.number());
        else
            args.usage("unknown option " + k);
    }
    itest::require_addresses(o, args);
    return o;
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return !path.empty() && stat(path.c_str(), &st) == 0;
}

// Lets the exchange transmit only once it is opened (after ARP and the garbage flood), and
// publishes its state to the main thread when the loop runs on another lcore.
class gate final : public host::frame_handler {
  public:
    explicit gate(itest::exchange& x) : x_(x) {}
    void on_start(const host::io_caps& caps) override { x_.on_start(caps); }
    void on_receive(std::span<const std::uint8_t> f, std::uint64_t now) override {
        x_.on_receive(f, now);
    }
    std::size_t on_transmit(std::uint64_t now, std::span<host::tx_frame> frames) override {
        const std::size_t n =
            open_.load(std::memory_order_acquire) ? x_.on_transmit(now, frames) : 0;
        if (x_.finished(now)) finished_.store(true, std::memory_order_release);
        return n;
    }
    std::uint64_t next_deadline() const override {
        return open_.load(std::memory_order_relaxed) ? x_.next_deadline() : host::no_deadline;
    }
    std::atomic<bool> open_{false}, finished_{false};

  private:
    itest::exchange& x_;
};

void print_result(const options& o, const dpdk::port& port, const host::host_stack& host,
                  const itest::exchange& x, bool ok, double seconds) {
    const auto& c = x.counters();
    const auto pc = port.counters();
    std::printf(
        "%s: RESULT %s %s data_rx=%llu data_tx=%llu retransmits=%llu duplicates=%llu "
        "out_of_order=%llu corrupt=%llu abandoned=%llu tx_zero_copy=%llu tx_copied=%llu "
        "tx_ring_full=%llu rx_multiseg=%llu\n",
        o.name.c_str(), ok ? "ok" : "FAIL", x.progress().c_str(), (unsigned long long)c.data_rx,
        (unsigned long long)c.data_tx, (unsigned long long)c.retransmits,
        (unsigned long long)c.duplicates, (unsigned long long)c.out_of_order,
        (unsigned long long)c.corrupt, (unsigned long long)c.abandoned,
        (unsigned long long)pc.tx_zero_copy, (unsigned long long)pc.tx_copied,
        (unsigned long long)pc.tx_ring_full, (unsigned long long)pc.rx_multiseg);
    std::string drops;
    auto add = [&](const std::string& k, std::uint64_t v) {
        if (v != 0) drops += " " + k + "=" + std::to_string(v);
    };
    for (std::size_t i = 0; i < host::traffic_class_count; ++i) {
        const auto cls = static_cast<host::traffic_class>(i);
        if (!host::steer_to_stack(cls))
            add(std::string("steer.") + host::to_string(cls), pc.steering[cls]);
    }
    for (std::size_t i = 0; i < host::host_drop_count; ++i) {
        add(std::string("host.") + host::to_string(static_cast<host::host_drop>(i)),
            host.stats().drops[i]);
    }
    for (std::size_t i = 0; i < host::neighbor_drop_count; ++i) {
        add(std::string("arp.") + host::to_string(static_cast<host::neighbor_drop>(i)),
            host.neighbors().stats().drops[i]);
    }
    for (std::size_t i = 1; i < wire::reject_reason_count; ++i) {
        add(std::string("wire.") + wire::reject_name(static_cast<wire::reject_reason>(i)),
            c.rejects[i]);
    }
    add("bad_magic", c.bad_magic);
    add("wrong_peer", c.wrong_peer);
    add("stale_nonce", c.stale_nonce);
    add("rx_oversize", pc.rx_oversize);
    std::printf("%s: DROPS%s\n", o.name.c_str(), drops.empty() ? " none" : drops.c_str());
    if (seconds > 0) {
        const double frames = static_cast<double>(c.data_rx + c.data_tx);
        std::printf(
            "%s: RATE frames/s=%.0f (data frames both ways over %.3f s; %.2f Gbit/s received)\n",
            o.name.c_str(), frames / seconds, seconds, c.bytes_rx * 8.0 / seconds / 1e9);
    }
    std::fflush(stdout);
}

// Polls (inline, or watches the lcore) until done() or the deadline; false on timeout.
template <typename Done>
bool wait_for(dpdk::poll_loop& loop, bool on_lcore, std::uint64_t deadline, Done done) {
    while (!done()) {
        if (dpdk::now_ns() > deadline) return false;
        if (on_lcore) {
            const timespec ts{0, 1'000'000};
            nanosleep(&ts, nullptr);
        } else {
            loop.poll_and_backoff();
        }
    }
    return true;
}

bool run_round(const options& o, unsigned round) {
    const std::uint64_t deadline = dpdk::now_ns() + std::uint64_t{o.timeout_s} * 1'000'000'000;
    dpdk::port_config pcfg;
    pcfg.device = o.dev;
    pcfg.mtu = o.mtu;
    pcfg.trust_link_mtu = o.jumbo;
    auto port = dpdk::port::open(pcfg);
    std::printf("%s: OFFLOADS %s\n", o.name.c_str(), port->offloads().describe().c_str());
    std::printf("%s: STEERING %s flow_rules=%s%s\n", o.name.c_str(),
                port->steering() == dpdk::steering_mode::hardware ? "hardware" : "software",
                port->flow_rules_accepted() ? "accepted" : "refused",
                port->flow_refusal().empty() ? "" : (" (" + port->flow_refusal() + ")").c_str());

    itest::exchange_config xc;
    xc.my_ip = o.ip;
    xc.peer_ip = o.peer;
    xc.count = o.count;
    xc.min_frame = o.min_frame;
    xc.max_frame =
        std::min<std::uint32_t>(o.max_frame, static_cast<std::uint32_t>(port->caps().max_frame));
    xc.nonce = static_cast<std::uint32_t>(std::random_device{}()) | 1u;
    itest::exchange x(xc);
    gate g(x);
    host::host_config hc;
    hc.iface = {port->mac(), o.ip, o.prefix, o.gw};
    hc.neighbors.max_frame = std::max<std::size_t>(9216, port->caps().max_frame);
    host::host_stack host(hc, g);
    itest::injector inj(host);
    host::backoff_config bc;
    bc.enabled = o.backoff;
    dpdk::poll_loop loop(port->queue(0), inj, bc);
    const bool on_lcore = o.lcore >= 0;
    if (on_lcore && !loop.launch(static_cast<unsigned>(o.lcore))) {
        std::printf("%s: FAIL cannot launch on lcore %d\n", o.name.c_str(), o.lcore);
        return false;
    }
    auto fail = [&](const std::string& what) {
        loop.stop();
        loop.join();
        std::printf("%s: FAIL round %u: timed out after %u s waiting for %s (%s)\n", o.name.c_str(),
                    round, o.timeout_s, what.c_str(), x.progress().c_str());
        print_result(o, *port, host, x, false, 0);
        return false;
    };

    // 1. The peer's (or the gateway's) MAC, by ARP. In lcore mode the table belongs to the lcore,
    //    so ARP is left to the exchange's first frames there.
    const std::uint32_t hop = host.neighbors().next_hop(o.peer);
    if (!on_lcore) {
        if (!wait_for(loop, false, deadline,
                      [&] { return host.neighbors().resolve(hop, dpdk::now_ns()); })) {
            return fail("an ARP reply from " + wire::ipv4_to_string(hop));
        }
        const auto mac = host.neighbors().lookup(hop, dpdk::now_ns());
        std::printf("%s: RESOLVED %s via %s is %s\n", o.name.c_str(),
                    wire::ipv4_to_string(o.peer).c_str(), wire::ipv4_to_string(hop).c_str(),
                    mac->to_string().c_str());
        // 2. The flood of malformed frames, before the exchange.
        if (o.garbage != 0) {
            for (auto& f : itest::make_garbage(o.garbage, o.ip, o.peer, port->mac(), *mac))
                inj.raw_.push_back(std::move(f));
            if (!wait_for(loop, false, deadline, [&] { return inj.raw_.empty(); })) {
                return fail("the garbage frames to leave");
            }
            std::printf("%s: GARBAGE sent %u frames\n", o.name.c_str(), o.garbage);
        }
    }
    // 3. The exchange.
    const std::uint64_t start = dpdk::now_ns();
    g.open_.store(true, std::memory_order_release);
    std::uint64_t silent_reported = 0;
    bool progress_written = false;
    if (!wait_for(loop, on_lcore, deadline, [&] {
            if (g.finished_.load(std::memory_order_acquire)) return true;
            if (!on_lcore && !progress_written && x.counters().data_rx >= 1000 &&
                !o.progress_file.empty()) {
                progress_written = true;
                std::ofstream(o.progress_file) << "1000\n";
            }
            const std::uint64_t now = dpdk::now_ns();
            const std::uint64_t heard = std::max(x.last_rx(), start);
            if (!on_lcore && now - heard > 1'000'000'000 && heard != silent_reported) {
                silent_reported = heard;
                std::printf("%s: peer silent for 1 s (%s)\n", o.name.c_str(), x.progress().c_str());
                std::fflush(stdout);
            }
            return false;
        })) {
        return fail("the exchange to finish");
    }
    const double seconds = static_cast<double>(dpdk::now_ns() - start) / 1e9;
    const bool ok = x.done() && x.counters().corrupt == 0;
    print_result(o, *port, host, x, ok, seconds);
    if (!o.done_file.empty()) std::ofstream(o.done_file) << "done\n";
    // 4. Keep answering ARP and ping (and the peer's late frames) until told to stop.
    if (!o.serve_until.empty()) {
        const std::uint64_t serve_deadline =
            dpdk::now_ns() + std::uint64_t{o.timeout_s} * 1'000'000'000;
        if (!wait_for(loop, on_lcore, serve_deadline, [&] { return file_exists(o.serve_until); })) {
            std::printf("%s: FAIL waiting for %s\n", o.name.c_str(), o.serve_until.c_str());
            loop.stop();
            loop.join();
            return false;
        }
        std::printf("%s: SERVED echo_replies=%llu arp_replies=%llu\n", o.name.c_str(),
                    (unsigned long long)host.stats().echo_replies,
                    (unsigned long long)host.neighbors().stats().replies_sent);
    }
    loop.stop();
    loop.join();
    port->close();
    std::fflush(stdout);
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        dpdk::eal_options eo;
        std::istringstream words(o.eal);
        for (std::string w; words >> w;)
            eo.args.push_back(w);
        eo.file_prefix = "uet-itest-" + o.name + "-" + std::to_string(getpid());
        dpdk::eal::start(eo);
        bool ok = true;
        for (unsigned r = 1; r <= o.rounds && ok; ++r) {
            ok = run_round(o, r);
            if (o.rounds > 1)
                std::printf("%s: ROUND %u %s\n", o.name.c_str(), r, ok ? "ok" : "FAIL");
        }
        dpdk::eal::shutdown();
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::printf("%s: FAIL %s\n", o.name.c_str(), e.what());
        return 1;
    }
}
