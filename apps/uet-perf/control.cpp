// Control messages: a fixed little-endian layout (magic, version, kind, nonce, values, text).
#include "control.hpp"

#include <cstring>

namespace uet::perf {

namespace {

constexpr std::uint32_t magic = 0x50544555;  // "UETP"
// 2: the session nonce in the header, KEEPALIVE.
constexpr std::uint8_t version = 2;

void put_u64(std::byte* p, std::uint64_t v) noexcept {
    for (int i = 0; i < 8; ++i)
        p[i] = static_cast<std::byte>(v >> (8 * i));
}
std::uint64_t get_u64(const std::byte* p) noexcept {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= std::uint64_t(std::to_integer<std::uint8_t>(p[i])) << (8 * i);
    return v;
}

// Where each shared setting travels in a HELLO.
enum hello_field : std::size_t {
    f_test,
    f_size,
    f_all,
    f_iters,
    f_duration,
    f_depth,
    f_mtu,
    f_bidir,
    f_job,
    f_mode,
    f_cc,
    f_lb,
    f_pdcs,
    f_verify,
    f_corrupt,
    f_client_ip,
    f_client_port,
    f_key,
    f_region,
    f_multi_recv,  // after the region: a HELLO without it (0) means plain receives
    f_transport,   // a HELLO without them (0) means UET
    f_roce_mode,
    f_compare_and_swap,  // a HELLO without it (0) means FETCH_AND_ADD
};

}  // namespace

std::string_view name_of(ctrl_kind k) noexcept {
    static constexpr std::array<std::string_view, ctrl_kind_max + 1> names{
        "?",     "HELLO",  "HELLO_ACK", "START", "READY", "STOP", "STOP_ACK",
        "DRAIN", "RESULT", "REPORT",    "BYE",   "ABORT", "ACK",  "KEEPALIVE"};
    const auto i = static_cast<std::size_t>(k);
    return i < names.size() ? names[i] : "?";
}

std::size_t encode(const ctrl_msg& m, ctrl_buffer& out) noexcept {
    std::byte* p = out.data();
    const std::uint32_t mg = magic;
    for (int i = 0; i < 4; ++i)
        p[i] = static_cast<std::byte>(mg >> (8 * i));
    p[4] = static_cast<std::byte>(version);
    p[5] = static_cast<std::byte>(m.kind);
    p[6] = p[7] = std::byte{0};
    put_u64(p + 8, m.nonce);
    p += ctrl_msg::header_bytes;
    for (std::uint64_t v : m.v) {
        put_u64(p, v);
        p += 8;
    }
    const std::size_t n = std::min(m.text.size(), ctrl_msg::text_max);
    p[0] = static_cast<std::byte>(n & 0xff);
    p[1] = static_cast<std::byte>(n >> 8);
    std::memcpy(p + 2, m.text.data(), n);
    return static_cast<std::size_t>(p + 2 + n - out.data());
}

std::optional<ctrl_msg> decode(std::span<const std::byte> in, std::string& error) {
    constexpr std::size_t fixed = ctrl_msg::header_bytes + ctrl_msg::values * 8 + 2;
    if (in.size() < fixed) {
        error = "control message of " + std::to_string(in.size()) + " bytes (at least " +
                std::to_string(fixed) + " expected)";
        return std::nullopt;
    }
    std::uint32_t mg = 0;
    for (int i = 0; i < 4; ++i)
        mg |= std::uint32_t(std::to_integer<std::uint8_t>(in[i])) << (8 * i);
    if (mg != magic) {
        error = "not a uet-perf control message (bad magic)";
        return std::nullopt;
    }
    const auto ver = std::to_integer<std::uint8_t>(in[4]);
    if (ver != version) {
        error = "control protocol version " + std::to_string(ver) + ", this uet-perf speaks " +
                std::to_string(version) + ": run the same uet-perf on both sides";
        return std::nullopt;
    }
    const auto kind = std::to_integer<std::uint8_t>(in[5]);
    if (kind == 0 || kind > ctrl_kind_max) {
        error = "unknown control message kind " + std::to_string(kind);
        return std::nullopt;
    }
    ctrl_msg m;
    m.kind = static_cast<ctrl_kind>(kind);
    m.nonce = get_u64(in.data() + 8);
    const std::byte* p = in.data() + ctrl_msg::header_bytes;
    for (auto& v : m.v) {
        v = get_u64(p);
        p += 8;
    }
    const std::size_t n =
        std::to_integer<std::size_t>(p[0]) | (std::to_integer<std::size_t>(p[1]) << 8);
    if (n > ctrl_msg::text_max || fixed + n > in.size()) {
        error = "control message text of " + std::to_string(n) + " bytes does not fit";
        return std::nullopt;
    }
    m.text.assign(reinterpret_cast<const char*>(p + 2), n);
    return m;
}

ctrl_msg make_hello(const settings& s, const endpoint_address& client, std::uint64_t key,
                    std::uint64_t region_bytes, std::uint64_t nonce) {
    ctrl_msg m;
    m.kind = ctrl_kind::hello;
    m.nonce = nonce;
    m.v[f_test] = static_cast<std::uint64_t>(s.test);
    m.v[f_size] = s.size;
    m.v[f_all] = s.all_sizes;
    m.v[f_iters] = s.iterations;
    m.v[f_duration] = s.duration_ms;
    m.v[f_depth] = s.tx_depth;
    m.v[f_mtu] = s.mtu;
    m.v[f_bidir] = s.bidirectional;
    m.v[f_job] = s.job_id;
    m.v[f_mode] = static_cast<std::uint64_t>(s.mode);
    m.v[f_cc] = static_cast<std::uint64_t>(s.cc);
    m.v[f_lb] = static_cast<std::uint64_t>(s.lb);
    m.v[f_pdcs] = s.pdcs;
    m.v[f_verify] = s.verify;
    m.v[f_corrupt] = s.corrupt_iteration;
    m.v[f_client_ip] = client.ip;
    m.v[f_client_port] = client.port;
    m.v[f_key] = key;
    m.v[f_region] = region_bytes;
    m.v[f_multi_recv] = s.multi_recv;
    m.v[f_transport] = static_cast<std::uint64_t>(s.transport);
    m.v[f_roce_mode] = static_cast<std::uint64_t>(s.roce_mode);
    m.v[f_compare_and_swap] = s.compare_and_swap;
    return m;
}

std::optional<hello_info> read_hello(const ctrl_msg& m, std::string& error) {
    const auto& v = m.v;
    if (m.nonce == 0) {
        error = "HELLO without a session nonce";
        return std::nullopt;
    }
    if (m.kind != ctrl_kind::hello || v[f_test] >= test_count || v[f_size] == 0 ||
        v[f_size] > (std::uint64_t{1} << 31) || v[f_all] > 1 || v[f_iters] == 0 ||
        v[f_depth] == 0 || v[f_depth] > 4096 || v[f_mtu] < 64 || v[f_mtu] > 8192 ||
        v[f_bidir] > 1 || v[f_job] > 0xffffff || v[f_mode] > 3 || v[f_cc] > 2 || v[f_lb] > 3 ||
        v[f_pdcs] == 0 || v[f_pdcs] > 16 || v[f_verify] > 1 || v[f_client_ip] > 0xffffffffu ||
        v[f_client_port] > 0xffff || v[f_region] > (std::uint64_t{1} << 32) ||
        v[f_multi_recv] > 1 || v[f_transport] > 1 || v[f_roce_mode] > 1 ||
        v[f_compare_and_swap] > 1) {
        error = "malformed HELLO (a setting out of range)";
        return std::nullopt;
    }
    hello_info h;
    h.s.test = static_cast<test_kind>(v[f_test]);
    h.s.size = v[f_size];
    h.s.all_sizes = v[f_all];
    h.s.iterations = v[f_iters];
    h.s.duration_ms = v[f_duration];
    h.s.tx_depth = static_cast<std::uint32_t>(v[f_depth]);
    h.s.mtu = static_cast<std::uint32_t>(v[f_mtu]);
    h.s.bidirectional = v[f_bidir];
    h.s.job_id = static_cast<std::uint32_t>(v[f_job]);
    h.s.mode = static_cast<delivery>(v[f_mode]);
    h.s.cc = static_cast<congestion_control>(v[f_cc]);
    h.s.lb = static_cast<path_policy>(v[f_lb]);
    h.s.pdcs = static_cast<std::uint32_t>(v[f_pdcs]);
    h.s.verify = v[f_verify];
    h.s.corrupt_iteration = v[f_corrupt];
    h.s.multi_recv = v[f_multi_recv];
    h.s.transport = static_cast<transport>(v[f_transport]);
    h.s.roce_mode = static_cast<roce_mode>(v[f_roce_mode]);
    h.s.compare_and_swap = v[f_compare_and_swap];
    h.client.ip = static_cast<std::uint32_t>(v[f_client_ip]);
    h.client.port = static_cast<std::uint16_t>(v[f_client_port]);
    h.key = v[f_key];
    h.region_bytes = v[f_region];
    return h;
}

namespace {

template <class T>
bool differ(std::string& out, std::string_view opt, const T& c, const T& s) {
    if (c == s) return false;
    out = std::string(opt) + ": client " + std::string(c) + ", server " + std::string(s);
    return true;
}
std::string num(std::uint64_t v) {
    return std::to_string(v);
}
std::string on_off(bool b) {
    return b ? "on" : "off";
}

}  // namespace

std::string compare_settings(const settings& c, const settings& s) {
    std::string d;
    if (differ(d, "test", std::string(name_of(c.test)), std::string(name_of(s.test))) ||
        differ(d, "-a", on_off(c.all_sizes), on_off(s.all_sizes)) ||
        (!c.all_sizes && differ(d, "-s", num(c.size), num(s.size))) ||
        differ(d, "-D (ms)", num(c.duration_ms), num(s.duration_ms)) ||
        (!c.duration_ms && differ(d, "-n", num(c.iterations), num(s.iterations))) ||
        differ(d, "-t", num(c.tx_depth), num(s.tx_depth)) ||
        differ(d, "-m", num(c.mtu), num(s.mtu)) ||
        differ(d, "-b", on_off(c.bidirectional), on_off(s.bidirectional)) ||
        differ(d, "-p", num(c.job_id), num(s.job_id)) ||
        differ(d, "--mode", std::string(name_of(c.mode)), std::string(name_of(s.mode))) ||
        differ(d, "--cc", std::string(name_of(c.cc)), std::string(name_of(s.cc))) ||
        differ(d, "--lb", std::string(name_of(c.lb)), std::string(name_of(s.lb))) ||
        differ(d, "--pdcs", num(c.pdcs), num(s.pdcs)) ||
        differ(d, "--verify", on_off(c.verify), on_off(s.verify)) ||
        differ(d, "--corrupt", num(c.corrupt_iteration), num(s.corrupt_iteration)) ||
        differ(d, "--multi-recv", on_off(c.multi_recv), on_off(s.multi_recv)) ||
        differ(d, "-A", std::string(c.compare_and_swap ? "CMP_AND_SWAP" : "FETCH_AND_ADD"),
               std::string(s.compare_and_swap ? "CMP_AND_SWAP" : "FETCH_AND_ADD")) ||
        differ(d, "--transport", transport_name(c), transport_name(s)))
        return "settings differ: " + d;
    return {};
}

}  // namespace uet::perf
