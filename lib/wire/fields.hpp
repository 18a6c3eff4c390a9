// A visitor that receives every field of a decoded header, in wire order. uet-dump's -v and
// --json output, and its tests, are built on it, so each header type has one visit() overload:
//     void visit(const some_header& h, field_visitor& v);
// which calls v.begin("name"), then v.field(...) per field, then v.end().
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace uet::wire {

class field_visitor {
  public:
    virtual ~field_visitor() = default;
    // A header starts; name is short and stable ("eth", "ipv4", "pds_rud", "ses_std", "bth", ...).
    virtual void begin(std::string_view header) = 0;
    // A numeric field (flags are 0/1 fields of their own), as decoded in host order.
    virtual void field(std::string_view name, std::uint64_t value) = 0;
    // A numeric field with a symbolic meaning, e.g. ("type", 2, "RUD") or ("nack_code", 1,
    // "TRIMMED").
    virtual void field(std::string_view name, std::uint64_t value, std::string_view symbol) = 0;
    // Raw bytes: addresses, keys, padding, an ICV.
    virtual void bytes(std::string_view name, std::span<const std::uint8_t> value) = 0;
    virtual void end() = 0;
};

}  // namespace uet::wire
