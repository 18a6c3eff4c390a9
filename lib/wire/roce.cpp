#include "wire/roce.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "wire/bytes.hpp"
#include "wire/ipv4.hpp"

namespace uet::wire {

namespace {

struct opcode_row {
    const char* name;
    roce_opcode_info info;
};

// Flags: known, reth, atomic_eth, aeth, atomic_ack_eth, immdt, payload, full_payload, fixed.
constexpr opcode_row rc_rows[] = {
    {"RC_SEND_FIRST", {true, false, false, false, false, false, true, true, 0}},
    {"RC_SEND_MIDDLE", {true, false, false, false, false, false, true, true, 0}},
    {"RC_SEND_LAST", {true, false, false, false, false, false, true, false, 0}},
    {"RC_SEND_LAST_WITH_IMMEDIATE", {true, false, false, false, false, true, true, false, 0}},
    {"RC_SEND_ONLY", {true, false, false, false, false, false, true, false, 0}},
    {"RC_SEND_ONLY_WITH_IMMEDIATE", {true, false, false, false, false, true, true, false, 0}},
    {"RC_RDMA_WRITE_FIRST", {true, true, false, false, false, false, true, true, 0}},
    {"RC_RDMA_WRITE_MIDDLE", {true, false, false, false, false, false, true, true, 0}},
    {"RC_RDMA_WRITE_LAST", {true, false, false, false, false, false, true, false, 0}},
    {"RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", {true, false, false, false, false, true, true, false, 0}},
    {"RC_RDMA_WRITE_ONLY", {true, true, false, false, false, false, true, false, 0}},
    {"RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", {true, true, false, false, false, true, true, false, 0}},
    {"RC_RDMA_READ_REQUEST", {true, true, false, false, false, false, false, false, 0}},
    {"RC_RDMA_READ_RESPONSE_FIRST", {true, false, false, true, false, false, true, true, 0}},
    {"RC_RDMA_READ_RESPONSE_MIDDLE", {true, false, false, false, false, false, true, true, 0}},
    {"RC_RDMA_READ_RESPONSE_LAST", {true, false, false, true, false, false, true, false, 0}},
    {"RC_RDMA_READ_RESPONSE_ONLY", {true, false, false, true, false, false, true, false, 0}},
    {"RC_ACKNOWLEDGE", {true, false, false, true, false, false, false, false, 0}},
    {"RC_ATOMIC_ACKNOWLEDGE", {true, false, false, true, true, false, false, false, 0}},
    {"RC_COMPARE_SWAP", {true, false, true, false, false, false, false, false, 0}},
    {"RC_FETCH_ADD", {true, false, true, false, false, false, false, false, 0}},
};
constexpr opcode_row cnp_row = {"CNP", {true, false, false, false, false, false, false, false, 16}};
constexpr opcode_row ud_send_only_row = {
    "UD_SEND_ONLY", {true, false, false, false, false, false, true, false, 0, true}};

const opcode_row* find_opcode(std::uint8_t opcode) noexcept {
    if (opcode < std::size(rc_rows)) return &rc_rows[opcode];
    if (opcode == static_cast<std::uint8_t>(roce_opcode::cnp)) return &cnp_row;
    if (opcode == static_cast<std::uint8_t>(roce_opcode::ud_send_only)) return &ud_send_only_row;
    return nullptr;
}

std::size_t ext_headers_size(const roce_opcode_info& i) noexcept {
    return (i.deth ? deth_header::wire_size : 0) + (i.reth ? reth_header::wire_size : 0) +
           (i.atomic_eth ? atomic_eth_header::wire_size : 0) +
           (i.aeth ? aeth_header::wire_size : 0) +
           (i.atomic_ack_eth ? atomic_ack_eth_header::wire_size : 0) +
           (i.immdt ? immdt_header::wire_size : 0);
}

void append(std::string& out, const char* fmt, auto... args) {
    char buf[64];
    int n = std::snprintf(buf, sizeof buf, fmt, args...);
    if (n > 0) out.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

}  // namespace

const char* roce_opcode_name(std::uint8_t opcode) noexcept {
    const opcode_row* row = find_opcode(opcode);
    return row ? row->name : nullptr;
}

roce_opcode_info roce_opcode_lookup(std::uint8_t opcode) noexcept {
    const opcode_row* row = find_opcode(opcode);
    return row ? row->info : roce_opcode_info{};
}

const char* to_string(aeth_kind k) noexcept {
    switch (k) {
        case aeth_kind::ack:
            return "ACK";
        case aeth_kind::rnr_nak:
            return "RNR_NAK";
        case aeth_kind::reserved:
            return "RESERVED";
        case aeth_kind::nak:
            return "NAK";
    }
    return "RESERVED";
}

const char* aeth_nak_name(std::uint8_t code) noexcept {
    switch (code) {
        case 0:
            return "PSN_SEQUENCE_ERROR";
        case 1:
            return "INVALID_REQUEST";
        case 2:
            return "REMOTE_ACCESS_ERROR";
        case 3:
            return "REMOTE_OPERATIONAL_ERROR";
        case 4:
            return "INVALID_RD_REQUEST";
        default:
            return "UNKNOWN";
    }
}

// ---- BTH ----

// Every data frame has one: three stores rather than a checked write per field.
std::size_t encode(const bth_header& h, std::span<std::uint8_t> out) noexcept {
    if (out.size() < bth_header::wire_size) return 0;
    std::uint8_t* p = out.data();
    p[0] = h.opcode;
    p[1] = static_cast<std::uint8_t>((h.se ? 0x80 : 0) | (h.m ? 0x40 : 0) |
                                     ((h.pad_count & 3) << 4) | (h.tver & 0x0f));
    store_be16(p + 2, h.pkey);
    store_be32(p + 4,
               (h.fecn ? 0x80000000u : 0) | (h.becn ? 0x40000000u : 0) | (h.dest_qp & 0xffffff));
    store_be32(p + 8, (h.ack_req ? 0x80000000u : 0) | (h.psn & 0xffffff));
    return bth_header::wire_size;
}

reject_reason decode(std::span<const std::uint8_t> in, bth_header& out) noexcept {
    byte_reader r(in);
    bth_header h;
    h.opcode = r.u8();
    std::uint8_t b1 = r.u8();
    h.pkey = r.u16();
    std::uint8_t b4 = r.u8();
    h.dest_qp = r.u24();
    std::uint8_t b8 = r.u8();
    h.psn = r.u24();
    if (r.failed()) return reject_reason::truncated;
    h.se = (b1 & 0x80) != 0;
    h.m = (b1 & 0x40) != 0;
    h.pad_count = (b1 >> 4) & 3;
    h.tver = b1 & 0x0f;
    h.fecn = (b4 & 0x80) != 0;
    h.becn = (b4 & 0x40) != 0;
    h.ack_req = (b8 & 0x80) != 0;
    if (h.tver != 0) return reject_reason::bad_bth_tver;
    out = h;
    return reject_reason::none;
}

void visit(const bth_header& h, field_visitor& v) {
    v.begin("bth");
    if (const char* name = roce_opcode_name(h.opcode))
        v.field("opcode", h.opcode, name);
    else
        v.field("opcode", h.opcode);
    v.field("se", h.se ? 1 : 0);
    v.field("m", h.m ? 1 : 0);
    v.field("pad_count", h.pad_count);
    v.field("tver", h.tver);
    v.field("pkey", h.pkey);
    v.field("fecn", h.fecn ? 1 : 0);
    v.field("becn", h.becn ? 1 : 0);
    v.field("dest_qp", h.dest_qp);
    v.field("ack_req", h.ack_req ? 1 : 0);
    v.field("psn", h.psn);
    v.end();
}

// ---- DETH ----

std::size_t encode(const deth_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u32(h.q_key);
    w.u8(0);
    w.u24(h.src_qp & 0xffffff);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, deth_header& out) noexcept {
    byte_reader r(in);
    deth_header h;
    h.q_key = r.u32();
    r.u8();
    h.src_qp = r.u24();
    if (r.failed()) return reject_reason::truncated;
    out = h;
    return reject_reason::none;
}

void visit(const deth_header& h, field_visitor& v) {
    v.begin("deth");
    v.field("q_key", h.q_key);
    v.field("src_qp", h.src_qp);
    v.end();
}

// ---- RETH ----

std::size_t encode(const reth_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u64(h.va);
    w.u32(h.rkey);
    w.u32(h.dma_len);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, reth_header& out) noexcept {
    byte_reader r(in);
    reth_header h;
    h.va = r.u64();
    h.rkey = r.u32();
    h.dma_len = r.u32();
    if (r.failed()) return reject_reason::truncated;
    out = h;
    return reject_reason::none;
}

void visit(const reth_header& h, field_visitor& v) {
    v.begin("reth");
    v.field("va", h.va);
    v.field("rkey", h.rkey);
    v.field("dma_len", h.dma_len);
    v.end();
}

// ---- AETH ----

std::size_t encode(const aeth_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u8(h.syndrome);
    w.u24(h.msn & 0xffffff);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, aeth_header& out) noexcept {
    byte_reader r(in);
    aeth_header h;
    h.syndrome = r.u8();
    h.msn = r.u24();
    if (r.failed()) return reject_reason::truncated;
    if (h.kind() == aeth_kind::reserved) return reject_reason::bad_aeth_syndrome;
    out = h;
    return reject_reason::none;
}

void visit(const aeth_header& h, field_visitor& v) {
    v.begin("aeth");
    v.field("syndrome", h.syndrome);
    v.field("kind", static_cast<std::uint8_t>(h.kind()), to_string(h.kind()));
    switch (h.kind()) {
        case aeth_kind::ack:
            v.field("credit_count", h.value());
            break;
        case aeth_kind::rnr_nak:
            v.field("rnr_timer", h.value());
            break;
        case aeth_kind::nak:
            v.field("nak_code", h.value(), aeth_nak_name(h.value()));
            break;
        case aeth_kind::reserved:
            v.field("value", h.value());
            break;
    }
    v.field("msn", h.msn);
    v.end();
}

// ---- ImmDt ----

std::size_t encode(const immdt_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u32(h.imm);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, immdt_header& out) noexcept {
    byte_reader r(in);
    std::uint32_t imm = r.u32();
    if (r.failed()) return reject_reason::truncated;
    out.imm = imm;
    return reject_reason::none;
}

void visit(const immdt_header& h, field_visitor& v) {
    v.begin("immdt");
    v.field("imm", h.imm);
    v.end();
}

// ---- AtomicETH ----

std::size_t encode(const atomic_eth_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u64(h.va);
    w.u32(h.rkey);
    w.u64(h.swap_add);
    w.u64(h.compare);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, atomic_eth_header& out) noexcept {
    byte_reader r(in);
    atomic_eth_header h;
    h.va = r.u64();
    h.rkey = r.u32();
    h.swap_add = r.u64();
    h.compare = r.u64();
    if (r.failed()) return reject_reason::truncated;
    out = h;
    return reject_reason::none;
}

void visit(const atomic_eth_header& h, field_visitor& v) {
    v.begin("atomic_eth");
    v.field("va", h.va);
    v.field("rkey", h.rkey);
    v.field("swap_add", h.swap_add);
    v.field("compare", h.compare);
    v.end();
}

// ---- AtomicAckETH ----

std::size_t encode(const atomic_ack_eth_header& h, std::span<std::uint8_t> out) noexcept {
    byte_writer w(out);
    w.u64(h.orig_remote_data);
    return w.result();
}

reject_reason decode(std::span<const std::uint8_t> in, atomic_ack_eth_header& out) noexcept {
    byte_reader r(in);
    std::uint64_t d = r.u64();
    if (r.failed()) return reject_reason::truncated;
    out.orig_remote_data = d;
    return reject_reason::none;
}

void visit(const atomic_ack_eth_header& h, field_visitor& v) {
    v.begin("atomic_ack_eth");
    v.field("orig_remote_data", h.orig_remote_data);
    v.end();
}

// ---- whole packets ----

namespace {

template <class H>
reject_reason decode_ext(std::span<const std::uint8_t> in, std::size_t& off,
                         std::optional<H>& out) noexcept {
    H h;
    if (auto r = decode(in.subspan(off), h); r != reject_reason::none) return r;
    off += H::wire_size;
    out = h;
    return reject_reason::none;
}

// Checks the payload (with pad) against what the opcode allows.
reject_reason check_payload(const roce_opcode_info& info, std::uint8_t pad,
                            std::size_t padded_len) noexcept {
    if (info.fixed_payload) {
        if (pad != 0) return reject_reason::bad_pad_count;
        return padded_len == info.fixed_payload ? reject_reason::none
                                                : reject_reason::roce_unexpected_payload;
    }
    if (!info.payload) {
        if (pad != 0) return reject_reason::bad_pad_count;
        return padded_len == 0 ? reject_reason::none : reject_reason::roce_unexpected_payload;
    }
    if (padded_len % 4 != 0) return reject_reason::roce_misaligned_payload;
    if (info.full_payload) {
        if (padded_len == 0) return reject_reason::roce_unexpected_payload;
        if (pad != 0) return reject_reason::bad_pad_count;
    }
    if (pad > padded_len) return reject_reason::bad_pad_count;
    return reject_reason::none;
}

}  // namespace

namespace {
// The BTH and extension headers from the front of `in` (the UDP payload's first bytes; udp_len
// its whole length, BTH .. ICRC), the payload's shape checked: sets off (where the payload
// starts) and padded_len (payload and pad).
reject_reason decode_roce_headers(std::span<const std::uint8_t> in, std::size_t udp_len,
                                  roce_packet& p, std::size_t& off,
                                  std::size_t& padded_len) noexcept {
    if (udp_len < bth_header::wire_size + icrc_size) return reject_reason::truncated;
    if (auto r = decode(in, p.bth); r != reject_reason::none) return r;
    const roce_opcode_info info = roce_opcode_lookup(p.bth.opcode);
    if (!info.known) return reject_reason::unsupported_roce_opcode;
    const std::size_t body = udp_len - icrc_size;
    if (body < bth_header::wire_size + ext_headers_size(info))
        return reject_reason::roce_short_for_opcode;
    if (in.size() > body) in = in.first(body);
    off = bth_header::wire_size;
    reject_reason r = reject_reason::none;
    if (info.deth) r = decode_ext(in, off, p.deth);
    if (r == reject_reason::none && info.reth) r = decode_ext(in, off, p.reth);
    if (r == reject_reason::none && info.atomic_eth) r = decode_ext(in, off, p.atomic_eth);
    if (r == reject_reason::none && info.aeth) r = decode_ext(in, off, p.aeth);
    if (r == reject_reason::none && info.atomic_ack_eth) r = decode_ext(in, off, p.atomic_ack_eth);
    if (r == reject_reason::none && info.immdt) r = decode_ext(in, off, p.immdt);
    if (r != reject_reason::none) return r;
    padded_len = body - off;
    return check_payload(info, p.bth.pad_count, padded_len);
}
}  // namespace

reject_reason decode_roce(std::span<const std::uint8_t> udp_payload,
                          std::span<const std::uint8_t> ip_packet, roce_packet& out) noexcept {
    roce_packet p;
    std::size_t off = 0, padded_len = 0;
    if (auto r = decode_roce_headers(udp_payload, udp_payload.size(), p, off, padded_len);
        r != reject_reason::none)
        return r;
    p.payload = udp_payload.subspan(off, padded_len - p.bth.pad_count);

    // The ICRC covers the IP and UDP headers too, so udp_payload must be ip_packet's tail.
    if (ip_packet.size() < udp_payload.size() ||
        ip_packet.data() + (ip_packet.size() - udp_payload.size()) != udp_payload.data())
        return reject_reason::truncated;
    p.icrc = load_le32(&udp_payload[udp_payload.size() - icrc_size]);
    if (roce_icrc(ip_packet.first(ip_packet.size() - icrc_size)) != p.icrc)
        return reject_reason::bad_icrc;
    out = p;
    return reject_reason::none;
}

std::optional<reject_reason> decode_roce_split(std::span<const std::uint8_t> ip_head,
                                               std::size_t udp_at, std::size_t udp_len,
                                               std::span<const std::uint8_t> payload,
                                               std::span<const std::uint8_t> trailer,
                                               roce_packet& out) noexcept {
    if (udp_at > ip_head.size()) return std::nullopt;
    roce_packet p;
    std::size_t off = 0, padded_len = 0;
    const reject_reason r =
        decode_roce_headers(ip_head.subspan(udp_at), udp_len, p, off, padded_len);
    if (r == reject_reason::truncated) return std::nullopt;  // perhaps only the first piece
    if (r != reject_reason::none) return r;
    // The layout a zero-copy sender makes: headers | payload | pad and ICRC. Any other split
    // is read joined.
    const std::size_t pad = p.bth.pad_count;
    if (udp_at + off != ip_head.size() || trailer.size() != pad + icrc_size ||
        payload.size() + pad != padded_len)
        return std::nullopt;
    p.payload = payload;
    p.icrc = load_le32(&trailer[pad]);
    std::uint32_t state = crc32_update(roce_icrc_state(ip_head), payload);
    state = crc32_update(state, trailer.first(pad));
    if (crc32_finish(state) != p.icrc) return reject_reason::bad_icrc;
    out = p;
    return reject_reason::none;
}

void visit(const roce_packet& p, field_visitor& v) {
    visit(p.bth, v);
    if (p.deth) visit(*p.deth, v);
    if (p.reth) visit(*p.reth, v);
    if (p.atomic_eth) visit(*p.atomic_eth, v);
    if (p.aeth) visit(*p.aeth, v);
    if (p.atomic_ack_eth) visit(*p.atomic_ack_eth, v);
    if (p.immdt) visit(*p.immdt, v);
    v.begin("roce_payload");
    v.field("length", p.payload.size());
    v.end();
    v.begin("icrc");
    v.field("icrc", p.icrc);
    v.end();
}

void summarize(const roce_packet& p, std::string& out) {
    const char* name = roce_opcode_name(p.bth.opcode);
    if (name)
        out += name;
    else
        append(out, "OPCODE_0x%02x", p.bth.opcode);
    append(out, " qp 0x%06x psn %u", p.bth.dest_qp, p.bth.psn);
    if (p.bth.ack_req) out += " ackreq";
    if (p.bth.se) out += " se";
    if (p.bth.fecn) out += " fecn";
    if (p.bth.becn) out += " becn";
    if (p.deth) append(out, " qkey 0x%08x srcqp 0x%06x", p.deth->q_key, p.deth->src_qp);
    if (p.reth)
        append(out, " va 0x%llx rkey 0x%x len %u", static_cast<unsigned long long>(p.reth->va),
               p.reth->rkey, p.reth->dma_len);
    if (p.atomic_eth) {
        append(out, " va 0x%llx rkey 0x%x", static_cast<unsigned long long>(p.atomic_eth->va),
               p.atomic_eth->rkey);
        append(out, " swap_add 0x%llx compare 0x%llx",
               static_cast<unsigned long long>(p.atomic_eth->swap_add),
               static_cast<unsigned long long>(p.atomic_eth->compare));
    }
    if (p.aeth) {
        out += ' ';
        out += to_string(p.aeth->kind());
        if (p.aeth->kind() == aeth_kind::nak)
            append(out, " %s", aeth_nak_name(p.aeth->value()));
        else
            append(out, " %u", p.aeth->value());
        append(out, " msn %u", p.aeth->msn);
    }
    if (p.atomic_ack_eth)
        append(out, " orig 0x%llx",
               static_cast<unsigned long long>(p.atomic_ack_eth->orig_remote_data));
    if (p.immdt) append(out, " imm 0x%08x", p.immdt->imm);
    append(out, " payload %zu", p.payload.size());
}

std::size_t roce_udp_payload_size(const roce_packet_spec& r) noexcept {
    roce_opcode_info info = roce_opcode_lookup(r.bth.opcode);
    if (!info.known || info.deth != r.deth.has_value() || info.reth != r.reth.has_value() ||
        info.atomic_eth != r.atomic_eth.has_value() || info.aeth != r.aeth.has_value() ||
        info.atomic_ack_eth != r.atomic_ack_eth.has_value() || info.immdt != r.immdt.has_value())
        return 0;
    std::size_t n = r.payload.size();
    if (info.fixed_payload ? n != info.fixed_payload : (!info.payload && n != 0)) return 0;
    if (info.full_payload && (n == 0 || n % 4 != 0)) return 0;
    std::size_t padded = (n + 3) & ~std::size_t{3};
    return bth_header::wire_size + ext_headers_size(info) + padded + icrc_size;
}

namespace {
template <class H>
void encode_ext(const std::optional<H>& h, std::span<std::uint8_t> out, std::size_t& off) noexcept {
    if (h) off += encode(*h, out.subspan(off));
}
}  // namespace

namespace {
// The BTH (its pad count set) and the extension headers of r at out; their size. out must hold
// them (40 bytes at most; the callers checked r against its opcode).
std::size_t encode_roce_headers(const roce_packet_spec& r, std::span<std::uint8_t> out) noexcept {
    bth_header bth = r.bth;
    bth.pad_count = static_cast<std::uint8_t>((4 - r.payload.size() % 4) % 4);
    std::size_t off = encode(bth, out);
    // Same order as decode_roce reads them.
    encode_ext(r.deth, out, off);
    encode_ext(r.reth, out, off);
    encode_ext(r.atomic_eth, out, off);
    encode_ext(r.aeth, out, off);
    encode_ext(r.atomic_ack_eth, out, off);
    encode_ext(r.immdt, out, off);
    return off;
}
}  // namespace

std::size_t encode_roce_transport(const roce_packet_spec& r, std::span<std::uint8_t> out) noexcept {
    std::size_t total = roce_udp_payload_size(r);
    if (!total || out.size() < total) return 0;
    std::size_t off = encode_roce_headers(r, out);
    if (!r.payload.empty()) std::memmove(&out[off], r.payload.data(), r.payload.size());
    off += r.payload.size();
    std::memset(&out[off], 0, total - off);  // pad and the ICRC placeholder
    return total;
}

std::size_t build_roce_frame(const frame_spec& s, const roce_packet_spec& r,
                             std::span<std::uint8_t> out) noexcept {
    std::size_t hdr = frame_header_size(s, true);
    if (out.size() < hdr) return 0;
    std::size_t udp_len = encode_roce_transport(r, out.subspan(hdr));
    if (!udp_len) return 0;
    std::size_t total = finish_udp_frame(s, udp_len, out);
    if (!total) return 0;
    // The ICRC masks the UDP checksum, so compute it first and then the UDP checksum over it.
    std::size_t ip_off = hdr - udp_header::wire_size - ipv4_header::wire_size;
    auto ip_packet = out.subspan(ip_off, total - ip_off);
    store_le32(&out[total - icrc_size], roce_icrc(ip_packet.first(ip_packet.size() - icrc_size)));
    refresh_udp_checksum(s, out.first(total));
    return total;
}

namespace {
// The headers of a frame from the template (Ethernet, IPv4, UDP) and r (BTH and extension
// headers) at f, which holds udp_header_template::size + udp_len bytes; the ICRC's state over
// its prefix (roce_icrc): 8 bytes of 1s, then the IPv4, UDP and transport headers with the
// fields a router may rewrite set to 1s. Sets th to the transport headers' size.
std::uint32_t write_roce_headers(const udp_header_template& t, std::uint16_t ip_id,
                                 std::uint16_t src_port, std::size_t udp_len,
                                 const roce_packet_spec& r, std::uint8_t* f,
                                 std::size_t& th) noexcept {
    constexpr std::size_t hdr = udp_header_template::size, ip = eth_header::wire_size;
    constexpr std::size_t most =
        bth_header::wire_size + 28;  // the extension headers take 28 at most
    // Built here and copied into the frame once: the frame's lines are usually still on their
    // way from the core that read them last, and reading back what was just stored there
    // would wait for them.
    std::array<std::uint8_t, hdr + most> h;
    t.write(h.data(), ip_id, src_port, udp_len);
    th = encode_roce_headers(r, std::span<std::uint8_t>(h.data() + hdr, most));
    std::memcpy(f, h.data(), hdr + th);
    return roce_icrc_state(std::span<const std::uint8_t>(h.data() + ip, hdr - ip + th));
}

// The pad (zeros) and the ICRC at `at`, after a payload the state has summed: their length.
std::size_t write_roce_trailer(std::uint32_t state, std::size_t pad, std::uint8_t* at) noexcept {
    std::memset(at, 0, pad);
    state = crc32_update(state, std::span<const std::uint8_t>(at, pad));
    store_le32(at + pad, crc32_finish(state));
    return pad + icrc_size;
}
}  // namespace

std::size_t build_roce_frame_fast(const udp_header_template& t, std::uint16_t ip_id,
                                  std::uint16_t src_port, bool udp_checksum,
                                  const roce_packet_spec& r, std::span<std::uint8_t> out) noexcept {
    constexpr std::size_t hdr = udp_header_template::size;
    constexpr std::size_t ip = eth_header::wire_size, udp = ip + ipv4_header::wire_size;
    const std::size_t udp_len = roce_udp_payload_size(r);
    if (!udp_len || udp_len > udp_header_template::max_udp_payload || out.size() < hdr + udp_len)
        return 0;
    std::uint8_t* const f = out.data();
    std::size_t th = 0;
    std::uint32_t state = write_roce_headers(t, ip_id, src_port, udp_len, r, f, th);
    std::uint8_t* at = f + hdr + th;
    const std::size_t n = r.payload.size();
    if (n != 0) state = crc32_copy(state, at, r.payload.data(), n);
    write_roce_trailer(state, udp_len - th - n - icrc_size, at + n);
    if (udp_checksum)
        store_be16(f + udp + 6,
                   wire::udp_checksum(load_be32(f + ip + 12), load_be32(f + ip + 16),
                                      std::span<const std::uint8_t>(f + udp, udp_len + 8)));
    return hdr + udp_len;
}

std::size_t build_roce_headers_fast(const udp_header_template& t, std::uint16_t ip_id,
                                    std::uint16_t src_port, const roce_packet_spec& r,
                                    std::span<std::uint8_t> out, std::span<std::uint8_t, 8> trailer,
                                    std::size_t& trailer_length) noexcept {
    constexpr std::size_t hdr = udp_header_template::size;
    const std::size_t udp_len = roce_udp_payload_size(r);
    const std::size_t n = r.payload.size();
    if (!udp_len || udp_len > udp_header_template::max_udp_payload ||
        out.size() < hdr + (udp_len - n))
        return 0;
    std::size_t th = 0;
    std::uint32_t state = write_roce_headers(t, ip_id, src_port, udp_len, r, out.data(), th);
    if (n != 0) state = crc32_update(state, r.payload);
    trailer_length = write_roce_trailer(state, udp_len - th - n - icrc_size, trailer.data());
    return hdr + th;
}

}  // namespace uet::wire
