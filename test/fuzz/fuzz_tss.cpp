// libFuzzer: lib/tss's open path on hostile frames (the seeds are frames sealed with the known
// key, which the fuzzer mutates), and seal + open round trips of arbitrary frames, which must
// give the frame back (tss_fuzz.hpp gives the input format).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tss_fuzz.hpp"
#include "wire/frame.hpp"

namespace {

struct state {
    uet::tss::sublayer tx, rx;
    std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(70000);
    state() {
        uet::tss::fuzz::add_domains(tx);
        uet::tss::fuzz::add_domains(rx);
        // The seeds were sealed with TSCs from 1 under the same sources: seal above them, so a
        // round trip is never a replay of a seed the receiver opened.
        for (std::uint32_t sdi : {7u, 9u})
            tx.find_domain(sdi)->advance_tsc(std::uint64_t{1} << 40);
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static state s;
    if (size < 1 || size > 65536) return 0;
    const std::span<const std::uint8_t> frame(data + 1, size - 1);
    std::span<std::uint8_t> plain;
    if (data[0] == uet::tss::fuzz::open_as_received) {
        std::memcpy(s.buf.data(), frame.data(), frame.size());
        s.rx.open_frame(std::span(s.buf).first(frame.size()), plain);
        return 0;
    }
    uet::tss::secure_domain& d = *s.tx.find_domain(data[0] & 1 ? 7 : 9);
    const std::size_t n = s.tx.seal_frame(d, frame, s.buf);
    if (n == 0) return 0;
    const uet::tss::drop_reason r = s.rx.open_frame(std::span(s.buf).first(n), plain);
    // Each new source address takes a replay window: once the receiver tracks as many sources
    // as it may, a frame from one more is refused, and only then.
    const uet::tss::secure_domain& rd = *s.rx.find_domain(d.sdi());
    if (r == uet::tss::drop_reason::too_many_sources && rd.sources() == rd.config().max_sources)
        return 0;
    if (r != uet::tss::drop_reason::none) std::abort();
    // As sealed, but for Ethernet padding (not sealed) and the UDP checksum (0 once opened).
    uet::wire::l2l4_view v;
    if (uet::wire::parse_l2l4(frame, v) != uet::wire::reject_reason::none) std::abort();
    const std::size_t len =
        static_cast<std::size_t>(v.l4_payload.data() - frame.data()) + v.l4_payload.size();
    const std::size_t udp_sum =
        static_cast<std::size_t>(v.ip_packet.data() - frame.data()) + v.ip.header_length() + 6;
    if (plain.size() != len || std::memcmp(plain.data(), frame.data(), udp_sum) != 0 ||
        std::memcmp(plain.data() + udp_sum + 2, frame.data() + udp_sum + 2, len - udp_sum - 2))
        std::abort();
    return 0;
}
