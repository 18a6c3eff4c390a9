// Cost of the wire layer on the receive path: parsing whole frames, and the two integrity checks
// (UDP checksum, RoCEv2 ICRC) per byte. The frames are the golden samples the tests use.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "golden.hpp"
#include "wire/dissect.hpp"
#include "wire/frame.hpp"
#include "wire/icrc.hpp"
#include "wire/roce.hpp"
#include "wire/uet_packet.hpp"

namespace {

using namespace uet;

const golden::named_bytes& find_frame(const std::vector<golden::named_bytes>& frames,
                                      std::string_view prefix) {
    for (const auto& f : frames)
        if (f.name.starts_with(prefix)) return f;
    return frames.front();
}

void BM_dissect_uet_frame(benchmark::State& state) {
    static const auto frames = golden::uet_frames();
    const auto& f = find_frame(frames, "udp_pds_rud");
    for (auto _ : state) {
        wire::dissection d;
        benchmark::DoNotOptimize(wire::dissect(f.bytes, d));
        benchmark::DoNotOptimize(d);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * f.bytes.size()));
}
BENCHMARK(BM_dissect_uet_frame);

void BM_dissect_roce_frame(benchmark::State& state) {
    static const auto frames = golden::roce_frames();
    const auto& f = find_frame(frames, "roce_rdma_write_first");
    for (auto _ : state) {
        wire::dissection d;
        benchmark::DoNotOptimize(wire::dissect(f.bytes, d));
        benchmark::DoNotOptimize(d);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * f.bytes.size()));
}
BENCHMARK(BM_dissect_roce_frame);

// What the engine does with every received data frame before any PDS state: Ethernet/IPv4/UDP
// parse with the checksum verified, then the UET headers (a RUD request and an SES standard
// request) decoded. A 1500-byte frame carrying 1344 payload bytes, as uet-perf's default MTU.
void BM_receive_decode_data_frame(benchmark::State& state) {
    wire::uet_packet_spec spec;
    wire::pds_rud_rod_request pds;
    pds.psn = 1000;
    pds.spdcid = 7;
    pds.dpdcid = 9;
    wire::ses_standard_request ses;
    ses.job_id = 4793;
    ses.request_length = 65536;
    ses.buffer_offset = 2432;
    ses.payload_length = 1344;  // a middle packet of a 64 KiB write
    ses.message_offset = 2432;
    pds.next_hdr = wire::next_hdr_for(wire::ses_header{ses});
    spec.pds = pds;
    spec.ses = ses;
    const std::vector<std::uint8_t> payload(1344, 0x5a);
    spec.payload = payload;
    std::vector<std::uint8_t> l4(2048);
    l4.resize(wire::encode_uet(spec, l4));
    wire::frame_spec fs;
    fs.src_ip = 0x0a090002;
    fs.dst_ip = 0x0a090001;
    fs.src_port = 0xc123;
    fs.dst_port = 4793;
    std::vector<std::uint8_t> frame(2048);
    frame.resize(wire::build_udp_frame(fs, l4, frame));
    wire::l2l4_view check;
    wire::uet_packet decoded;
    if (wire::parse_l2l4(frame, check) != wire::reject_reason::none ||
        wire::decode_uet(check.l4_payload, false, decoded) != wire::reject_reason::none ||
        decoded.payload.size() != payload.size()) {
        state.SkipWithError("the benchmark's frame does not decode");
        return;
    }
    for (auto _ : state) {
        wire::l2l4_view v;
        wire::uet_packet pkt;
        benchmark::DoNotOptimize(wire::parse_l2l4(frame, v));
        benchmark::DoNotOptimize(wire::decode_uet(v.l4_payload, false, pkt));
        benchmark::DoNotOptimize(pkt);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_receive_decode_data_frame);

void BM_internet_checksum(benchmark::State& state) {
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(state.range(0)), 0x5a);
    for (auto _ : state)
        benchmark::DoNotOptimize(wire::internet_checksum(buf));
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_internet_checksum)->Arg(64)->Arg(1500)->Arg(4096)->Arg(9000);

void BM_crc32(benchmark::State& state) {
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(state.range(0)), 0x5a);
    for (auto _ : state)
        benchmark::DoNotOptimize(wire::crc32(buf));
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_crc32)->Arg(64)->Arg(1500)->Arg(4096)->Arg(9000);

// The slice-by-8 table path alone: what BM_crc32 runs on a CPU without PCLMULQDQ.
void BM_crc32_table(benchmark::State& state) {
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(state.range(0)), 0x5a);
    for (auto _ : state)
        benchmark::DoNotOptimize(wire::crc32_update_table(wire::crc32_init, buf));
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_crc32_table)->Arg(64)->Arg(1500)->Arg(4096)->Arg(9000);

// The ICRC of a payload copied into a frame: one pass that copies while it folds, against the
// CRC alone and against a copy followed by the CRC.
void BM_crc32_copy(benchmark::State& state) {
    std::vector<std::uint8_t> src(static_cast<std::size_t>(state.range(0)), 0x5a), dst(src.size());
    for (auto _ : state) {
        benchmark::DoNotOptimize(
            wire::crc32_copy(wire::crc32_init, dst.data(), src.data(), src.size()));
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_crc32_copy)->Arg(64)->Arg(1500)->Arg(4096)->Arg(9000);

void BM_memcpy_then_crc32(benchmark::State& state) {
    std::vector<std::uint8_t> src(static_cast<std::size_t>(state.range(0)), 0x5a), dst(src.size());
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), src.size());
        benchmark::ClobberMemory();
        benchmark::DoNotOptimize(wire::crc32(dst));
    }
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_memcpy_then_crc32)->Arg(64)->Arg(1500)->Arg(4096)->Arg(9000);

// A RoCE RDMA WRITE MIDDLE frame of range(0) payload bytes, built as the engine builds its data
// frames (build_roce_frame_fast: header template, ICRC summed while copying) against the
// reference builder (headers from the frame_spec, a copy, then the ICRC over the frame). No
// UDP checksum, as on memif.
wire::roce_packet_spec write_middle(const std::vector<std::uint8_t>& payload) {
    wire::roce_packet_spec r;
    r.bth.opcode = static_cast<std::uint8_t>(wire::roce_opcode::rc_rdma_write_middle);
    r.bth.dest_qp = 0x1234;
    r.payload = payload;
    return r;
}
wire::frame_spec roce_data_spec() {
    wire::frame_spec s;
    s.src_ip = 0x0a000001;
    s.dst_ip = 0x0a000002;
    s.ecn = static_cast<std::uint8_t>(wire::ecn_codepoint::ect0);
    s.dst_port = wire::roce_udp_port;
    s.udp_checksum = false;
    return s;
}

void BM_build_roce_frame(benchmark::State& state) {
    const std::vector<std::uint8_t> payload(static_cast<std::size_t>(state.range(0)), 0x5a);
    std::vector<std::uint8_t> out(payload.size() + 128);
    const wire::roce_packet_spec r = write_middle(payload);
    wire::frame_spec s = roce_data_spec();
    for (auto _ : state) {
        ++s.ip_id;
        benchmark::DoNotOptimize(wire::build_roce_frame(s, r, out));
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_build_roce_frame)->Arg(1024)->Arg(4096);

void BM_build_roce_frame_fast(benchmark::State& state) {
    const std::vector<std::uint8_t> payload(static_cast<std::size_t>(state.range(0)), 0x5a);
    std::vector<std::uint8_t> out(payload.size() + 128);
    const wire::roce_packet_spec r = write_middle(payload);
    wire::udp_header_template t;
    t.build(roce_data_spec());
    std::uint16_t id = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(wire::build_roce_frame_fast(t, ++id, 0xc000, false, r, out));
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_build_roce_frame_fast)->Arg(1024)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
