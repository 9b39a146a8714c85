// core/command_codec.h: the log's byte format for commands.
//
// encode_command(c) -> bytes; decode_command(bytes) -> Command. The format is
// versioned (first byte), uses LEB128 varints and length-prefixed strings, and
// decoding is fully bounds-checked: truncated, garbled, trailing or unknown
// input gives kInvalidArgument (never a crash, never a huge allocation).
// Strings are limited to kMaxCodecString bytes here; the state machine's
// Limits are enforced later by apply(), so a decoded command may still be
// rejected there.
//
// A batch is what one log entry holds: a version byte, a count, then each
// command as a length-prefixed encode_command() image.
//
// Layout and type tags: docs/core.md ("Command encoding").
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/command.h"
#include "leasehold/status.h"

namespace leasehold::core {

inline constexpr std::uint8_t kCommandCodecVersion = 1;
inline constexpr std::uint8_t kBatchCodecVersion = 1;
inline constexpr std::size_t kMaxCodecString = 16U << 20;  // 16 MiB per string field
inline constexpr std::size_t kMaxBatchCommands = 1U << 20;

std::string encode_command(const Command& command);
// Appends the encoding to `out` (no clearing): for callers that reuse buffers.
void encode_command_to(const Command& command, std::string& out);
Result<Command> decode_command(std::string_view bytes);

std::string encode_batch(const std::vector<Command>& commands);
Result<std::vector<Command>> decode_batch(std::string_view bytes);

}  // namespace leasehold::core
