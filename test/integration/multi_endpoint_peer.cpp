// uet-itest-multi-endpoint: several endpoints on one dpdk fabric (one port, one address: one UET
// fabric endpoint), told apart by PIDonFEP, against a peer process that has several too. The
// public API only (include/uet/), over one memif link. Both sides run the same program:
//
//   --side 1: 10.9.0.1/24, --side 2: 10.9.0.2/24; two UET endpoints each (RUD, then ROD), a
//   completion queue and an address vector each, PIDonFEP 0 and 1 in the order they opened. A
//   roce_rc endpoint beside them is refused (errc::unsupported). Every endpoint's vector holds
//   both endpoints of the other side (10.9.0.x:4793/0 and /1), so two PDCs join each endpoint to
//   the one address of the other side, one per remote endpoint.
//
// 1. Hello: every endpoint sends each remote endpoint a message carrying the domain's memory
//    key (side 1 once it heard side 2's); each receives one from each, and its completion names
//    the right address-vector entry (the sender's PIDonFEP read from what it sent).
// 2. Messages: 8 B to 1 MiB from every endpoint to every remote endpoint; each checked byte by
//    byte, exactly once, at the endpoint it was sent to, from the sender it names.
// 3. RMA: every endpoint writes its own pattern into the other side's registered region through
//    each remote endpoint (a slot per writer and target), then reads it back through the same
//    endpoint (a response message to the reader's PIDonFEP) and compares.
// 4. Done: a last message each way, so neither side closes while the other still reads.
// Prints "RESULT ok" when everything held; exit 0 then, 1 otherwise.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "uet/uet.hpp"

namespace {

using clock = std::chrono::steady_clock;

constexpr std::uint32_t job = 57;
constexpr std::size_t n_eps = 2;
constexpr std::array<std::size_t, 5> sizes{8, 1000, 4000, 70'000, (1u << 20) + 3};
constexpr std::size_t slot_bytes = 64 * 1024;
constexpr std::size_t max_size = sizes.back();
enum phase : std::uint32_t { hello = 1, data = 2, done = 3 };

std::string name;
void say(const char* fmt, ...) {
    std::va_list ap;
    va_start(ap, fmt);
    std::fprintf(stdout, "%s: ", name.c_str());
    std::vfprintf(stdout, fmt, ap);
    std::fprintf(stdout, "\n");
    std::fflush(stdout);
    va_end(ap);
}

// A message: its seed (phase, sender side and PIDonFEP, target PIDonFEP, index) in its first 8
// bytes, then bytes derived from it (a hello: the memory key, then those bytes).
std::uint64_t seed_of(std::uint32_t ph, std::uint32_t side, std::uint32_t from, std::uint32_t to,
                      std::uint32_t index) {
    return (std::uint64_t{ph} << 48) | (std::uint64_t{side} << 40) | (std::uint64_t{from} << 32) |
           (std::uint64_t{to} << 24) | index;
}
std::uint32_t field(std::uint64_t seed, unsigned shift) {
    return static_cast<std::uint32_t>(seed >> shift) & 0xff;
}
std::size_t size_of(std::uint64_t seed) {
    return field(seed, 48) == data ? sizes[(seed & 0xffff) % sizes.size()] : 64;
}
std::byte byte_at(std::uint64_t seed, std::size_t i) {
    return static_cast<std::byte>((seed * 0x9e3779b97f4a7c15ull + i * 131 + (i >> 9)) >> 24);
}
void fill(std::span<std::byte> buf, std::uint64_t seed, std::size_t from = 8) {
    for (std::size_t i = from; i < buf.size(); ++i)
        buf[i] = byte_at(seed, i);
    std::memcpy(buf.data(), &seed, 8);
}

struct op {
    std::size_t ep = 0;
    enum kind { recv, send, write, read } k = recv;
    std::size_t target = 0;  // write, read: the remote endpoint
    std::vector<std::byte> buf;
};

struct local {
    uet::endpoint ep;
    uet::completion_queue cq;
    uet::address_vector av;
    std::array<uet::peer_addr, n_eps> peers{};
    std::array<std::size_t, 4> received{};  // by phase
    std::size_t sends_posted = 0, sends_done = 0, writes_done = 0, reads_done = 0;
    std::vector<std::uint64_t> seen;
};

struct side {
    std::uint32_t me = 0, other = 0;
    uet::fabric fab;
    uet::domain dom;
    std::vector<std::byte> window;  // the region the other side writes into
    uet::memory_region mr;
    std::uint64_t remote_key = 0;
    std::vector<local> eps;
    std::vector<std::unique_ptr<op>> ops;
    bool failed = false;

    void fail(const char* what) {
        if (!failed) say("FAIL %s", what);
        failed = true;
    }
    std::uint32_t ip(std::uint32_t s) const { return 0x0a090000u | s; }

    bool open(const std::string& dev) {
        uet::fabric_attr fa;
        fa.provider = "dpdk";
        fa.mtu = 1344;
        fa.dpdk.device = dev;
        fa.dpdk.address = "10.9.0." + std::to_string(me) + "/24";
        auto f = uet::fabric::open(fa);
        if (!f) {
            say("FAIL fabric::open: %s", uet::fabric::last_error().c_str());
            return false;
        }
        fab = std::move(*f);
        dom = fab.open_domain().value();
        window.assign(n_eps * n_eps * slot_bytes, std::byte{0});
        mr = dom.register_memory(window, uet::access::remote_read | uet::access::remote_write, job)
                 .value();
        for (std::size_t k = 0; k < n_eps; ++k) {
            uet::endpoint_attr ea;
            ea.job_id = job;
            ea.mode = k == 0 ? uet::delivery::rud : uet::delivery::rod;
            local l;
            l.cq = dom.open_cq(4096).value();
            l.av = dom.open_av().value();
            auto e = dom.open_endpoint(ea, l.cq, l.av);
            if (!e) {
                say("FAIL open_endpoint %zu: %s", k, uet::fabric::last_error().c_str());
                return false;
            }
            l.ep = std::move(*e);
            const uet::endpoint_address a = l.ep.address();
            if (a.ip != ip(me) || a.pid != k) {
                say("FAIL endpoint %zu opened as %s", k, uet::to_string(a).c_str());
                return false;
            }
            for (std::size_t j = 0; j < n_eps; ++j)
                l.peers[j] = l.av.insert({ip(other), 4793, static_cast<std::uint16_t>(j)}).value();
            eps.push_back(std::move(l));
        }
        uet::endpoint_attr roce;
        roce.job_id = job;
        roce.transport = uet::transport::roce_rc;
        uet::address_vector av = dom.open_av().value();
        auto refused = dom.open_endpoint(roce, eps[0].cq, av);
        if (refused || refused.error() != uet::errc::unsupported) {
            say("FAIL a roce_rc endpoint beside UET ones was not refused as unsupported");
            return false;
        }
        say("REFUSED a roce_rc endpoint beside them: %s", uet::fabric::last_error().c_str());
        return true;
    }

    void post_recvs(std::size_t e, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            auto o = std::make_unique<op>();
            o->ep = e;
            o->buf.resize(max_size);
            if (eps[e].ep.recv(o->buf, o.get())) return fail("recv");
            ops.push_back(std::move(o));
        }
    }

    void send(std::size_t e, std::size_t to, std::uint32_t ph, std::uint32_t index) {
        const std::uint64_t seed =
            seed_of(ph, me, static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(to), index);
        auto o = std::make_unique<op>();
        o->ep = e;
        o->k = op::send;
        o->target = to;
        o->buf.resize(size_of(seed));
        fill(o->buf, seed, ph == hello ? 16 : 8);
        if (ph == hello) std::memcpy(o->buf.data() + 8, &key_, 8);  // our window's key
        if (auto ec = eps[e].ep.send(eps[e].peers[to], o->buf, o.get())) {
            say("FAIL send from %zu: %s", e, ec.message().c_str());
            failed = true;
            return;
        }
        ++eps[e].sends_posted;
        ops.push_back(std::move(o));
    }

    // Writes endpoint e's pattern into its slot of the other side's window through remote
    // endpoint `to`; its completion posts the read back.
    void rma(std::size_t e, std::size_t to, op::kind k) {
        auto o = std::make_unique<op>();
        o->ep = e;
        o->k = k;
        o->target = to;
        o->buf.resize(slot_bytes);
        const std::uint64_t seed = seed_of(data, me, static_cast<std::uint32_t>(e),
                                           static_cast<std::uint32_t>(to), 0xffff);
        if (k == op::write) fill(o->buf, seed);
        const std::uint64_t offset = (e * n_eps + to) * slot_bytes;
        const auto ec = k == op::write
                            ? eps[e].ep.write(eps[e].peers[to], o->buf, offset, remote_key, o.get())
                            : eps[e].ep.read(eps[e].peers[to], o->buf, offset, remote_key, o.get());
        if (ec) {
            say("FAIL %s from %zu: %s", k == op::write ? "write" : "read", e, ec.message().c_str());
            failed = true;
            return;
        }
        ops.push_back(std::move(o));
    }

    void poll() {
        for (local& l : eps) {
            std::array<uet::completion, 16> c;
            const std::size_t n = l.cq.read(c);
            for (std::size_t i = 0; i < n; ++i)
                take(c[i]);
            uet::completion err;
            while (l.cq.read_error(err)) {
                const op* o = static_cast<const op*>(err.context);
                say("FAIL error completion of endpoint %zu (op %d to %zu): %s (%s)",
                    static_cast<std::size_t>(&l - eps.data()), o ? static_cast<int>(o->k) : -1,
                    o ? o->target : 0, err.error.message().c_str(),
                    std::string(err.detail).c_str());
                failed = true;
            }
        }
    }

    void take(const uet::completion& c) {
        op* o = static_cast<op*>(c.context);
        local& l = eps[o->ep];
        switch (o->k) {
            case op::send:
                ++l.sends_done;
                return;
            case op::write:
                ++l.writes_done;
                return rma(o->ep, o->target, op::read);
            case op::read: {
                std::vector<std::byte> want(slot_bytes);
                fill(want, seed_of(data, me, static_cast<std::uint32_t>(o->ep),
                                   static_cast<std::uint32_t>(o->target), 0xffff));
                if (c.len != slot_bytes || o->buf != want)
                    return fail("an RMA read did not return what was written");
                ++l.reads_done;
                return;
            }
            case op::recv:
                break;
        }
        std::uint64_t seed = 0;
        if (c.len >= 8) std::memcpy(&seed, o->buf.data(), 8);
        const std::uint32_t ph = field(seed, 48), from = field(seed, 32), to = field(seed, 24);
        std::vector<std::byte> want(size_of(seed));
        fill(want, seed, ph == hello ? 16 : 8);
        if (ph == hello && c.len == want.size()) std::memcpy(want.data() + 8, o->buf.data() + 8, 8);
        const bool right = ph >= hello && ph <= done && field(seed, 40) == other && from < n_eps &&
                           to == o->ep && c.len == want.size() &&
                           std::equal(want.begin(), want.end(), o->buf.begin()) &&
                           c.from == l.peers[from] &&
                           std::find(l.seen.begin(), l.seen.end(), seed) == l.seen.end();
        if (!right) {
            say("FAIL endpoint %zu: %zu bytes from %s that are no message of that sender's "
                "(seed %llx)",
                o->ep, c.len,
                c.from == l.peers[0]   ? "pid 0"
                : c.from == l.peers[1] ? "pid 1"
                                       : "?",
                static_cast<unsigned long long>(seed));
            failed = true;
            return;
        }
        if (ph == hello) std::memcpy(&remote_key, o->buf.data() + 8, 8);
        l.seen.push_back(seed);
        ++l.received[ph];
    }

    void report() {
        const uet::fabric_stats st = fab.stats();
        say("PORT rx_frames=%llu tx_frames=%llu rx_dropped=%llu unroutable=%llu tx_dropped=%llu",
            (unsigned long long)st.rx_frames, (unsigned long long)st.tx_frames,
            (unsigned long long)st.rx_dropped, (unsigned long long)st.unroutable,
            (unsigned long long)st.tx_dropped);
        for (const local& l : eps) {
            const uet::endpoint_counters c = l.ep.counters();
            say("ENDPOINT %s pdcs_opened=%llu failed=%llu target_pdcs=%llu sent=%llu "
                "received=%llu timeouts=%llu stale_responses=%llu",
                uet::to_string(l.ep.address()).c_str(), (unsigned long long)c.pdcs_opened,
                (unsigned long long)c.pdcs_failed, (unsigned long long)c.target_pdcs_opened,
                (unsigned long long)c.packets_sent, (unsigned long long)c.packets_received,
                (unsigned long long)c.timeouts, (unsigned long long)c.stale_responses);
        }
    }

    template <class Done>
    bool until(const char* what, clock::time_point deadline, Done is_done) {
        while (!failed && !is_done()) {
            if (clock::now() > deadline) {
                say("FAIL timed out waiting for %s", what);
                report();
                return false;
            }
            poll();
        }
        if (failed) report();
        return !failed;
    }
    bool all(auto pred) const { return std::all_of(eps.begin(), eps.end(), pred); }

    std::uint64_t key_ = 0;
};

int run(std::uint32_t me, const std::string& dev, const std::string& ready,
        clock::time_point deadline) {
    side s;
    s.me = me;
    s.other = me == 1 ? 2 : 1;
    if (!s.open(dev)) return 1;
    s.key_ = s.mr.key();
    for (std::size_t e = 0; e < n_eps; ++e)
        s.post_recvs(e, n_eps * (1 + sizes.size() + 1));
    if (!ready.empty()) std::ofstream(ready) << "ready\n";
    say("READY endpoints %s and %s", uet::to_string(s.eps[0].ep.address()).c_str(),
        uet::to_string(s.eps[1].ep.address()).c_str());
    // Side 1 starts first: it says hello once side 2's hellos show that side 2 is up (its
    // engines would give up on a peer that takes longer to start than their retry limit).
    const auto heard = [&] {
        return s.all([](const local& l) { return l.received[hello] == n_eps; });
    };
    if (me == 1 && !s.until("side 2's hellos", deadline, heard)) return 1;
    for (std::size_t e = 0; e < n_eps; ++e)
        for (std::size_t to = 0; to < n_eps; ++to)
            s.send(e, to, hello, 0);
    const auto sent = [](const local& l) { return l.sends_done == l.sends_posted; };
    if (!s.until("the hellos", deadline, [&] {
            return s.all([&](const local& l) { return sent(l) && l.received[hello] == n_eps; });
        }))
        return 1;
    say("HELLO ok: each endpoint heard from both of the other side's, by their PIDonFEP");
    for (std::size_t e = 0; e < n_eps; ++e)
        for (std::size_t to = 0; to < n_eps; ++to)
            for (std::uint32_t i = 0; i < sizes.size(); ++i)
                s.send(e, to, data, i);
    if (!s.until("the messages", deadline, [&] {
            return s.all([&](const local& l) {
                return sent(l) && l.received[data] == n_eps * sizes.size();
            });
        }))
        return 1;
    say("MESSAGES ok: %zu each way per pair of endpoints, every byte checked", sizes.size());
    for (std::size_t e = 0; e < n_eps; ++e)
        for (std::size_t to = 0; to < n_eps; ++to)
            s.rma(e, to, op::write);
    if (!s.until("the RMA", deadline,
                 [&] { return s.all([](const local& l) { return l.reads_done == n_eps; }); }))
        return 1;
    say("RMA ok: every endpoint wrote and read back a slot through each remote endpoint");
    for (std::size_t e = 0; e < n_eps; ++e)
        s.send(e, e, done, 0);
    if (!s.until("the last word", deadline, [&] {
            return s.all([&](const local& l) { return sent(l) && l.received[done] == 1; });
        }))
        return 1;
    s.report();
    say("RESULT ok");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string dev, ready;
    std::uint32_t me = 0;
    int timeout_s = 25;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--side") me = static_cast<std::uint32_t>(std::stoul(v));
        if (k == "--dev") dev = v;
        if (k == "--ready-file") ready = v;
        if (k == "--timeout") timeout_s = std::stoi(v);
    }
    if ((me != 1 && me != 2) || dev.empty()) {
        std::fprintf(stderr, "usage: %s --side 1|2 --dev DEV [--ready-file FILE] [--timeout S]\n",
                     argv[0]);
        return 2;
    }
    name = "side" + std::to_string(me);
    return run(me, dev, ready, clock::now() + std::chrono::seconds(timeout_s));
}
