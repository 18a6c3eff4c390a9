#include "uet/version.hpp"

namespace uet {

const char* version_string() noexcept {
    return UET_VERSION_STRING;
}

}  // namespace uet
