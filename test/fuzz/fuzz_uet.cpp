// libFuzzer: the UET decoders (entropy, TSS, PDS, SES) on the bytes after UDP, in both
// encapsulations.
#include <cstddef>
#include <cstdint>
#include <string>

#include "null_visitor.hpp"
#include "wire/uet_packet.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::span<const std::uint8_t> in(data, size);
    for (bool entropy : {false, true}) {
        uet::wire::uet_packet p;
        if (uet::wire::decode_uet(in, entropy, p) != uet::wire::reject_reason::none) continue;
        uet::fuzz::null_visitor v;
        uet::wire::visit(p, v);
        std::string line;
        uet::wire::summarize(p, line);
    }
    return 0;
}
