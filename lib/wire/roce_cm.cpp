#include "wire/roce_cm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "wire/bytes.hpp"

namespace uet::wire {

namespace {

// Offsets into the CM data (after the MAD header), from the standard's message tables.
namespace req_at {
constexpr std::size_t service_id = 8, local_ca_guid = 16, local_qpn = 32, responder_resources = 35,
                      initiator_depth = 39, remote_timeout = 43, starting_psn = 44,
                      local_timeout = 47, pkey = 48, mtu = 50, max_cm_retries = 51, local_lid = 52,
                      remote_lid = 54, local_gid = 56, remote_gid = 72, traffic_class = 92,
                      hop_limit = 93, sl = 94, ack_timeout = 95, private_data = 140;
}
namespace rep_at {
constexpr std::size_t local_qpn = 12, starting_psn = 20, responder_resources = 24,
                      initiator_depth = 25, ack_delay = 26, rnr_retry = 27, local_ca_guid = 28,
                      private_data = 36;
}
constexpr std::size_t rej_message = 8, rej_reason = 10, rej_private = 84;
constexpr std::size_t dreq_remote_qpn = 8, dreq_private = 12;
constexpr std::size_t comm_private = 8;  // RTU, DREP
constexpr std::uint16_t permissive_lid = 0xffff;

std::size_t private_offset(cm_attribute a) noexcept {
    switch (a) {
        case cm_attribute::req:
            return req_at::private_data;
        case cm_attribute::rep:
            return rep_at::private_data;
        case cm_attribute::rej:
            return rej_private;
        case cm_attribute::dreq:
            return dreq_private;
        case cm_attribute::rtu:
        case cm_attribute::drep:
            return comm_private;
        case cm_attribute::mra:
            break;
    }
    return 0;
}

}  // namespace

const char* to_string(cm_refusal r) noexcept {
    switch (r) {
        case cm_refusal::none:
            return "none";
        case cm_refusal::not_uet:
            return "not a uet connection request";
        case cm_refusal::job:
            return "job ID differs";
        case cm_refusal::mode:
            return "retransmission mode differs";
        case cm_refusal::mtu:
            return "no common path MTU";
        case cm_refusal::not_listening:
            return "not accepting connections";
    }
    return "unknown";
}

void write_private(const uet_cm_private& p, cm_message& m) noexcept {
    auto& d = m.private_data;
    store_be32(&d[0], uet_cm_magic);
    d[4] = uet_cm_version;
    d[5] = p.mode;
    d[6] = p.mtu_code;
    d[7] = static_cast<std::uint8_t>(p.refusal);
    store_be32(&d[8], p.job_id);
}

bool read_private(const cm_message& m, uet_cm_private& out) noexcept {
    const auto& d = m.private_data;
    if (load_be32(&d[0]) != uet_cm_magic || d[4] != uet_cm_version) return false;
    out.mode = d[5];
    out.mtu_code = d[6];
    out.refusal = d[7] <= static_cast<std::uint8_t>(cm_refusal::not_listening)
                      ? static_cast<cm_refusal>(d[7])
                      : cm_refusal::none;
    out.job_id = load_be32(&d[8]);
    return true;
}

const char* to_string(cm_attribute a) noexcept {
    switch (a) {
        case cm_attribute::req:
            return "REQ";
        case cm_attribute::mra:
            return "MRA";
        case cm_attribute::rej:
            return "REJ";
        case cm_attribute::rep:
            return "REP";
        case cm_attribute::rtu:
            return "RTU";
        case cm_attribute::dreq:
            return "DREQ";
        case cm_attribute::drep:
            return "DREP";
    }
    return "UNKNOWN";
}

std::array<std::uint8_t, 16> ipv4_mapped_gid(std::uint32_t ip) noexcept {
    std::array<std::uint8_t, 16> g{};
    g[10] = g[11] = 0xff;
    store_be32(&g[12], ip);
    return g;
}

std::size_t private_data_size(cm_attribute a) noexcept {
    const std::size_t at = private_offset(a);
    return at == 0 ? 0 : mad_size - mad_header_size - at;
}

std::size_t encode(const cm_message& m, std::span<std::uint8_t> out) noexcept {
    const std::size_t priv = private_offset(m.attribute);
    if (out.size() < mad_size || priv == 0) return 0;
    std::memset(out.data(), 0, mad_size);
    std::uint8_t* h = out.data();
    h[0] = 1;  // base version
    h[1] = cm_management_class;
    h[2] = cm_class_version;
    h[3] = mad_method_send;
    store_be64(h + 8, m.transaction_id);
    store_be16(h + 16, static_cast<std::uint16_t>(m.attribute));
    std::uint8_t* d = h + mad_header_size;
    store_be32(d, m.local_comm_id);
    switch (m.attribute) {
        case cm_attribute::req:
            store_be64(d + req_at::service_id, m.service_id);
            store_be64(d + req_at::local_ca_guid, m.local_ca_guid);
            store_be24(d + req_at::local_qpn, m.local_qpn);
            d[req_at::responder_resources] = m.responder_resources;
            d[req_at::initiator_depth] = m.initiator_depth;
            // Remote CM response timeout, transport service type RC (0), no e2e flow control.
            d[req_at::remote_timeout] =
                static_cast<std::uint8_t>((m.remote_cm_response_timeout & 0x1f) << 3);
            store_be24(d + req_at::starting_psn, m.starting_psn);
            d[req_at::local_timeout] = static_cast<std::uint8_t>(
                ((m.local_cm_response_timeout & 0x1f) << 3) | (m.retry_count & 7));
            store_be16(d + req_at::pkey, m.pkey);
            d[req_at::mtu] =
                static_cast<std::uint8_t>(((m.path_mtu & 0xf) << 4) | (m.rnr_retry_count & 7));
            d[req_at::max_cm_retries] = static_cast<std::uint8_t>((m.max_cm_retries & 0xf) << 4);
            store_be16(d + req_at::local_lid, permissive_lid);
            store_be16(d + req_at::remote_lid, permissive_lid);
            std::memcpy(d + req_at::local_gid, m.local_gid.data(), 16);
            std::memcpy(d + req_at::remote_gid, m.remote_gid.data(), 16);
            d[req_at::traffic_class] = m.traffic_class;
            d[req_at::hop_limit] = m.hop_limit;
            d[req_at::sl] = static_cast<std::uint8_t>((m.sl & 0xf) << 4);
            d[req_at::ack_timeout] = static_cast<std::uint8_t>((m.local_ack_timeout & 0x1f) << 3);
            break;
        case cm_attribute::rep:
            store_be32(d + 4, m.remote_comm_id);
            store_be24(d + rep_at::local_qpn, m.local_qpn);
            store_be24(d + rep_at::starting_psn, m.starting_psn);
            d[rep_at::responder_resources] = m.responder_resources;
            d[rep_at::initiator_depth] = m.initiator_depth;
            d[rep_at::ack_delay] = static_cast<std::uint8_t>((m.target_ack_delay & 0x1f) << 3);
            d[rep_at::rnr_retry] = static_cast<std::uint8_t>((m.rnr_retry_count & 7) << 5);
            store_be64(d + rep_at::local_ca_guid, m.local_ca_guid);
            break;
        case cm_attribute::rej:
            store_be32(d + 4, m.remote_comm_id);
            d[rej_message] = static_cast<std::uint8_t>((m.rejected_message & 3) << 6);
            store_be16(d + rej_reason, m.reject_reason_code);
            break;
        case cm_attribute::dreq:
            store_be32(d + 4, m.remote_comm_id);
            store_be24(d + dreq_remote_qpn, m.remote_qpn);
            break;
        case cm_attribute::rtu:
        case cm_attribute::drep:
            store_be32(d + 4, m.remote_comm_id);
            break;
        case cm_attribute::mra:
            return 0;
    }
    std::memcpy(d + priv, m.private_data.data(), private_data_size(m.attribute));
    return mad_size;
}

reject_reason decode_cm(std::span<const std::uint8_t> mad, cm_message& out) noexcept {
    if (mad.size() < mad_size) return reject_reason::truncated;
    const std::uint8_t* h = mad.data();
    if (h[0] != 1 || h[1] != cm_management_class || h[2] != cm_class_version ||
        h[3] != mad_method_send)
        return reject_reason::not_cm_mad;
    cm_message m;
    m.attribute = static_cast<cm_attribute>(load_be16(h + 16));
    const std::size_t priv = private_offset(m.attribute);
    if (priv == 0) return reject_reason::unsupported_cm_attribute;
    m.transaction_id = load_be64(h + 8);
    const std::uint8_t* d = h + mad_header_size;
    m.local_comm_id = load_be32(d);
    if (m.attribute != cm_attribute::req) m.remote_comm_id = load_be32(d + 4);
    switch (m.attribute) {
        case cm_attribute::req:
            m.service_id = load_be64(d + req_at::service_id);
            m.local_ca_guid = load_be64(d + req_at::local_ca_guid);
            m.local_qpn = load_be24(d + req_at::local_qpn);
            m.responder_resources = d[req_at::responder_resources];
            m.initiator_depth = d[req_at::initiator_depth];
            m.remote_cm_response_timeout = d[req_at::remote_timeout] >> 3;
            m.starting_psn = load_be24(d + req_at::starting_psn);
            m.local_cm_response_timeout = d[req_at::local_timeout] >> 3;
            m.retry_count = d[req_at::local_timeout] & 7;
            m.pkey = load_be16(d + req_at::pkey);
            m.path_mtu = d[req_at::mtu] >> 4;
            m.rnr_retry_count = d[req_at::mtu] & 7;
            m.max_cm_retries = d[req_at::max_cm_retries] >> 4;
            std::memcpy(m.local_gid.data(), d + req_at::local_gid, 16);
            std::memcpy(m.remote_gid.data(), d + req_at::remote_gid, 16);
            m.traffic_class = d[req_at::traffic_class];
            m.hop_limit = d[req_at::hop_limit];
            m.sl = d[req_at::sl] >> 4;
            m.local_ack_timeout = d[req_at::ack_timeout] >> 3;
            break;
        case cm_attribute::rep:
            m.local_qpn = load_be24(d + rep_at::local_qpn);
            m.starting_psn = load_be24(d + rep_at::starting_psn);
            m.responder_resources = d[rep_at::responder_resources];
            m.initiator_depth = d[rep_at::initiator_depth];
            m.target_ack_delay = d[rep_at::ack_delay] >> 3;
            m.rnr_retry_count = d[rep_at::rnr_retry] >> 5;
            m.local_ca_guid = load_be64(d + rep_at::local_ca_guid);
            break;
        case cm_attribute::rej:
            m.rejected_message = d[rej_message] >> 6;
            m.reject_reason_code = load_be16(d + rej_reason);
            break;
        case cm_attribute::dreq:
            m.remote_qpn = load_be24(d + dreq_remote_qpn);
            break;
        default:
            break;
    }
    std::memcpy(m.private_data.data(), d + priv, private_data_size(m.attribute));
    out = m;
    return reject_reason::none;
}

void visit(const cm_message& m, field_visitor& v) {
    v.begin("cm");
    v.field("attribute", static_cast<std::uint16_t>(m.attribute), to_string(m.attribute));
    v.field("transaction_id", m.transaction_id);
    v.field("local_comm_id", m.local_comm_id);
    if (m.attribute != cm_attribute::req) v.field("remote_comm_id", m.remote_comm_id);
    if (m.attribute == cm_attribute::req || m.attribute == cm_attribute::rep) {
        v.field("local_qpn", m.local_qpn);
        v.field("starting_psn", m.starting_psn);
        v.field("responder_resources", m.responder_resources);
        v.field("initiator_depth", m.initiator_depth);
        v.field("rnr_retry_count", m.rnr_retry_count);
    }
    if (m.attribute == cm_attribute::req) {
        v.field("service_id", m.service_id);
        v.field("path_mtu", m.path_mtu);
        v.field("retry_count", m.retry_count);
        v.field("local_ack_timeout", m.local_ack_timeout);
    }
    if (m.attribute == cm_attribute::rej) v.field("reason", m.reject_reason_code);
    if (m.attribute == cm_attribute::dreq) v.field("remote_qpn", m.remote_qpn);
    v.end();
}

void summarize(const cm_message& m, std::string& out) {
    char buf[128];
    int n =
        std::snprintf(buf, sizeof buf, "CM %s comm 0x%x", to_string(m.attribute), m.local_comm_id);
    if (m.attribute == cm_attribute::req || m.attribute == cm_attribute::rep)
        n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), " qpn 0x%06x psn %u",
                           m.local_qpn, m.starting_psn);
    if (m.attribute == cm_attribute::req)
        std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), " mtu %u",
                      ib_mtu_bytes(m.path_mtu));
    if (m.attribute == cm_attribute::rej)
        std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), " reason %u",
                      m.reject_reason_code);
    out += buf;
}

}  // namespace uet::wire
