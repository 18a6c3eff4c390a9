// libFuzzer: lib/tss's open path on hostile frames (the seeds are frames sealed with the known
// key, which the fuzzer mutates), and seal + open round trips of arbitrary frames, which must
// give the frame back (tss_fuzz.hpp gives the input format). Every frame also goes through the
// receive path an endpoint uses, tss::secure_engine (open_frame_into, or the join of a frame in
// two pieces), which must agree with the in-place open frame for frame; and a frame that was
// opened, sent again with one bit flipped anywhere, must be refused.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "tss/secure_engine.hpp"
#include "tss_fuzz.hpp"
#include "wire/frame.hpp"

namespace {

using bytes = std::vector<std::uint8_t>;

// The engine inside a secure engine: keeps what it was given.
struct recorder final : uet::frame_engine {
    std::vector<bytes> got;
    void receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                       const uet::wire::frame_rest*, std::uint64_t) override {
        for (const auto& f : frames)
            got.emplace_back(f.begin(), f.end());
    }
    std::size_t transmit(std::uint64_t, std::span<uet::tx_frame>) override { return 0; }
    std::uint64_t next_deadline() const override { return UINT64_MAX; }
    void stop_data() noexcept override {}
};

struct state {
    uet::tss::sublayer tx, rx;
    bytes buf = bytes(70000);
    // The endpoint's receive path, one secure engine per domain (each holds one).
    std::array<recorder, 2> inner;
    std::array<std::unique_ptr<uet::tss::secure_engine>, 2> engines;
    state() {
        uet::tss::fuzz::add_domains(tx);
        uet::tss::fuzz::add_domains(rx);
        // The seeds were sealed with TSCs from 1 under the same sources: seal above them, so a
        // round trip is never a replay of a seed the receiver opened.
        for (std::uint32_t sdi : {7u, 9u})
            tx.find_domain(sdi)->advance_tsc(std::uint64_t{1} << 40);
        const auto key = uet::tss::fuzz::key();
        const auto cfgs = uet::tss::fuzz::domain_configs();
        for (std::size_t i = 0; i < engines.size(); ++i)
            engines[i] =
                std::make_unique<uet::tss::secure_engine>(inner[i], cfgs[i], key, 65536, 1);
    }
};

// frame opened in place by s.rx, and handed to both secure engines, in two pieces when from is
// less than its size (as a port gives a frame that spans two buffers: bytes [from, size) in the
// second): the engine of the domain that opened it must deliver the same plaintext, the other
// nothing, and nothing when the open failed.
uet::tss::drop_reason open_both(state& s, std::span<const std::uint8_t> frame, std::size_t from,
                                std::span<std::uint8_t>& plain) {
    from = std::min(from, frame.size());
    const bytes first(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(from));
    const bytes rest(frame.begin() + static_cast<std::ptrdiff_t>(from), frame.end());
    // The first piece's span has the whole frame's size; only its first `from` bytes are read.
    bytes whole_size(frame.size());
    std::copy(first.begin(), first.end(), whole_size.begin());
    const std::span<const std::uint8_t> f(whole_size);
    const uet::wire::frame_rest r{.at = rest.data(), .from = static_cast<std::uint32_t>(from)};
    for (std::size_t i = 0; i < s.engines.size(); ++i) {
        s.inner[i].got.clear();
        s.engines[i]->receive_burst(std::span(&f, 1), from < frame.size() ? &r : nullptr, 0);
    }

    std::copy(frame.begin(), frame.end(), s.buf.begin());
    const uet::tss::secure_domain* d = nullptr;
    const uet::tss::drop_reason why =
        s.rx.open_frame(std::span(s.buf).first(frame.size()), plain, &d);
    for (std::size_t i = 0; i < s.engines.size(); ++i) {
        const bool opened_here =
            why == uet::tss::drop_reason::none && d->sdi() == s.engines[i]->domain().sdi();
        if (s.inner[i].got.size() != (opened_here ? 1u : 0u)) std::abort();
        if (opened_here && (s.inner[i].got[0].size() != plain.size() ||
                            std::memcmp(s.inner[i].got[0].data(), plain.data(), plain.size())))
            std::abort();
    }
    return why;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static state s;
    if (size < 1 || size > 65536) return 0;
    const std::span<const std::uint8_t> frame(data + 1, size - 1);
    std::span<std::uint8_t> plain;
    // Where a frame is cut in two, when it is (as the input says).
    const std::size_t cut = std::size_t{data[size / 2]} << 8 | data[size - 1];
    if ((data[0] & ~uet::tss::fuzz::in_two_pieces) == uet::tss::fuzz::open_as_received) {
        open_both(s, frame, data[0] & uet::tss::fuzz::in_two_pieces ? cut % size : size, plain);
        return 0;
    }
    uet::tss::secure_domain& d = *s.tx.find_domain(data[0] & 1 ? 7 : 9);
    // Sealed twice (two TSCs): opened whole, then in two pieces; both must come back.
    for (const bool whole : {true, false}) {
        bytes sealed(70000);
        const std::size_t n = s.tx.seal_frame(d, frame, sealed);
        if (n == 0) return 0;
        sealed.resize(n);
        const uet::tss::drop_reason r = open_both(s, sealed, whole ? n : cut % n, plain);
        // Each new source address takes a replay window: once the receiver tracks as many
        // sources as it may, a frame from one more is refused, and only then.
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
        if (whole) continue;
        // The opened frame again, one bit flipped (where the input says): a replay if no ICV
        // covers the bit, else a frame that fails a check or authentication; never opened.
        const std::size_t bit = cut % (8 * n);
        sealed[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
        if (open_both(s, sealed, n, plain) == uet::tss::drop_reason::none) std::abort();
    }
    return 0;
}
