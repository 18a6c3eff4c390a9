// tshark as the outside check of the frames tests build: frames written to a pcap, read back as
// fields (`tshark -T fields`), one row of columns per frame. Header-only, for unit tests in any
// directory; the tests fail (never skip) when tshark is missing.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "wire/pcap_file.hpp"

namespace uet::test {

inline std::string tmp_dir() {
    const char* d = std::getenv("UET_TEST_TMPDIR");
    return d && *d ? d : "/tmp";
}

// Runs a shell command and returns its stdout (stderr is discarded: tshark warns when run as
// root). exit_status receives the command's status.
inline std::string run_command(const std::string& cmd, int& exit_status) {
    std::string out;
    std::FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
    if (!p) {
        exit_status = -1;
        return out;
    }
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    exit_status = pclose(p);
    return out;
}

inline bool have_tshark() {
    int st = 0;
    run_command("command -v tshark", st);
    return st == 0;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> v;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep))
        v.push_back(cur);
    if (!s.empty() && s.back() == sep) v.emplace_back();
    return v;
}

// Writes frames to tmp_dir()/name, runs tshark with `options` and one `-e` per field, and
// returns its rows (an empty list, and ok false, when tshark failed). The file is removed.
struct tshark_rows {
    bool ok = false;
    std::string command;
    std::vector<std::vector<std::string>> rows;
};
inline tshark_rows tshark_fields(std::span<const std::vector<std::uint8_t>> frames,
                                 const std::string& name, std::span<const char* const> fields,
                                 const std::string& options = "") {
    tshark_rows out;
    const std::string path = tmp_dir() + "/" + name;
    wire::pcap_writer w;
    if (!w.open(path)) return out;
    std::uint64_t t = 1'700'000'000'000'000'000ull;
    for (const auto& f : frames)
        if (!w.write(f, t += 1000)) return out;
    w.close();
    out.command = "timeout 60 tshark -n -r '" + path + "' " + options +
                  " -T fields -E separator=/t -E occurrence=a -E aggregator=';'";
    for (const char* f : fields)
        out.command += std::string(" -e ") + f;
    int st = 0;
    const std::string text = run_command(out.command, st);
    std::remove(path.c_str());
    out.ok = st == 0;
    for (const auto& line : split(text, '\n'))
        if (!line.empty()) out.rows.push_back(split(line, '\t'));
    return out;
}

}  // namespace uet::test
