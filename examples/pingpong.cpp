// A complete libuet program: two endpoints of one job on the in-process "pipe" provider (with a
// little loss, so the transport has something to do) exchange a message, a tagged message, an
// RMA write and a fetching atomic, and check every result. Exits 0 on success.
#include <uet/uet.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>

namespace {

int failures = 0;

void check(bool ok, std::string_view what) {
    std::printf("%-40.*s %s\n", static_cast<int>(what.size()), what.data(), ok ? "ok" : "FAILED");
    if (!ok) ++failures;
}

// Progresses until cq has an entry; true if it is a success.
bool complete(uet::completion_queue& cq, uet::completion& c) {
    const std::error_code ec = cq.wait(c);
    if (ec)
        std::printf("  error: %s (%.*s)\n", ec.message().c_str(), static_cast<int>(c.detail.size()),
                    c.detail.data());
    return !ec;
}

}  // namespace

int main() {
    uet::fabric_attr fa;
    fa.impairments.loss = 0.01;  // 1% of frames lost on every link
    auto fab = uet::fabric::open(fa);
    if (!fab) {
        std::printf("fabric: %s\n", fab.error().message().c_str());
        return 1;
    }
    auto dom = fab->open_domain().value();
    auto av = dom.open_av().value();
    auto cq_a = dom.open_cq(64).value();
    auto cq_b = dom.open_cq(64).value();
    const uet::endpoint_attr attr{.job_id = 42};
    auto a = dom.open_endpoint(attr, cq_a, av).value();
    auto b = dom.open_endpoint(attr, cq_b, av).value();
    const uet::peer_addr to_a = av.insert(a.address()).value();
    const uet::peer_addr to_b = av.insert(b.address()).value();
    std::printf("a at %s, b at %s\n", uet::to_string(a.address()).c_str(),
                uet::to_string(b.address()).c_str());
    uet::completion c;

    // 1. A message: b posts a receive, a sends.
    const std::string_view hello = "hello, ultra ethernet";
    std::array<char, 64> inbox{};
    b.recv(std::as_writable_bytes(std::span(inbox)), nullptr);
    a.send(to_b, std::as_bytes(std::span(hello)), nullptr);
    check(complete(cq_b, c) && c.len == hello.size() && c.from == to_a &&
              std::string_view(inbox.data(), c.len) == hello,
          "send / recv");
    check(complete(cq_a, c), "send completion");

    // 2. A tagged message; the receive ignores the low 8 bits of the tag.
    const std::uint64_t value = 0x1122334455667788;
    std::uint64_t got = 0;
    a.trecv(std::as_writable_bytes(std::span(&got, 1)), 0x500, 0xff, nullptr);
    b.tsend(to_a, std::as_bytes(std::span(&value, 1)), 0x5ab, nullptr);
    check(complete(cq_a, c) && c.tag == 0x5ab && got == value, "tagged send / recv");
    check(complete(cq_b, c), "tagged send completion");

    // 3. RMA write into a region b registered for remote writes and atomics (job 42 only).
    std::array<std::uint64_t, 8> region{};
    auto mr = dom.register_memory(std::as_writable_bytes(std::span(region)),
                                  uet::access::remote_write | uet::access::remote_atomic, 42)
                  .value();
    const std::array<std::uint64_t, 2> words{7, 9};
    a.write(to_b, std::as_bytes(std::span(words)), 8, mr.key(), nullptr);
    check(complete(cq_a, c) && region[1] == 7 && region[2] == 9, "rma write");

    // 4. A fetching atomic add on region[1]: returns 7, leaves 7 + 35.
    const std::uint64_t add = 35;
    std::uint64_t old = 0;
    a.fetch_atomic(to_b, uet::atomic_op::sum, uet::atomic_type::uint64,
                   std::as_bytes(std::span(&add, 1)), std::as_writable_bytes(std::span(&old, 1)), 8,
                   mr.key(), nullptr);
    check(complete(cq_a, c) && old == 7 && region[1] == 42, "fetching atomic sum");

    // 5. Errors are completions too: a key b never registered.
    a.write(to_b, std::as_bytes(std::span(words)), 0, mr.key() + 1, nullptr);
    check(cq_a.wait(c) == uet::errc::bad_memory_key && region[0] == 0, "bad key is refused");

    std::printf("%s after %llu ns of virtual time\n", failures ? "FAILED" : "passed",
                static_cast<unsigned long long>(fab->now_ns()));
    return failures ? 1 : 0;
}
