// Seeded fuzzing of the RESP parser: random bytes, and mutations of valid
// frames, fed in random chunk sizes. The parser must never crash, must
// always make progress or ask for more, and must keep its memory bounded by
// its limits (checked via the consumed/need-more contract; ASan checks the rest).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "resp/parser.h"
#include "resp/writer.h"

namespace leasehold::resp {
namespace {

constexpr std::uint64_t kSeed = 20240611;

std::string valid_corpus() {
  std::string out;
  append_command(out, {"SET", "key", "value", "NX", "PX", "30000"});
  append_command(out, {"LOCK.ACQUIRE", "jobs", "17", "WAIT", "0", "SEQ", "3"});
  Writer w(out, Protocol::kResp3);
  w.map_header(2);
  w.bulk("holders");
  w.array_header(2);
  w.integer(5);
  w.null();
  w.simple("x");
  w.dbl(2.5);
  w.push_header(3);
  w.bulk("leasehold");
  w.bulk("lost");
  w.boolean(true);
  w.error("ERR nope");
  w.verbatim("txt", "hello");
  out += "PING\r\nECHO \"a b\"\r\n";  // inline: requests only, so last
  return out;
}

// Drives one parser over `bytes`, fed in random chunks. Returns the number
// of values parsed; stops at the first protocol error.
std::size_t drive(Parser& parser, const std::string& bytes, std::mt19937_64& rng) {
  std::string buffer;
  std::size_t fed = 0;
  std::size_t values = 0;
  const ParserLimits& limits = parser.limits();
  while (fed < bytes.size() || !buffer.empty()) {
    if (fed < bytes.size()) {
      const std::size_t chunk = 1 + rng() % 64;
      const std::size_t n = std::min(chunk, bytes.size() - fed);
      buffer.append(bytes, fed, n);
      fed += n;
    }
    for (;;) {
      ParseOutcome o = parser.parse(buffer);
      EXPECT_LE(o.consumed, buffer.size());
      buffer.erase(0, o.consumed);
      if (o.status == ParseStatus::kError) {
        EXPECT_EQ(o.error.rfind("Protocol error: ", 0), 0u) << o.error;
        return values;
      }
      if (o.status == ParseStatus::kNeedMore) break;
      ++values;
    }
    // The unconsumed tail is bounded: a scalar line/bulk in progress or an inline line.
    EXPECT_LE(buffer.size(), limits.max_bulk_bytes + limits.max_inline_bytes + 64);
    if (fed == bytes.size()) break;
  }
  return values;
}

ParserLimits small_limits() {
  ParserLimits l;
  l.max_bulk_bytes = 256;
  l.max_array_len = 64;
  l.max_inline_bytes = 256;
  l.max_depth = 8;
  l.max_frame_bytes = 64 * 1024;
  return l;
}

TEST(RespFuzz, RandomBytesNeverCrash) {
  std::mt19937_64 rng(kSeed);
  const std::string alphabet = "*$+-:_,#(=!%~>\r\n0123456789-abcPING ";
  for (int round = 0; round < 3000; ++round) {
    std::string bytes(1 + rng() % 300, '\0');
    const bool structured = round % 2 == 0;
    for (char& c : bytes) {
      c = structured ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng() & 0xff);
    }
    Parser request(Parser::Mode::kRequest, small_limits());
    Parser reply(Parser::Mode::kReply, small_limits());
    drive(request, bytes, rng);
    drive(reply, bytes, rng);
  }
}

TEST(RespFuzz, MutatedValidFramesNeverCrash) {
  std::mt19937_64 rng(kSeed + 1);
  const std::string corpus = valid_corpus();
  {
    Parser reply(Parser::Mode::kReply);
    EXPECT_GT(drive(reply, corpus, rng), 5u) << "the unmutated corpus parses";
  }
  for (int round = 0; round < 5000; ++round) {
    std::string bytes = corpus;
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) {
      const std::size_t at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0: bytes[at] = static_cast<char>(rng() & 0xff); break;
        case 1: bytes.erase(at, 1 + rng() % 8); break;
        case 2: bytes.insert(at, std::to_string(rng() % 100000000000ULL)); break;
        default: bytes.insert(at, bytes.substr(rng() % bytes.size(), 1 + rng() % 16)); break;
      }
      if (bytes.empty()) bytes = "*";
    }
    Parser request(Parser::Mode::kRequest, small_limits());
    Parser reply(Parser::Mode::kReply, small_limits());
    drive(request, bytes, rng);
    drive(reply, bytes, rng);
  }
}

TEST(RespFuzz, HugeClaimedLengthsAllocateNothing) {
  Parser p(Parser::Mode::kReply);  // default limits
  for (const char* frame : {"*1048576\r\n", "%1048576\r\n", "$1048576\r\n"}) {
    Parser fresh(Parser::Mode::kReply);
    auto o = fresh.parse(frame);
    EXPECT_EQ(o.status, ParseStatus::kNeedMore) << frame;
  }
  std::string many = "*1048576\r\n";
  for (int i = 0; i < 10000; ++i) many += ":1\r\n";
  auto o = p.parse(many);
  EXPECT_EQ(o.status, ParseStatus::kNeedMore);
  EXPECT_EQ(o.consumed, many.size());
  EXPECT_TRUE(p.mid_frame());
}

}  // namespace
}  // namespace leasehold::resp
