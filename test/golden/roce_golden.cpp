// RoCEv2 sample frames: one per RC opcode family, each built with build_roce_frame so the ICRC
// and checksums are real. Distinct dest QPs and PSNs let tests match packets to their spec.
#include <array>
#include <cstdint>
#include <vector>

#include "golden.hpp"
#include "wire/roce.hpp"
#include "wire/roce_cm.hpp"

namespace uet::golden {

namespace {

using namespace uet::wire;

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<std::uint8_t>(seed + i * 7);
    return v;
}

frame_spec base_spec(std::uint16_t index) {
    frame_spec s;
    s.src_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
    s.dst_mac = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};
    s.src_ip = 0x0a000001;  // 10.0.0.1
    s.dst_ip = 0x0a000002;  // 10.0.0.2
    s.dscp = 26;
    s.ecn = static_cast<std::uint8_t>(ecn_codepoint::ect0);
    s.ttl = 64;
    s.ip_id = static_cast<std::uint16_t>(0x1000 + index);
    s.src_port = static_cast<std::uint16_t>(0xc000 + index);  // RoCEv2 entropy in the source port
    s.dst_port = roce_udp_port;
    return s;
}

bth_header bth(roce_opcode op, std::uint32_t qp, std::uint32_t psn, bool ack_req) {
    bth_header h;
    h.opcode = static_cast<std::uint8_t>(op);
    h.pkey = 0xffff;
    h.dest_qp = qp;
    h.psn = psn;
    h.ack_req = ack_req;
    return h;
}

named_bytes make(const char* name, std::uint16_t index, const roce_packet_spec& r) {
    std::vector<std::uint8_t> buf(9000);
    std::size_t n = build_roce_frame(base_spec(index), r, buf);
    buf.resize(n);  // n == 0 would show up as an empty frame in every test
    return {name, std::move(buf)};
}

}  // namespace

std::vector<std::uint8_t> cm_frame(const cm_message& m) {
    std::array<std::uint8_t, mad_size> mad{};
    if (encode(m, mad) != mad_size) return {};
    roce_packet_spec r;
    r.bth = bth(roce_opcode::ud_send_only, gsi_qpn, 0, false);
    r.deth = deth_header{gsi_qkey, gsi_qpn};
    r.payload = mad;
    return make("cm", 0, r).bytes;
}

std::vector<named_bytes> roce_frames() {
    std::vector<named_bytes> out;
    std::uint16_t i = 0;
    reth_header reth{0x00007f0012345000ull, 0x00a1b2c3, 4096};

    auto send_payload = pattern(61, 0x11);  // 61: pad count 3
    roce_packet_spec r;
    r.bth = bth(roce_opcode::rc_send_only, 0x000101, 1000, true);
    r.bth.se = true;
    r.payload = send_payload;
    out.push_back(make("roce_send_only", i++, r));

    auto full = pattern(1024, 0x22);
    r = {};
    r.bth = bth(roce_opcode::rc_rdma_write_first, 0x000102, 2000, false);
    r.reth = reth;
    r.payload = full;
    out.push_back(make("roce_rdma_write_first", i++, r));

    r = {};
    r.bth = bth(roce_opcode::rc_rdma_write_middle, 0x000103, 2001, false);
    r.payload = full;
    out.push_back(make("roce_rdma_write_middle", i++, r));

    auto tail = pattern(1022, 0x33);  // pad count 2
    r = {};
    r.bth = bth(roce_opcode::rc_rdma_write_last, 0x000104, 2002, true);
    r.payload = tail;
    out.push_back(make("roce_rdma_write_last", i++, r));

    auto small = pattern(37, 0x44);  // pad count 3
    r = {};
    r.bth = bth(roce_opcode::rc_rdma_write_only, 0x000105, 3000, true);
    r.reth = reth_header{0x00007f0000100040ull, 0x00000777, 37};
    r.payload = small;
    out.push_back(make("roce_rdma_write_only", i++, r));

    auto imm_payload = pattern(9, 0x55);  // pad count 3
    r = {};
    r.bth = bth(roce_opcode::rc_rdma_write_only_with_immediate, 0x000106, 3100, true);
    r.bth.se = true;
    r.reth = reth_header{0x00007f0000200000ull, 0x00000888, 9};
    r.immdt = immdt_header{0xdeadbeef};
    r.payload = imm_payload;
    out.push_back(make("roce_rdma_write_only_with_immediate", i++, r));

    r = {};
    r.bth = bth(roce_opcode::rc_rdma_read_request, 0x000107, 4000, true);
    r.reth = reth_header{0x00007f0000300000ull, 0x00000999, 2500};
    out.push_back(make("roce_rdma_read_request", i++, r));

    r = {};
    r.bth = bth(roce_opcode::rc_rdma_read_response_first, 0x000108, 4000, false);
    r.aeth = aeth_header{aeth_header::make_syndrome(aeth_kind::ack, 5), 17};
    r.payload = full;
    out.push_back(make("roce_rdma_read_response_first", i++, r));

    auto read_tail = pattern(1030, 0x66);  // pad count 2
    r = {};
    r.bth = bth(roce_opcode::rc_rdma_read_response_last, 0x000109, 4002, false);
    r.aeth = aeth_header{aeth_header::make_syndrome(aeth_kind::ack, 5), 18};
    r.payload = read_tail;
    out.push_back(make("roce_rdma_read_response_last", i++, r));

    auto read_only = pattern(13, 0x77);  // pad count 3
    r = {};
    r.bth = bth(roce_opcode::rc_rdma_read_response_only, 0x00010a, 4100, false);
    r.aeth = aeth_header{aeth_header::make_syndrome(aeth_kind::ack, 6), 19};
    r.payload = read_only;
    out.push_back(make("roce_rdma_read_response_only", i++, r));

    r = {};
    r.bth = bth(roce_opcode::rc_acknowledge, 0x00010b, 5000, false);
    r.aeth = aeth_header{aeth_header::make_syndrome(aeth_kind::ack, 31), 20};
    out.push_back(make("roce_acknowledge", i++, r));

    r = {};
    r.bth = bth(roce_opcode::rc_compare_swap, 0x00010c, 6000, true);
    r.atomic_eth = atomic_eth_header{0x00007f0000400008ull, 0x00000aaa, 0x1111222233334444ull,
                                     0x5555666677778888ull};
    out.push_back(make("roce_compare_swap", i++, r));

    r = {};
    r.bth = bth(roce_opcode::rc_fetch_add, 0x00010d, 6100, true);
    r.atomic_eth = atomic_eth_header{0x00007f0000400010ull, 0x00000bbb, 0x10, 0};
    out.push_back(make("roce_fetch_add", i++, r));

    r = {};
    r.bth = bth(roce_opcode::rc_atomic_acknowledge, 0x00010e, 6000, false);
    r.aeth = aeth_header{aeth_header::make_syndrome(aeth_kind::ack, 4), 21};
    r.atomic_ack_eth = atomic_ack_eth_header{0x0123456789abcdefull};
    out.push_back(make("roce_atomic_acknowledge", i++, r));

    return out;
}

}  // namespace uet::golden
