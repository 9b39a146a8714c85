// common/exit_codes.h: the process exit codes of the `leasehold` binary, one
// scheme for the server and every client subcommand (docs/client.md, "Exit
// codes", lists them). They follow BSD sysexits.h where one fits.
//
// `leasehold lock -- CMD` passes CMD's own exit status through when CMD ran
// to its end; 75 and 76 are its own outcomes, 126/127 the shell's for a
// command that cannot be run.
#pragma once

namespace leasehold::exit_code {

inline constexpr int kOk = 0;
// The request reached the server and was refused: no such lock or session,
// not the holder, a limit.
inline constexpr int kFailed = 1;
// EX_USAGE: unknown subcommand or flag, a flag value that does not parse
// (number, duration, address such as a bad --listen), a bad config file,
// server limits that cannot work together; client: credentials the server
// refuses (a wrong password, an untrusted certificate).
inline constexpr int kUsage = 64;
// EX_UNAVAILABLE: client: no server reachable, or no answer within
// --timeout; server: cannot start because something it needs is taken or
// down (the address is in use, another server uses the data dir, etcd
// does not answer).
inline constexpr int kUnavailable = 69;
// EX_SOFTWARE: a bug or an unexpected reply.
inline constexpr int kInternal = 70;
// EX_IOERR: server: the data dir cannot be read or written, or its log or
// history is damaged (the message says what to do).
inline constexpr int kIoError = 74;
// `lock`: not granted within --wait (EX_TEMPFAIL: try again later).
inline constexpr int kNotAcquired = 75;
// `lock`: the lease was lost while CMD ran.
inline constexpr int kLost = 76;
// `lock --max-hold`: the maximum hold ended while CMD ran (CMD's group was
// stopped: SIGTERM, then SIGKILL after --grace).
inline constexpr int kHoldEnded = 79;
// `lock`: CMD exists but cannot be executed / CMD not found (as a shell).
inline constexpr int kCannotRun = 126;
inline constexpr int kNotFound = 127;

}  // namespace leasehold::exit_code
