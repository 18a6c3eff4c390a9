// Transport security of an endpoint (endpoint_attr::tss): the key holder of the public API,
// the checks of the attributes, the security sublayer's wrapper around the engine, and its
// counters.
#include <openssl/crypto.h>

#include <string>

#include "api/api_impl.hpp"
#include "tss/key_file.hpp"

namespace uet {

tss_key::tss_key(std::span<const std::byte> bytes) : bytes_(bytes.begin(), bytes.end()) {}

tss_key& tss_key::operator=(const tss_key& o) {
    if (this != &o) {
        clear();
        bytes_.assign(o.bytes_.begin(), o.bytes_.end());
    }
    return *this;
}

tss_key& tss_key::operator=(tss_key&& o) noexcept {
    if (this != &o) {
        clear();
        bytes_ = std::move(o.bytes_);
        o.bytes_.clear();
    }
    return *this;
}

void tss_key::clear() noexcept {
    if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
    bytes_.clear();
}

namespace {

std::optional<tss_key> as_tss_key(const std::optional<tss::key256>& k) {
    if (!k) return std::nullopt;
    return tss_key(std::as_bytes(std::span(k->view())));
}

}  // namespace

std::optional<tss_key> tss_key::from_hex(std::string_view text) {
    return as_tss_key(tss::parse_hex_key(text));
}

std::optional<tss_key> tss_key::from_file(const std::string& path, std::string& error) {
    return as_tss_key(tss::read_key_file(path, error));
}

static_assert(tss_drop_count + 1 == tss::drop_reason_count);
static_assert(tss_key_size == tss::key_size);

const char* to_string(tss_drop r) noexcept {
    // tss::drop_reason is tss_drop with `none` in front.
    return tss::name(static_cast<tss::drop_reason>(static_cast<int>(r) + 1)).data();
}

namespace detail {

std::string resolve_tss(const endpoint_attr& attr, std::uint32_t mtu, tss::domain_config& cfg,
                        tss::key256& key) {
    const tss_attr& t = attr.tss;
    if (t.sdi > 0xffffff)
        return "endpoint_attr.tss.sdi " + std::to_string(t.sdi) + " is over 24 bits";
    if (t.mode != tss_mode::cluster && t.mode != tss_mode::client_server)
        return "endpoint_attr.tss.mode " + std::to_string(static_cast<int>(t.mode)) +
               " is neither cluster nor client_server";
    if (t.mode == tss_mode::client_server && !t.ssi)
        return "endpoint_attr.tss.ssi is required in client_server mode";
    cfg = {};
    cfg.sdi = t.sdi;
    cfg.mode =
        t.mode == tss_mode::cluster ? tss::domain_mode::cluster : tss::domain_mode::client_server;
    cfg.epoch = t.epoch;
    cfg.ssi = t.ssi;
    const std::size_t overhead = tss::seal_overhead(cfg);
    if (mtu <= overhead + 64 || attr.inject_size > mtu - overhead)
        return "fabric_attr.mtu " + std::to_string(mtu) + " less the TSS header and ICV (" +
               std::to_string(overhead) + " bytes) is below 64 or endpoint_attr.inject_size";
    if (!t.key.empty() && t.key_provider)
        return "endpoint_attr.tss: set key or key_provider, not both";
    if (t.key_provider) {
        std::array<std::byte, tss_key_size> got{};
        const bool ok = t.key_provider(t.sdi, t.epoch, got);
        key.assign(std::span<const std::uint8_t, tss::key_size>(
            reinterpret_cast<const std::uint8_t*>(got.data()), tss::key_size));
        OPENSSL_cleanse(got.data(), got.size());
        if (!ok)
            return "endpoint_attr.tss.key_provider gave no key for SDI " + std::to_string(t.sdi) +
                   " epoch " + std::to_string(t.epoch);
        return {};
    }
    if (t.key.empty()) return "endpoint_attr.tss.key is empty and no tss.key_provider is set";
    if (t.key.bytes().size() != tss_key_size)
        return "endpoint_attr.tss.key has " + std::to_string(t.key.bytes().size()) +
               " bytes; AES-256 takes " + std::to_string(tss_key_size);
    key.assign(std::span<const std::uint8_t, tss::key_size>(
        reinterpret_cast<const std::uint8_t*>(t.key.bytes().data()), tss::key_size));
    return {};
}

void secure_engine_config(engine_config& c, const tss::domain_config& cfg) noexcept {
    c.mtu_payload -= static_cast<std::uint32_t>(tss::seal_overhead(cfg));
    // Sealing reads each frame whole: its payload cannot follow it from registered memory.
    c.zero_copy = nullptr;
    c.reference_min_bytes = 0;
}

void endpoint_impl::secure(const tss::domain_config& cfg, const tss::key256& key) {
    secured = std::make_unique<tss::secure_engine>(*eng, cfg, key.view(), frame_header_room + mtu);
    // attr() keeps no key: the sublayer's copy is the only one, wiped when it goes.
    attr.tss.key.clear();
}

void add_tss_counters(const tss::secure_engine& s, endpoint_counters& c) noexcept {
    const tss::counters t = s.stats();
    c.tss.sealed = t.sealed;
    c.tss.opened = t.opened;
    c.tss.seal_failures = 0;
    for (std::uint64_t e : t.seal_errors)
        c.tss.seal_failures += e;
    for (std::size_t i = 0; i < tss_drop_count; ++i)
        c.tss.drops[i] = t.drops[i + 1];
}

}  // namespace detail
}  // namespace uet
