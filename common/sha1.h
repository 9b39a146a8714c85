// common/sha1.h: SHA-1 (FIPS 180-4) of a byte string, as lower-case hex.
//
// Used to name Lua scripts the way Redis does (SCRIPT LOAD / EVALSHA); not
// for anything that needs collision resistance.
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace leasehold {

// 40 lower-case hex digits.
std::string sha1_hex(std::string_view data);

}  // namespace leasehold
