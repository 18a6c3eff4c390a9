// uet-perf: a perftest-style benchmark over libuet's public API (see docs/uet-perf.md).
#include <cstdio>

#include "options.hpp"
#include "runner.hpp"

int main(int argc, char** argv) {
    const auto parsed = uet::perf::parse_options(argc, argv);
    if (parsed.s.help) {
        std::fputs(uet::perf::usage().c_str(), stdout);
        return 0;
    }
    if (!parsed.error.empty()) {
        std::fprintf(stderr, "uet-perf: %s\n%s", parsed.error.c_str(), uet::perf::usage().c_str());
        return 2;
    }
    return uet::perf::run(parsed.s);
}
