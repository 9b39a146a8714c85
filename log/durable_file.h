// log/durable_file.h: whole-file writes that survive a crash, and whole-file
// reads, for the embedded log's small side files (snapshots, the revision
// record, the zero-filled journal).
//
// replace_file_durably() writes "<path>.tmp", fsyncs it, renames it over
// <path> and fsyncs the directory: after a crash the file holds either its
// old or its new bytes (plus at most a stray .tmp), never a mix.
// Errors: kIoError naming the file and errno's text. On failure the .tmp is
// removed and <path> is unchanged.
// read_whole_file(): kNotFound when the file does not exist, kIoError when it
// cannot be read.
// Thread-safety: free functions; callers keep distinct paths apart.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "leasehold/status.h"

namespace leasehold::log {

Status replace_file_durably(const std::string& path, std::string_view bytes);
// The same, with the bytes written by `write` into the new "<path>.tmp"
// (an fd open for writing; `write` returns kIoError naming the tmp path).
Status replace_file_durably_with(const std::string& path,
                                 const std::function<Status(int fd, const std::string& tmp_path)>& write);
Result<std::string> read_whole_file(const std::string& path);
// fsync a directory (so a rename or unlink in it is durable).
Status sync_directory(const std::string& dir);
// kIoError "<what> <path>: <errno's text>"; call it right after the failing
// call, before anything else can change errno.
Status io_error(const std::string& what, const std::string& path);

}  // namespace leasehold::log
