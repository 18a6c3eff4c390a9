// Writes every golden RoCEv2 frame to a pcap and has tshark (Wireshark's dissector, an
// independent implementation) decode it: each packet must dissect as InfiniBand over UDP 4791
// with the opcode, DestQP, PSN and pad count we wrote, valid IP/UDP checksums and no
// malformed/expert flags.
//
// Wireshark 4.0's InfiniBand dissector only displays the ICRC ("infiniband.invariant.crc", the
// four bytes it locates after the payload, read big-endian); it does not verify it. So the test
// recomputes the ICRC from the captured bytes with its own bitwise CRC-32 and masking (no code
// shared with lib/wire) and requires tshark's ICRC field to equal it. A copy with one payload
// byte corrupted (UDP checksum refreshed so only the ICRC is wrong) shows the comparison fails.
//
// Without tshark the test fails (it never skips): install it with `apt-get install tshark`.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "golden.hpp"
#include "tshark.hpp"
#include "wire/ipv4.hpp"
#include "wire/roce.hpp"
#include "wire/roce_cm.hpp"

namespace {

using bytes = std::vector<std::uint8_t>;

using uet::test::have_tshark;

// ---- an independent ICRC: bitwise CRC-32 over the masked pseudo-packet (IBA annex A17) ----

std::uint32_t crc32_bitwise(std::uint32_t crc, const bytes& data) {
    for (std::uint8_t b : data) {
        crc ^= b;
        for (int i = 0; i < 8; ++i)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc;
}

// ICRC of an untagged or single-tagged Ethernet/IPv4/UDP RoCEv2 frame, as the 32-bit value
// tshark shows (the wire bytes read big-endian).
std::uint32_t independent_icrc_as_tshark_shows(const bytes& frame) {
    std::size_t ip = (frame[12] == 0x81 && frame[13] == 0x00) ? 18 : 14;
    std::size_t ihl = (frame[ip] & 0x0f) * 4u;
    std::size_t ip_len = (std::size_t{frame[ip + 2]} << 8) | frame[ip + 3];
    bytes m(8 + ip_len - 4, 0xff);  // 8 bytes of 1s stand in for the masked InfiniBand LRH
    for (std::size_t i = 0; i + 4 < ip_len; ++i)
        m[8 + i] = frame[ip + i];
    const std::size_t base = 8;
    m[base + 1] = 0xff;                            // TOS
    m[base + 8] = 0xff;                            // TTL
    m[base + 10] = m[base + 11] = 0xff;            // IP header checksum
    m[base + ihl + 6] = m[base + ihl + 7] = 0xff;  // UDP checksum
    m[base + ihl + 8 + 4] = 0xff;                  // BTH resv8a
    std::uint32_t crc = ~crc32_bitwise(0xffffffffu, m);
    // Stored least significant byte first; tshark reads the 4 bytes big-endian.
    return ((crc & 0xff) << 24) | ((crc & 0xff00) << 8) | ((crc >> 8) & 0xff00) | (crc >> 24);
}

const std::map<std::string, unsigned> opcode_by_name = {
    {"roce_send_only", 0x04},
    {"roce_rdma_write_first", 0x06},
    {"roce_rdma_write_middle", 0x07},
    {"roce_rdma_write_last", 0x08},
    {"roce_rdma_write_only", 0x0a},
    {"roce_rdma_write_only_with_immediate", 0x0b},
    {"roce_rdma_read_request", 0x0c},
    {"roce_rdma_read_response_first", 0x0d},
    {"roce_rdma_read_response_last", 0x0f},
    {"roce_rdma_read_response_only", 0x10},
    {"roce_acknowledge", 0x11},
    {"roce_compare_swap", 0x13},
    {"roce_fetch_add", 0x14},
    {"roce_atomic_acknowledge", 0x12},
};

const char* const roce_fields[] = {
    "frame.number",          "frame.protocols",
    "udp.dstport",           "infiniband.bth.opcode",
    "infiniband.bth.destqp", "infiniband.bth.psn",
    "infiniband.bth.padcnt", "infiniband.invariant.crc",
    "ip.checksum.status",    "udp.checksum.status",
    "_ws.malformed",         "_ws.expert",
};
enum col {
    c_number,
    c_protocols,
    c_dport,
    c_opcode,
    c_destqp,
    c_psn,
    c_padcnt,
    c_icrc,
    c_ip_status,
    c_udp_status,
    c_malformed,
    c_expert,
    c_count
};

// tshark's rows for frames (one vector of columns per packet), with checksum validation on.
std::vector<std::vector<std::string>> dissect(const std::vector<uet::golden::named_bytes>& frames,
                                              const std::string& name) {
    std::vector<bytes> raw;
    for (const auto& f : frames)
        raw.push_back(f.bytes);
    // Checksum validation is off by default in Wireshark; turn it on so the status fields mean
    // something. UDP 4791 is dissected as RoCEv2 by default (infiniband.rroce.port).
    const auto r = uet::test::tshark_fields(raw, name, roce_fields,
                                            "-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE");
    EXPECT_TRUE(r.ok) << "tshark failed: " << r.command;
    return r.rows;
}

std::uint32_t be24(const bytes& f, std::size_t off) {
    return (std::uint32_t{f[off]} << 16) | (std::uint32_t{f[off + 1]} << 8) | f[off + 2];
}

// Every disagreement between tshark's view of a packet and the frame we wrote.
std::vector<std::string> problems(const uet::golden::named_bytes& f,
                                  const std::vector<std::string>& row) {
    std::vector<std::string> p;
    if (row.size() != c_count) {
        p.push_back("tshark returned " + std::to_string(row.size()) + " columns");
        return p;
    }
    const bytes& b = f.bytes;
    const std::size_t bth = 14 + 20 + 8;  // golden frames are untagged IPv4 without options
    auto expect = [&](const char* what, const std::string& got, const std::string& want) {
        if (got != want) p.push_back(std::string(what) + ": tshark " + got + ", want " + want);
    };
    char hex[16];
    if (row[c_protocols].find(":udp:infiniband") == std::string::npos)
        p.push_back("not dissected as InfiniBand over UDP: " + row[c_protocols]);
    expect("udp.dstport", row[c_dport], "4791");
    auto op = opcode_by_name.find(f.name);
    if (op == opcode_by_name.end())
        p.push_back("unexpected golden frame name");
    else if (b[bth] != op->second)
        p.push_back("frame opcode differs from its name");
    expect("opcode", row[c_opcode], std::to_string(b[bth]));
    std::snprintf(hex, sizeof hex, "0x%06x", be24(b, bth + 5));
    expect("destqp", row[c_destqp], hex);
    expect("psn", row[c_psn], std::to_string(be24(b, bth + 9)));
    expect("padcnt", row[c_padcnt], std::to_string((b[bth + 1] >> 4) & 3));
    std::snprintf(hex, sizeof hex, "0x%08x", independent_icrc_as_tshark_shows(b));
    expect("icrc", row[c_icrc], hex);
    expect("ip.checksum.status", row[c_ip_status], "1");  // 1 = good
    expect("udp.checksum.status", row[c_udp_status], "1");
    expect("malformed", row[c_malformed], "");
    expect("expert", row[c_expert], "");
    return p;
}

TEST(roce_tshark, tshark_is_installed) {
    ASSERT_TRUE(have_tshark())
        << "tshark not found on PATH: this test needs Wireshark's tshark to cross-check the "
           "RoCEv2 encoder (apt-get install tshark). It fails rather than skips on purpose.";
}

TEST(roce_tshark, decodes_every_golden_frame) {
    ASSERT_TRUE(have_tshark()) << "tshark not found (apt-get install tshark)";
    auto frames = uet::golden::roce_frames();
    ASSERT_EQ(frames.size(), opcode_by_name.size());
    auto rows = dissect(frames, "roce_tshark_test.pcap");
    ASSERT_EQ(rows.size(), frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
        SCOPED_TRACE(frames[i].name);
        EXPECT_EQ(rows[i][c_number], std::to_string(i + 1));
        for (const auto& p : problems(frames[i], rows[i]))
            ADD_FAILURE() << p;
    }
}

TEST(roce_tshark, corrupted_copy_is_caught) {
    ASSERT_TRUE(have_tshark()) << "tshark not found (apt-get install tshark)";
    auto frames = uet::golden::roce_frames();
    ASSERT_FALSE(frames.empty());
    // One payload byte changed; the UDP checksum is refreshed so only the ICRC is stale.
    auto bad = frames[0];
    bytes& b = bad.bytes;
    b[b.size() - 8] ^= 0x20;
    b[14 + 20 + 6] = b[14 + 20 + 7] = 0;
    auto ip_src = (std::uint32_t{b[26]} << 24) | (b[27] << 16) | (b[28] << 8) | b[29];
    auto ip_dst = (std::uint32_t{b[30]} << 24) | (b[31] << 16) | (b[32] << 8) | b[33];
    std::uint16_t c = uet::wire::udp_checksum(ip_src, ip_dst, std::span(b).subspan(34));
    b[40] = static_cast<std::uint8_t>(c >> 8);
    b[41] = static_cast<std::uint8_t>(c);

    auto rows = dissect({frames[0], bad}, "roce_tshark_corrupt_test.pcap");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_TRUE(problems(frames[0], rows[0]).empty());
    auto p = problems(bad, rows[1]);
    // tshark still decodes it (it does not check the ICRC), but the comparison above flags it.
    ASSERT_EQ(p.size(), 1u) << (p.empty() ? "" : p[0]);
    EXPECT_EQ(p[0].rfind("icrc:", 0), 0u) << p[0];
}

}  // namespace

namespace {

// The connection manager's six messages as a UD SEND to QP 1 with the GSI Q_Key, each with
// fields of its own; tshark must read back what the encoder wrote.
std::vector<uet::golden::named_bytes> cm_frames() {
    using namespace uet::wire;
    std::vector<uet::golden::named_bytes> frames;
    const cm_attribute all[] = {cm_attribute::req, cm_attribute::rep,  cm_attribute::rtu,
                                cm_attribute::rej, cm_attribute::dreq, cm_attribute::drep};
    for (const cm_attribute a : all) {
        cm_message m;
        m.attribute = a;
        m.transaction_id = 0x1122334455667788ull;
        m.local_comm_id = 0x1000 + static_cast<std::uint32_t>(a);
        m.remote_comm_id = 0x2000;
        m.local_qpn = 0x0abcde;
        m.starting_psn = 0x123456;
        m.path_mtu = ib_mtu_code(4096);
        m.rnr_retry_count = 7;
        m.retry_count = 6;
        m.responder_resources = 4;
        m.initiator_depth = 8;
        m.reject_reason_code = 28;  // consumer reject
        m.local_gid = ipv4_mapped_gid(0x0a000001);
        m.remote_gid = ipv4_mapped_gid(0x0a000002);
        const bytes frame = uet::golden::cm_frame(m);
        EXPECT_FALSE(frame.empty());
        frames.push_back({to_string(a), frame});
    }
    return frames;
}

TEST(roce_tshark, cm_messages_dissect_as_the_communication_manager) {
    ASSERT_TRUE(have_tshark()) << "tshark not found (apt-get install tshark)";
    const auto frames = cm_frames();
    const char* fields[] = {
        "infiniband.bth.opcode",
        "infiniband.deth.q_key",
        "infiniband.deth.srcqp",
        "infiniband.mad.mgmtclass",
        "infiniband.mad.attributeid",
        "infiniband.cm.req.localqpn",
        "infiniband.cm.req.startpsn",
        "infiniband.cm.req.pppmtu",
        "infiniband.cm.req.rnrretrcount",
        "infiniband.cm.req.retrcount",
        "infiniband.cm.rep.localqpn",
        "infiniband.cm.rep.startpsn",
        "infiniband.cm.rep.remotecommid",
        "infiniband.cm.rtu.remotecommid",
        "infiniband.cm.rej.reason",
        "infiniband.cm.dreq.remotecommid",
        "_ws.malformed",
        "_ws.expert",
    };
    std::vector<bytes> raw;
    for (const auto& f : frames)
        raw.push_back(f.bytes);
    const auto dissected = uet::test::tshark_fields(raw, "roce_tshark_cm_test.pcap", fields);
    ASSERT_TRUE(dissected.ok) << dissected.command;
    const auto& rows = dissected.rows;
    ASSERT_EQ(rows.size(), frames.size());
    const char* const attribute_ids[] = {"0x0010", "0x0013", "0x0014",
                                         "0x0012", "0x0015", "0x0016"};
    for (std::size_t i = 0; i < rows.size(); ++i) {
        SCOPED_TRACE(frames[i].name);
        const auto& r = rows[i];
        ASSERT_EQ(r.size(), std::size(fields));
        EXPECT_EQ(r[0], "100");                 // 0x64, UD SEND only
        EXPECT_EQ(r[1], "0x0000000080010000");  // tshark shows the Q_Key as 64 bits
        EXPECT_EQ(r[2], "0x00000001");
        EXPECT_EQ(r[3], "0x07");
        EXPECT_EQ(r[4], attribute_ids[i]);
        EXPECT_EQ(r[16], "");
        EXPECT_EQ(r[17], "");
    }
    EXPECT_EQ(rows[0][5], "0x0abcde");
    EXPECT_EQ(rows[0][6], "0x123456");
    EXPECT_EQ(rows[0][7], "0x05");  // 4096
    EXPECT_EQ(rows[0][8], "0x07");
    EXPECT_EQ(rows[0][9], "0x06");
    EXPECT_EQ(rows[1][10], "0x0abcde");
    EXPECT_EQ(rows[1][11], "0x123456");
    EXPECT_EQ(rows[1][12], "0x00002000");
    EXPECT_EQ(rows[2][13], "0x00002000");
    EXPECT_EQ(rows[3][14], "0x001c");  // 28, consumer reject
    EXPECT_EQ(rows[4][15], "0x00002000");
}

}  // namespace
