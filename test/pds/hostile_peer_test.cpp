// An attacker on the same L2 segment, off the path between two engines: it sends crafted UET
// frames with forged source addresses, built with lib/wire from frames the engines really sent.
// Each test fails on an engine that adds a peer for any frame, frees a PDC on any CLOSE with the
// right PSN, or gives out predictable PDC ids.
#include <gtest/gtest.h>

#include <set>

#include "harness.hpp"
#include "wire/frame.hpp"
#include "wire/uet_packet.hpp"
#include "workload.hpp"

namespace uet::test {
namespace {

// The frame as if sent by src_ip (and a MAC made from it) with the same UDP payload.
std::vector<std::uint8_t> from_source(const captured& c, std::uint32_t src_ip,
                                      std::span<const std::uint8_t> udp_payload) {
    wire::frame_spec s;
    s.src_mac = {{0x02, 0xee, static_cast<std::uint8_t>(src_ip >> 16),
                  static_cast<std::uint8_t>(src_ip >> 8), static_cast<std::uint8_t>(src_ip), 1}};
    s.dst_mac = c.l2.eth.dst;
    s.src_ip = src_ip;
    s.dst_ip = c.l2.ip.dst;
    s.src_port = c.l2.udp->sport;
    s.dst_port = c.l2.udp->dport;
    std::vector<std::uint8_t> out(16384);
    out.resize(wire::build_udp_frame(s, udp_payload, out));
    return out;
}

// The UET bytes of a packet spec.
std::vector<std::uint8_t> encoded(const wire::uet_packet_spec& spec) {
    std::vector<std::uint8_t> out(16384);
    out.resize(wire::encode_uet(spec, out));
    return out;
}

std::uint32_t spoofed_ip(std::uint32_t i) {
    return 0xc0a80000u + 256 + i;  // 192.168.1.0 on: no engine of the test
}

struct pair {
    engine_config ca = endpoint_config(1, 31), cb = endpoint_config(2, 32);
    std::unique_ptr<engine> a, b;
    std::unique_ptr<pipe::duplex> net;
    std::unique_ptr<harness> h;

    void start() {
        a = std::make_unique<engine>(ca);
        b = std::make_unique<engine>(cb);
        net = std::make_unique<pipe::duplex>(pipe::impairments{}, 1, 4096, 9216);
        h = std::make_unique<harness>(*a, *b, *net);
    }
    // Messages b received, released at once.
    std::size_t drain_b() {
        std::size_t n = 0;
        received_message m;
        while (b->poll_received(m)) {
            b->release(m.handle);
            ++n;
        }
        return n;
    }
};

// Answers every request b received as an API would: OK for its job's, BAD_JOB_ID for others.
void answer_as_api(engine& b, std::uint32_t job) {
    received_message m;
    while (b.poll_received(m)) {
        ses_fields answer;
        answer.response = true;
        answer.job_id = m.ses->job_id;
        answer.message_id = m.message_id;
        answer.return_code =
            m.ses->job_id == job ? wire::ses_return_code::ok : wire::ses_return_code::bad_job_id;
        EXPECT_TRUE(b.post_response(m, answer, {}, 0).ok());
        b.release(m.handle);
    }
}

// A SYN request frame of a's (its first packet to b), from a separate engine so the pair's
// own state is untouched.
captured first_syn_request(const engine_config& from, const engine_config& to) {
    engine sender(from);
    const peer_id p = sender.add_peer(to.mac, to.ip);
    std::vector<std::uint8_t> data(64, 0x5a);
    EXPECT_TRUE(sender.post_send(p, delivery_mode::rud, data, 1).ok());
    static std::vector<std::uint8_t> kept;
    kept = drain_tx(sender, 0).at(0);
    captured c;
    EXPECT_TRUE(decode(kept, c));
    EXPECT_TRUE(std::holds_alternative<wire::pds_rud_rod_request>(c.pkt.pds));
    return c;
}

TEST(hostile_peer, spoofed_sources_do_not_lock_out_a_new_peer) {
    pair f;
    f.cb.max_peers = 64;
    f.cb.pdc_target_idle_ns = 20'000'000;  // the spoofed PDCs, never closed, expire
    f.start();
    const captured syn = first_syn_request(f.ca, f.cb);
    // 1,100 sources, in turn: a SYN request (state: a PDC and a message), an ACK naming no PDC
    // of b's, and UET garbage.
    std::uint64_t now = 0;
    std::vector<std::uint8_t> garbage(48);
    for (std::uint32_t i = 0; i < 1100; ++i) {
        std::vector<std::uint8_t> frame;
        if (i % 3 == 0) {
            frame = from_source(syn, spoofed_ip(i), syn.l2.l4_payload);
        } else if (i % 3 == 1) {
            wire::pds_ack_cc ack;
            ack.cack_psn = i * 7919u;
            ack.spdcid = static_cast<std::uint16_t>(i);
            ack.dpdcid = static_cast<std::uint16_t>(i * 31);
            wire::uet_packet_spec spec;
            spec.pds = ack;
            frame = from_source(syn, spoofed_ip(i), encoded(spec));
        } else {
            for (std::size_t k = 0; k < garbage.size(); ++k)
                garbage[k] = static_cast<std::uint8_t>(i * 131 + k * 17);
            frame = from_source(syn, spoofed_ip(i), garbage);
        }
        f.b->receive(frame, now);
        now += 400;           // 1,100 frames in under half a millisecond
        drain_tx(*f.b, now);  // its answers go nowhere
        f.drain_b();
    }
    const engine_counters& cb = f.b->counters();
    EXPECT_LE(cb.peers_learned, 1100u / 3 + 1);  // only sources that opened state
    EXPECT_GT(cb.dropped(drop_reason::unknown_source), 0u);
    f.h->run_to(now);

    // Then a peer b has never heard of sends: it gets in (once the spoofed PDCs are gone).
    const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
    std::vector<std::uint8_t> data(3000, 0x33);
    for (std::uint64_t i = 0; i < 8; ++i)
        ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rud, data, i).ok());
    std::size_t completed = 0, received = 0;
    send_completion c[8];
    ASSERT_TRUE(f.h->run_until(
        [&] {
            received += f.drain_b();
            for (std::size_t n = f.a->poll_send_completions(c), k = 0; k < n; ++k) {
                EXPECT_TRUE(c[k].result.ok()) << c[k].result.message();
                ++completed;
            }
            return completed == 8;
        },
        f.h->now() + 5'000'000'000ull));
    EXPECT_EQ(received, 8u);
    EXPECT_GT(f.b->counters().peers_forgotten, 0u);
}

// The CLOSE an attacker who knows both PDC ids sends at every PSN of the window, again and again
// while a transfer runs (as the target has just acknowledged all it has, and while ACKs are
// still owed): the transfer completes, every message delivered, and no PDC fails.
TEST(hostile_peer, forged_close_does_not_end_a_live_pdc) {
    pair f;
    f.ca.mpr = f.cb.mpr = 16;  // many round trips, each a chance to forge
    f.start();
    const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
    constexpr std::size_t messages = 200;
    std::vector<std::uint8_t> data(20000, 0x77);
    for (std::uint64_t i = 0; i < messages; ++i)
        ASSERT_TRUE(f.a->post_send(to_b, delivery_mode::rud, data, i).ok());
    std::optional<captured> last;  // the last request a sent, read off the wire
    std::vector<std::uint8_t> last_frame;
    std::size_t forged = 0, completed = 0, received = 0;
    const auto forge_closes = [&](std::uint64_t now) {
        if (!last) return;
        const auto& req = std::get<wire::pds_rud_rod_request>(last->pkt.pds);
        if (req.syn) return;  // the ids are known once the PDC is established
        for (std::uint32_t d = 0; d < 64; ++d) {
            wire::pds_ctrl close;
            close.ctrl_type = wire::ctrl_type::close;
            close.psn = req.psn - 16 + d;
            close.spdcid = req.spdcid;
            close.dpdcid = req.dpdcid;
            wire::uet_packet_spec spec;
            spec.pds = close;
            f.b->receive(from_source(*last, last->l2.ip.src, encoded(spec)), now);
            ++forged;
        }
    };
    send_completion c[64];
    std::uint64_t now = 0;
    for (int step = 0; step < 200000 && completed < messages; ++step) {
        for (auto& frame : drain_tx(*f.a, now)) {
            captured cap;
            if (decode(frame, cap) &&
                std::holds_alternative<wire::pds_rud_rod_request>(cap.pkt.pds)) {
                last_frame = frame;
                decode(last_frame, cap);
                last = cap;
            }
            f.b->receive(frame, now);
        }
        forge_closes(now);  // ACKs owed
        for (auto& frame : drain_tx(*f.b, now))
            f.a->receive(frame, now);
        forge_closes(now);  // everything received acknowledged
        received += f.drain_b();
        for (std::size_t n = f.a->poll_send_completions(c), k = 0; k < n; ++k) {
            EXPECT_TRUE(c[k].result.ok()) << c[k].result.message();
            ++completed;
        }
        now += 2'000;
    }
    EXPECT_EQ(completed, messages);
    EXPECT_EQ(received, messages);
    EXPECT_GT(forged, 1000u);
    EXPECT_EQ(f.a->counters().pdcs_failed, 0u);
    EXPECT_GT(f.b->counters().dropped(drop_reason::forged_close), 0u);
}

// PDC ids are not the same from run to run: the first id of an engine depends on its seed.
TEST(hostile_peer, first_pdc_ids_differ_between_seeds) {
    std::set<std::uint16_t> ids;
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
        engine_config ca = endpoint_config(1, seed), cb = endpoint_config(2, 99);
        const captured syn = first_syn_request(ca, cb);
        ids.insert(std::get<wire::pds_rud_rod_request>(syn.pkt.pds).spdcid);
    }
    EXPECT_GE(ids.size(), 12u);
}

// Requests forged with the client's address, a job of their own and the message ids of the
// client's requests in flight, 5,000 of them during a transfer 128 deep: the target's error
// answers to them never reach the client (they wait on PDCs whose initiator never shows up, and
// are dropped with them), and every request of the client gets its own OK answer.
TEST(hostile_peer, forged_requests_do_not_answer_the_real_ones) {
    pair f;
    f.cb.pdc_target_idle_ns = 2'000'000;  // the forged PDCs expire within the run
    f.start();
    pipe::impairments imp;
    imp.delay_ns = 20'000;  // requests stay in flight long enough to be matched
    f.net = std::make_unique<pipe::duplex>(imp, 1, 4096, 9216);
    f.h = std::make_unique<harness>(*f.a, *f.b, *f.net);
    constexpr std::uint32_t job = 7;
    const peer_id to_b = f.a->add_peer(f.cb.mac, f.cb.ip);
    ses_fields request;
    request.job_id = job;
    std::vector<std::uint8_t> data(2000, 0x42);
    constexpr std::size_t in_flight = 128;
    std::vector<std::uint16_t> ids;
    for (std::uint64_t i = 0; i < in_flight; ++i) {
        std::uint16_t id = 0;
        ASSERT_TRUE(f.a->post_message(to_b, delivery_mode::rud, request, data, i, &id).ok());
        ids.push_back(id);
    }
    // The forged requests: a's first SYN packet with another PDC id, PSN, job and message id.
    const captured syn = first_syn_request(f.ca, f.cb);
    std::size_t forged = 0;
    std::uint32_t r = 12345;
    const auto forge = [&](std::uint64_t now) {
        for (int k = 0; k < 50 && forged < 5000; ++k, ++forged) {
            r = r * 1103515245u + 12345u;
            wire::uet_packet_spec spec;
            auto pds = std::get<wire::pds_rud_rod_request>(syn.pkt.pds);
            pds.spdcid = static_cast<std::uint16_t>(r >> 8);
            pds.psn = r * 2654435761u;
            pds.psn_offset = 0;
            spec.pds = pds;
            auto ses = std::get<wire::ses_standard_request>(*syn.pkt.ses);
            ses.message_id = ids[forged % ids.size()];
            ses.job_id = (job + 1 + (r >> 4)) & 0xffffff;
            if (ses.job_id == job) ++ses.job_id;
            spec.ses = ses;
            spec.payload = syn.pkt.payload;
            f.b->receive(from_source(syn, syn.l2.ip.src, encoded(spec)), now);
        }
    };
    // b answers as an API would: its job's requests OK, any other job's BAD_JOB_ID.
    std::size_t ok_answers = 0, error_answers = 0, completed = 0;
    send_completion c[64];
    f.h->between = [&] { forge(f.h->now()); };
    ASSERT_TRUE(f.h->run_until(
        [&] {
            answer_as_api(*f.b, job);
            received_message m;
            while (f.a->poll_received(m)) {
                EXPECT_TRUE(m.ses->response);
                if (m.ses->return_code == wire::ses_return_code::ok)
                    ++ok_answers;
                else
                    ++error_answers;
                f.a->release(m.handle);
            }
            for (std::size_t n = f.a->poll_send_completions(c), k = 0; k < n; ++k) {
                EXPECT_TRUE(c[k].result.ok()) << c[k].result.message();
                ++completed;
            }
            return completed == in_flight && ok_answers == in_flight && forged == 5000;
        },
        2'000'000'000ull));
    f.h->run_to(f.h->now() + 10'000'000);  // the forged PDCs expire, their answers dropped
    received_message m;
    while (f.a->poll_received(m)) {
        if (m.ses->return_code != wire::ses_return_code::ok) ++error_answers;
        f.a->release(m.handle);
    }
    EXPECT_EQ(error_answers, 0u);
    EXPECT_EQ(ok_answers, in_flight);
    EXPECT_GT(f.b->counters().dropped(drop_reason::unvalidated_reply), 0u);
}

// Amplification: 1,000 requests forged from addresses where nobody listens, each answered with
// an error by the application. What goes back is at most one frame per forged frame (its ACK, or
// a NACK when no PDC is free), never a response retransmitted to the retry limit.
TEST(hostile_peer, forged_requests_get_at_most_one_frame_back) {
    pair f;
    f.cb.pdc_target_idle_ns = 5'000'000;
    f.start();
    const captured syn = first_syn_request(f.ca, f.cb);
    std::uint64_t now = 0;
    std::size_t sent_back = 0;
    constexpr std::uint32_t forged = 1000;
    constexpr std::uint32_t job = 7;  // the forged requests carry job 0
    const auto answer_all = [&] { answer_as_api(*f.b, job); };
    for (std::uint32_t i = 0; i < forged; ++i) {
        f.b->receive(from_source(syn, spoofed_ip(i), syn.l2.l4_payload), now);
        answer_all();
        sent_back += drain_tx(*f.b, now).size();
        now += 1'000;
    }
    // Then a second of timers: nothing is sent again.
    for (; now < 1'000'000'000; now = std::max(now + 1'000, f.b->next_deadline())) {
        f.b->advance(now);
        answer_all();
        sent_back += drain_tx(*f.b, now).size();
        if (f.b->next_deadline() == ~std::uint64_t{0}) break;
    }
    EXPECT_LE(sent_back, forged);
    EXPECT_GT(f.b->counters().dropped(drop_reason::unvalidated_reply), 0u);
    EXPECT_EQ(f.b->counters().pdcs_opened, 0u);  // no PDC of its own opened to answer them
}

}  // namespace
}  // namespace uet::test
