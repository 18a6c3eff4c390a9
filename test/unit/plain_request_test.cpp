// wire::read_plain_request and ses::check_plain_request, the receive path's one-pass reading of
// the common data packet, against the general path (parse_l2l4, decode_uet, check_packet) on
// generated frames and on mutations of them: whatever the one-pass reading accepts, the general
// path accepts with the same values, and every valid frame of the plain shape is accepted. Then
// wire::read_next_plain_request (header prediction) against read_plain_request: whatever the
// prediction reads, the full reading reads alike, and the next packet of a message is predicted;
// and the sender's wire::write_next_request_headers against the full header writers.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "ses/message.hpp"
#include "wire/bytes.hpp"
#include "wire/frame.hpp"
#include "wire/ipv4.hpp"
#include "wire/plain_request.hpp"
#include "wire/uet_packet.hpp"

namespace {

using namespace uet::wire;
namespace ses = uet::ses;

constexpr std::uint32_t mtu = 1024;
constexpr std::uint32_t max_message = 1u << 20;

struct generated {
    std::vector<std::uint8_t> frame;
    bool plain_shape = false;  // untagged, RUD/ROD, standard request without extension
};

// A frame with random but mostly sensible headers: segments usually on the mtu grid.
generated make_frame(std::mt19937_64& rng) {
    auto pick = [&](std::uint64_t n) { return rng() % n; };
    frame_spec fs;
    fs.src_mac.octets = {2, 0, 0, 0, 0, static_cast<std::uint8_t>(pick(256))};
    fs.dst_mac.octets = {2, 0, 0, 0, 0, 1};
    fs.src_ip = 0x0a000002 + static_cast<std::uint32_t>(pick(4));
    fs.dst_ip = 0x0a000001;
    fs.dscp = static_cast<std::uint8_t>(pick(64));
    fs.ecn = static_cast<std::uint8_t>(pick(4));
    fs.src_port = static_cast<std::uint16_t>(rng());
    fs.dst_port = 4793;
    fs.udp_checksum = pick(2) == 0;
    fs.df = pick(2) == 0;
    const bool vlan = pick(8) == 0;
    if (vlan) fs.vlan = vlan_tag{};

    pds_rud_rod_request pds;
    pds.type = pick(2) ? pds_type::rud : pds_type::rod;
    pds.syn = pick(4) == 0;
    pds.ar = pick(2) == 0;
    pds.retx = pick(4) == 0;
    pds.psn = static_cast<std::uint32_t>(rng());
    pds.spdcid = static_cast<std::uint16_t>(rng());
    if (pds.syn)
        pds.psn_offset = static_cast<std::uint16_t>(pick(4096));
    else
        pds.dpdcid = static_cast<std::uint16_t>(rng());
    pds.next_hdr = pds_next_hdr::request_std;

    static constexpr ses_opcode opcodes[] = {ses_opcode::write,         ses_opcode::send,
                                             ses_opcode::tagged_send,   ses_opcode::read,
                                             ses_opcode::datagram_send, ses_opcode::deferrable_send,
                                             ses_opcode::atomic,        ses_opcode::rendezvous_send,
                                             ses_opcode::no_op,         ses_opcode::deferrable_rtr};
    ses_standard_request s;
    s.opcode = opcodes[pick(std::size(opcodes))];
    s.message_id = static_cast<std::uint16_t>(rng());
    s.job_id = static_cast<std::uint32_t>(pick(1u << 24));
    s.resource_index = static_cast<std::uint16_t>(pick(4096));
    s.pid_on_fep = static_cast<std::uint16_t>(pick(4096));
    s.buffer_offset = rng();
    s.initiator = static_cast<std::uint32_t>(rng());
    s.memory_key = rng();
    s.hd = pick(2) == 0;
    s.dc = pick(2) == 0;
    const std::uint32_t total = static_cast<std::uint32_t>(pick(4) == 0 ? pick(3 * mtu) : pick(64));
    const std::uint32_t packets = std::max<std::uint32_t>(1, (total + mtu - 1) / mtu);
    const std::uint32_t index = static_cast<std::uint32_t>(pick(packets));
    const std::uint32_t offset = index * mtu;
    std::uint32_t length = total == 0 ? 0 : std::min(mtu, total - offset);
    if (pick(8) == 0) length = static_cast<std::uint32_t>(pick(mtu + 1));  // off the grid
    if (s.opcode == ses_opcode::read) length = 0;  // a READ asks for request_length bytes
    s.request_length = total;
    s.som = offset == 0;
    s.eom = offset + length >= total;
    if (pick(16) == 0) s.eom = !s.eom;
    if (s.som) {
        s.header_data = rng();
    } else {
        s.payload_length = static_cast<std::uint16_t>(length);
        s.message_offset = offset;
    }
    if (s.opcode == ses_opcode::atomic) s.atomic = ses_atomic_extension{};
    if (s.opcode == ses_opcode::rendezvous_send) s.rendezvous = ses_rendezvous_extension{};

    std::vector<std::uint8_t> payload(length);
    for (auto& b : payload)
        b = static_cast<std::uint8_t>(rng());
    uet_packet_spec spec;
    spec.pds = pds;
    spec.ses = s;
    spec.payload = payload;
    std::vector<std::uint8_t> udp(encoded_size(spec));
    EXPECT_EQ(encode_uet(spec, udp), udp.size());
    generated g;
    g.frame.resize(frame_header_size(fs, true) + udp.size() + pick(8));  // maybe padding
    EXPECT_NE(build_udp_frame(fs, udp, g.frame), 0u);
    g.plain_shape = !vlan && !ses_opcode_has_extension(s.opcode);
    return g;
}

void mutate(std::vector<std::uint8_t>& f, std::mt19937_64& rng) {
    switch (rng() % 4) {
        case 0:  // a byte of the headers
            f[rng() % std::min<std::size_t>(f.size(), 100)] ^=
                static_cast<std::uint8_t>(1 + rng() % 255);
            break;
        case 1:  // a single bit anywhere
            f[rng() % f.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
            break;
        case 2:  // cut short
            f.resize(rng() % f.size());
            break;
        default:  // grown by bytes past the IP packet
            f.resize(f.size() + 1 + rng() % 16);
            break;
    }
}

bool same(const ses::rx_segment& a, const ses::rx_segment& b) {
    const ses::op_fields &x = a.fields, &y = b.fields;
    return a.seg.offset == b.seg.offset && a.seg.length == b.seg.length && a.seg.som == b.seg.som &&
           a.seg.eom == b.seg.eom && a.total == b.total && a.message_id == b.message_id &&
           x.opcode == y.opcode && x.response == y.response && x.return_code == y.return_code &&
           x.hd == y.hd && x.job_id == y.job_id && x.resource_index == y.resource_index &&
           x.initiator == y.initiator && x.buffer_offset == y.buffer_offset &&
           x.memory_key == y.memory_key && x.header_data == y.header_data &&
           x.request_length == y.request_length && x.message_id == y.message_id &&
           x.atomic == y.atomic && x.cas == y.cas && x.rendezvous == y.rendezvous;
}

struct tally {
    int plain = 0, plain_checked = 0, general = 0;
};

// Checks one frame; `must_accept`: a valid frame of the plain shape.
void compare(std::span<const std::uint8_t> frame, bool must_accept, tally& t) {
    plain_request p;
    const bool plain = read_plain_request(frame, p);
    l2l4_view v;
    uet_packet pkt;
    const bool general = parse_l2l4(frame, v) == reject_reason::none &&
                         v.l3 == l2l4_view::l3_kind::ipv4 && v.udp &&
                         decode_uet(v.l4_payload, false, pkt) == reject_reason::none && !pkt.tss;
    t.general += general;
    const auto* req = general ? std::get_if<pds_rud_rod_request>(&pkt.pds) : nullptr;
    const auto* std_req =
        general && pkt.ses ? std::get_if<ses_standard_request>(&*pkt.ses) : nullptr;
    const bool general_plain = req && std_req && !v.vlan && !std_req->sync && !std_req->atomic &&
                               !std_req->cas && !std_req->rendezvous;
    ASSERT_EQ(plain, general_plain) << "l2l4 " << reject_name(parse_l2l4(frame, v)) << " uet "
                                    << reject_name(decode_uet(v.l4_payload, false, pkt));
    if (must_accept) {
        ASSERT_TRUE(plain);
    }
    if (!plain) return;
    ++t.plain;
    EXPECT_EQ(p.src_mac, v.eth.src);
    EXPECT_EQ(p.src_ip, v.ip.src);
    EXPECT_EQ(p.dst_ip, v.ip.dst);
    EXPECT_EQ(p.dscp, v.ip.dscp);
    EXPECT_EQ(p.ecn, v.ip.ecn);
    EXPECT_EQ(p.ip_id, v.ip.id);
    EXPECT_EQ(p.src_port, v.udp->sport);
    EXPECT_EQ(p.dst_port, v.udp->dport);
    EXPECT_EQ(p.pds, *req);
    EXPECT_TRUE(p.ses == static_cast<const ses_standard_fields&>(*std_req));
    EXPECT_EQ(p.payload.data(), pkt.payload.data());
    EXPECT_EQ(p.payload.size(), pkt.payload.size());

    ses::rx_segment fast, slow;
    const bool fast_ok = ses::check_plain_request(p.ses, p.payload.size(), mtu, max_message, fast);
    const bool slow_ok = ses::check_packet(*pkt.ses, pkt.payload.size(), mtu, max_message, slow);
    if (fast_ok) {
        ++t.plain_checked;
        ASSERT_TRUE(slow_ok);
        EXPECT_TRUE(same(fast, slow));
    } else if (slow_ok) {
        EXPECT_EQ(p.ses.opcode, ses_opcode::read);  // the only request left to the general path
    }
}

TEST(plain_request, agrees_with_the_general_path_on_generated_frames) {
    std::mt19937_64 rng(20261125);
    tally t;
    for (int i = 0; i < 20000; ++i) {
        const generated g = make_frame(rng);
        compare(g.frame, g.plain_shape, t);
        if (HasFatalFailure()) return;
    }
    // The generator must reach both outcomes of each check, or the test proves little.
    EXPECT_GT(t.plain, 10000);
    EXPECT_GT(t.plain_checked, 3000);
    EXPECT_LT(t.plain_checked, t.plain);
}

TEST(plain_request, agrees_with_the_general_path_on_mutated_frames) {
    std::mt19937_64 rng(7);
    tally t;
    for (int i = 0; i < 50000; ++i) {
        generated g = make_frame(rng);
        const int mutations = 1 + static_cast<int>(rng() % 3);
        for (int m = 0; m < mutations && !g.frame.empty(); ++m)
            mutate(g.frame, rng);
        compare(g.frame, false, t);
        if (HasFatalFailure()) return;
    }
    EXPECT_GT(t.plain, 1000);
    EXPECT_LT(t.plain, t.general);
}

TEST(plain_request, refuses_what_the_engine_must_not_take_in_one_pass) {
    std::mt19937_64 rng(1);
    generated g;
    do {
        g = make_frame(rng);
    } while (!g.plain_shape);
    plain_request p;
    ASSERT_TRUE(read_plain_request(g.frame, p));
    // A fragment (more-fragments flag): the general path refuses it.
    auto frag = g.frame;
    frag[14 + 6] |= 0x20;
    EXPECT_FALSE(read_plain_request(frag, p));
    // An IP header checksum that does not add up.
    auto bad_sum = g.frame;
    bad_sum[14 + 10] ^= 0xff;
    EXPECT_FALSE(read_plain_request(bad_sum, p));
    // Every prefix shorter than the IP packet.
    const std::size_t ip_end = 14 + ((std::size_t{g.frame[16]} << 8) | g.frame[17]);
    for (std::size_t n = 0; n < ip_end; ++n)
        EXPECT_FALSE(read_plain_request(std::span(g.frame).first(n), p)) << n;
}

// ---- header prediction ----

bool same(const plain_request& a, const plain_request& b) {
    return a.src_mac == b.src_mac && a.src_ip == b.src_ip && a.dst_ip == b.dst_ip &&
           a.dscp == b.dscp && a.ecn == b.ecn && a.ip_id == b.ip_id && a.src_port == b.src_port &&
           a.dst_port == b.dst_port && a.pds == b.pds && a.ses == b.ses &&
           a.payload.data() == b.payload.data() && a.payload.size() == b.payload.size();
}

int checks_passed[2] = {};  // expect_same_check's verdicts: refused, passed

// What the SES check says of a predicted reading, checked against the first packet's segment,
// against check_plain_request of the full reading: the same verdict and segment.
void expect_same_check(const plain_request& first, const plain_request& next,
                       const plain_request& full) {
    ses::rx_segment last;
    if (!ses::check_plain_request(first.ses, first.payload.size(), mtu, max_message, last)) return;
    ses::rx_segment quick = last, slow;
    const bool quick_ok =
        ses::check_next_plain_request(next.ses, next.payload.size(), mtu, max_message, quick);
    const bool slow_ok =
        ses::check_plain_request(full.ses, full.payload.size(), mtu, max_message, slow);
    ASSERT_EQ(quick_ok, slow_ok);
    ++checks_passed[slow_ok];
    if (slow_ok) {
        EXPECT_TRUE(same(quick, slow));
    }
}

// A frame that can stand for the packets after it: the plain shape, read, not SYN, and either a
// packet after a message's first (whole == false) or a one-packet message (whole == true).
std::vector<std::uint8_t> template_frame(std::mt19937_64& rng, bool whole = false) {
    for (;;) {
        const generated g = make_frame(rng);
        plain_request p;
        if (g.plain_shape && read_plain_request(g.frame, p) && !p.pds.syn &&
            (whole ? p.ses.som && p.ses.eom : !p.ses.som))
            return g.frame;
    }
}

// The template of first, a template_frame, which is read into r.
plain_request_template remembered(const std::vector<std::uint8_t>& first, plain_request& r) {
    plain_request_template t;
    EXPECT_TRUE(read_plain_request(first, r));
    remember_plain_request(first, r, t);
    return t;
}

// The next packet of the same message as f (whole == false), or the next one-packet message
// (whole == true): new values in every field that may change, with the IPv4 and (where f has
// one) UDP checksums made right again.
std::vector<std::uint8_t> next_packet(std::vector<std::uint8_t> f, std::mt19937_64& rng,
                                      bool whole = false) {
    constexpr std::size_t ip = 14, udp = 34, pds = 42, ses = 54;
    store_be16(&f[ip + 4], static_cast<std::uint16_t>(rng()));
    store_be16(&f[udp], static_cast<std::uint16_t>(rng()));
    f[pds + 1] = static_cast<std::uint8_t>((f[pds + 1] & ~0x18u) | (rng() & 0x18u));
    store_be16(&f[pds + 2], static_cast<std::uint16_t>(rng()));
    store_be32(&f[pds + 4], static_cast<std::uint32_t>(rng()));
    if (!whole) {
        if (rng() % 2) store_be32(&f[ses + 36], static_cast<std::uint32_t>(rng()));  // else same
    } else {
        // Each of the message's own fields new or as it was: id, buffer_offset, key, header data.
        if (rng() % 4) store_be16(&f[ses + 2], static_cast<std::uint16_t>(rng()));
        if (rng() % 2) store_be64(&f[ses + 12], rng());
        if (rng() % 2) store_be64(&f[ses + 24], rng());
        if (rng() % 2) store_be64(&f[ses + 32], rng());
    }
    store_be16(&f[ip + 10], 0);
    store_be16(&f[ip + 10], ipv4_header_checksum(&f[ip]));
    const std::size_t datagram = load_be16(&f[udp + 4]);
    if (load_be16(&f[udp + 6]) != 0)
        store_be16(&f[udp + 6], udp_checksum(load_be32(&f[ip + 12]), load_be32(&f[ip + 16]),
                                             std::span(f).subspan(udp, datagram)));
    return f;
}

TEST(plain_request_prediction, reads_the_next_packet_of_a_message_as_the_full_reading_does) {
    std::mt19937_64 rng(20261126);
    checks_passed[0] = checks_passed[1] = 0;
    int predicted = 0;
    for (int i = 0; i < 5000; ++i) {
        const auto first = template_frame(rng);
        plain_request r;
        plain_request_template t = remembered(first, r);
        const auto next = next_packet(first, rng);
        const plain_request* p = read_next_plain_request(next, t);
        plain_request full;
        ASSERT_TRUE(read_plain_request(next, full));
        ASSERT_NE(p, nullptr) << "the next packet of a message is predicted";
        ASSERT_TRUE(same(*p, full));
        expect_same_check(r, *p, full);
        ++predicted;
    }
    EXPECT_EQ(predicted, 5000);
    EXPECT_GT(checks_passed[true], 500);
    EXPECT_GT(checks_passed[false], 500);
}

// Next packets (whole == false) or next one-packet messages (whole == true), mutated once or
// twice, against their templates: whatever the prediction reads, the full reading reads alike
// (and, inside a message, the SES check says the same). Mutations of the changing fields are
// predicted; of the others, refused.
void check_mutated_predictions(std::uint64_t seed, bool whole) {
    std::mt19937_64 rng(seed);
    int predicted = 0, refused = 0;
    for (int i = 0; i < 20000; ++i) {
        const auto first = template_frame(rng, whole);
        plain_request r;
        plain_request_template t = remembered(first, r);
        auto next = rng() % 2 ? next_packet(first, rng, whole) : first;
        const int mutations = 1 + static_cast<int>(rng() % 2);
        for (int m = 0; m < mutations && !next.empty(); ++m)
            mutate(next, rng);
        const plain_request* p = read_next_plain_request(next, t);
        if (!p) {
            ++refused;
            continue;
        }
        ++predicted;
        plain_request full;
        ASSERT_TRUE(read_plain_request(next, full)) << "iteration " << i;
        ASSERT_TRUE(same(*p, full)) << "iteration " << i;
        if (!whole) expect_same_check(r, *p, full);
        if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(predicted, 300);
    EXPECT_GT(refused, 7000);
}

TEST(plain_request_prediction, what_it_reads_from_mutated_frames_the_full_reading_reads_alike) {
    check_mutated_predictions(11, false);
}

// read_next_plain_requests over a burst of next packets of a message (whole == false) or of next
// one-packet messages (whole == true), some mutated: it takes the frames up to the first one
// read_next_plain_request refuses, reads each as that does, and leaves the template's reading as
// reading them one by one leaves it.
void check_burst_reading(std::uint64_t seed, bool whole) {
    std::mt19937_64 rng(seed);
    int cut_short = 0, single_packet_bursts = 0;
    for (int i = 0; i < 3000; ++i) {
        const auto first = template_frame(rng, whole);
        plain_request r;
        const plain_request_template start = remembered(first, r);
        std::vector<std::vector<std::uint8_t>> frames;
        const std::size_t count = 1 + rng() % 32;
        for (std::size_t k = 0; k < count; ++k) {
            frames.push_back(next_packet(first, rng, whole));
            if (rng() % 40 == 0) mutate(frames.back(), rng);
        }
        std::vector<std::span<const std::uint8_t>> spans(frames.begin(), frames.end());
        plain_request_template one = start, many = start;
        std::size_t expected = 0;
        while (expected < count && read_next_plain_request(spans[expected], one) != nullptr)
            ++expected;
        std::array<next_request_fields, 32> out;
        ASSERT_EQ(read_next_plain_requests(spans, many, out.data()), expected) << i;
        for (std::size_t k = 0; k < expected; ++k) {
            plain_request full;
            ASSERT_TRUE(read_plain_request(spans[k], full));
            EXPECT_EQ(out[k].payload, full.payload.data());
            EXPECT_EQ(out[k].pds_at, spans[k].data() + 42);
            EXPECT_EQ(out[k].src_port, full.src_port);
            if (whole) {
                EXPECT_EQ(out[k].message_id, full.ses.message_id);
                EXPECT_EQ(out[k].buffer_offset, full.ses.buffer_offset);
                EXPECT_EQ(out[k].memory_key, full.ses.memory_key);
                EXPECT_EQ(out[k].header_data, full.ses.header_data);
            } else {
                EXPECT_EQ(out[k].message_offset, full.ses.message_offset);
            }
            pds_rud_rod_request h = start.reading.pds;
            load_request_changes(out[k].pds_at, h);
            EXPECT_EQ(h, full.pds);
        }
        // The frame one by one stopped at was read into its reading too: compare up to it.
        plain_request_template upto = start;
        for (std::size_t k = 0; k < expected; ++k)
            ASSERT_NE(read_next_plain_request(spans[k], upto), nullptr);
        EXPECT_TRUE(same(many.reading, upto.reading)) << i;
        (expected == count ? single_packet_bursts : cut_short) += 1;
        if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(single_packet_bursts, 300);
    EXPECT_GT(cut_short, 300);
}

TEST(plain_request_prediction, a_burst_is_read_as_frame_by_frame_up_to_the_first_refused) {
    check_burst_reading(20261127, false);
}

TEST(plain_request_prediction, a_burst_of_one_packet_messages_is_read_as_frame_by_frame) {
    check_burst_reading(20261128, true);
}

// Frames in two pieces (frame_rest: uet_memif's zero-copy transmit) are predicted as the same
// frames whole are when split right after their headers and carrying no UDP checksum (it would
// cover both pieces), each payload then read from its rest; split anywhere else, or with a UDP
// checksum, none is.
TEST(plain_request_prediction, frames_in_two_pieces_are_predicted_only_split_after_their_headers) {
    std::mt19937_64 rng(20261130);
    const std::size_t hs = plain_request_headers_size();
    int split_read = 0, checksummed = 0;
    for (int i = 0; i < 2000; ++i) {
        const bool whole = i % 2 == 1;
        const auto first = template_frame(rng, whole);
        plain_request r;
        const plain_request_template start = remembered(first, r);
        std::vector<std::vector<std::uint8_t>> frames, payloads;
        std::vector<frame_rest> rests, off_by_one;
        const std::size_t count = 1 + rng() % 16;
        for (std::size_t k = 0; k < count; ++k) {
            frames.push_back(next_packet(first, rng, whole));
            payloads.emplace_back(frames.back().begin() + static_cast<std::ptrdiff_t>(hs),
                                  frames.back().end());
        }
        // No payload: never in two pieces.
        if (std::any_of(payloads.begin(), payloads.end(), [](auto& p) { return p.empty(); }))
            continue;
        for (std::size_t k = 0; k < count; ++k) {
            rests.push_back({payloads[k].data(), static_cast<std::uint32_t>(hs)});
            off_by_one.push_back({payloads[k].data() + 1, static_cast<std::uint32_t>(hs + 1)});
        }
        std::vector<std::span<const std::uint8_t>> spans(frames.begin(), frames.end());
        plain_request_template as_single_packet = start, as_split = start, as_off = start;
        std::array<next_request_fields, 32> a, b, c;
        const std::size_t n = read_next_plain_requests(spans, as_single_packet, a.data());
        const std::size_t m = read_next_plain_requests(spans, as_split, b.data(), rests.data());
        EXPECT_EQ(read_next_plain_requests(spans, as_off, c.data(), off_by_one.data()), 0u) << i;
        // Read split up to the first frame that carries a UDP checksum.
        std::size_t expected = 0;
        while (expected < n && load_be16(frames[expected].data() + 40) == 0)
            ++expected;
        checksummed += expected < n;
        ASSERT_EQ(m, expected) << i;
        split_read += static_cast<int>(m);
        for (std::size_t k = 0; k < m; ++k) {
            EXPECT_EQ(b[k].payload, payloads[k].data());
            EXPECT_EQ(b[k].pds_at, a[k].pds_at);
            EXPECT_EQ(b[k].src_port, a[k].src_port);
            if (whole) {
                EXPECT_EQ(b[k].message_id, a[k].message_id);
                EXPECT_EQ(b[k].buffer_offset, a[k].buffer_offset);
                EXPECT_EQ(b[k].memory_key, a[k].memory_key);
            } else {
                EXPECT_EQ(b[k].message_offset, a[k].message_offset);
            }
        }
    }
    EXPECT_GT(split_read, 3000);
    EXPECT_GT(checksummed, 200);
}

TEST(plain_request_prediction, stands_only_for_the_same_message_after_its_first_packet) {
    std::mt19937_64 rng(3);
    const auto first = template_frame(rng);
    plain_request r;
    ASSERT_TRUE(read_plain_request(first, r));
    plain_request_template t;
    remember_plain_request(first, r, t);
    // Another message (its id), another PDC, a bad IPv4 checksum, another length: refused.
    constexpr std::size_t ip = 14, pds = 42, ses = 54;
    auto other_message = next_packet(first, rng);
    other_message[ses + 3] ^= 1;
    EXPECT_EQ(read_next_plain_request(other_message, t), nullptr);
    auto other_pdc = next_packet(first, rng);
    other_pdc[pds + 11] ^= 1;
    EXPECT_EQ(read_next_plain_request(other_pdc, t), nullptr);
    auto bad_sum = next_packet(first, rng);
    bad_sum[ip + 10] ^= 0x40;
    EXPECT_EQ(read_next_plain_request(bad_sum, t), nullptr);
    auto longer = next_packet(first, rng);
    longer.push_back(0);
    EXPECT_EQ(read_next_plain_request(longer, t), nullptr);
    EXPECT_NE(read_next_plain_request(next_packet(first, rng), t), nullptr);
    // A SYN packet or a message's first packet (SOM) stands for nothing after it.
    plain_request syn = r;
    syn.pds.syn = true;
    remember_plain_request(first, syn, t);
    EXPECT_EQ(read_next_plain_request(first, t), nullptr);
    remember_plain_request(first, r, t);
    EXPECT_NE(read_next_plain_request(first, t), nullptr);
    plain_request som = r;
    som.ses.som = true;
    som.ses.eom = false;
    remember_plain_request(first, som, t);
    EXPECT_EQ(read_next_plain_request(first, t), nullptr);
}

// ---- header prediction of one-packet messages ----

TEST(plain_request_prediction, reads_the_next_one_packet_message_as_the_full_reading_does) {
    std::mt19937_64 rng(20261127);
    for (int i = 0; i < 5000; ++i) {
        const auto first = template_frame(rng, true);
        plain_request r;
        plain_request_template t = remembered(first, r);
        ASSERT_TRUE(t.single_packet_messages);
        const auto next = next_packet(first, rng, true);
        const plain_request* p = read_next_plain_request(next, t);
        plain_request full;
        ASSERT_TRUE(read_plain_request(next, full));
        ASSERT_NE(p, nullptr) << "the next one-packet message is predicted";
        ASSERT_TRUE(same(*p, full)) << "iteration " << i;
        // And a stream of them: the template stays, each read against the one before.
        const auto third = next_packet(next, rng, true);
        p = read_next_plain_request(third, t);
        ASSERT_TRUE(read_plain_request(third, full));
        ASSERT_NE(p, nullptr);
        ASSERT_TRUE(same(*p, full)) << "iteration " << i;
    }
}

TEST(plain_request_prediction,
     what_it_reads_of_mutated_one_packet_messages_the_full_reading_reads_alike) {
    check_mutated_predictions(12, true);
}

TEST(plain_request_prediction,
     a_one_packet_message_stands_only_for_one_packet_messages_of_its_pdc) {
    std::mt19937_64 rng(4);
    const auto first = template_frame(rng, true);
    plain_request r;
    plain_request_template t = remembered(first, r);
    constexpr std::size_t pds = 42, ses = 54;
    EXPECT_NE(read_next_plain_request(next_packet(first, rng, true), t), nullptr);
    auto other_pdc = next_packet(first, rng, true);
    other_pdc[pds + 11] ^= 1;
    EXPECT_EQ(read_next_plain_request(other_pdc, t), nullptr);
    // A packet of a message of several (SOM or EOM cleared): not a one-packet message.
    for (const std::uint8_t flag : {std::uint8_t{0x01}, std::uint8_t{0x02}}) {
        auto part = next_packet(first, rng, true);
        part[ses + 1] ^= flag;
        EXPECT_EQ(read_next_plain_request(part, t), nullptr) << int{flag};
    }
    auto other_opcode = next_packet(first, rng, true);
    other_opcode[ses] ^= 0x01;
    EXPECT_EQ(read_next_plain_request(other_opcode, t), nullptr);
    // A packet template (inside a message) does not take a one-packet message, nor the reverse.
    const auto inside = template_frame(rng);
    plain_request ri;
    plain_request_template ti = remembered(inside, ri);
    EXPECT_FALSE(ti.single_packet_messages);
    auto single_packet_like = next_packet(inside, rng);
    single_packet_like[ses + 1] |= 0x03;
    EXPECT_EQ(read_next_plain_request(single_packet_like, ti), nullptr);
}

// ---- the sender's side: the next packet's headers written from the last one's ----

std::array<std::uint8_t, request_headers_template::size> full_headers(
    const pds_rud_rod_request& pds, const ses_standard_fields& ses) {
    std::array<std::uint8_t, request_headers_template::size> out{};
    EXPECT_EQ(encode(pds, out), pds_rud_rod_request::wire_size);
    store_standard_fields(ses, out.data() + pds_rud_rod_request::wire_size);
    return out;
}

TEST(request_headers_template, writes_the_next_packets_headers_as_the_full_writers_do) {
    std::mt19937_64 rng(5);
    for (int i = 0; i < 5000; ++i) {
        pds_rud_rod_request pds;
        pds.type = rng() % 2 ? pds_type::rud : pds_type::rod;
        pds.next_hdr = pds_next_hdr::request_std;
        pds.retx = rng() % 2;
        pds.ar = rng() % 2;
        pds.clear_psn_offset = static_cast<std::int16_t>(rng());
        pds.psn = static_cast<std::uint32_t>(rng());
        pds.spdcid = static_cast<std::uint16_t>(rng());
        pds.dpdcid = static_cast<std::uint16_t>(rng());
        ses_standard_fields ses;
        ses.opcode = rng() % 2 ? ses_opcode::write : ses_opcode::send;
        ses.message_id = static_cast<std::uint16_t>(rng());
        ses.job_id = static_cast<std::uint32_t>(rng() % (1u << 24));
        ses.buffer_offset = rng();
        ses.memory_key = rng();
        ses.initiator = static_cast<std::uint32_t>(rng());
        ses.payload_length = static_cast<std::uint16_t>(rng() % 4096);
        ses.message_offset = static_cast<std::uint32_t>(rng());
        ses.request_length = static_cast<std::uint32_t>(rng());
        request_headers_template t;
        t.bytes = full_headers(pds, ses);
        // The next packet: new values in the fields that change from packet to packet.
        pds.retx = rng() % 2;
        pds.ar = rng() % 2;
        pds.clear_psn_offset = static_cast<std::int16_t>(rng());
        pds.psn = static_cast<std::uint32_t>(rng());
        ses.message_offset = static_cast<std::uint32_t>(rng());
        std::array<std::uint8_t, request_headers_template::size> next{};
        write_next_request_headers(next.data(), t, pds, ses.message_offset);
        ASSERT_EQ(next, full_headers(pds, ses)) << "packet " << i;
    }
}

}  // namespace
