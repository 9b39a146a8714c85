// fuzz/command_args_fuzzer.cc: libFuzzer target for command argument
// parsing through the command table (server/commands/command_table.h) and the write
// commands' argument parsers (server/commands/command_args.h), without a live server.
//
// Input: byte 0 bit 0 picks RESP3 (else RESP2) for the replies the table
// writes; the rest is a request stream, parsed as a connection parses it
// (resp::Parser, request mode; at most 64 requests). Each request is looked
// up in the table and checked for arity like the connection does; COMMAND
// replies are written and must parse back as exactly one reply. A write
// command's arguments are parsed into its core command, which must survive
// the log codec (encode, decode, encode gives the same bytes) and is applied
// to one state machine shared by the whole input, with the fencing checks of
// fuzz_support.h. A parse error must be kInvalidArgument (an "ERR" reply).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "resp/parser.h"
#include "resp/writer.h"
#include "server/base/args.h"
#include "server/commands/command_args.h"
#include "server/commands/command_table.h"

namespace {

using namespace leasehold;  // NOLINT: one small target

void check_one_reply(const std::string& bytes) {
  resp::Parser parser(resp::Parser::Mode::kReply);
  const resp::ParseOutcome o = parser.parse(bytes);
  FUZZ_CHECK(o.status == resp::ParseStatus::kValue && o.consumed == bytes.size());
}

void run_request(const std::vector<std::string>& args, resp::Protocol protocol, core::StateMachine& sm,
                 core::LogMillis& now) {
  const server::CommandTable& table = server::CommandTable::instance();
  const server::CommandSpec* spec = table.find(args[0]);
  if (spec == nullptr) {
    FUZZ_CHECK(server::CommandTable::unknown_error(args).rfind("ERR unknown command '", 0) == 0);
    return;
  }
  if (!server::CommandTable::arity_ok(*spec, args.size())) {
    FUZZ_CHECK(server::CommandTable::arity_error(*spec).rfind("ERR wrong number of arguments", 0) == 0);
    return;
  }
  (void)server::CommandTable::is_blocking_request(*spec, args);
  if (spec->name == "COMMAND") {
    std::string out;
    resp::Writer w(out, protocol);
    server::write_command_reply(table, args, w);
    check_one_reply(out);
    return;
  }
  const server::WriteParser parse = server::find_write_parser(spec->name);
  if (parse == nullptr) return;
  FUZZ_CHECK((spec->flags & server::kWrite) != 0);
  auto command = parse(args);
  if (!command) {
    FUZZ_CHECK(command.status().code() == ErrorCode::kInvalidArgument);
    FUZZ_CHECK(server::error_text(command.status()).rfind("ERR ", 0) == 0);
    return;
  }
  const std::string bytes = core::encode_command(*command);
  auto decoded = core::decode_command(bytes);
  FUZZ_CHECK(decoded.is_ok() && core::encode_command(*decoded) == bytes);
  command->now = now;
  now += 37;  // the log clock moves on between commands
  fuzz::apply_checked(sm, *command);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const resp::Protocol protocol = (data[0] & 1U) != 0 ? resp::Protocol::kResp3 : resp::Protocol::kResp2;
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  resp::Parser parser(resp::Parser::Mode::kRequest);
  core::StateMachine sm;
  core::LogMillis now = 1000;
  for (int n = 0; n < 64; ++n) {
    resp::ParseOutcome o = parser.parse(stream);
    stream.remove_prefix(o.consumed);
    if (o.status != resp::ParseStatus::kValue) break;
    std::vector<std::string> args;
    for (resp::Value& v : o.value.elements) args.push_back(std::move(v.str));
    run_request(args, protocol, sm, now);
  }
  fuzz::check_snapshot_round_trip(sm);
  return 0;
}
