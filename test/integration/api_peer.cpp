// uet-itest-api-peer: two processes, a server and a client, exchange verified transfers through
// the public API (include/uet/uet.hpp only) on the dpdk provider: send/recv, tagged send (exact
// and wildcard receives), write and write_data, read, and atomics (fetch_atomic sum on u64,
// compare_atomic, a non-fetching bxor), 1 KiB to 64 MiB, one phase per delivery mode (rud, rod,
// rudi: RMA and atomics; uud: sends of one packet; roce: rud's operations, no bxor, over RoCEv2
// RC queue pairs, endpoint_attr::transport roce_rc). The client drives; the server checks what
// landed in its memory and answers with a verdict. Prints one line per operation group, then
// RESULT ok|FAIL; exits non-zero on any failure. Every wait is bounded by --timeout and says
// what it waited for.
//
// Usage: uet-itest-api-peer --role server|client --dev DEV --ip A.B.C.D/LEN --peer A.B.C.D
//          [--gw A.B.C.D] [--neighbor IP=MAC]... [--modes rud,rod,rudi,uud,roce]
//          [--sizes 1k,64k,1m,64m] [--mtu N (SES payload)] [--port-mtu N] [--trust-link-mtu]
//          [--job N] [--timeout S] [--rto-us N] [--retries N] [--busy-poll] [--eal "ARGS"]
//          [--ready-file F (touched once the port is open)] [--name LABEL]
//          [--fault (client: the server is killed mid-transfer, then restarted)]
//          [--progress-file F --progress-after N (server: touched after N flood messages)]
#include "api_peer.hpp"

#include <cstdarg>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace itest_api {

namespace {

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr, "uet-itest-api-peer: %s (see the comment at the top of api_peer.cpp)\n",
                 why.c_str());
    std::exit(2);
}

std::size_t parse_size(const std::string& s) {
    std::size_t pos = 0;
    std::size_t n = 0;
    try {
        n = std::stoul(s, &pos);
    } catch (const std::exception&) {
        usage("bad size " + s);
    }
    const std::string unit = s.substr(pos);
    if (unit == "k" || unit == "K") return n << 10;
    if (unit == "m" || unit == "M") return n << 20;
    if (!unit.empty()) usage("bad size " + s);
    return n;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        const auto comma = s.find(',', start);
        out.push_back(s.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

options::phase_kind parse_mode(const std::string& s) {
    if (s == "rud") return {uet::delivery::rud};
    if (s == "rod") return {uet::delivery::rod};
    if (s == "rudi") return {uet::delivery::rudi};
    if (s == "uud") return {uet::delivery::uud};
    if (s == "roce") return {uet::delivery::rud, true};
    usage("bad mode " + s);
}

}  // namespace

options parse_options(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage("missing value for " + k);
            return argv[++i];
        };
        auto number = [&] { return static_cast<std::uint32_t>(parse_size(value())); };
        if (k == "--role")
            o.role = value();
        else if (k == "--name")
            o.name = value();
        else if (k == "--dev")
            o.dev = value();
        else if (k == "--ip")
            o.address = value();
        else if (k == "--peer")
            o.peer = value();
        else if (k == "--gw")
            o.gateway = value();
        else if (k == "--neighbor")
            o.neighbors.push_back(value());
        else if (k == "--eal")
            o.eal = value();
        else if (k == "--ready-file")
            o.ready_file = value();
        else if (k == "--progress-file")
            o.progress_file = value();
        else if (k == "--progress-after")
            o.progress_after = number();
        else if (k == "--mtu")
            o.mtu = number();
        else if (k == "--port-mtu")
            o.port_mtu = number();
        else if (k == "--job")
            o.job = number();
        else if (k == "--timeout")
            o.timeout_s = number();
        else if (k == "--rto-us")
            o.rto_us = number();
        else if (k == "--retries")
            o.retries = number();
        else if (k == "--fault")
            o.fault = true;
        else if (k == "--busy-poll")
            o.busy_poll = true;
        else if (k == "--trust-link-mtu")
            o.trust_link_mtu = true;
        else if (k == "--modes") {
            o.modes.clear();
            for (const auto& m : split(value()))
                o.modes.push_back(parse_mode(m));
        } else if (k == "--sizes") {
            o.sizes.clear();
            for (const auto& s : split(value()))
                o.sizes.push_back(parse_size(s));
        } else {
            usage("unknown option " + k);
        }
    }
    if (o.role != "server" && o.role != "client") usage("--role server|client is required");
    if (o.dev.empty() || o.address.empty() || o.peer.empty())
        usage("--dev, --ip and --peer are required");
    if (o.name.empty()) o.name = o.role;
    for (std::size_t s : o.sizes)
        if (s < 64 || s > (256u << 20)) usage("sizes must be 64 B .. 256 MiB");
    return o;
}

const char* mode_name(uet::delivery d) {
    switch (d) {
        case uet::delivery::rud:
            return "rud";
        case uet::delivery::rod:
            return "rod";
        case uet::delivery::rudi:
            return "rudi";
        case uet::delivery::uud:
            return "uud";
    }
    return "?";
}

std::string size_name(std::size_t n) {
    if (n >= (1u << 20) && n % (1u << 20) == 0) return std::to_string(n >> 20) + "m";
    if (n >= 1024 && n % 1024 == 0) return std::to_string(n >> 10) + "k";
    return std::to_string(n);
}

// ---- plan ----

std::uint64_t make_seed(std::uint32_t phase, char what, std::uint32_t index) {
    return (std::uint64_t{phase + 1} << 48) |
           (std::uint64_t{static_cast<unsigned char>(what)} << 32) | index;
}

namespace {

// Messages of a size: many small ones, one of the largest.
std::uint32_t count_for(std::size_t size) {
    if (size <= (64u << 10)) return 8;
    if (size <= (1u << 20)) return 4;
    return 1;
}

void add_items(std::vector<item>& v, std::uint32_t phase, char what, std::size_t size,
               std::uint32_t count, std::uint64_t* offset) {
    for (std::uint32_t i = 0; i < count; ++i) {
        item it;
        it.size = size;
        it.seed = make_seed(phase, what, static_cast<std::uint32_t>(v.size()));
        if (offset) {
            it.offset = *offset;
            *offset += (size + 4095) / 4096 * 4096;
        }
        v.push_back(it);
    }
}

}  // namespace

phase_plan make_plan(const options& o, std::uint32_t phase) {
    phase_plan p;
    p.phase = phase;
    p.mode = o.modes[phase % o.modes.size()].mode;
    p.roce = o.modes[phase % o.modes.size()].roce;
    p.name = p.roce ? "roce" : mode_name(p.mode);
    if (p.mode == uet::delivery::uud) {
        // Datagrams of one packet: the smallest size and a full packet.
        add_items(p.sends, phase, 's', 1024 < o.mtu ? 1024 : o.mtu, 32, nullptr);
        add_items(p.sends, phase, 's', o.mtu, 32, nullptr);
        add_items(p.tagged, phase, 't', 512 < o.mtu ? 512 : o.mtu, 8, nullptr);
        return p;
    }
    std::uint64_t offset = 0;
    for (std::size_t size : o.sizes) {
        if (p.mode != uet::delivery::rudi) {
            add_items(p.sends, phase, 's', size, count_for(size), nullptr);
            // Tagged: one exact and one wildcard message per size up to 4 MiB.
            if (size <= (4u << 20)) add_items(p.tagged, phase, 't', size, 2, nullptr);
        }
        add_items(p.writes, phase, 'w', size, 1, &offset);
        if (size <= (1u << 20)) add_items(p.write_data, phase, 'd', size, 1, &offset);
    }
    // Reads use the same layout in the read source as the writes and write_data in the target.
    for (const auto* v : {&p.writes, &p.write_data})
        for (const item& w : *v)
            p.reads.push_back({w.size,
                               make_seed(phase, 'r', static_cast<std::uint32_t>(p.reads.size())),
                               w.offset});
    p.region_bytes = offset;
    if (p.roce) {
        p.xors = 0;
        // The immediate of an RDMA WRITE with immediate holds 32 bits.
        for (item& d : p.write_data)
            d.seed = 0xd0000000u | (std::uint64_t{phase & 0xfff} << 16) | (d.seed & 0xffff);
    }
    return p;
}

// ---- patterns ----

void fill(std::span<std::byte> buf, std::uint64_t seed) {
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    std::size_t i = 0;
    for (; i + 8 <= buf.size(); i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::memcpy(buf.data() + i, &x, 8);
    }
    for (; i < buf.size(); ++i)
        buf[i] = static_cast<std::byte>(x >> (8 * (i % 8)));
    if (buf.size() >= 8) std::memcpy(buf.data(), &seed, 8);
}

std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed) {
    std::vector<std::byte> v(n);
    fill(v, seed);
    return v;
}

std::optional<std::uint64_t> check(std::span<const std::byte> buf) {
    if (buf.size() < 8) return std::nullopt;
    std::uint64_t seed = 0;
    std::memcpy(&seed, buf.data(), 8);
    // Regenerated in slices so that a 64 MiB check needs no 64 MiB copy.
    std::vector<std::byte> want(buf.size() < (1u << 20) ? buf.size() : (1u << 20));
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (std::size_t at = 0; at < buf.size();) {
        const std::size_t n = std::min(want.size(), buf.size() - at);
        std::size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            std::memcpy(want.data() + i, &x, 8);
        }
        for (; i < n; ++i)
            want[i] = static_cast<std::byte>(x >> (8 * (i % 8)));
        if (at == 0) std::memcpy(want.data(), &seed, 8);
        if (std::memcmp(want.data(), buf.data() + at, n) != 0) return std::nullopt;
        at += n;
    }
    return seed;
}

// ---- side ----

void side::say(const char* fmt, ...) const {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    std::printf("%s: %s\n", o.name.c_str(), line);
}

void side::say_port_counters() const {
    const uet::fabric_stats st = fab.stats();
    say("PORT rx_frames=%llu tx_frames=%llu tx_zero_copy=%llu rx_dropped=%llu tx_dropped=%llu "
        "arp_requests=%llu arp_replies=%llu",
        (unsigned long long)st.rx_frames, (unsigned long long)st.tx_frames,
        (unsigned long long)st.tx_zero_copy, (unsigned long long)st.rx_dropped,
        (unsigned long long)st.tx_dropped, (unsigned long long)st.arp_requests,
        (unsigned long long)st.arp_replies);
}

bool side::open_fabric() {
    uet::fabric_attr fa;
    fa.provider = "dpdk";
    fa.mtu = o.mtu;
    fa.dpdk.device = o.dev;
    fa.dpdk.eal_args = o.eal;
    fa.dpdk.address = o.address;
    fa.dpdk.gateway = o.gateway;
    fa.dpdk.neighbors = o.neighbors;
    fa.dpdk.port_mtu = o.port_mtu;
    fa.dpdk.trust_link_mtu = o.trust_link_mtu;
    fa.dpdk.busy_poll = o.busy_poll;
    fa.dpdk.rto_ns = std::uint64_t{o.rto_us} * 1000;
    fa.dpdk.max_retransmits = o.retries;
    // Every port here is a virtual device, where zero-copy transmit is off unless asked for:
    // asked for, so that the suite runs the chained-payload path a PCI NIC takes by default.
    fa.dpdk.zero_copy = uet::zero_copy_policy::on;
    // The API refuses a payload that does not fit the port's frames, with the reason; the port
    // is closed again, so the second open below also shows that a port reopens in one process.
    // (The server only: it opens before the client starts. A memif client that connects and
    // drops at once can make DPDK 22.11's memif server panic in its interrupt thread.)
    if (o.role == "server" && (o.port_mtu == 0 || o.port_mtu == 1500)) {
        uet::fabric_attr too_big = fa;
        too_big.mtu = 8192;
        auto bad = uet::fabric::open(too_big);
        if (bad || bad.error() != uet::errc::invalid_argument) {
            say("FAIL fabric::open with mtu 8192 was not refused with invalid_argument");
            return false;
        }
        say("REFUSED mtu 8192: %s", uet::fabric::last_error().c_str());
    }
    auto f = uet::fabric::open(fa);
    if (!f) {
        say("FAIL fabric::open: %s: %s", f.error().message().c_str(),
            uet::fabric::last_error().c_str());
        return false;
    }
    fab = std::move(f.value());
    dom = fab.open_domain().value();
    cq = dom.open_cq(4096).value();
    return true;
}

bool side::open_endpoint(const phase_plan& p, std::uint32_t job) {
    av = dom.open_av().value();
    uet::endpoint_attr ea;
    ea.job_id = job;
    if (p.roce)
        ea.transport = uet::transport::roce_rc;
    else
        ea.mode = p.mode;
    auto e = dom.open_endpoint(ea, cq, av);
    if (!e) {
        say("FAIL open_endpoint(%s): %s: %s", p.name, e.error().message().c_str(),
            uet::fabric::last_error().c_str());
        return false;
    }
    ep = std::move(e.value());
    const auto addr = uet::parse_endpoint_address(o.peer + (p.roce ? ":4791" : ":4793"));
    if (!addr) {
        say("FAIL bad --peer %s", o.peer.c_str());
        return false;
    }
    peer = av.insert(*addr).value();
    return true;
}

void side::close_endpoint() {
    ep.close();
    // Cancelled operations of the closed endpoint: nothing of them is wanted any more.
    uet::completion c;
    while (cq.size() > 0) {
        if (!cq.read_error(c)) cq.read(std::span<uet::completion>(&c, 1));
    }
}

std::optional<uet::completion> side::next(std::chrono::milliseconds slice) {
    uet::completion c;
    const std::error_code ec = cq.wait_for(c, slice);
    if (ec == uet::errc::again && !c.error) return std::nullopt;
    return c;
}

}  // namespace itest_api

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const itest_api::options o = itest_api::parse_options(argc, argv);
    return o.role == "server" ? itest_api::run_server(o) : itest_api::run_client(o);
}
