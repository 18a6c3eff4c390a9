// UET sample packets as they follow the UDP header: one per PDS type, per SES form and extension,
// and per TSS form, each built with encode_uet. Every field holds a distinct non-zero value so a
// swapped or misplaced field shows up in any test that decodes them.
#include <cstdint>
#include <vector>

#include "golden.hpp"
#include "wire/uet_packet.hpp"

namespace uet::golden {

namespace {

using namespace uet::wire;

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<std::uint8_t>(seed + i * 13);
    return v;
}

named_bytes build(std::string name, pds_header pds, std::optional<ses_header> ses,
                  const std::vector<std::uint8_t>& payload,
                  std::optional<tss_header> tss = std::nullopt) {
    uet_packet_spec s;
    s.tss = tss;
    s.pds = std::move(pds);
    s.ses = std::move(ses);
    s.payload = payload;
    std::vector<std::uint8_t> buf(encoded_size(s));
    buf.resize(encode_uet(s, buf));
    return {std::move(name), std::move(buf)};
}

pds_rud_rod_request rud(pds_next_hdr next, bool syn) {
    pds_rud_rod_request h;
    h.type = pds_type::rud;
    h.next_hdr = next;
    h.ar = true;
    h.syn = syn;
    h.clear_psn_offset = -3;
    h.psn = 0x10203040;
    h.spdcid = 0x0105;
    if (syn) {
        h.use_rsv_pdc = true;
        h.psn_offset = 0x0abc;
    } else {
        h.dpdcid = 0x0207;
    }
    return h;
}

ses_standard_request std_request(ses_opcode op) {
    ses_standard_request s;
    s.opcode = op;
    s.dc = true;
    s.hd = true;
    s.eom = true;
    s.som = true;
    s.message_id = 0x0707;
    s.ri_generation = 0x11;
    s.job_id = 0x00002a;
    s.pid_on_fep = 0x0123;
    s.resource_index = 0x0456;
    s.buffer_offset = 0x0001020304050607;
    s.initiator = 0x0a0b0c0d;
    s.memory_key = 0x1112131415161718;
    s.header_data = 0x2122232425262728;
    s.request_length = 4096;
    return s;
}

ses_atomic_extension atomic_ext(ses_atomic_opcode op) {
    return {.atomic_opcode = op,
            .atomic_datatype = ses_atomic_datatype::uint64,
            .cacheable = true,
            .cpu_coherent = true};
}

void add_requests(std::vector<named_bytes>& out) {
    auto send = std_request(ses_opcode::send);
    out.push_back(build("pds_rud_syn_ses_std_send", rud(pds_next_hdr::request_std, true), send,
                        pattern(64, 1)));

    pds_rud_rod_request rod = rud(pds_next_hdr::request_std, false);
    rod.type = pds_type::rod;
    rod.retx = true;
    auto write = std_request(ses_opcode::write);
    write.som = false;
    write.hd = false;
    write.payload_length = 48;
    write.message_offset = 0x00012000;
    out.push_back(build("pds_rod_ses_std_write_middle", rod, write, pattern(48, 2)));

    auto atomic = std_request(ses_opcode::fetching_atomic);
    atomic.atomic = atomic_ext(ses_atomic_opcode::sum);
    out.push_back(build("pds_rud_ses_std_fetch_atomic", rud(pds_next_hdr::request_std, false),
                        atomic, pattern(8, 3)));

    auto cas = std_request(ses_opcode::atomic);
    cas.cas = ses_cas_extension{.atomic = atomic_ext(ses_atomic_opcode::cswap_gt)};
    for (std::uint8_t i = 0; i < 16; ++i) {
        cas.cas->compare_value[i] = static_cast<std::uint8_t>(0x40 + i);
        cas.cas->swap_value[i] = static_cast<std::uint8_t>(0x80 + i);
    }
    out.push_back(build("pds_rud_ses_std_cas", rud(pds_next_hdr::request_std, false), cas, {}));

    auto rndv = std_request(ses_opcode::rendezvous_tsend);
    rndv.rendezvous = ses_rendezvous_extension{.eager_length = 2048,
                                               .ri_generation = 0x22,
                                               .pid_on_fep = 0x0321,
                                               .resource_index = 0x0654,
                                               .rd_offset = 0x3132333435363738,
                                               .rd_memory_key = 0x4142434445464748};
    out.push_back(build("pds_rud_ses_std_rndv_tsend", rud(pds_next_hdr::request_std, false), rndv,
                        pattern(32, 4)));

    auto sync = std_request(ses_opcode::sync_write);
    sync.sync = ses_sync_extension{.group = 0x0909, .count = 0x0a0a};
    out.push_back(build("pds_rud_ses_std_sync_write", rud(pds_next_hdr::request_std, false), sync,
                        pattern(16, 5)));

    pds_rud_rod_cc_request cc;
    cc.type = pds_type::rud_cc;
    cc.next_hdr = pds_next_hdr::request_medium;
    cc.retx = true;
    cc.clear_psn_offset = 5;
    cc.psn = 0x50607080;
    cc.spdcid = 0x0311;
    cc.dpdcid = 0x0422;
    cc.ccc_id = 0x33;
    cc.credit_target = 0x0a0b0c;
    ses_medium_request medium;
    medium.opcode = ses_opcode::tagged_send;
    medium.som = true;
    medium.eom = true;
    medium.request_length = 100;
    medium.ri_generation = 0x12;
    medium.job_id = 0x00beef;
    medium.pid_on_fep = 0x0777;
    medium.resource_index = 0x0888;
    medium.buffer_offset = 0x5152535455565758;
    medium.initiator = 0x61626364;
    medium.memory_key = 0x7172737475767778;
    out.push_back(build("pds_rud_cc_ses_medium_tagged_send", cc, medium, pattern(100, 6)));

    cc.type = pds_type::rod_cc;
    cc.next_hdr = pds_next_hdr::request_small;
    cc.syn = true;
    cc.psn_offset = 0x0123;
    cc.dpdcid = 0;
    ses_small_request small;
    small.opcode = ses_opcode::write;
    small.som = true;
    small.eom = true;
    small.rel = true;
    small.request_length = 24;
    small.ri_generation = 0x13;
    small.job_id = 0x00cafe;
    small.pid_on_fep = 0x0999;
    small.resource_index = 0x0aaa;
    small.buffer_offset = 0x8182838485868788;
    out.push_back(build("pds_rod_cc_syn_ses_small_write", cc, small, pattern(24, 7)));

    // Small and medium atomics carry the atomic extension after their fixed bytes too.
    ses_small_request small_atomic = small;
    small_atomic.opcode = ses_opcode::atomic;
    small_atomic.request_length = 8;
    small_atomic.atomic = ses_atomic_extension{.atomic_opcode = ses_atomic_opcode::bxor,
                                               .atomic_datatype = ses_atomic_datatype::uint32,
                                               .cacheable = true,
                                               .cpu_coherent = false};
    out.push_back(build("pds_rud_ses_small_atomic", rud(pds_next_hdr::request_small, false),
                        small_atomic, pattern(8, 14)));

    ses_medium_request medium_cas = medium;
    medium_cas.opcode = ses_opcode::fetching_atomic;
    medium_cas.request_length = 16;
    medium_cas.cas = ses_cas_extension{.atomic = {.atomic_opcode = ses_atomic_opcode::cswap,
                                                  .atomic_datatype = ses_atomic_datatype::int128,
                                                  .cacheable = false,
                                                  .cpu_coherent = true}};
    for (std::uint8_t i = 0; i < 16; ++i) {
        medium_cas.cas->compare_value[i] = static_cast<std::uint8_t>(0xc0 + i);
        medium_cas.cas->swap_value[i] = static_cast<std::uint8_t>(0xe0 + i);
    }
    out.push_back(build("pds_rud_ses_medium_fetch_cas", rud(pds_next_hdr::request_medium, false),
                        medium_cas, {}));

    // The other bits of pdc_info (here uet-ref-prov's use_rsv_pdc, 0x1000) are kept, not refused.
    auto other_bits = rud(pds_next_hdr::request_small, true);
    other_bits.use_rsv_pdc = false;
    other_bits.pdc_info_rsvd = 0x1;
    out.push_back(build("pds_rud_syn_pdc_info_low_bit", other_bits, small, pattern(24, 15)));

    pds_rudi rudi{.type = pds_type::rudi_req,
                  .next_hdr = pds_next_hdr::request_medium,
                  .m = false,
                  .retx = true,
                  .pkt_id = 0x0badf00d};
    medium.opcode = ses_opcode::datagram_send;
    out.push_back(build("pds_rudi_req_ses_medium_dgram_send", rudi, medium, pattern(100, 8)));

    pds_uud uud{.next_hdr = pds_next_hdr::request_small};
    small.opcode = ses_opcode::datagram_send;
    out.push_back(build("pds_uud_ses_small_dgram_send", uud, small, pattern(24, 9)));
}

ses_response response() {
    ses_response r;
    r.list = 1;
    r.opcode = ses_response_opcode::response;
    r.version = 0;
    r.return_code = ses_return_code::no_match;
    r.message_id = 0x0707;
    r.ri_generation = 0x14;
    r.job_id = 0x00002a;
    r.modified_length = 3000;
    return r;
}

void add_responses(std::vector<named_bytes>& out) {
    pds_ack ack;
    ack.next_hdr = pds_next_hdr::response;
    ack.m = true;
    ack.req_clear = true;
    ack.ack_psn_offset = 7;
    ack.cack_psn = 0x01020304;
    ack.spdcid = 0x0207;
    ack.dpdcid = 0x0105;
    out.push_back(build("pds_ack_ses_rsp", ack, response(), {}));

    pds_rudi rudi{.type = pds_type::rudi_resp,
                  .next_hdr = pds_next_hdr::response,
                  .m = true,
                  .retx = false,
                  .pkt_id = 0x0badf00d};
    out.push_back(build("pds_rudi_resp_ses_rsp", rudi, response(), {}));

    ses_response_with_data data;
    data.list = 0;
    data.opcode = ses_response_opcode::response_with_data;
    data.version = 0;
    data.return_code = ses_return_code::ok;
    data.message_id = 0x0808;
    data.ri_generation = 0x15;
    data.job_id = 0x00002b;
    data.read_request_message_id = 0x0606;
    data.payload_length = 40;
    data.modified_length = 4000;
    data.message_offset = 0x00002000;
    out.push_back(build("pds_rud_ses_rsp_data", rud(pds_next_hdr::response_data, false), data,
                        pattern(40, 10)));

    ses_small_response_with_data small;
    small.list = 1;
    small.opcode = ses_response_opcode::response_with_data;
    small.version = 0;
    small.return_code = ses_return_code::ok;
    small.payload_length = 16;
    small.job_id = 0x00002c;
    small.original_request_psn = 0x10203041;
    pds_rud_rod_request rod = rud(pds_next_hdr::response_data_small, false);
    rod.type = pds_type::rod;
    out.push_back(build("pds_rod_ses_rsp_data_small", rod, small, pattern(16, 11)));
}

template <class H>
H ack_cc_base() {
    H h;
    h.retx = true;
    h.p = false;
    h.req_close = true;
    h.ack_psn_offset = 2;
    h.cack_psn = 0x00000063;
    h.spdcid = 0x0207;
    h.dpdcid = 0x0105;
    h.cc_flags = 0x5;
    h.mpr = 128;
    h.sack_psn_offset = 1;
    h.sack_bitmap = 0xf0e0d0c0b0a09080;
    return h;
}

void add_acks(std::vector<named_bytes>& out) {
    auto nscc = ack_cc_base<pds_ack_cc>();
    nscc.cc_type = cc_type::nscc;
    nscc.nscc = {.service_time = 0x1234,
                 .restore_cwnd = true,
                 .rcv_cwnd_pend = 0x45,
                 .rcvd_bytes = 0x067890,
                 .ooo_count = 0x0abc};
    out.push_back(build("pds_ack_cc_nscc", nscc, std::nullopt, {}));

    auto credit = ack_cc_base<pds_ack_cc>();
    credit.cc_type = cc_type::credit;
    credit.credit = {.credit = 0x0c0d0e, .ooo_count = 0x0def};
    out.push_back(build("pds_ack_cc_credit", credit, std::nullopt, {}));

    auto ccx = ack_cc_base<pds_ack_ccx>();
    ccx.cc_type = cc_type::nscc;
    ccx.nscc = nscc.nscc;
    ccx.ack_ccx_state = 0x9192939495969798;
    out.push_back(build("pds_ack_ccx", ccx, std::nullopt, {}));

    // A CC type neither NSCC nor credit: legal in an ACK_CCX, its state word kept raw.
    auto ccx_other = ack_cc_base<pds_ack_ccx>();
    ccx_other.cc_type = static_cast<cc_type>(0x7);
    ccx_other.cc_state = 0xa1a2a3a4a5a6a7a8;
    ccx_other.ack_ccx_state = 0xb1b2b3b4b5b6b7b8;
    out.push_back(build("pds_ack_ccx_unknown_cc_type", ccx_other, std::nullopt, {}));

    pds_nack nack;
    nack.m = true;
    nack.code = nack_code::trimmed;
    nack.vendor_code = 0x21;
    nack.nack_psn = 12;
    nack.spdcid = 0x0207;
    nack.dpdcid = 0x0105;
    nack.payload = 0x31323334;
    out.push_back(build("pds_nack_trimmed", nack, std::nullopt, {}));

    pds_nack_ccx nccx;
    nccx.retx = true;
    nccx.nt = true;
    nccx.code = nack_code::no_pkt_buffer;
    nccx.vendor_code = 0x22;
    nccx.nack_psn = 0x0badf00d;
    nccx.payload = 0x41424344;
    nccx.nccx_type = 0xe;
    nccx.nack_ccx_state1 = 0x0123456789abcdef;
    nccx.nack_ccx_state2 = 0xfedcba9876543210;
    out.push_back(build("pds_nack_ccx_rudi", nccx, std::nullopt, {}));

    pds_ctrl ack_req;
    ack_req.ctrl_type = ctrl_type::ack_req;
    ack_req.ar = true;
    ack_req.psn = 0x10203044;
    ack_req.spdcid = 0x0105;
    ack_req.dpdcid = 0x0207;
    ack_req.payload = 0x0707;
    out.push_back(build("pds_ctrl_ack_req", ack_req, std::nullopt, {}));

    pds_ctrl probe;
    probe.ctrl_type = ctrl_type::probe;
    probe.is_rod = true;
    probe.syn = true;
    probe.probe_opaque = 0x5a5a;
    probe.psn = 0x10203045;
    probe.spdcid = 0x0105;
    probe.psn_offset = 0x0005;
    probe.payload = 0x10203000;
    out.push_back(build("pds_ctrl_probe_syn", probe, std::nullopt, {}));
}

void add_tss(std::vector<named_bytes>& out) {
    // After the TSS header everything is ciphertext: a pattern standing for an encrypted PDS
    // header, SES header and payload, then a 16-byte "ICV". (The PDS header given to build is not
    // written: encode_uet writes none after a TSS header.)
    tss_header plain{
        .an = true, .sdi = 0x0a0b0c, .ssi = std::nullopt, .epoch = 0x0102, .tsc = 0x030405060708};
    out.push_back(build("tss_encrypted", rud(pds_next_hdr::request_std, false), std::nullopt,
                        pattern(12 + 44 + 32 + tss_icv_size, 12), plain));
    tss_header with_ssi{
        .an = false, .sdi = 0x0d0e0f, .ssi = 0x11223344, .epoch = 0x0304, .tsc = 0x0a0b0c0d0e0f};
    out.push_back(build("tss_ssi_encrypted", rud(pds_next_hdr::request_small, false), std::nullopt,
                        pattern(12 + 20 + 16 + tss_icv_size, 13), with_ssi));
}

}  // namespace

std::vector<named_bytes> uet_dissector_only_payloads() {
    std::vector<named_bytes> out;
    // Headers only: the payload_length (0x345) declares bytes the packet does not hold.
    auto write = std_request(ses_opcode::write);
    write.som = false;
    write.hd = false;
    write.payload_length = 0x345;
    write.message_offset = 0x00004000;
    out.push_back(build("pds_rud_ses_std_write_truncated_payload",
                        rud(pds_next_hdr::request_std, false), write, {}));
    return out;
}

std::vector<named_bytes> uet_udp_payloads() {
    std::vector<named_bytes> out;
    add_requests(out);
    add_responses(out);
    add_acks(out);
    add_tss(out);
    return out;
}

}  // namespace uet::golden
