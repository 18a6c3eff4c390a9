#include "tss/sublayer.hpp"

#include <algorithm>
#include <cstring>

#include "wire/bytes.hpp"
#include "wire/frame.hpp"
#include "wire/uet_tss.hpp"

namespace uet::tss {

namespace {

constexpr std::size_t max_aad = 12 + wire::tss_header::wire_size_with_ssi;

// Where the headers a seal or open rewrites sit in a frame, UET over UDP or over IP.
struct frame_layout {
    std::size_t ip = 0;   // IPv4 header
    std::size_t l4 = 0;   // UDP header, or the entropy header over IP
    bool udp = false;     // UET over UDP (else over IP protocol 253)
    std::size_t tss = 0;  // where the TSS header is (sealed) or goes (plain): after UDP or entropy
    std::span<const std::uint8_t> body;  // from there to the end of the IP packet
    // The entropy header's 4 bytes for the AAD: over IP the header itself; over UDP, which has
    // none, the UDP source port (where UDP carries the entropy) then 16 zero bits.
    std::array<std::uint8_t, wire::entropy_header::wire_size> entropy{};
};

bool parse_uet(std::span<const std::uint8_t> frame, wire::l2l4_view& v, frame_layout& at) {
    if (wire::parse_l2l4(frame, v) != wire::reject_reason::none ||
        v.l3 != wire::l2l4_view::l3_kind::ipv4)
        return false;
    at.ip = static_cast<std::size_t>(v.ip_packet.data() - frame.data());
    at.l4 = at.ip + v.ip.header_length();
    at.udp = v.udp.has_value();
    std::span<const std::uint8_t> body = v.l4_payload;
    if (at.udp) {
        wire::store_be16(at.entropy.data(), v.udp->sport);
    } else {
        if (v.ip.protocol != wire::ip_proto_uet || body.size() < at.entropy.size()) return false;
        std::memcpy(at.entropy.data(), body.data(), at.entropy.size());
        body = body.subspan(at.entropy.size());
    }
    at.tss = static_cast<std::size_t>(body.data() - frame.data());
    at.body = body;
    return true;
}

// The IPv4 total length and UDP length grow (or shrink) by delta; the IPv4 checksum follows.
void resize_l3l4(std::uint8_t* frame, const frame_layout& at, const wire::l2l4_view& v, int delta) {
    wire::store_be16(frame + at.ip + 2, static_cast<std::uint16_t>(v.ip.total_length + delta));
    wire::ipv4_fill_checksum({frame + at.ip, v.ip.header_length()});
    if (at.udp)
        wire::store_be16(frame + at.l4 + 4, static_cast<std::uint16_t>(v.udp->length + delta));
}

// IV = (SSI or IPv4 source) || epoch | TSC, XORed with the packet key's mask.
std::array<std::uint8_t, iv_size> make_iv(std::uint32_t source, const wire::tss_header& h,
                                          const packet_key& k) {
    std::array<std::uint8_t, iv_size> iv;
    wire::store_be32(iv.data(), source);
    wire::store_be64(iv.data() + 4, (std::uint64_t{h.epoch} << 48) | h.tsc);
    const auto mask = k.iv_mask.view();
    for (std::size_t i = 0; i < iv_size; ++i)
        iv[i] ^= mask[i];
    return iv;
}

// AAD = IPv4 source and destination || entropy header || TSS header.
std::span<const std::uint8_t> make_aad(std::array<std::uint8_t, max_aad>& aad,
                                       const wire::l2l4_view& v, const frame_layout& at,
                                       std::span<const std::uint8_t> tss) {
    wire::store_be32(aad.data(), v.ip.src);
    wire::store_be32(aad.data() + 4, v.ip.dst);
    std::memcpy(aad.data() + 8, at.entropy.data(), at.entropy.size());
    std::memcpy(aad.data() + 12, tss.data(), tss.size());
    return std::span(aad).first(12 + tss.size());
}

}  // namespace

std::string_view name(drop_reason r) noexcept {
    static constexpr std::string_view names[] = {
        "none",     "malformed",   "truncated",        "not_tss",      "unknown_sdi",
        "disabled", "missing_ssi", "stale_epoch",      "future_epoch", "no_key",
        "replay",   "bad_icv",     "too_many_sources", "crypto_error"};
    static_assert(std::size(names) == drop_reason_count);
    return names[static_cast<std::size_t>(r)];
}

std::string_view name(seal_error e) noexcept {
    static constexpr std::string_view names[] = {"none",   "malformed",     "no_room",
                                                 "no_key", "tsc_exhausted", "crypto_error"};
    static_assert(std::size(names) == seal_error_count);
    return names[static_cast<std::size_t>(e)];
}

std::size_t tss_header_size(const secure_domain& d) noexcept {
    return d.config().ssi ? wire::tss_header::wire_size_with_ssi : wire::tss_header::wire_size;
}

std::size_t seal_overhead(const secure_domain& d) noexcept {
    return tss_header_size(d) + icv_size;
}

sublayer::sublayer(std::size_t max_domains) : max_domains_(max_domains), prf_(key_size) {
    domains_.reserve(max_domains);
}

secure_domain* sublayer::add_domain(const domain_config& cfg) {
    if (domains_.size() >= max_domains_ || find_domain(cfg.sdi)) return nullptr;
    domains_.push_back(std::make_unique<secure_domain>(cfg));
    return domains_.back().get();
}

bool sublayer::remove_domain(std::uint32_t sdi) noexcept {
    auto it = std::find_if(domains_.begin(), domains_.end(),
                           [sdi](const auto& d) { return d->sdi() == sdi; });
    if (it == domains_.end()) return false;
    domains_.erase(it);
    return true;
}

secure_domain* sublayer::find_domain(std::uint32_t sdi) noexcept {
    for (auto& d : domains_)
        if (d->sdi() == sdi) return d.get();
    return nullptr;
}

seal_error sublayer::seal_checked(secure_domain& d, std::span<const std::uint8_t> plain,
                                  std::span<std::uint8_t> out, std::size_t& size) noexcept {
    wire::l2l4_view v;
    frame_layout at;
    if (!parse_uet(plain, v, at)) return seal_error::malformed;
    wire::tss_header h{.an = d.tx_an_, .sdi = d.sdi(), .ssi = d.cfg_.ssi, .epoch = d.epoch()};
    const std::size_t th = wire::encoded_size(h);
    const std::size_t n = at.body.size();
    const std::size_t total = at.tss + th + n + icv_size;
    if (out.size() < total || v.ip.total_length + th + icv_size > 0xffff)
        return seal_error::no_room;
    if (!d.has_key(h.an)) return seal_error::no_key;
    if (d.next_tsc_ > tsc_max) return seal_error::tsc_exhausted;
    h.tsc = d.next_tsc_++;

    const std::uint32_t source = h.ssi ? *h.ssi : v.ip.src;
    const std::uint64_t tag = secure_domain::source_tag(source, h.ssi.has_value());
    const key_context kc{.epoch = h.epoch, .rekey = d.rekey_of(h.tsc), .source = source};
    auto& k = d.tx_key_;
    if (k.tag != tag || k.an != h.an || !(k.ctx == kc)) {
        ++stats_.kdf_runs;
        k.tag = 0;
        if (!derive_packet_key(prf_, d.keys_[h.an].view(), d.cfg_.mode, kc, k.key))
            return seal_error::crypto_error;
        k.tag = tag;
        k.an = h.an;
        k.ctx = kc;
    }

    std::uint8_t* o = out.data();
    // memmove: sealing in place, the headers move th bytes down over the room left for them.
    std::memmove(o, plain.data(), at.tss);
    wire::encode(h, {o + at.tss, th});
    resize_l3l4(o, at, v, static_cast<int>(th + icv_size));
    std::array<std::uint8_t, max_aad> aad_bytes;
    const auto aad = make_aad(aad_bytes, v, at, {o + at.tss, th});
    const auto iv = make_iv(source, h, k.key);
    std::uint8_t* ct = o + at.tss + th;
    if (!tx_.seal(k.key.key.view(), iv, aad, at.body, ct,
                  std::span<std::uint8_t, icv_size>(ct + n, icv_size)))
        return seal_error::crypto_error;
    if (at.udp && v.udp->checksum != 0) {
        const std::span<std::uint8_t> datagram(o + at.l4, total - at.l4);
        wire::store_be16(o + at.l4 + 6, 0);
        wire::store_be16(o + at.l4 + 6, wire::udp_checksum(v.ip.src, v.ip.dst, datagram));
    }
    size = total;
    stats_.sealed_bytes += n;
    return seal_error::none;
}

std::size_t sublayer::seal_frame(secure_domain& d, std::span<const std::uint8_t> plain,
                                 std::span<std::uint8_t> out, seal_error* err) noexcept {
    std::size_t size = 0;
    const seal_error e = seal_checked(d, plain, out, size);
    if (err) *err = e;
    if (e != seal_error::none) {
        ++stats_.seal_errors[static_cast<std::size_t>(e)];
        return 0;
    }
    ++stats_.sealed;
    return size;
}

drop_reason sublayer::open_checked(std::span<const std::uint8_t> frame, std::uint8_t* into,
                                   std::size_t into_size, std::span<std::uint8_t>& plain,
                                   const secure_domain*& domain) noexcept {
    wire::l2l4_view v;
    frame_layout at;
    if (!parse_uet(frame, v, at)) return drop_reason::malformed;
    wire::tss_header h;
    switch (wire::decode(at.body, h)) {
        case wire::reject_reason::none:
            break;
        case wire::reject_reason::truncated:
            return drop_reason::truncated;
        default:
            return drop_reason::not_tss;
    }
    const std::size_t th = wire::encoded_size(h);
    if (at.body.size() < th + icv_size) return drop_reason::truncated;
    secure_domain* d = find_domain(h.sdi);
    if (!d) return drop_reason::unknown_sdi;
    if (d->disabled()) return drop_reason::disabled;
    if (d->cfg_.mode == domain_mode::client_server && !h.ssi) return drop_reason::missing_ssi;
    switch (d->check_epoch(h.epoch)) {
        case secure_domain::epoch_check::ok:
            break;
        case secure_domain::epoch_check::stale:
            return drop_reason::stale_epoch;
        case secure_domain::epoch_check::future:
            return drop_reason::future_epoch;
    }
    if (!d->has_key(h.an)) return drop_reason::no_key;

    const std::uint32_t source = h.ssi ? *h.ssi : v.ip.src;
    const std::uint64_t tag = secure_domain::source_tag(source, h.ssi.has_value());
    const std::uint64_t seq = (std::uint64_t{h.epoch} << 48) | h.tsc;
    replay_window* window = d->find_window(tag);
    if (window && window->rejects(seq)) return drop_reason::replay;

    // A key derived for a frame that then fails authentication is not kept: forged frames
    // cannot push the keys of real peers out of the cache.
    const key_context kc{.epoch = h.epoch, .rekey = d->rekey_of(h.tsc), .source = source};
    const packet_key* key = d->find_key(tag, h.an, kc);
    packet_key fresh;
    if (key) {
        ++stats_.key_cache_hits;
    } else {
        ++stats_.kdf_runs;
        if (!derive_packet_key(prf_, d->keys_[h.an].view(), d->cfg_.mode, kc, fresh))
            return drop_reason::crypto_error;
    }
    const packet_key& k = key ? *key : fresh;

    std::array<std::uint8_t, max_aad> aad_bytes;
    const auto aad = make_aad(aad_bytes, v, at, at.body.first(th));
    const auto iv = make_iv(source, h, k);
    const std::uint8_t* ct = frame.data() + at.tss + th;
    const std::size_t n = at.body.size() - th - icv_size;
    // In place, the plaintext frame starts th bytes in (its body where the ciphertext was);
    // else at `into`.
    std::uint8_t* base = into ? into : const_cast<std::uint8_t*>(frame.data()) + th;
    if (into && into_size < at.tss + n) return drop_reason::malformed;
    if (!rx_.open(k.key.view(), iv, aad, {ct, n}, base + at.tss,
                  std::span<const std::uint8_t, icv_size>(ct + n, icv_size))) {
        ++d->failures_;
        return drop_reason::bad_icv;
    }
    if (!key) d->store_key(tag, h.an, kc, fresh);
    if (!window) window = d->add_window(tag);
    if (!window) return drop_reason::too_many_sources;
    window->accept(seq);

    // Back to the frame as sealed: the headers before the TSS header move up over it.
    std::memmove(base, frame.data(), at.tss);
    resize_l3l4(base, at, v, -static_cast<int>(th + icv_size));
    if (at.udp) wire::store_be16(base + at.l4 + 6, 0);
    plain = {base, at.tss + n};
    domain = d;
    stats_.opened_bytes += n;
    return drop_reason::none;
}

drop_reason sublayer::open_frame(std::span<std::uint8_t> frame, std::span<std::uint8_t>& plain,
                                 const secure_domain** domain) noexcept {
    return open_counted(frame, nullptr, 0, plain, domain);
}

drop_reason sublayer::open_frame_into(std::span<const std::uint8_t> frame,
                                      std::span<std::uint8_t> into, std::span<std::uint8_t>& plain,
                                      const secure_domain** domain) noexcept {
    if (into.empty()) {
        plain = {};
        ++stats_.drops[static_cast<std::size_t>(drop_reason::malformed)];
        return drop_reason::malformed;
    }
    return open_counted(frame, into.data(), into.size(), plain, domain);
}

drop_reason sublayer::open_counted(std::span<const std::uint8_t> frame, std::uint8_t* into,
                                   std::size_t into_size, std::span<std::uint8_t>& plain,
                                   const secure_domain** domain) noexcept {
    const secure_domain* d = nullptr;
    const drop_reason r = open_checked(frame, into, into_size, plain, d);
    if (domain) *domain = d;
    if (r != drop_reason::none) {
        ++stats_.drops[static_cast<std::size_t>(r)];
        plain = {};
        return r;
    }
    ++stats_.opened;
    return r;
}

std::size_t sublayer::seal_burst(secure_domain& d, std::span<seal_item> items) noexcept {
    std::size_t ok = 0;
    for (auto& it : items) {
        it.size = seal_frame(d, it.plain, it.out, &it.error);
        ok += it.size != 0;
    }
    return ok;
}

std::size_t sublayer::open_burst(std::span<open_item> items) noexcept {
    std::size_t ok = 0;
    for (auto& it : items) {
        it.reason = open_frame(it.frame, it.plain, &it.domain);
        ok += it.reason == drop_reason::none;
    }
    return ok;
}

}  // namespace uet::tss
