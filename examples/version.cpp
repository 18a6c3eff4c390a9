// The smallest program built against an installed libuet: pkg-config --cflags --libs uet
#include <uet/version.hpp>

#include <cstdio>
#include <cstring>

int main() {
    std::printf("libuet %s (headers %d.%d.%d)\n", uet::version_string(), uet::version_major,
                uet::version_minor, uet::version_patch);
    char headers[32];
    std::snprintf(headers, sizeof headers, "%d.%d.%d", uet::version_major, uet::version_minor,
                  uet::version_patch);
    return std::strcmp(headers, uet::version_string()) == 0 ? 0 : 1;
}
