#include "wire/uet_tss.hpp"

#include "wire/bytes.hpp"

namespace uet::wire {

namespace {
constexpr std::uint32_t tss_sp = 0x04000000, tss_an = 0x01000000, tss_sdi_mask = 0x00ffffff;
constexpr std::uint64_t tss_tsc_mask = 0x0000ffffffffffffULL;
}  // namespace

std::size_t encoded_size(const tss_header& h) noexcept {
    return h.ssi ? tss_header::wire_size_with_ssi : tss_header::wire_size;
}

std::size_t encode(const tss_header& h, std::span<std::uint8_t> out) noexcept {
    if (out.size() < encoded_size(h)) return 0;
    byte_writer w(out);
    w.u32((std::uint32_t{tss_type_value} << 27) | (h.ssi ? tss_sp : 0) | (h.an ? tss_an : 0) |
          (h.sdi & tss_sdi_mask));
    if (h.ssi) w.u32(*h.ssi);
    w.u64((std::uint64_t{h.epoch} << 48) | (h.tsc & tss_tsc_mask));
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, tss_header& out) noexcept {
    byte_reader r(in);
    const std::uint32_t first = r.u32();
    tss_header h;
    h.an = first & tss_an;
    h.sdi = first & tss_sdi_mask;
    if (first & tss_sp) h.ssi = r.u32();
    const std::uint64_t epoch_tsc = r.u64();
    h.epoch = static_cast<std::uint16_t>(epoch_tsc >> 48);
    h.tsc = epoch_tsc & tss_tsc_mask;
    if (r.failed()) return reject_reason::truncated;
    if ((first >> 27) != tss_type_value) return reject_reason::bad_tss_type;
    out = h;
    return reject_reason::none;
}

void visit(const tss_header& h, field_visitor& v) {
    v.begin("tss");
    v.field("type", tss_type_value, "TSS");
    v.field("sp", h.ssi.has_value());
    v.field("an", h.an);
    v.field("sdi", h.sdi);
    if (h.ssi) v.field("ssi", *h.ssi);
    v.field("epoch", h.epoch);
    v.field("tsc", h.tsc);
    v.end();
}

std::size_t encode(const entropy_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u16(h.entropy);
    w.u16(0);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, entropy_header& out) noexcept {
    byte_reader r(in);
    const std::uint16_t e = r.u16();
    r.skip(2);
    if (r.failed()) return reject_reason::truncated;
    out.entropy = e;
    return reject_reason::none;
}

void visit(const entropy_header& h, field_visitor& v) {
    v.begin("entropy");
    v.field("entropy", h.entropy);
    v.end();
}

}  // namespace uet::wire
