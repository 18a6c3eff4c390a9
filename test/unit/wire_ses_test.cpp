// SES headers against byte vectors written by hand from the public layout (uet-ref-prov
// uet_pkt_hdr.h), not produced by our encoder.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wire/uet_ses.hpp"
#include "wire_test_helpers.hpp"

namespace {

using namespace uet::wire;
using uet::wire_test::recorder;

template <class H>
std::size_t size_of(const H& h) {
    if constexpr (std::is_same_v<H, ses_standard_request>)
        return encoded_size(h);
    else
        return H::wire_size;
}

// The shared check_golden, and the size encoded_size gives.
template <class H, std::size_t N>
void check_golden(const std::array<std::uint8_t, N>& bytes, const H& fields) {
    ASSERT_EQ(size_of(fields), N);
    uet::wire_test::check_golden(bytes, fields);
}

// Also through decode_ses, for the header types a PDS next_hdr can name.
template <class H, std::size_t N>
void check_dispatch(const std::array<std::uint8_t, N>& bytes, const H& fields, pds_next_hdr which) {
    ses_header any;
    std::size_t used = 0;
    ASSERT_EQ(decode_ses(bytes, which, any, used), reject_reason::none);
    EXPECT_EQ(used, N);
    ASSERT_TRUE(std::holds_alternative<H>(any));
    EXPECT_TRUE(std::get<H>(any) == fields);
    EXPECT_EQ(next_hdr_for(any), which);
    EXPECT_EQ(encoded_size(any), N);
    for (std::size_t n = 0; n < N; ++n)
        EXPECT_EQ(decode_ses(std::span(bytes).first(n), which, any, used),
                  reject_reason::truncated);
}

// The standard-request fields shared by the samples below.
ses_standard_request std_fields(ses_opcode op) {
    ses_standard_request s;
    s.opcode = op;
    s.dc = s.hd = s.eom = s.som = true;
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

// The inline bit test agrees with the three per-extension predicates on every 6-bit opcode.
TEST(wire_ses, has_extension_is_any_of_the_three) {
    unsigned with = 0;
    for (unsigned v = 0; v < 64; ++v) {
        const auto op = static_cast<ses_opcode>(v);
        const bool any =
            ses_opcode_has_sync(op) || ses_opcode_has_atomic(op) || ses_opcode_has_rendezvous(op);
        EXPECT_EQ(ses_opcode_has_extension(op), any) << v;
        with += any;
    }
    EXPECT_EQ(with, 8u);
}

TEST(wire_ses, sizes) {
    EXPECT_EQ(ses_standard_request::wire_size, 44u);
    EXPECT_EQ(ses_medium_request::wire_size, 32u);
    EXPECT_EQ(ses_small_request::wire_size, 20u);
    EXPECT_EQ(ses_atomic_extension::wire_size, 4u);
    EXPECT_EQ(ses_cas_extension::wire_size, 36u);
    EXPECT_EQ(ses_response::wire_size, 12u);
    EXPECT_EQ(ses_response_with_data::wire_size, 20u);
    EXPECT_EQ(ses_small_response_with_data::wire_size, 12u);
    EXPECT_EQ(ses_sync_extension::wire_size, 4u);
    EXPECT_EQ(ses_rendezvous_extension::wire_size, 24u);
}

TEST(wire_ses, standard_send_first_packet) {
    constexpr std::array<std::uint8_t, 44> bytes{
        0x05,                                            // rsvd | opcode SEND
        0x27,                                            // version 0 | DC HD EOM SOM
        0x07, 0x07,                                      // message_id
        0x11, 0x00, 0x00, 0x2a,                          // ri_generation | job_id
        0x01, 0x23,                                      // rsvd | pid_on_fep
        0x04, 0x56,                                      // rsvd | resource_index
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,  // buffer_offset
        0x0a, 0x0b, 0x0c, 0x0d,                          // initiator
        0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,  // memory_key
        0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,  // header_data
        0x00, 0x00, 0x10, 0x00,                          // request_length 4096
    };
    const auto h = std_fields(ses_opcode::send);
    check_golden(bytes, h);
    check_dispatch(bytes, h, pds_next_hdr::request_std);
}

TEST(wire_ses, standard_write_middle_packet) {
    constexpr std::array<std::uint8_t, 44> bytes{
        0x01,                                            // opcode WRITE
        0x22,                                            // DC EOM (SOM=0, HD=0)
        0x07, 0x07, 0x11, 0x00, 0x00, 0x2a,              // message_id, ri_generation, job_id
        0x01, 0x23, 0x04, 0x56,                          // pid_on_fep, resource_index
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,  // buffer_offset
        0x0a, 0x0b, 0x0c, 0x0d,                          // initiator
        0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,  // memory_key
        0x00, 0x00,                                      // reserved
        0x00, 0x30,                                      // rsvd(2) | payload_length 48
        0x00, 0x01, 0x20, 0x00,                          // message_offset
        0x00, 0x00, 0x10, 0x00,                          // request_length
    };
    auto h = std_fields(ses_opcode::write);
    h.hd = h.som = false;
    h.header_data = 0;
    h.payload_length = 48;
    h.message_offset = 0x00012000;
    check_golden(bytes, h);

    // decode_ses checks payload_length against the bytes after the header.
    std::vector<std::uint8_t> pkt(bytes.begin(), bytes.end());
    ses_header any;
    std::size_t used = 0;
    pkt.resize(44 + 47);
    EXPECT_EQ(decode_ses(pkt, pds_next_hdr::request_std, any, used),
              reject_reason::bad_ses_payload_length);
    pkt.resize(44 + 48);
    EXPECT_EQ(decode_ses(pkt, pds_next_hdr::request_std, any, used), reject_reason::none);
    EXPECT_EQ(used, 44u);
}

TEST(wire_ses, standard_fetch_atomic_with_extension) {
    constexpr std::array<std::uint8_t, 48> bytes{
        0x04, 0x27, 0x07, 0x07,                          // FETCH_ATOMIC, DC HD EOM SOM, msg_id
        0x11, 0x00, 0x00, 0x2a, 0x01, 0x23, 0x04, 0x56,  // ri/job, pid_on_fep, resource_index
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,  // buffer_offset
        0x0a, 0x0b, 0x0c, 0x0d,                          // initiator
        0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,  // memory_key
        0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,  // header_data
        0x00, 0x00, 0x10, 0x00,                          // request_length
        0x02,                                            // atomic_opcode SUM
        0x07,                                            // atomic_datatype UINT64
        0x03,                                            // cacheable 0x01 | cpu_coherent 0x02
        0x00,                                            // reserved
    };
    auto h = std_fields(ses_opcode::fetching_atomic);
    h.atomic = ses_atomic_extension{.atomic_opcode = ses_atomic_opcode::sum,
                                    .atomic_datatype = ses_atomic_datatype::uint64,
                                    .cacheable = true,
                                    .cpu_coherent = true};
    check_golden(bytes, h);
    check_dispatch(bytes, h, pds_next_hdr::request_std);
}

TEST(wire_ses, atomic_extension) {
    constexpr std::array<std::uint8_t, 4> bytes{0x0c, 0x11, 0x02, 0x00};  // WRITE, FP16, coherent
    check_golden(bytes, ses_atomic_extension{.atomic_opcode = ses_atomic_opcode::write,
                                             .atomic_datatype = ses_atomic_datatype::fp16,
                                             .cacheable = false,
                                             .cpu_coherent = true});
}

TEST(wire_ses, compare_and_swap_extension) {
    constexpr std::array<std::uint8_t, 36> bytes{
        0x12, 0x07, 0x01, 0x00,  // CSWAP_GT, UINT64, cacheable, reserved
        0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47,
        0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,  // compare_value
        0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
        0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,  // swap_value
    };
    ses_cas_extension h;
    h.atomic = {.atomic_opcode = ses_atomic_opcode::cswap_gt,
                .atomic_datatype = ses_atomic_datatype::uint64,
                .cacheable = true,
                .cpu_coherent = false};
    for (std::uint8_t i = 0; i < 16; ++i) {
        h.compare_value[i] = static_cast<std::uint8_t>(0x40 + i);
        h.swap_value[i] = static_cast<std::uint8_t>(0x80 + i);
    }
    check_golden(bytes, h);

    // After a standard ATOMIC request the CAS form is chosen by the atomic opcode.
    auto req = std_fields(ses_opcode::atomic);
    req.cas = h;
    std::vector<std::uint8_t> buf(80);
    ASSERT_EQ(encode(req, buf), 80u);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), buf.begin() + 44));
    ses_standard_request back;
    ASSERT_EQ(decode(buf, back), reject_reason::none);
    EXPECT_TRUE(back == req);
    for (std::size_t n = 44; n < 80; ++n)
        EXPECT_EQ(decode(std::span(buf).first(n), back), reject_reason::truncated);
}

TEST(wire_ses, sync_and_rendezvous_extensions) {
    constexpr std::array<std::uint8_t, 4> sync{0x09, 0x09, 0x0a, 0x0a};  // group, count
    check_golden(sync, ses_sync_extension{.group = 0x0909, .count = 0x0a0a});
    constexpr std::array<std::uint8_t, 24> rndv{
        0x00, 0x00, 0x08, 0x00,                          // eager_length 2048
        0x22, 0x32, 0x16, 0x54,                          // ri_gen 0x22 | pid 0x321 | index 0x654
        0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38,  // rd_offset
        0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,  // rd_memory_key
    };
    check_golden(rndv, ses_rendezvous_extension{.eager_length = 2048,
                                                .ri_generation = 0x22,
                                                .pid_on_fep = 0x321,
                                                .resource_index = 0x654,
                                                .rd_offset = 0x3132333435363738,
                                                .rd_memory_key = 0x4142434445464748});
}

TEST(wire_ses, medium_request) {
    constexpr std::array<std::uint8_t, 32> bytes{
        0x09,                                            // TAGGED_SEND
        0x03,                                            // EOM SOM
        0x00, 0x64,                                      // rsvd | request_length 100
        0x12, 0x00, 0xbe, 0xef,                          // ri_generation | job_id
        0x07, 0x77, 0x08, 0x88,                          // pid_on_fep, resource_index
        0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,  // buffer_offset
        0x61, 0x62, 0x63, 0x64,                          // initiator
        0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78,  // match_bits
    };
    ses_medium_request h;
    h.opcode = ses_opcode::tagged_send;
    h.som = h.eom = true;
    h.request_length = 100;
    h.ri_generation = 0x12;
    h.job_id = 0x00beef;
    h.pid_on_fep = 0x777;
    h.resource_index = 0x888;
    h.buffer_offset = 0x5152535455565758;
    h.initiator = 0x61626364;
    h.memory_key = 0x7172737475767778;
    check_golden(bytes, h);
    check_dispatch(bytes, h, pds_next_hdr::request_medium);
}

TEST(wire_ses, small_request) {
    constexpr std::array<std::uint8_t, 20> bytes{
        0x01,                                            // WRITE
        0x0b,                                            // REL EOM SOM
        0x00, 0x18,                                      // request_length 24
        0x13, 0x00, 0xca, 0xfe,                          // ri_generation | job_id
        0x09, 0x99, 0x0a, 0xaa,                          // pid_on_fep, resource_index
        0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88,  // buffer_offset
    };
    ses_small_request h;
    h.opcode = ses_opcode::write;
    h.rel = h.eom = h.som = true;
    h.request_length = 24;
    h.ri_generation = 0x13;
    h.job_id = 0x00cafe;
    h.pid_on_fep = 0x999;
    h.resource_index = 0xaaa;
    h.buffer_offset = 0x8182838485868788;
    check_golden(bytes, h);
    check_dispatch(bytes, h, pds_next_hdr::request_small);
}

TEST(wire_ses, response) {
    constexpr std::array<std::uint8_t, 12> bytes{
        0x41,                    // list 1 | opcode RESPONSE
        0x05,                    // version 0 | return_code NO_MATCH
        0x07, 0x07,              // message_id
        0x14, 0x00, 0x00, 0x2a,  // ri_generation | job_id
        0x00, 0x00, 0x0b, 0xb8,  // modified_length 3000
    };
    ses_response h;
    h.list = 1;
    h.opcode = ses_response_opcode::response;
    h.version = 0;
    h.return_code = ses_return_code::no_match;
    h.message_id = 0x0707;
    h.ri_generation = 0x14;
    h.job_id = 0x2a;
    h.modified_length = 3000;
    check_golden(bytes, h);
    check_dispatch(bytes, h, pds_next_hdr::response);
}

TEST(wire_ses, response_with_data) {
    constexpr std::array<std::uint8_t, 20> bytes{
        0x02,                    // list 0 | RESPONSE_W_DATA
        0x01,                    // OK
        0x08, 0x08,              // message_id
        0x15, 0x00, 0x00, 0x2b,  // ri_generation | job_id
        0x06, 0x06,              // read_request_message_id
        0x00, 0x28,              // rsvd | payload_length 40
        0x00, 0x00, 0x0f, 0xa0,  // modified_length 4000
        0x00, 0x00, 0x20, 0x00,  // message_offset
    };
    ses_response_with_data h;
    h.list = 0;
    h.opcode = ses_response_opcode::response_with_data;
    h.version = 0;
    h.return_code = ses_return_code::ok;
    h.message_id = 0x0808;
    h.ri_generation = 0x15;
    h.job_id = 0x2b;
    h.read_request_message_id = 0x0606;
    h.payload_length = 40;
    h.modified_length = 4000;
    h.message_offset = 0x2000;
    check_golden(bytes, h);
    std::vector<std::uint8_t> pkt(bytes.begin(), bytes.end());
    pkt.resize(20 + 40);
    ses_header any;
    std::size_t used = 0;
    EXPECT_EQ(decode_ses(pkt, pds_next_hdr::response_data, any, used), reject_reason::none);
    pkt.resize(20 + 39);
    EXPECT_EQ(decode_ses(pkt, pds_next_hdr::response_data, any, used),
              reject_reason::bad_ses_payload_length);
}

TEST(wire_ses, small_response_with_data) {
    constexpr std::array<std::uint8_t, 12> bytes{
        0x42,                    // list 1 | RESPONSE_W_DATA
        0x01,                    // OK
        0x00, 0x10,              // rsvd | payload_length 16
        0x00, 0x00, 0x00, 0x2c,  // rsvd | job_id
        0x10, 0x20, 0x30, 0x41,  // original_request_psn
    };
    ses_small_response_with_data h;
    h.list = 1;
    h.opcode = ses_response_opcode::response_with_data;
    h.version = 0;
    h.return_code = ses_return_code::ok;
    h.payload_length = 16;
    h.job_id = 0x2c;
    h.original_request_psn = 0x10203041;
    check_golden(bytes, h);
    std::vector<std::uint8_t> pkt(bytes.begin(), bytes.end());
    pkt.resize(12 + 16);
    ses_header any;
    std::size_t used = 0;
    EXPECT_EQ(decode_ses(pkt, pds_next_hdr::response_data_small, any, used), reject_reason::none);
    EXPECT_EQ(decode_ses(std::span(pkt).first(27), pds_next_hdr::response_data_small, any, used),
              reject_reason::bad_ses_payload_length);
}

TEST(wire_ses, unknown_codes_rejected) {
    std::vector<std::uint8_t> std_bytes(44 + 36);
    ASSERT_EQ(encode(std_fields(ses_opcode::send), std_bytes), 44u);
    ses_standard_request s;
    auto with = [&](std::size_t i, std::uint8_t v) {
        auto copy = std_bytes;
        copy[i] = v;
        return copy;
    };
    EXPECT_EQ(decode(with(1, 0x67), s), reject_reason::bad_ses_version);  // version 1
    EXPECT_EQ(decode(with(1, 0xe7), s), reject_reason::bad_ses_version);  // version 3
    for (unsigned op = 0x12; op < 0x40; ++op)
        EXPECT_EQ(decode(with(0, static_cast<std::uint8_t>(op)), s), reject_reason::bad_ses_opcode);
    // Reserved top bits of the opcode byte are ignored.
    EXPECT_EQ(decode(with(0, 0xc5), s), reject_reason::none);

    auto atomic = with(0, static_cast<std::uint8_t>(ses_opcode::atomic));
    atomic[44] = 0x15;  // atomic opcode past INVAL
    EXPECT_EQ(decode(atomic, s), reject_reason::bad_ses_atomic_opcode);
    atomic[44] = 0x02;
    atomic[45] = 0x12;  // datatype past FP16
    EXPECT_EQ(decode(atomic, s), reject_reason::bad_ses_atomic_datatype);
    atomic[44] = 0x0d;  // CSWAP: the CAS form
    EXPECT_EQ(decode(atomic, s), reject_reason::bad_ses_atomic_datatype);
    atomic[45] = 0x07;
    EXPECT_EQ(decode(atomic, s), reject_reason::none);
    EXPECT_TRUE(s.cas.has_value());

    std::array<std::uint8_t, 12> rsp{0x04, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    ses_response r;
    EXPECT_EQ(decode(rsp, r), reject_reason::bad_ses_response_opcode);
    rsp[0] = 0x01;
    rsp[1] = 0x41;
    EXPECT_EQ(decode(rsp, r), reject_reason::bad_ses_version);
    rsp[1] = 0x3f;  // an unlisted return code is carried, not rejected
    EXPECT_EQ(decode(rsp, r), reject_reason::none);

    ses_header any;
    std::size_t used = 0;
    EXPECT_EQ(decode_ses(std_bytes, pds_next_hdr::none, any, used),
              reject_reason::bad_pds_next_hdr);
    EXPECT_EQ(decode_ses(std_bytes, static_cast<pds_next_hdr>(9), any, used),
              reject_reason::bad_pds_next_hdr);
}

TEST(wire_ses, visit_standard_with_atomic) {
    auto h = std_fields(ses_opcode::tsend_atomic);
    h.atomic = ses_atomic_extension{};
    recorder r;
    visit(ses_header{h}, r);
    const std::vector<std::string> want{
        "ses_std.opcode",
        "ses_std.version",
        "ses_std.dc",
        "ses_std.ie",
        "ses_std.rel",
        "ses_std.hd",
        "ses_std.eom",
        "ses_std.som",
        "ses_std.message_id",
        "ses_std.ri_generation",
        "ses_std.job_id",
        "ses_std.pid_on_fep",
        "ses_std.resource_index",
        "ses_std.buffer_offset",
        "ses_std.initiator",
        "ses_std.match_bits",
        "ses_std.header_data",
        "ses_std.request_length",
        "ses_atomic.atomic_opcode",
        "ses_atomic.atomic_datatype",
        "ses_atomic.cacheable",
        "ses_atomic.cpu_coherent",
    };
    EXPECT_EQ(r.names, want);
}

TEST(wire_ses, visit_small_response_with_data) {
    recorder r;
    visit(ses_small_response_with_data{}, r);
    const std::vector<std::string> want{
        "ses_rsp_data_small.list",
        "ses_rsp_data_small.opcode",
        "ses_rsp_data_small.version",
        "ses_rsp_data_small.return_code",
        "ses_rsp_data_small.payload_length",
        "ses_rsp_data_small.job_id",
        "ses_rsp_data_small.original_request_psn",
    };
    EXPECT_EQ(r.names, want);
}

TEST(wire_ses, names) {
    EXPECT_EQ(ses_opcode_name(ses_opcode::send), "SEND");
    EXPECT_EQ(ses_opcode_name(ses_opcode::sync_atomic), "SYNC_ATOMIC");
    EXPECT_EQ(ses_opcode_name(static_cast<ses_opcode>(0x20)), "UNKNOWN");
    EXPECT_EQ(ses_return_code_name(ses_return_code::dropped), "DROPPED");
    EXPECT_EQ(ses_atomic_opcode_name(ses_atomic_opcode::inval), "INVAL");
    EXPECT_EQ(ses_atomic_datatype_name(ses_atomic_datatype::fp16), "FP16");
    EXPECT_EQ(ses_response_opcode_name(ses_response_opcode::no_response), "NO_RESPONSE");
}

}  // namespace

namespace {

// The fixed-offset standard request encoder and in-place decoder against each other, over
// random headers of every opcode (extensions as the opcode calls for), decoded into a header
// that still holds another packet's fields: nothing of the previous packet may survive.
TEST(wire_ses, standard_request_round_trips_into_a_used_header) {
    std::uint64_t state = 0x9e3779b97f4a7c15ull;
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    ses_standard_request used;
    used.som = true;
    used.header_data = ~0ull;
    used.atomic = ses_atomic_extension{};
    used.rendezvous = ses_rendezvous_extension{};
    used.sync = ses_sync_extension{};
    for (int i = 0; i < 20000; ++i) {
        ses_standard_request h;
        h.opcode =
            static_cast<ses_opcode>(next() % (static_cast<int>(ses_opcode::sync_atomic) + 1));
        h.dc = next() & 1;
        h.ie = next() & 1;
        h.rel = next() & 1;
        h.hd = next() & 1;
        h.eom = next() & 1;
        h.som = next() & 1;
        h.message_id = static_cast<std::uint16_t>(next());
        h.ri_generation = static_cast<std::uint8_t>(next());
        h.job_id = next() & 0xffffff;
        h.pid_on_fep = next() & 0xfff;
        h.resource_index = next() & 0xfff;
        h.buffer_offset = next();
        h.initiator = static_cast<std::uint32_t>(next());
        h.memory_key = next();
        if (h.som) {
            h.header_data = next();
        } else {
            h.payload_length = next() & 0x3fff;
            h.message_offset = static_cast<std::uint32_t>(next());
        }
        h.request_length = static_cast<std::uint32_t>(next());
        if (ses_opcode_has_sync(h.opcode))
            h.sync = ses_sync_extension{static_cast<std::uint16_t>(next()),
                                        static_cast<std::uint16_t>(next())};
        if (ses_opcode_has_atomic(h.opcode)) {
            const auto op = static_cast<ses_atomic_opcode>(next() % 0x14);
            ses_atomic_extension a;
            a.atomic_opcode = op;
            a.atomic_datatype = static_cast<ses_atomic_datatype>(next() % 6);
            a.cacheable = next() & 1;
            if (ses_atomic_uses_cas(op)) {
                h.cas.emplace();
                h.cas->atomic = a;
                h.cas->compare_value[3] = static_cast<std::uint8_t>(next());
                h.cas->swap_value[15] = static_cast<std::uint8_t>(next());
            } else {
                h.atomic = a;
            }
        }
        if (ses_opcode_has_rendezvous(h.opcode)) {
            h.rendezvous.emplace();
            h.rendezvous->eager_length = static_cast<std::uint32_t>(next());
            h.rendezvous->resource_index = next() & 0xfff;
            h.rendezvous->rd_offset = next();
            h.rendezvous->rd_memory_key = next();
        }
        std::array<std::uint8_t, 128> buf{};
        const std::size_t n = encode(h, buf);
        ASSERT_EQ(n, encoded_size(h)) << i;
        ASSERT_EQ(encode(h, std::span(buf).first(n - 1)), 0u) << i;
        ASSERT_EQ(decode(std::span<const std::uint8_t>(buf).first(n), used), reject_reason::none)
            << i;
        ASSERT_EQ(used, h) << i;
        ses_standard_request other;
        ASSERT_EQ(decode(std::span<const std::uint8_t>(buf).first(n - 1), other),
                  reject_reason::truncated)
            << i;
    }
}

}  // namespace
