// uet-dump's output forms: one summary line per packet, every field (-v), or one JSON object per
// packet.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "decrypt.hpp"
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

    // With a decryptor, TSS frames are opened and printed as they were before sealing.
    void set_decryptor(decryptor* d) noexcept { decryptor_ = d; }

    // Dissects and prints one packet; returns true when it decoded cleanly (and, with a
    // decryptor, a TSS frame authenticated).
    bool print(const packet_record& rec);

    std::uint64_t authenticated() const noexcept { return authenticated_; }
    std::uint64_t failed_authentication() const noexcept { return failed_; }

  private:
    // What the decryptor made of the current packet, when it was a TSS frame.
    struct tss_outcome {
        bool tried = false;
        wire::tss_header header;
        tss::drop_reason reason = tss::drop_reason::none;
    };
    void append_tss_text(const tss_outcome& t);

    void print_text(const packet_record& rec, const wire::dissection& d, wire::reject_reason r,
                    const tss_outcome& t);
    void print_json(const packet_record& rec, const wire::dissection& d, wire::reject_reason r,
                    const tss_outcome& t);

    output_format format_;
    wire::dissect_options options_;
    std::FILE* out_;
    std::string line_;
    decryptor* decryptor_ = nullptr;
    std::uint64_t authenticated_ = 0, failed_ = 0;
};

// JSON string literal with quotes and escapes (exposed for the tests).
std::string json_quote(std::string_view s);

}  // namespace uet::dump
