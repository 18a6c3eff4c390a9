// libFuzzer: frames into two RoCEv2 engines whose QPs were connected by hand, with work posted
// both ways, so that fuzzed requests reach a responder and fuzzed responses a completer.
// Input: one mode byte (bit 0: mend each frame, bit 1: out-of-order mode), then records of
// {flags (bit 0: to A, else to B; bit 1: carry one round of the engines' own traffic after
// it), 2-byte length, frame}. Mending rewrites the addresses, lengths, IPv4 checksum,
// destination QP and ICRC so that a mutated frame passes the checks before the QP. Traps on a
// work request completed twice, a completion for nothing posted, or a receive completed twice.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "roce_fuzz.hpp"
#include "wire/icrc.hpp"
#include "wire/ipv4.hpp"

namespace {

using namespace uet::roce;
using namespace uet::roce::test;

// Rewrites a frame to `to` so that it passes the engine's checks up to the QP: IPv4 from the
// QP's peer, UDP to the RoCEv2 port, lengths that match, the QP's number (unless it names the
// CM's QP 1), and a good ICRC.
void mend(std::vector<std::uint8_t>& f, const engine& to, std::uint32_t from_ip, qpn_t qpn) {
    constexpr std::size_t eth = 14, ip = 20, udp = 8, bth = 12;
    if (f.size() < eth + ip + udp + bth + uet::wire::icrc_size) return;
    f[12] = 0x08;
    f[13] = 0x00;
    std::uint8_t* h = f.data() + eth;
    const std::size_t ip_len = f.size() - eth;
    h[0] = 0x45;
    h[2] = static_cast<std::uint8_t>(ip_len >> 8);
    h[3] = static_cast<std::uint8_t>(ip_len);
    h[6] &= 0x40;  // no fragments
    h[7] = 0;
    h[9] = 17;
    for (int i = 0; i < 4; ++i) {
        h[12 + i] = static_cast<std::uint8_t>(from_ip >> (24 - 8 * i));
        h[16 + i] = static_cast<std::uint8_t>(to.config().ip >> (24 - 8 * i));
    }
    h[10] = h[11] = 0;
    const std::uint16_t sum = uet::wire::internet_checksum(std::span(h, ip));
    h[10] = static_cast<std::uint8_t>(sum >> 8);
    h[11] = static_cast<std::uint8_t>(sum);
    std::uint8_t* u = h + ip;
    const std::size_t udp_len = ip_len - ip;
    u[2] = static_cast<std::uint8_t>(to.config().udp_port >> 8);
    u[3] = static_cast<std::uint8_t>(to.config().udp_port);
    u[4] = static_cast<std::uint8_t>(udp_len >> 8);
    u[5] = static_cast<std::uint8_t>(udp_len);
    u[6] = u[7] = 0;
    std::uint8_t* b = u + udp;
    const qpn_t dest = (b[5] << 16 | b[6] << 8 | b[7]) == 1 ? 1 : qpn;
    b[5] = static_cast<std::uint8_t>(dest >> 16);
    b[6] = static_cast<std::uint8_t>(dest >> 8);
    b[7] = static_cast<std::uint8_t>(dest);
    const std::size_t end = f.size() - uet::wire::icrc_size;
    uet::wire::store_le32(f.data() + end, uet::wire::roce_icrc(std::span(h, end - eth)));
}

// Counts each side's completions; traps on what verbs never gives.
struct ledger {
    std::vector<std::uint8_t> completed;  // by wr_id
    std::size_t receives_posted = 0;

    void poll(engine& e) {
        work_completion wc[16];
        for (std::size_t n; (n = e.poll_completions(wc)) != 0;)
            for (std::size_t i = 0; i < n; ++i)
                if (wc[i].wr_id >= completed.size() || completed[wc[i].wr_id]++ != 0)
                    __builtin_trap();
    }
    void check_arrivals(const memory_target& m) const {
        if (m.arrivals.size() > receives_posted) __builtin_trap();
        std::vector<std::uint8_t> seen(receives_posted);
        for (const auto& a : m.arrivals)
            if (a.cookie >= seen.size() || seen[a.cookie]++ != 0) __builtin_trap();
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace uet::roce::fuzz;
    if (size < 1) return 0;
    const std::uint8_t mode = data[0];
    fuzz_pair fp(mode);
    test::engine_pair& p = fp.p;
    if (!p.connected) __builtin_trap();
    ledger la, lb;
    la.completed.resize(fp.posted_a);
    lb.completed.resize(fp.posted_b);
    la.receives_posted = lb.receives_posted = fuzz_pair::receives;
    p.step();

    for_each_record(std::span(data + 1, size - 1),
                    [&](bool to_a, bool carry, std::vector<std::uint8_t>& f) {
                        engine& to = to_a ? p.A : p.B;
                        if (mode & mode_mend) mend(f, to, to_a ? ip_b : ip_a, to_a ? p.a : p.b);
                        const std::span<const std::uint8_t> one[] = {f};
                        to.receive_burst(one, p.now);
                        if (carry) p.step();
                        la.poll(p.A);
                        lb.poll(p.B);
                    });
    // The engines settle: from timer to timer, resends go and errors flush.
    for (int i = 0; i < 64; ++i) {
        const std::uint64_t next = std::min(p.A.next_deadline(), p.B.next_deadline());
        if (next == std::numeric_limits<std::uint64_t>::max()) break;
        p.now = std::max(p.now, next);
        p.step();
        la.poll(p.A);
        lb.poll(p.B);
    }
    la.check_arrivals(p.mem_a);
    lb.check_arrivals(p.mem_b);
    return 0;
}
