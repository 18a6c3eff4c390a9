// uet-itest-engine-peer: the PDS engine on a DPDK port (engine_handler under a host_stack), moving
// verified messages (messages.hpp) to or from another engine peer:
//   --send PLAN     post the plan's messages to --peer and check every send completion;
//   --expect PLAN   check every received message: byte-exact, checksum, exactly once, ROD in order.
// A process may do both. Prints OFFLOADS, RESOLVED, RATE per group, RECEIVED, RESULT ok|FAIL,
// COUNTERS, DROPS by reason, COPIES; exits non-zero on any failure. Every wait is bounded by
// --timeout and says what it waited for.
//
// Usage: uet-itest-engine-peer --dev DEV --ip A.B.C.D/LEN --peer A.B.C.D [--gw A.B.C.D]
//          [--send PLAN] [--expect PLAN] [--epoch N] [--allow-errors]
//          [--then-send PLAN --then-after FILE (a second run, epoch + 1, once FILE exists)]
//          [--mtu N] [--trust-link-mtu] [--payload N] [--mpr N] [--rto-us N] [--retries N]
//          [--window N] [--garbage N (malformed frames first)] [--timeout S] [--ready-file F]
//          [--done-file F] [--serve-until F]
//          [--progress-file F --progress-after N (messages received)] [--stall-after-progress]
//          [--no-backoff]
//          [--eal "EAL ARGS"] [--name LABEL]
// PLAN: MODE:SIZE*COUNT,... e.g. "uud:1k*50,rud:64m*2" (sizes take k/m suffixes).
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dpdk/eal.hpp"
#include "dpdk/poll_loop.hpp"
#include "dpdk/port.hpp"
#include "garbage.hpp"
#include "host/engine_handler.hpp"
#include "host/host_stack.hpp"
#include "messages.hpp"
#include "peer_options.hpp"

namespace {

using namespace uet;

struct options : itest::common_options {
    options() { timeout_s = 120; }
    std::string send, expect, then_send, then_after, ready_file;
    std::uint32_t epoch = 1, payload = 1400, mpr = 256, rto_us = 20000, retries = 24;
    std::uint32_t window = 32, progress_after = 1;
    bool allow_errors = false;
    // After writing the progress file, stop polling (as a hung process would) until killed:
    // a script that kills the receiver on that file then always finds it mid-transfer, however
    // fast the transfer runs. Bounded by --timeout, after which the peer exits with FAIL.
    bool stall_after_progress = false;
};

options parse(int argc, char** argv) {
    options o;
    itest::arg_cursor args(argc, argv, "uet-itest-engine-peer");
    while (args.next()) {
        const std::string k = args.key();
        if (itest::parse_common_option(k, args, o)) continue;
        if (k == "--send")
            o.send = args.value();
        else if (k == "--expect")
            o.expect = args.value();
        else if (k == "--then-send")
            o.then_send = args.value();
        else if (k == "--then-after")
            o.then_after = args.value();
        else if (k == "--epoch")
            o.epoch = args.number();
        else if (k == "--allow-errors")
            o.allow_errors = true;
        else if (k == "--payload")
            o.payload = args.number();
        else if (k == "--mpr")
            o.mpr = args.number();
        else if (k == "--rto-us")
            o.rto_us = args.number();
        else if (k == "--retries")
            o.retries = args.number();
        else if (k == "--window")
            o.window = args.number();
        else if (k == "--ready-file")
            o.ready_file = args.value();
        else if (k == "--progress-after")
            o.progress_after = args.number();
        else if (k == "--stall-after-progress")
            o.stall_after_progress = true;
        else
            args.usage("unknown option " + k);
    }
    itest::require_addresses(o, args);
    if (!o.then_send.empty() && o.then_after.empty()) args.usage("--then-send needs --then-after");
    return o;
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return !path.empty() && stat(path.c_str(), &st) == 0;
}

void touch(const std::string& path) {
    if (!path.empty()) std::ofstream(path) << "1\n";
}

std::uint32_t largest_message(const options& o) {
    std::uint32_t m = 0;
    for (const auto* p : {&o.send, &o.expect, &o.then_send}) {
        for (const auto& g : itest::parse_plan(*p))
            m = std::max(m, g.size);
    }
    return m;
}

engine_config make_engine_config(const options& o, const wire::mac_address& mac) {
    engine_config c;
    c.mac = mac;
    c.ip = o.ip;
    c.mtu_payload = o.payload;
    c.mpr = o.mpr;
    // A real port's RTT is tens of microseconds to milliseconds (two busy processes on two
    // cores, back-off sleeps): an RTO of a few ms keeps spurious retransmissions rare.
    c.rto_ns = std::uint64_t{o.rto_us} * 1000;
    c.rto_max_ns = std::max<std::uint64_t>(c.rto_ns, 50'000'000);
    c.max_retransmits = o.retries;
    c.pdc_idle_close_ns = 1'000'000;
    c.timer_tick_ns = 10'000;
    c.max_message_size = std::max<std::uint32_t>(largest_message(o), 16u << 20);
    c.max_rx_buffer_bytes = std::max<std::uint64_t>(256ull << 20, 3ull * c.max_message_size);
    c.seed = (std::uint64_t{o.ip} << 32) ^ static_cast<std::uint64_t>(getpid());
    return c;
}

// Everything one run of the peer owns, in construction order.
struct stack {
    std::unique_ptr<dpdk::port> port;
    std::unique_ptr<uet::engine> engine;
    std::unique_ptr<host::engine_handler> handler;
    std::unique_ptr<host::host_stack> host;
    std::unique_ptr<itest::injector> injector;  // --garbage frames ahead of the host stack's
    std::unique_ptr<dpdk::poll_loop> loop;
};

stack open_stack(const options& o) {
    stack s;
    dpdk::port_config pc;
    pc.device = o.dev;
    pc.mtu = o.mtu;
    pc.trust_link_mtu = o.jumbo;
    s.port = dpdk::port::open(pc);
    std::printf("%s: OFFLOADS %s max_frame=%zu\n", o.name.c_str(),
                s.port->offloads().describe().c_str(), s.port->caps().max_frame);
    s.engine = std::make_unique<uet::engine>(make_engine_config(o, s.port->mac()));
    s.handler = std::make_unique<host::engine_handler>(*s.engine);
    host::host_config hc;
    hc.iface = {s.port->mac(), o.ip, o.prefix, o.gw};
    hc.neighbors.max_frame = std::max<std::size_t>(9216, s.port->caps().max_frame);
    s.host = std::make_unique<host::host_stack>(hc, *s.handler);
    host::backoff_config bc;
    bc.enabled = o.backoff;
    s.injector = std::make_unique<itest::injector>(*s.host);
    s.loop = std::make_unique<dpdk::poll_loop>(s.port->queue(0), *s.injector, bc);
    return s;
}

// The receive side: drains the engine after every poll and checks each message.
class receiver {
  public:
    receiver(const options& o, uet::engine& e) : o_(o), e_(e) {
        if (!o.expect.empty()) r_.emplace(itest::parse_plan(o.expect), o.epoch);
    }
    bool active() const noexcept { return r_.has_value(); }
    bool complete() const noexcept { return !r_ || r_->complete(); }
    bool failed() const noexcept { return r_ && r_->failed(); }

    void drain(std::uint64_t now) {
        received_message m;
        while (e_.poll_received(m)) {
            if (!r_) {
                ++unexpected_;
            } else if (!r_->on_message(m)) {
                std::printf("%s: FAIL %s\n", o_.name.c_str(), r_->last_error().c_str());
            }
            if (first_ == 0) first_ = now;
            last_ = now;
            e_.release(m.handle);
        }
        if (r_ && !progress_written_ && r_->messages() >= o_.progress_after &&
            !o_.progress_file.empty()) {
            progress_written_ = true;
            touch(o_.progress_file);
            if (o_.stall_after_progress) stall();
        }
    }
    std::string progress() const { return r_ ? r_->progress() : "nothing expected"; }
    void report() const {
        if (!r_) return;
        const double s = static_cast<double>(last_ - first_) / 1e9;
        std::printf(
            "%s: RECEIVED %s bytes=%llu MiB/s=%.1f uud_delivered=%llu/%llu unexpected=%llu\n",
            o_.name.c_str(), r_->progress().c_str(), (unsigned long long)r_->bytes(),
            s > 0 ? static_cast<double>(r_->bytes()) / s / (1 << 20) : 0.0,
            (unsigned long long)r_->uud_seen(), (unsigned long long)r_->uud_total(),
            (unsigned long long)unexpected_);
    }

  private:
    [[noreturn]] void stall() const {
        std::this_thread::sleep_for(std::chrono::seconds(o_.timeout_s));
        std::printf("%s: FAIL stalled %u s after its progress file and nobody killed it\n",
                    o_.name.c_str(), o_.timeout_s);
        std::exit(1);
    }

    const options& o_;
    uet::engine& e_;
    std::optional<itest::plan_receiver> r_;
    std::uint64_t first_ = 0, last_ = 0, unexpected_ = 0;
    bool progress_written_ = false;
};

// Polls until done() or the deadline; false (with a message) on timeout.
template <typename Done>
bool run_until(const options& o, stack& s, receiver& rx, std::uint64_t deadline,
               const std::string& what, Done done,
               const std::function<std::string()>& status = nullptr) {
    std::uint64_t next_report = dpdk::now_ns() + 5'000'000'000;
    while (!done()) {
        s.loop->poll_and_backoff();
        const std::uint64_t now = dpdk::now_ns();
        rx.drain(now);
        if (rx.failed()) return false;
        auto state = [&] { return status ? status() : rx.progress(); };
        if (now > deadline) {
            std::printf("%s: FAIL timed out after %u s waiting for %s (%s)\n", o.name.c_str(),
                        o.timeout_s, what.c_str(), state().c_str());
            return false;
        }
        if (now > next_report) {
            next_report = now + 5'000'000'000;
            std::printf("%s: waiting for %s (%s)\n", o.name.c_str(), what.c_str(), state().c_str());
            for (const auto& p : s.engine->pdcs()) {
                std::printf("%s:   pdc %u %s %s local=%u remote=%u tx_data=%llu timeouts=%llu\n",
                            o.name.c_str(), p.local_id, to_string(p.mode),
                            p.initiator ? "initiator" : "target", p.local_id, p.remote_id,
                            (unsigned long long)p.counters.tx_data_packets,
                            (unsigned long long)p.counters.timeouts);
            }
        }
    }
    return true;
}

std::uint64_t deadline_from_now(const options& o) {
    return dpdk::now_ns() + std::uint64_t{o.timeout_s} * 1'000'000'000;
}

void print_rates(const options& o, const itest::plan_sender& tx) {
    for (const auto& g : tx.groups()) {
        const double s = static_cast<double>(g.end_ns - g.start_ns) / 1e9;
        const double bytes = static_cast<double>(g.group.size) * static_cast<double>(g.ok);
        const double packets =
            std::ceil(static_cast<double>(g.group.size) / o.payload) * static_cast<double>(g.ok);
        std::printf(
            "%s: RATE %s ok=%llu failed=%llu seconds=%.3f MiB/s=%.1f Gbit/s=%.3f kpps=%.1f\n",
            o.name.c_str(), itest::describe(g.group).c_str(), (unsigned long long)g.ok,
            (unsigned long long)g.failed, s, s > 0 ? bytes / s / (1 << 20) : 0.0,
            s > 0 ? bytes * 8 / s / 1e9 : 0.0, s > 0 ? packets / s / 1e3 : 0.0);
    }
}

// Posts one plan and waits for every completion. With allow_errors, failures are reported (by
// status) but only a completion that is missing, duplicated or of an unexpected kind fails.
bool send_plan(const options& o, stack& s, receiver& rx, peer_id to, const std::string& plan,
               std::uint32_t epoch, bool allow_errors) {
    itest::sender_limits lim;
    lim.window = o.window;
    itest::plan_sender tx(*s.engine, to, itest::parse_plan(plan), epoch, lim);
    const bool finished = run_until(
        o, s, rx, deadline_from_now(o), "send completions of " + plan,
        [&] {
            tx.step(dpdk::now_ns());
            return tx.complete();
        },
        [&] { return tx.progress(); });
    const auto& st = tx.by_status();
    std::printf(
        "%s: COMPLETIONS epoch=%u %s ok=%llu retry_limit=%llu peer_unreachable=%llu "
        "other=%llu duplicates=%llu\n",
        o.name.c_str(), epoch, tx.progress().c_str(), (unsigned long long)st[0],
        (unsigned long long)st[1], (unsigned long long)st[2],
        (unsigned long long)(tx.failures() - st[1] - st[2]),
        (unsigned long long)tx.duplicate_completions());
    print_rates(o, tx);
    if (!finished || tx.duplicate_completions() != 0) return false;
    if (allow_errors) return tx.failures() == st[1] + st[2];
    return tx.failures() == 0;
}

std::uint64_t sum(const auto& a) {
    std::uint64_t s = 0;
    for (auto v : a)
        s += v;
    return s;
}

void print_counters(const options& o, const stack& s) {
    const auto& c = s.engine->counters();
    const auto& p = c.pds;
    const auto pc = s.port->counters();
    std::printf(
        "%s: COUNTERS frames_tx=%llu frames_rx=%llu data_tx=%llu data_rx=%llu "
        "retransmits=%llu (sack=%llu timeout=%llu nack=%llu) timeouts=%llu duplicates=%llu "
        "nacks_sent=%llu pdcs_opened=%llu pdcs_failed=%llu target_pdcs_opened=%llu "
        "messages_failed=%llu rtt_mean_us=%.1f tx_ring_full=%llu\n",
        o.name.c_str(), (unsigned long long)c.frames_tx, (unsigned long long)c.frames_rx,
        (unsigned long long)p.tx_data_packets, (unsigned long long)p.rx_data_packets,
        (unsigned long long)sum(p.retransmits), (unsigned long long)p.retransmits[0],
        (unsigned long long)p.retransmits[1], (unsigned long long)p.retransmits[2],
        (unsigned long long)p.timeouts, (unsigned long long)p.duplicates,
        (unsigned long long)sum(p.nacks_sent), (unsigned long long)c.pdcs_opened,
        (unsigned long long)c.pdcs_failed, (unsigned long long)c.target_pdcs_opened,
        (unsigned long long)c.messages_failed, static_cast<double>(p.rtt.mean_ns()) / 1e3,
        (unsigned long long)pc.tx_ring_full);
    std::string drops;
    auto add = [&](const std::string& k, std::uint64_t v) {
        if (v != 0) drops += " " + k + "=" + std::to_string(v);
    };
    for (std::size_t i = 0; i < host::traffic_class_count; ++i) {
        const auto cls = static_cast<host::traffic_class>(i);
        if (!host::steer_to_stack(cls))
            add(std::string("steer.") + host::to_string(cls), pc.steering[cls]);
    }
    for (std::size_t i = 0; i < drop_reason_count; ++i)
        add(std::string("engine.") + to_string(static_cast<drop_reason>(i)), c.drops[i]);
    for (std::size_t i = 1; i < wire::reject_reason_count; ++i)
        add(std::string("wire.") + wire::reject_name(static_cast<wire::reject_reason>(i)),
            c.rejects[i]);
    for (std::size_t i = 0; i < host::host_drop_count; ++i)
        add(std::string("host.") + host::to_string(static_cast<host::host_drop>(i)),
            s.host->stats().drops[i]);
    for (std::size_t i = 0; i < host::neighbor_drop_count; ++i)
        add(std::string("arp.") + host::to_string(static_cast<host::neighbor_drop>(i)),
            s.host->neighbors().stats().drops[i]);
    add("port.rx_oversize", pc.rx_oversize);
    add("handler.tx_too_large", s.handler->stats().tx_too_large);
    std::printf("%s: DROPS%s\n", o.name.c_str(), drops.empty() ? " none" : drops.c_str());
    const auto& h = s.handler->stats();
    std::printf(
        "%s: COPIES tx: %llu frames built in the mbuf (payload copied once while summed), "
        "%llu bytes copied after the engine, %llu payloads by reference (port tx_zero_copy=%llu "
        "tx_copied=%llu); rx: the engine reads the mbuf, 1 copy per payload\n",
        o.name.c_str(), (unsigned long long)h.frames_tx, (unsigned long long)h.bytes_copied_tx,
        (unsigned long long)h.frames_by_reference, (unsigned long long)pc.tx_zero_copy,
        (unsigned long long)pc.tx_copied);
}

bool run(const options& o) {
    stack s = open_stack(o);
    receiver rx(o, *s.engine);
    bool ok = true;
    peer_id to = invalid_peer;
    if (!o.send.empty() || !o.then_send.empty()) {
        // ARP first, so that the first window of data is not held (and partly dropped) by the
        // host stack while the peer's MAC is unknown.
        const std::uint32_t hop = s.host->neighbors().next_hop(o.peer);
        ok = run_until(o, s, rx, deadline_from_now(o),
                       "an ARP reply from " + wire::ipv4_to_string(hop),
                       [&] { return s.host->neighbors().resolve(hop, dpdk::now_ns()); });
        if (ok) {
            std::printf("%s: RESOLVED %s via %s is %s\n", o.name.c_str(),
                        wire::ipv4_to_string(o.peer).c_str(), wire::ipv4_to_string(hop).c_str(),
                        s.host->neighbors().lookup(hop, dpdk::now_ns())->to_string().c_str());
        }
        if (ok && o.garbage != 0) {
            // Malformed frames of every kind (random UET payloads among them) ahead of the plan:
            // the peer must count and drop them, and still complete the transfer.
            const auto mac = s.host->neighbors().lookup(hop, dpdk::now_ns());
            for (auto& f : itest::make_garbage(o.garbage, o.ip, o.peer, s.port->mac(), *mac))
                s.injector->raw_.push_back(std::move(f));
            ok = run_until(o, s, rx, deadline_from_now(o), "the garbage frames to leave",
                           [&] { return s.injector->raw_.empty(); });
            if (ok) std::printf("%s: GARBAGE sent %u frames\n", o.name.c_str(), o.garbage);
        }
        // The engine addresses the peer by IP; the host stack fills both MACs of every frame.
        to = s.engine->add_peer(wire::mac_address{}, o.peer);
    }
    touch(o.ready_file);
    if (ok && !o.send.empty()) ok = send_plan(o, s, rx, to, o.send, o.epoch, o.allow_errors);
    if (ok)
        ok = run_until(o, s, rx, deadline_from_now(o), "every expected message",
                       [&] { return rx.complete(); });
    if (ok && !o.then_send.empty()) {
        ok = run_until(o, s, rx, deadline_from_now(o), "file " + o.then_after,
                       [&] { return file_exists(o.then_after); }) &&
             send_plan(o, s, rx, to, o.then_send, o.epoch + 1, false);
    }
    rx.report();
    if (ok) touch(o.done_file);
    // Keep acknowledging (a last ACK may have been lost) and answering ARP and ping until told.
    if (ok && !o.serve_until.empty()) {
        ok = run_until(o, s, rx, deadline_from_now(o), "file " + o.serve_until,
                       [&] { return file_exists(o.serve_until); });
        std::printf("%s: SERVED echo_replies=%llu arp_replies=%llu\n", o.name.c_str(),
                    (unsigned long long)s.host->stats().echo_replies,
                    (unsigned long long)s.host->neighbors().stats().replies_sent);
    }
    ok = ok && s.handler->stats().tx_too_large == 0 && !rx.failed();
    print_counters(o, s);
    std::printf("%s: RESULT %s\n", o.name.c_str(), ok ? "ok" : "FAIL");
    s.loop.reset();
    s.port->close();
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
        const bool ok = run(o);
        dpdk::eal::shutdown();
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::printf("%s: FAIL %s\n", o.name.c_str(), e.what());
        return 1;
    }
}
