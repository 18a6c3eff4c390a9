// uet public API: library version.
#pragma once

namespace uet {

inline constexpr int version_major = 0;
inline constexpr int version_minor = 1;
inline constexpr int version_patch = 0;

// The version of the library that was linked, which may differ from the header's.
const char* version_string() noexcept;

}  // namespace uet
