// libFuzzer: whole Ethernet frames through dissect(), the path uet-dump takes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "dissect.hpp"
#include "null_visitor.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    uet::wire::dissection d;
    uet::wire::dissect({data, size}, d);
    uet::fuzz::null_visitor v;
    uet::wire::visit(d, v);
    std::string line;
    uet::wire::summarize(d, line);
    return 0;
}
