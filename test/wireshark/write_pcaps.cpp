// Writes the pcaps the wireshark_dissector test feeds to tshark (with tools/wireshark/uet.lua) and
// to uet-dump --json: every golden UET frame (every PDS type, every SES form and extension, both
// TSS forms, the entropy header over IP protocol 253, a VLAN tag), the dissector-only frames (a
// payload_length beyond the packet) and frames refused in the UET layer, so that both decoders
// must show the same headers before the fault. Nothing binary is committed: this runs at test time.
//
// usage: wireshark_write_pcaps DIR    (writes DIR/uet_golden.pcap and DIR/uet_malformed.pcap)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "golden.hpp"
#include "wire/frame.hpp"
#include "wire/pcap_file.hpp"

namespace {

using uet::golden::named_bytes;

bool write(const std::string& path, const std::vector<named_bytes>& frames) {
    uet::wire::pcap_writer w;
    if (!w.open(path)) return false;
    std::uint64_t ts = 1700000000ull * 1000000000ull;  // fixed: the output is deterministic
    for (const auto& f : frames) {
        if (!w.write(f.bytes, ts)) return false;
        ts += 1000;
    }
    w.close();
    return true;
}

// A UET payload in an IPv4/UDP frame to port 4793 with good checksums.
named_bytes udp_frame(const std::string& name, const std::vector<std::uint8_t>& payload) {
    uet::wire::frame_spec s;
    s.src_ip = 0x0a000001;
    s.dst_ip = 0x0a000002;
    s.src_port = 0xc200;
    s.dst_port = uet::wire::uet_udp_port;
    std::vector<std::uint8_t> buf(payload.size() + 64);
    buf.resize(uet::wire::build_udp_frame(s, payload, buf));
    return {name, std::move(buf)};
}

const std::vector<std::uint8_t>& payload_of(const std::vector<named_bytes>& all,
                                            const std::string& name) {
    for (const auto& p : all)
        if (p.name == name) return p.bytes;
    std::fprintf(stderr, "no golden sample %s\n", name.c_str());
    std::exit(2);
}

// Refused in the UET layer, each after some headers decoded.
std::vector<named_bytes> malformed_frames() {
    const auto all = uet::golden::uet_udp_payloads();
    std::vector<named_bytes> out;
    auto bad_opcode = payload_of(all, "pds_rud_syn_ses_std_send");
    bad_opcode[12] = 0x3f;  // SES opcode 63
    out.push_back(udp_frame("bad_ses_opcode", bad_opcode));
    auto bad_cc = payload_of(all, "pds_ack_cc_nscc");
    bad_cc[12] = static_cast<std::uint8_t>((bad_cc[12] & 0x0f) | 0x50);  // ACK_CC of CC type 5
    out.push_back(udp_frame("ack_cc_unknown_cc_type", bad_cc));
    auto bad_atomic = payload_of(all, "pds_rud_ses_small_atomic");
    bad_atomic[12 + 20 + 1] = 0x7f;  // atomic datatype 127
    out.push_back(udp_frame("bad_atomic_datatype", bad_atomic));
    auto cut = payload_of(all, "pds_rud_ses_medium_fetch_cas");
    cut.resize(12 + 32 + 10);  // the CAS extension cut short
    out.push_back(udp_frame("cas_extension_truncated", cut));
    auto bad_type = payload_of(all, "pds_ack_ses_rsp");
    bad_type[0] = static_cast<std::uint8_t>((bad_type[0] & 0x07) | (15 << 3));  // PDS type 15
    out.push_back(udp_frame("bad_pds_type", bad_type));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    auto golden = uet::golden::uet_frames();
    for (auto& f : uet::golden::uet_dissector_only_frames())
        golden.push_back(std::move(f));
    if (!write(dir + "/uet_golden.pcap", golden) ||
        !write(dir + "/uet_malformed.pcap", malformed_frames())) {
        std::fprintf(stderr, "cannot write the pcaps in %s\n", dir.c_str());
        return 2;
    }
    return 0;
}
