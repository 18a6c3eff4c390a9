// uet-dump --key: opens TSS frames of a capture with the secure domain key, so their PDS and SES
// headers can be printed. A capture is a record, not a stream under attack: the domain takes the
// epoch of each frame and never stops accepting, but authentication and the replay window are
// checked as a receiver would, so a forged or duplicated frame shows as such.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tss/secret.hpp"
#include "tss/sublayer.hpp"
#include "wire/uet_tss.hpp"

namespace uet::dump {

struct decrypt_options {
    tss::domain_mode mode = tss::domain_mode::cluster;
    std::uint8_t rekey_shift = 0;  // keys roll every 2^shift packets; 0: never
};

class decryptor {
  public:
    decryptor(const tss::key256& key, const decrypt_options& options);

    struct result {
        tss::drop_reason reason = tss::drop_reason::none;
        std::span<const std::uint8_t> plain;  // the frame as sealed, valid until the next open
    };
    // Opens a copy of frame, whose TSS header is h.
    result open(std::span<const std::uint8_t> frame, const wire::tss_header& h);

  private:
    tss::secure_domain* domain_for(std::uint32_t sdi);

    tss::key256 key_;
    decrypt_options options_;
    tss::sublayer sublayer_;
    std::vector<std::uint8_t> buf_;
};

}  // namespace uet::dump
