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
    line_.clear();
    if (format_ == output_format::json)
        print_json(rec, d, r);
    else
        print_text(rec, d, r);
    std::fwrite(line_.data(), 1, line_.size(), out_);
    return r == wire::reject_reason::none;
}

void printer::print_text(const packet_record& rec, const wire::dissection& d,
                         wire::reject_reason r) {
    line_ += format_timestamp(rec.timestamp_us);
    line_ += ' ';
    wire::summarize(d, line_);
    if (r != wire::reject_reason::none) {
        line_ += " [";
        append_reason(line_, d, r);
        line_ += ']';
    }
    if (rec.bytes.size() < rec.wire_length)
        line_ += " [captured " + std::to_string(rec.bytes.size()) + " of " +
                 std::to_string(rec.wire_length) + " bytes]";
    line_ += '\n';
    if (format_ == output_format::verbose) {
        // Every header decoded, of a malformed packet those before the fault, then the reason.
        text_visitor v(line_);
        wire::visit(d, v);
        if (r != wire::reject_reason::none) {
            line_ += "    ";
            append_reason(line_, d, r);
            line_ += '\n';
        }
    }
}

void printer::print_json(const packet_record& rec, const wire::dissection& d,
                         wire::reject_reason r) {
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
    line_ += ",\"summary\":" + json_quote(summary);
    line_ += ",\"headers\":[";
    json_visitor v(line_);
    wire::visit(d, v);
    line_ += "]}\n";
}

}  // namespace uet::dump
