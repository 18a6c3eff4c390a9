// uet-dump's output forms: one summary line per packet, every field (-v), or one JSON object per
// packet.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "wire/dissect.hpp"

namespace uet::dump {

enum class output_format { summary, verbose, json };

struct packet_record {
    std::uint64_t number;        // 1-based, in capture order
    std::uint64_t timestamp_us;  // since the epoch
    std::uint32_t wire_length;   // length on the wire (may exceed the captured bytes)
    std::span<const std::uint8_t> bytes;
};

class printer {
  public:
    printer(output_format format, const wire::dissect_options& options, std::FILE* out)
        : format_(format), options_(options), out_(out) {}

    // Dissects and prints one packet; returns true when it decoded cleanly.
    bool print(const packet_record& rec);

  private:
    void print_text(const packet_record& rec, const wire::dissection& d, wire::reject_reason r);
    void print_json(const packet_record& rec, const wire::dissection& d, wire::reject_reason r);

    output_format format_;
    wire::dissect_options options_;
    std::FILE* out_;
    std::string line_;
};

// JSON string literal with quotes and escapes (exposed for the tests).
std::string json_quote(std::string_view s);

}  // namespace uet::dump
