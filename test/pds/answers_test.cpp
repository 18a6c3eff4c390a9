// Answers in ACKs (engine_config::answers_in_acks): RC_OK answers ride in the target's PDS ACKs,
// everything else goes as a response message, and the initiator never takes a request as
// answered OK unless it was: prompt and late answers, errors, loss and reordering, a target
// without the feature, and an answer that never comes.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "harness.hpp"
#include "workload.hpp"

namespace uet::test {
namespace {

using wire::ses_return_code;

engine_config answering(engine_config c) {
    c.answers_in_acks = true;
    return c;
}

// One side posts requests, the other answers them; both are checked message by message.
struct answer_run {
    engine_config a_cfg = endpoint_config(1, 11);
    engine_config b_cfg = answering(endpoint_config(2, 22));
    pipe::impairments imp;
    std::size_t messages = 1000;
    // How B answers request id: its return code, and whether it holds the answer back until
    // its ACKs have left (late), or never answers it.
    std::function<ses_return_code(std::uint16_t)> rc_of = [](std::uint16_t) {
        return ses_return_code::ok;
    };
    std::function<bool(std::uint16_t)> late = [](std::uint16_t) { return false; };
    std::function<bool(std::uint16_t)> never = [](std::uint16_t) { return false; };
    // What request i is (a SEND unless said otherwise; READs go without payload).
    std::function<wire::ses_opcode(std::size_t)> opcode_of = [](std::size_t) {
        return wire::ses_opcode::send;
    };
    // OK answers tried with answer_ok_in_ack() first (post_response() when it declines).
    bool ok_shortcut = false;

    // Results, per request id.
    std::map<std::uint16_t, bool> completed_answered;  // completion seen, with its flag
    std::map<std::uint16_t, ses_return_code> responses;
    std::map<std::uint16_t, bool> in_ack;  // B's side: whether the answer went in an ACK
    std::vector<received_message> held;
    std::size_t answer_tokens = 0;  // requests B polled with a token to answer them in an ACK
    engine_counters a_counters, b_counters;
    bool finished = false;

    void run(std::uint64_t limit_ns = 2'000'000'000) {
        engine a(a_cfg), b(b_cfg);
        pipe::duplex net(imp, 7, 8192, a_cfg.mtu_payload + 256);
        harness h(a, b, net);
        const peer_id to = a.add_peer(b_cfg.mac, b_cfg.ip);
        std::vector<std::uint8_t> payload(64, 0x5a);
        std::map<std::uint64_t, std::uint16_t> id_of_context;
        for (std::size_t i = 0; i < messages; ++i) {
            std::uint16_t id = 0;
            ses_fields f;
            f.opcode = opcode_of(i);
            if (f.opcode == wire::ses_opcode::read) f.request_length = 4096;
            const std::span<const std::uint8_t> data =
                f.opcode == wire::ses_opcode::read ? std::span<const std::uint8_t>{} : payload;
            ASSERT_TRUE(a.post_message(to, delivery_mode::rud, f, data, i, &id).ok());
            id_of_context[i] = id;
        }
        auto answer = [&](const received_message& m) {
            ses_fields f;
            f.response = true;
            f.message_id = m.message_id;
            f.return_code = rc_of(m.message_id);
            const std::uint64_t before = b.counters().answers_in_acks;
            if (ok_shortcut && f.return_code == ses_return_code::ok && b.answer_ok_in_ack(m)) {
                ASSERT_GT(b.counters().answers_in_acks, before);
            } else {
                ASSERT_TRUE(b.post_response(m, f, {}, 0).ok());
            }
            in_ack[m.message_id] = b.counters().answers_in_acks > before;
        };
        h.between = [&] {
            received_message m;
            while (b.poll_received(m)) {
                answer_tokens += m.answer_token != 0;
                if (never(m.message_id)) {
                } else if (late(m.message_id)) {
                    held.push_back(m);
                } else {
                    answer(m);
                }
                b.release(m.handle);
            }
            std::array<send_completion, 64> done;
            std::size_t n;
            // B's responses ended: their completions hold pool room until polled.
            while (b.poll_send_completions(done) > 0) {
            }
            while ((n = a.poll_send_completions(done)) > 0)
                for (std::size_t i = 0; i < n; ++i) {
                    ASSERT_TRUE(done[i].result.ok());
                    completed_answered[id_of_context[done[i].context]] = done[i].answered;
                }
            while (a.poll_received(m)) {
                ASSERT_TRUE(m.ses->response);
                responses[m.message_id] = m.ses->return_code;
                a.release(m.handle);
            }
        };
        // Late answers go after B's ACKs of them: at the next step, once B has transmitted.
        auto answer_held = [&] {
            for (const received_message& m : held)
                answer(m);
            held.clear();
        };
        finished = h.run_until(
            [&] {
                answer_held();
                return completed_answered.size() == messages &&
                       std::all_of(completed_answered.begin(), completed_answered.end(),
                                   [&](const auto& c) {
                                       return c.second || responses.count(c.first) ||
                                              never(c.first);
                                   });
            },
            limit_ns);
        a_counters = a.counters();
        b_counters = b.counters();
    }
};

TEST(answers_in_acks, ok_answers_cost_no_frame) {
    answer_run r;
    r.run();
    ASSERT_TRUE(r.finished);
    for (const auto& [id, answered] : r.completed_answered)
        ASSERT_TRUE(answered) << id;
    EXPECT_TRUE(r.responses.empty());
    EXPECT_EQ(r.b_counters.answers_in_acks, r.messages);
    EXPECT_EQ(r.b_counters.answers_as_messages, 0u);
    EXPECT_EQ(r.a_counters.answered_by_ack, r.messages);
    // B sent ACKs only: one per ack_every_packets requests or so, never one per request.
    EXPECT_LT(r.b_counters.frames_tx, r.messages / 4);
}

// An owed answer is a count on its PDC, not an entry of a table: a thousand requests through a
// target whose message pool holds sixteen are all answered in ACKs.
TEST(answers_in_acks, a_thousand_requests_through_a_pool_of_sixteen_all_go_in_acks) {
    answer_run r;
    r.b_cfg.max_pending_messages = 16;
    r.ok_shortcut = true;
    r.run();
    ASSERT_TRUE(r.finished);
    for (const auto& [id, answered] : r.completed_answered)
        ASSERT_TRUE(answered) << id;
    EXPECT_EQ(r.b_counters.answers_in_acks, r.messages);
    EXPECT_EQ(r.b_counters.answers_as_messages, 0u);
}

// Every answer given after the ACK that announced it: each takes the pool room kept for it and
// gives it back once posted, so a target's pool of 1024 (above what the sender's window lets in
// flight) carries four thousand of them (room not given back refuses post_response).
TEST(answers_in_acks, announced_answers_give_back_their_pool_room) {
    answer_run r;
    r.messages = 4000;
    r.b_cfg.max_pending_messages = 1024;
    r.b_cfg.ack_every_packets = 1;  // every request's ACK leaves before its answer
    r.late = [](std::uint16_t) { return true; };
    r.run();
    ASSERT_TRUE(r.finished);
    for (const auto& [id, answered] : r.completed_answered) {
        ASSERT_FALSE(answered) << id;
        ASSERT_EQ(r.responses.at(id), ses_return_code::ok) << id;
    }
    EXPECT_EQ(r.b_counters.answers_as_messages, r.messages);
    EXPECT_EQ(r.b_counters.answers_in_acks, 0u);
}

TEST(answers_in_acks, errors_go_as_messages_and_oks_stay_exact_under_loss_and_reordering) {
    for (std::uint64_t seed : {1, 2, 3}) {
        answer_run r;
        r.a_cfg.seed = 100 + seed;
        r.imp.loss = 0.03;
        r.imp.reorder = 0.1;
        r.imp.reorder_max_distance = 20;
        r.imp.duplicate = 0.01;
        r.rc_of = [](std::uint16_t id) {
            return id % 7 == 3 ? ses_return_code::no_match : ses_return_code::ok;
        };
        r.run();
        ASSERT_TRUE(r.finished) << seed;
        std::size_t errors = 0;
        for (const auto& [id, answered] : r.completed_answered) {
            const bool error = id % 7 == 3;
            errors += error;
            if (error) {
                // Never taken for OK: it waits for its response, which says what went wrong.
                ASSERT_FALSE(answered) << id;
                ASSERT_EQ(r.responses.at(id), ses_return_code::no_match) << id;
            } else {
                ASSERT_TRUE(answered) << id;
                ASSERT_EQ(r.responses.count(id), 0u) << id;
            }
        }
        EXPECT_EQ(r.b_counters.answers_as_messages, errors);
        EXPECT_EQ(r.a_counters.answer_waits_expired, 0u);
    }
}

// An answer given after an ACK covering its request left goes as a message even when it is OK
// (the ACK announced one); the initiator's view matches what the target did, request by request.
void answers_after_the_ack(bool shortcut);

// answer_ok_in_ack() takes the OK answers that go in an ACK and declines the others (announced
// by an ACK that left), which post_response() then sends as messages: the same outcome.
TEST(answers_in_acks, answers_given_after_the_ack_left_go_as_messages) {
    for (const bool shortcut : {false, true}) {
        SCOPED_TRACE(shortcut ? "answer_ok_in_ack first" : "post_response");
        answers_after_the_ack(shortcut);
    }
}

void answers_after_the_ack(bool shortcut) {
    answer_run r;
    r.ok_shortcut = shortcut;
    r.imp.loss = 0.01;
    r.b_cfg.ack_every_packets = 1;  // every request's ACK leaves before a late answer
    r.late = [](std::uint16_t id) { return id % 2 == 0; };
    r.rc_of = [](std::uint16_t id) {
        return id % 10 == 4 ? ses_return_code::too_long : ses_return_code::ok;
    };
    r.run();
    ASSERT_TRUE(r.finished);
    std::size_t late = 0;
    for (const auto& [id, answered] : r.completed_answered) {
        ASSERT_EQ(answered, r.in_ack.at(id)) << id;
        if (id % 2 == 0) {
            ++late;
            ASSERT_FALSE(answered) << id;
            ASSERT_EQ(r.responses.at(id),
                      id % 10 == 4 ? ses_return_code::too_long : ses_return_code::ok);
        } else {
            ASSERT_TRUE(answered) << id;
            ASSERT_EQ(r.responses.count(id), 0u);
        }
    }
    EXPECT_EQ(r.b_counters.answers_as_messages, late);
    EXPECT_EQ(r.b_counters.answers_in_acks, r.messages - late);
    EXPECT_EQ(r.a_counters.answer_waits_expired, 0u);
}

// Response messages counted after an ACK left can arrive before it (reordering holds ACKs back):
// the initiator must not let them stand in for the ones that ACK announced.
TEST(answers_in_acks, messages_that_overtake_their_announcing_ack_are_not_mistaken) {
    for (std::uint64_t seed : {1, 2, 3, 4, 5, 6}) {
        answer_run r;
        r.messages = 2000;
        r.a_cfg.seed = 200 + seed;
        r.imp.reorder = 0.3;
        r.imp.reorder_max_distance = 64;
        r.imp.loss = 0.01;
        r.late = [](std::uint16_t id) { return id % 3 == 0; };
        r.rc_of = [](std::uint16_t id) {
            return id % 5 == 1 ? ses_return_code::no_match : ses_return_code::ok;
        };
        r.run();
        ASSERT_TRUE(r.finished) << seed;
        std::size_t late_in_messages = 0;
        for (const auto& [id, answered] : r.completed_answered) {
            // What the initiator concluded is what the target did, for every request.
            ASSERT_EQ(answered, r.in_ack.at(id)) << "seed " << seed << " id " << id;
            ASSERT_EQ(r.responses.count(id), answered ? 0u : 1u) << id;
            if (id % 5 == 1) {
                ASSERT_FALSE(answered) << id;  // errors never ride in ACKs
            }
            late_in_messages += id % 3 == 0 && !answered;
        }
        // Most late answers found their ACK gone (it leaves with the next transmission).
        EXPECT_GT(late_in_messages, r.messages / 6) << seed;
        EXPECT_EQ(r.a_counters.answer_waits_expired, 0u);
    }
}

// A READ is answered by a message with its data, which may take long: it is not counted, so
// the SENDs around it are answered by the ACKs at once even while its answer never comes.
TEST(answers_in_acks, a_slow_data_answer_does_not_hold_back_the_others) {
    answer_run r;
    r.messages = 200;
    r.a_cfg.answer_wait_ns = 1'000'000'000;  // waiting would show as an unfinished run
    r.opcode_of = [](std::size_t i) {
        return i % 10 == 5 ? wire::ses_opcode::read : wire::ses_opcode::send;
    };
    std::set<std::uint16_t> reads;
    r.never = [&](std::uint16_t id) { return reads.count(id) != 0; };
    // Ids are given in posting order from 0.
    for (std::uint16_t i = 0; i < 200; ++i)
        if (i % 10 == 5) reads.insert(i);
    r.run(100'000'000);
    ASSERT_TRUE(r.finished);
    for (const auto& [id, answered] : r.completed_answered) {
        ASSERT_EQ(answered, reads.count(id) == 0) << id;
    }
    EXPECT_EQ(r.b_counters.answers_as_messages, 0u);
    EXPECT_EQ(r.a_counters.answer_waits_expired, 0u);
    EXPECT_EQ(r.a_counters.answered_by_ack, 180u);
}

TEST(answers_in_acks, a_target_without_them_answers_every_request_by_message) {
    answer_run r;
    r.b_cfg.answers_in_acks = false;
    r.messages = 300;
    r.run(1'000'000'000);
    ASSERT_TRUE(r.finished);
    EXPECT_EQ(r.answer_tokens, 0u);
    EXPECT_EQ(r.responses.size(), r.messages);
    for (const auto& [id, answered] : r.completed_answered)
        ASSERT_FALSE(answered) << id;
}

TEST(answers_in_acks, an_announced_answer_that_never_comes_ends_the_wait) {
    answer_run r;
    r.messages = 1;
    r.a_cfg.answer_wait_ns = 3'000'000;
    r.never = [](std::uint16_t) { return true; };
    r.run();
    ASSERT_TRUE(r.finished);
    ASSERT_EQ(r.completed_answered.size(), 1u);
    EXPECT_FALSE(r.completed_answered.begin()->second);
    EXPECT_EQ(r.a_counters.answer_waits_expired, 1u);
    EXPECT_TRUE(r.responses.empty());
}

}  // namespace
}  // namespace uet::test
