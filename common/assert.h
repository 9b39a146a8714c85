// common/assert.h: always-on invariant checks for production code.
//
// LEASEHOLD_ASSERT(cond, fmt, args...) checks an invariant whose violation
// would make continuing unsafe (a token going backwards, a lock with two
// exclusive holders, a log position moving back). It is compiled in every
// build type, NDEBUG or not. On failure it writes one line to stderr naming
// the file, line, the condition and the formatted detail, flushes, and calls
// std::abort(): the process stops rather than serve from broken state (a
// supervisor restarts it; recovery starts from the durable log).
//
// Use it for "cannot happen unless our code is wrong", never for bad input
// (bad input gets an error reply and changes nothing).
// Thread-safety: safe from any thread.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace leasehold::detail {

[[noreturn]] void assert_failed(std::string_view file, int line, std::string_view condition,
                                std::string_view detail) noexcept;

}  // namespace leasehold::detail

#define LEASEHOLD_ASSERT(cond, ...)                                                                 \
  do {                                                                                            \
    if (!(cond)) [[unlikely]] {                                                                   \
      ::leasehold::detail::assert_failed(__FILE__, __LINE__, #cond, ::fmt::format(__VA_ARGS__)); \
    }                                                                                             \
  } while (false)
