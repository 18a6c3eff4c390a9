// Command-line options the two integration peers (uet-itest-peer, uet-itest-engine-peer) share:
// the port, the addresses, the files they coordinate through, and the loop switches.
#pragma once

#include <cstdint>
#include <string>

namespace uet::itest {

struct common_options {
    std::string dev, name = "peer", eal, done_file, serve_until, progress_file;
    std::uint32_t ip = 0, peer = 0, gw = 0;
    std::uint8_t prefix = 24;
    std::uint32_t mtu = 1500, garbage = 0, timeout_s = 60;
    bool backoff = true, jumbo = false;
};

// Walks argv; value() and number() take the next argument or exit with a usage message.
class arg_cursor {
  public:
    arg_cursor(int argc, char** argv, const char* program)
        : argc_(argc), argv_(argv), program_(program) {}
    bool next() { return ++i_ < argc_; }
    std::string key() const { return argv_[i_]; }
    std::string value();
    std::uint32_t number();
    [[noreturn]] void usage(const std::string& why) const;

  private:
    int argc_;
    char** argv_;
    const char* program_;
    int i_ = 0;
};

std::uint32_t parse_ip(const std::string& s, const arg_cursor& args);

// Consumes `key` when it is a common option; false when the caller must handle it.
bool parse_common_option(const std::string& key, arg_cursor& args, common_options& o);

// Exits with a usage message unless --dev, --ip and --peer were given.
void require_addresses(const common_options& o, const arg_cursor& args);

}  // namespace uet::itest
