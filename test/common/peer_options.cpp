#include "peer_options.hpp"

#include <arpa/inet.h>

#include <cstdio>
#include <cstdlib>

namespace uet::itest {

std::string arg_cursor::value() {
    if (i_ + 1 >= argc_) usage("missing value for " + std::string(argv_[i_]));
    return argv_[++i_];
}

std::uint32_t arg_cursor::number() {
    return static_cast<std::uint32_t>(std::stoul(value()));
}

void arg_cursor::usage(const std::string& why) const {
    std::fprintf(stderr, "%s: %s (see the comment at the top of its source)\n", program_,
                 why.c_str());
    std::exit(2);
}

std::uint32_t parse_ip(const std::string& s, const arg_cursor& args) {
    in_addr a{};
    if (inet_pton(AF_INET, s.c_str(), &a) != 1) args.usage("bad IPv4 address " + s);
    return ntohl(a.s_addr);
}

bool parse_common_option(const std::string& k, arg_cursor& args, common_options& o) {
    if (k == "--dev") {
        o.dev = args.value();
    } else if (k == "--ip") {
        const std::string v = args.value();
        const auto slash = v.find('/');
        o.ip = parse_ip(v.substr(0, slash), args);
        if (slash != std::string::npos)
            o.prefix = static_cast<std::uint8_t>(std::stoul(v.substr(slash + 1)));
    } else if (k == "--peer") {
        o.peer = parse_ip(args.value(), args);
    } else if (k == "--gw") {
        o.gw = parse_ip(args.value(), args);
    } else if (k == "--mtu") {
        o.mtu = args.number();
    } else if (k == "--garbage") {
        o.garbage = args.number();
    } else if (k == "--timeout") {
        o.timeout_s = args.number();
    } else if (k == "--done-file") {
        o.done_file = args.value();
    } else if (k == "--progress-file") {
        o.progress_file = args.value();
    } else if (k == "--serve-until") {
        o.serve_until = args.value();
    } else if (k == "--no-backoff") {
        o.backoff = false;
    } else if (k == "--trust-link-mtu") {
        o.jumbo = true;
    } else if (k == "--eal") {
        o.eal = args.value();
    } else if (k == "--name") {
        o.name = args.value();
    } else {
        return false;
    }
    return true;
}

void require_addresses(const common_options& o, const arg_cursor& args) {
    if (o.dev.empty() || o.ip == 0 || o.peer == 0)
        args.usage("--dev, --ip and --peer are required");
}

}  // namespace uet::itest
