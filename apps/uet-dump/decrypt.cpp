#include "decrypt.hpp"

#include <limits>

namespace uet::dump {

decryptor::decryptor(const tss::key256& key, const decrypt_options& options)
    : key_(key), options_(options) {}

tss::secure_domain* decryptor::domain_for(std::uint32_t sdi) {
    if (auto* d = sublayer_.find_domain(sdi)) return d;
    tss::domain_config cfg;
    cfg.sdi = sdi;
    cfg.mode = options_.mode;
    // Only sealing reads the local SSI; client/server mode requires one to exist.
    if (cfg.mode == tss::domain_mode::client_server) cfg.ssi = 0;
    if (options_.rekey_shift) {
        cfg.rekey_mask = tss::tsc_max & ~((std::uint64_t{1} << options_.rekey_shift) - 1);
        cfg.rekey_shift = options_.rekey_shift;
    }
    cfg.failure_limit = std::numeric_limits<std::uint32_t>::max();
    cfg.max_sources = 4096;
    auto* d = sublayer_.add_domain(cfg);
    if (d) {
        d->set_key(false, key_.view());
        d->set_key(true, key_.view());
    }
    return d;
}

decryptor::result decryptor::open(std::span<const std::uint8_t> frame, const wire::tss_header& h) {
    result res;
    auto* d = domain_for(h.sdi);
    if (!d) {
        res.reason = tss::drop_reason::unknown_sdi;  // more domains than the sublayer holds
        return res;
    }
    d->set_epoch(h.epoch);
    buf_.assign(frame.begin(), frame.end());
    std::span<std::uint8_t> plain;
    res.reason = sublayer_.open_frame(buf_, plain);
    if (res.reason == tss::drop_reason::none) res.plain = plain;
    return res;
}

}  // namespace uet::dump
