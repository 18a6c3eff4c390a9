#include "printer.hpp"

#include <cinttypes>

#include "wire/fields.hpp"

namespace uet::dump {

namespace {

void append_hex_bytes(std::string& out, std::span<const std::uint8_t> bytes, char sep) {
    static constexpr char digits[] = "0123456789abcdef";
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (i && sep) out += sep;
        out += digits[bytes[i] >> 4];
        out += digits[bytes[i] & 0xf];
    }
}

// Six bytes read best as a MAC address; anything else as one hex string.
char byte_separator(std::span<const std::uint8_t> bytes) {
    return bytes.size() == 6 ? ':' : '\0';
}

// "  pds_rud: type=2(RUD) next_hdr=3(std_request) ..." one line per header.
class text_visitor final : public wire::field_visitor {
  public:
    explicit text_visitor(std::string& out) : out_(out) {}
    void begin(std::string_view header) override {
        out_ += "    ";
        out_ += header;
        out_ += ':';
    }
    void field(std::string_view name, std::uint64_t value) override {
        key(name);
        out_ += std::to_string(value);
    }
    void field(std::string_view name, std::uint64_t value, std::string_view symbol) override {
        field(name, value);
        out_ += '(';
        out_ += symbol;
        out_ += ')';
    }
    void bytes(std::string_view name, std::span<const std::uint8_t> value) override {
        key(name);
        append_hex_bytes(out_, value, byte_separator(value));
    }
    void end() override { out_ += '\n'; }

  private:
    void key(std::string_view name) {
        out_ += ' ';
        out_ += name;
        out_ += '=';
    }
    std::string& out_;
};

// {"name":"pds_rud","type":2,"type_name":"RUD",...} per header, in an array.
class json_visitor final : public wire::field_visitor {
  public:
    explicit json_visitor(std::string& out) : out_(out) {}
    void begin(std::string_view header) override {
        if (headers_++) out_ += ',';
        out_ += "{\"name\":";
        out_ += json_quote(header);
    }
    void field(std::string_view name, std::uint64_t value) override {
        key(name);
        out_ += std::to_string(value);
    }
    void field(std::string_view name, std::uint64_t value, std::string_view symbol) override {
        field(name, value);
        out_ += ',';
        out_ += json_quote(std::string(name) + "_name");
        out_ += ':';
        out_ += json_quote(symbol);
    }
    void bytes(std::string_view name, std::span<const std::uint8_t> value) override {
        key(name);
        std::string hex;
        append_hex_bytes(hex, value, byte_separator(value));
        out_ += json_quote(hex);
    }
    void end() override { out_ += '}'; }

  private:
    void key(std::string_view name) {
        out_ += ',';
        out_ += json_quote(name);
        out_ += ':';
    }
    std::string& out_;
    int headers_ = 0;
};

// "malformed: <reason> in <layer>".
void append_reason(std::string& out, const wire::dissection& d, wire::reject_reason r) {
    out += "malformed: ";
    out += wire::to_string(r);
    out += " in ";
    out += d.failed_layer ? d.failed_layer : "frame";
}

std::string format_timestamp(std::uint64_t us) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
    return buf;
}

}  // namespace

std::string json_quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", u);
            out += buf;
        } else {
            out += c;
        }
    }
    out += '"';
    return out;
}

bool printer::print(const packet_record& rec) {
    wire::dissection d;
    auto r = wire::dissect(rec.bytes, d, options_);
    tss_outcome t;
    if (decryptor_ && r == wire::reject_reason::none && d.upper_ok && d.uet.packet.tss) {
        t.tried = true;
        t.header = *d.uet.packet.tss;
        const auto opened = decryptor_->open(rec.bytes, t.header);
        t.reason = opened.reason;
        if (t.reason == tss::drop_reason::none) {
            ++authenticated_;
            d = wire::dissection{};
            r = wire::dissect(opened.plain, d, options_);
        } else {
            ++failed_;
        }
    }
    line_.clear();
    if (format_ == output_format::json)
        print_json(rec, d, r, t);
    else
        print_text(rec, d, r, t);
    std::fwrite(line_.data(), 1, line_.size(), out_);
    return r == wire::reject_reason::none && t.reason == tss::drop_reason::none;
}

// " [TSS sdi 0xa0b0c epoch 2 tsc 17 authenticated]" after the decrypted headers, or
// " [TSS not opened: bad_icv]" after the TSS header of a frame that failed.
void printer::append_tss_text(const tss_outcome& t) {
    if (t.reason != tss::drop_reason::none) {
        line_ += " [TSS not opened: ";
        line_ += tss::name(t.reason);
        line_ += ']';
        return;
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, " [TSS sdi 0x%x epoch %u tsc %" PRIu64 " authenticated]",
                  t.header.sdi, unsigned{t.header.epoch}, std::uint64_t{t.header.tsc});
    line_ += buf;
}

void printer::print_text(const packet_record& rec, const wire::dissection& d, wire::reject_reason r,
                         const tss_outcome& t) {
    line_ += format_timestamp(rec.timestamp_us);
    line_ += ' ';
    wire::summarize(d, line_);
    if (r != wire::reject_reason::none) {
        line_ += " [";
        append_reason(line_, d, r);
        line_ += ']';
    }
    if (t.tried) append_tss_text(t);
    if (rec.bytes.size() < rec.wire_length)
        line_ += " [captured " + std::to_string(rec.bytes.size()) + " of " +
                 std::to_string(rec.wire_length) + " bytes]";
    line_ += '\n';
    if (format_ == output_format::verbose) {
        // Every header decoded, of a malformed packet those before the fault, then the reason.
        text_visitor v(line_);
        wire::visit(d, v);
        if (t.tried && t.reason == tss::drop_reason::none) wire::visit(t.header, v);
        if (r != wire::reject_reason::none) {
            line_ += "    ";
            append_reason(line_, d, r);
            line_ += '\n';
        }
    }
}

void printer::print_json(const packet_record& rec, const wire::dissection& d, wire::reject_reason r,
                         const tss_outcome& t) {
    std::string summary;
    wire::summarize(d, summary);
    line_ += "{\"number\":" + std::to_string(rec.number);
    line_ += ",\"timestamp_us\":" + std::to_string(rec.timestamp_us);
    line_ += ",\"length\":" + std::to_string(rec.wire_length);
    line_ += ",\"captured\":" + std::to_string(rec.bytes.size());
    line_ += ",\"protocol\":";
    line_ += json_quote(wire::kind_name(d.kind));
    line_ += ",\"status\":";
    line_ += r == wire::reject_reason::none ? "\"ok\"" : "\"malformed\"";
    if (r != wire::reject_reason::none) {
        line_ += ",\"reject\":" + json_quote(wire::reject_name(r));
        line_ += ",\"reject_text\":" + json_quote(wire::to_string(r));
        line_ += ",\"reject_layer\":" + json_quote(d.failed_layer ? d.failed_layer : "frame");
    }
    if (d.upper_ok && d.uet.declared_payload) {
        line_ += ",\"truncated_payload\":{\"declared\":" + std::to_string(*d.uet.declared_payload);
        line_ += ",\"present\":" + std::to_string(d.uet.packet.payload.size()) + "}";
    }
    if (t.tried) {
        line_ += ",\"tss\":{\"sdi\":" + std::to_string(t.header.sdi);
        line_ += ",\"epoch\":" + std::to_string(t.header.epoch);
        line_ += ",\"tsc\":" + std::to_string(t.header.tsc);
        line_ += ",\"status\":";
        line_ += t.reason == tss::drop_reason::none ? "\"authenticated\""
                                                    : json_quote(tss::name(t.reason));
        line_ += '}';
    }
    line_ += ",\"summary\":" + json_quote(summary);
    line_ += ",\"headers\":[";
    json_visitor v(line_);
    wire::visit(d, v);
    line_ += "]}\n";
}

}  // namespace uet::dump
