#include "wire/uet_packet.hpp"

#include <cinttypes>
#include <cstdio>
#include <type_traits>

#include "wire/bytes.hpp"

namespace uet::wire {

namespace {

// The headers before PDS: the entropy header (over IP) and TSS; off moves past those decoded,
// each set in p only once it decoded.
reject_reason decode_outer(std::span<const std::uint8_t> in, bool has_entropy_header, uet_packet& p,
                           std::size_t& off) noexcept {
    if (has_entropy_header) {
        entropy_header e;
        if (auto rc = decode(in, e); rc != reject_reason::none) return rc;
        p.entropy = e;
        off += entropy_header::wire_size;
    }
    // The TSS header shares the PDS type field (value 1), so the first 5 bits tell them apart.
    if (off < in.size() && (in[off] >> 3) == tss_type_value) {
        tss_header t;
        if (auto rc = decode(in.subspan(off), t); rc != reject_reason::none) return rc;
        off += encoded_size(t);
        p.tss = t;
    }
    return reject_reason::none;
}

// After a TSS header everything up to the end is ciphertext (PDS header on) and the ICV.
reject_reason encrypted_rest(std::span<const std::uint8_t> in, std::size_t off,
                             uet_packet& p) noexcept {
    if (in.size() - off < tss_icv_size) return reject_reason::truncated;
    p.payload = in.subspan(off);
    return reject_reason::none;
}

}  // namespace

// Decodes straight into out (a received packet's headers are copied once, into place); on an
// error out holds what was decoded so far and must not be used.
reject_reason decode_uet(std::span<const std::uint8_t> in, bool has_entropy_header,
                         uet_packet& out) noexcept {
    uet_packet& p = out;
    p.entropy.reset();
    p.tss.reset();
    p.payload = {};
    std::size_t off = 0;
    if (auto rc = decode_outer(in, has_entropy_header, p, off); rc != reject_reason::none)
        return rc;
    if (p.tss) {
        p.ses.reset();
        return encrypted_rest(in, off, p);
    }
    std::size_t used = 0;
    if (auto rc = decode_pds(in.subspan(off), p.pds, used); rc != reject_reason::none) return rc;
    off += used;
    const pds_next_hdr next = next_hdr_of(p.pds);
    if (next == pds_next_hdr::none) {
        p.ses.reset();
    } else {
        // Into the header the previous packet left (usually the same kind, decoded in place):
        // emplacing a fresh one zeroed its 160 bytes on every packet.
        ses_header& ses = p.ses ? *p.ses : p.ses.emplace();
        if (auto rc = decode_ses(in.subspan(off), next, ses, used); rc != reject_reason::none) {
            p.ses.reset();
            return rc;
        }
        off += used;
    }
    p.payload = in.subspan(off);
    return reject_reason::none;
}

void visit(const uet_packet& p, field_visitor& v) {
    if (p.entropy) visit(*p.entropy, v);
    if (p.tss) return visit(*p.tss, v);
    visit(p.pds, v);
    if (p.ses) visit(*p.ses, v);
}

reject_reason dissect_uet(std::span<const std::uint8_t> in, bool has_entropy_header,
                          uet_dissection& out) noexcept {
    out = uet_dissection{};
    uet_packet& p = out.packet;
    std::size_t off = 0;
    if (auto rc = decode_outer(in, has_entropy_header, p, off); rc != reject_reason::none)
        return rc;
    if (p.tss) return encrypted_rest(in, off, p);
    std::size_t used = 0;
    if (auto rc = decode_pds(in.subspan(off), p.pds, used); rc != reject_reason::none) return rc;
    out.pds_decoded = true;
    off += used;
    const pds_next_hdr next = next_hdr_of(p.pds);
    if (next != pds_next_hdr::none) {
        ses_header ses;
        ses_dissection info;
        const reject_reason rc = dissect_ses(in.subspan(off), next, ses, used, info);
        if (info.decoded) {
            p.ses = ses;
            off += used;
        }
        if (rc != reject_reason::none) return rc;
        out.declared_payload = info.declared_payload;
    }
    p.payload = in.subspan(off);
    return reject_reason::none;
}

void visit(const uet_dissection& d, field_visitor& v) {
    if (d.pds_decoded || d.packet.tss) return visit(d.packet, v);
    if (d.packet.entropy) visit(*d.packet.entropy, v);
    if (d.packet.tss) visit(*d.packet.tss, v);
}

// --- summarize ---

namespace {

void put(std::string& out, std::string_view word) {
    if (!out.empty() && out.back() != ' ') out += ' ';
    out += word;
}

void put(std::string& out, std::string_view key, std::uint64_t value) {
    put(out, key);
    out += ' ';
    out += std::to_string(value);
}

void put_hex(std::string& out, std::string_view key, std::uint64_t value) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, value);
    put(out, key);
    out += ' ';
    out += buf;
}

void flag_word(std::string& out, bool set, std::string_view word) {
    if (set) put(out, word);
}

template <class H>
void put_dpdcid_slot(std::string& out, const H& h) {
    if (!h.syn) return put(out, "dpdcid", h.dpdcid);
    flag_word(out, h.use_rsv_pdc, "rsv_pdc");
    put(out, "psn_offset", h.psn_offset);
}

template <class H>
void summarize_request(std::string& out, const H& h) {
    put(out, pds_type_name(h.type));
    flag_word(out, h.syn, "SYN");
    flag_word(out, h.ar, "AR");
    flag_word(out, h.retx, "RETX");
    put(out, "psn", h.psn);
    put(out, "spdcid", h.spdcid);
    put_dpdcid_slot(out, h);
}

template <class H>
void summarize_ack(std::string& out, const H& h) {
    put(out, pds_type_name(h.type));
    if constexpr (!std::is_same_v<H, pds_ack>) put(out, cc_type_name(h.cc_type));
    flag_word(out, h.m, "M");
    flag_word(out, h.retx, "RETX");
    flag_word(out, h.p, "P");
    flag_word(out, h.req_close, "REQ_CLOSE");
    flag_word(out, h.req_clear, "REQ_CLEAR");
    put(out, "cack", h.cack_psn);
    if constexpr (!std::is_same_v<H, pds_ack>) {
        // The SACK bitmap's base PSN is carried as an offset from the cumulative ACK PSN.
        put(out, "sack_base", static_cast<std::uint32_t>(h.cack_psn + h.sack_psn_offset));
        put_hex(out, "bitmap", h.sack_bitmap);
    }
    put(out, "spdcid", h.spdcid);
    put(out, "dpdcid", h.dpdcid);
}

template <class H>
void summarize_nack(std::string& out, const H& h) {
    put(out, pds_type_name(h.type));
    put(out, to_string(h.code));
    flag_word(out, h.retx, "RETX");
    put(out, h.nt ? "pkt_id" : "psn", h.nack_psn);
    put(out, "spdcid", h.spdcid);
    put(out, "dpdcid", h.dpdcid);
}

void summarize_pds(std::string& out, const pds_header& pds) {
    std::visit(
        [&out](const auto& h) {
            using H = std::decay_t<decltype(h)>;
            if constexpr (std::is_same_v<H, pds_rud_rod_request>) {
                summarize_request(out, h);
            } else if constexpr (std::is_same_v<H, pds_rud_rod_cc_request>) {
                summarize_request(out, h);
                put(out, "ccc", h.ccc_id);
                put(out, "credit_target", h.credit_target);
            } else if constexpr (std::is_same_v<H, pds_ack> || std::is_same_v<H, pds_ack_cc> ||
                                 std::is_same_v<H, pds_ack_ccx>) {
                summarize_ack(out, h);
            } else if constexpr (std::is_same_v<H, pds_nack> || std::is_same_v<H, pds_nack_ccx>) {
                summarize_nack(out, h);
            } else if constexpr (std::is_same_v<H, pds_ctrl>) {
                put(out, "CTRL");
                put(out, ctrl_type_name(h.ctrl_type));
                flag_word(out, h.syn, "SYN");
                flag_word(out, h.ar, "AR");
                flag_word(out, h.retx, "RETX");
                put(out, "psn", h.psn);
                put(out, "spdcid", h.spdcid);
                put_dpdcid_slot(out, h);
                put(out, "ctrl_payload", h.payload);
            } else if constexpr (std::is_same_v<H, pds_rudi>) {
                put(out, pds_type_name(h.type));
                flag_word(out, h.retx, "RETX");
                put(out, "pkt_id", h.pkt_id);
            } else {
                put(out, pds_type_name(h.type));
            }
        },
        pds);
}

void summarize_atomic(std::string& out, const ses_atomic_extensions& h) {
    if (h.sync) {
        put(out, "sync_group", h.sync->group);
        put(out, "count", h.sync->count);
    }
    const ses_atomic_extension* a = h.atomic ? &*h.atomic : h.cas ? &h.cas->atomic : nullptr;
    if (a) {
        put(out, ses_atomic_opcode_name(a->atomic_opcode));
        put(out, ses_atomic_datatype_name(a->atomic_datatype));
    }
}

void summarize_std(std::string& out, const ses_standard_request& h) {
    put(out, ses_opcode_name(h.opcode));
    put(out, "std");
    put(out, "msg", h.message_id);
    put(out, "off", h.buffer_offset);
    put(out, "len", h.request_length);
    put(out, "job", h.job_id);
    if (!h.som) {
        put(out, "msg_off", h.message_offset);
        put(out, "plen", h.payload_length);
    }
    summarize_atomic(out, h);
    if (h.rendezvous) put(out, "eager", h.rendezvous->eager_length);
}

void summarize_ses(std::string& out, const ses_header& ses) {
    std::visit(
        [&out](const auto& h) {
            using H = std::decay_t<decltype(h)>;
            if constexpr (std::is_same_v<H, ses_standard_request>) {
                summarize_std(out, h);
            } else if constexpr (std::is_same_v<H, ses_medium_request> ||
                                 std::is_same_v<H, ses_small_request>) {
                put(out, ses_opcode_name(h.opcode));
                put(out, std::is_same_v<H, ses_medium_request> ? "medium" : "small");
                put(out, "off", h.buffer_offset);
                put(out, "len", h.request_length);
                put(out, "job", h.job_id);
                summarize_atomic(out, h);
            } else {
                put(out, ses_response_opcode_name(h.opcode));
                put(out, ses_return_code_name(h.return_code));
                if constexpr (!std::is_same_v<H, ses_small_response_with_data>)
                    put(out, "msg", h.message_id);
                put(out, "job", h.job_id);
                if constexpr (std::is_same_v<H, ses_response>)
                    put(out, "mod_len", h.modified_length);
                if constexpr (std::is_same_v<H, ses_response_with_data>) {
                    put(out, "len", h.payload_length);
                    put(out, "off", h.message_offset);
                }
                if constexpr (std::is_same_v<H, ses_small_response_with_data>) {
                    put(out, "len", h.payload_length);
                    put(out, "req_psn", h.original_request_psn);
                }
            }
        },
        ses);
}

}  // namespace

void summarize(const uet_packet& p, std::string& out) {
    std::string line;
    if (p.entropy) {
        put_hex(line, "entropy", p.entropy->entropy);
        line += " |";
    }
    if (p.tss) {
        put(line, "TSS");
        put_hex(line, "sdi", p.tss->sdi);
        if (p.tss->ssi) put_hex(line, "ssi", *p.tss->ssi);
        put(line, "epoch", p.tss->epoch);
        put(line, "tsc", p.tss->tsc);
        put(line, "encrypted", p.payload.size());
        out += line;
        return;
    }
    summarize_pds(line, p.pds);
    if (p.ses) {
        line += " |";
        summarize_ses(line, *p.ses);
    }
    put(line, p.tss ? "encrypted" : "payload", p.payload.size());
    out += line;
}

void summarize(const uet_dissection& d, std::string& out) {
    if (d.pds_decoded || (d.packet.tss && !d.packet.payload.empty()))
        return summarize(d.packet, out);
    std::string line;
    if (d.packet.entropy) put_hex(line, "entropy", d.packet.entropy->entropy);
    if (d.packet.tss) {
        if (!line.empty()) line += " |";
        put(line, "TSS");
        put_hex(line, "sdi", d.packet.tss->sdi);
    }
    out += line;
}

// --- encode ---

std::size_t encoded_size(const uet_packet_spec& s) noexcept {
    const std::size_t outer =
        (s.entropy ? entropy_header::wire_size : 0) + (s.tss ? encoded_size(*s.tss) : 0);
    if (s.tss) return outer + s.payload.size();
    return outer + encoded_size(s.pds) + (s.ses ? encoded_size(*s.ses) : 0) + s.payload.size();
}

std::size_t encode_uet_headers(const uet_packet_spec& s, std::span<std::uint8_t> out) noexcept {
    if (out.size() < encoded_size(s)) return 0;
    std::size_t off = 0;
    if (s.entropy) off += encode(*s.entropy, out.subspan(off));
    if (s.tss) return off + encode(*s.tss, out.subspan(off));
    off += encode(s.pds, out.subspan(off));
    if (s.ses) off += encode(*s.ses, out.subspan(off));
    return off;
}

std::size_t encode_uet(const uet_packet_spec& s, std::span<std::uint8_t> out) noexcept {
    const std::size_t off = encode_uet_headers(s, out);
    if (off == 0) return 0;
    byte_writer w(out.subspan(off));
    w.bytes(s.payload);
    return w.failed() ? 0 : off + w.offset();
}

}  // namespace uet::wire
