#include "resp/parser.h"

#include <gtest/gtest.h>

#include <string>

namespace leasehold::resp {
namespace {

// Feeds `bytes` in one go; expects exactly one value.
ParseOutcome parse_all(Parser& p, std::string bytes) {
  ParseOutcome o = p.parse(bytes);
  return o;
}

std::vector<std::string> args_of(const Value& v) {
  std::vector<std::string> out;
  for (const auto& e : v.elements) out.push_back(e.str);
  return out;
}

TEST(RespParser, ParsesRequestArray) {
  Parser p(Parser::Mode::kRequest);
  auto o = parse_all(p, "*2\r\n$3\r\nGET\r\n$3\r\nfoo\r\n");
  ASSERT_EQ(o.status, ParseStatus::kValue);
  EXPECT_EQ(o.consumed, 22u);
  EXPECT_EQ(args_of(o.value), (std::vector<std::string>{"GET", "foo"}));
}

TEST(RespParser, ParsesPipelinedRequestsOneAtATime) {
  Parser p(Parser::Mode::kRequest);
  std::string buf = "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n";
  auto a = p.parse(buf);
  ASSERT_EQ(a.status, ParseStatus::kValue);
  buf.erase(0, a.consumed);
  auto b = p.parse(buf);
  ASSERT_EQ(b.status, ParseStatus::kValue);
  EXPECT_EQ(args_of(b.value), (std::vector<std::string>{"ECHO", "hi"}));
  EXPECT_EQ(b.consumed, buf.size());
}

TEST(RespParser, ByteAtATimeGivesSameResult) {
  const std::string frame = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n";
  Parser p(Parser::Mode::kRequest);
  std::string buf;
  std::optional<Value> got;
  for (char c : frame) {
    buf.push_back(c);
    auto o = p.parse(buf);
    ASSERT_NE(o.status, ParseStatus::kError) << o.error;
    buf.erase(0, o.consumed);
    if (o.status == ParseStatus::kValue) got = o.value;
  }
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(args_of(*got), (std::vector<std::string>{"SET", "k", "0123456789"}));
  EXPECT_TRUE(buf.empty());
  EXPECT_FALSE(p.mid_frame());
}

TEST(RespParser, BinarySafeBulk) {
  Parser p(Parser::Mode::kRequest);
  std::string frame = std::string("*1\r\n$5\r\na\r\n\0b\r\n", 15);
  auto o = p.parse(frame);
  ASSERT_EQ(o.status, ParseStatus::kValue);
  EXPECT_EQ(o.value.elements[0].str, std::string("a\r\n\0b", 5));
}

TEST(RespParser, InlineCommands) {
  Parser p(Parser::Mode::kRequest);
  auto o = p.parse("PING\r\n");
  ASSERT_EQ(o.status, ParseStatus::kValue);
  EXPECT_EQ(args_of(o.value), (std::vector<std::string>{"PING"}));
  auto q = p.parse("  set  \"a b\\n\" 'it\\'s'  \\x41 \n");
  ASSERT_EQ(q.status, ParseStatus::kValue);
  EXPECT_EQ(args_of(q.value), (std::vector<std::string>{"set", "a b\n", "it's", "\\x41"}));
  auto x = p.parse("ECHO \"\\x41\\x42\"\n");
  ASSERT_EQ(x.status, ParseStatus::kValue);
  EXPECT_EQ(args_of(x.value), (std::vector<std::string>{"ECHO", "AB"}));
}

TEST(RespParser, EmptyInlineAndEmptyArraysAreSkipped) {
  Parser p(Parser::Mode::kRequest);
  auto o = p.parse("\r\n\n*0\r\n*-1\r\nPING\r\n");
  ASSERT_EQ(o.status, ParseStatus::kValue);
  EXPECT_EQ(args_of(o.value), (std::vector<std::string>{"PING"}));
}

TEST(RespParser, UnbalancedQuotesIsAnError) {
  Parser p(Parser::Mode::kRequest);
  auto o = p.parse("SET \"abc\r\n");
  ASSERT_EQ(o.status, ParseStatus::kError);
  EXPECT_EQ(o.error, "Protocol error: unbalanced quotes in request");
  auto again = p.parse("PING\r\n");
  EXPECT_EQ(again.status, ParseStatus::kError) << "a failed parser stays failed";
}

struct BadFrame {
  std::string bytes;
  std::string error;
};

TEST(RespParser, RequestFramingErrorsAreNamed) {
  const std::vector<BadFrame> cases = {
      {"*x\r\n", "Protocol error: invalid multibulk length"},
      {"*-2\r\n", "Protocol error: invalid multibulk length"},
      {"*99999999999\r\n", "Protocol error: too big array count"},
      {"*1\r\n$x\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$-1\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$-5\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$99999999999\r\n", "Protocol error: too big bulk count"},
      {"*1\r\n:5\r\n", "Protocol error: expected '$', got ':'"},
      {"*1\r\n$3\r\nabcde\r\n", "Protocol error: bulk not terminated by CRLF"},
      {"*1\r\n$" + std::string(100, '1'), "Protocol error: too big bulk count string"},
      {"*" + std::string(100, '1'), "Protocol error: too big mbulk count string"},
  };
  for (const auto& c : cases) {
    Parser p(Parser::Mode::kRequest);
    auto o = p.parse(c.bytes);
    EXPECT_EQ(o.status, ParseStatus::kError) << c.bytes;
    EXPECT_EQ(o.error, c.error) << c.bytes;
  }
}

TEST(RespParser, InlineLimit) {
  ParserLimits limits;
  limits.max_inline_bytes = 16;
  Parser p(Parser::Mode::kRequest, limits);
  auto ok = p.parse("PING\r\n");
  ASSERT_EQ(ok.status, ParseStatus::kValue);
  auto o = p.parse(std::string(17, 'a'));
  EXPECT_EQ(o.status, ParseStatus::kError);
  EXPECT_EQ(o.error, "Protocol error: too big inline request");
}

TEST(RespParser, HostileLengthsDoNotWaitForever) {
  ParserLimits limits;
  limits.max_bulk_bytes = 100;
  limits.max_array_len = 10;
  Parser p(Parser::Mode::kRequest, limits);
  EXPECT_EQ(p.parse("*11\r\n").error, "Protocol error: too big array count");
  Parser q(Parser::Mode::kRequest, limits);
  EXPECT_EQ(q.parse("*1\r\n$101\r\n").error, "Protocol error: too big bulk count");
}

TEST(RespParser, FrameBudgetBoundsManySmallElements) {
  ParserLimits limits;
  limits.max_frame_bytes = 4096;
  Parser p(Parser::Mode::kRequest, limits);
  std::string frame = "*1000\r\n";
  for (int i = 0; i < 1000; ++i) frame += "$0\r\n\r\n";
  auto o = p.parse(frame);
  EXPECT_EQ(o.status, ParseStatus::kError);
  EXPECT_EQ(o.error, "Protocol error: too big frame");
}

TEST(RespParser, RepliesOfEveryType) {
  Parser p(Parser::Mode::kReply);
  std::string buf =
      "+OK\r\n-ERR bad\r\n:-42\r\n$3\r\nabc\r\n$-1\r\n*-1\r\n_\r\n,3.5\r\n#t\r\n#f\r\n"
      "(12345678901234567890\r\n=8\r\ntxt:abcd\r\n!5\r\nERR x\r\n"
      "*2\r\n:1\r\n*1\r\n+in\r\n%1\r\n+k\r\n:2\r\n~2\r\n:1\r\n:2\r\n>3\r\n$9\r\nleasehold\r\n$4\r\nlost\r\n:7\r\n*0\r\n";
  std::vector<Value> got;
  while (!buf.empty()) {
    auto o = p.parse(buf);
    ASSERT_EQ(o.status, ParseStatus::kValue) << o.error << " at " << buf;
    buf.erase(0, o.consumed);
    got.push_back(std::move(o.value));
  }
  ASSERT_EQ(got.size(), 18u);
  EXPECT_EQ(got[0], Value::simple("OK"));
  EXPECT_EQ(got[1], Value::error("ERR bad"));
  EXPECT_EQ(got[2].integer, -42);
  EXPECT_EQ(got[3], Value::bulk("abc"));
  EXPECT_TRUE(got[4].is_null());
  EXPECT_TRUE(got[5].is_null());
  EXPECT_TRUE(got[6].is_null());
  EXPECT_EQ(got[7].type, Type::kDouble);
  EXPECT_DOUBLE_EQ(got[7].dbl, 3.5);
  EXPECT_TRUE(got[8].boolean);
  EXPECT_FALSE(got[9].boolean);
  EXPECT_EQ(got[10].type, Type::kBigNumber);
  EXPECT_EQ(got[11].type, Type::kVerbatim);
  EXPECT_EQ(got[11].str, "abcd");
  EXPECT_EQ(got[12], Value::error("ERR x"));
  EXPECT_EQ(got[13].debug_string(), "[(integer) 1, [in]]");
  ASSERT_EQ(got[14].type, Type::kMap);
  ASSERT_NE(got[14].find("k"), nullptr);
  EXPECT_EQ(got[14].find("k")->integer, 2);
  EXPECT_EQ(got[15].type, Type::kSet);
  EXPECT_EQ(got[16].type, Type::kPush);
  EXPECT_EQ(got[16].elements[1].str, "lost");
  EXPECT_EQ(got[17].type, Type::kArray);
  EXPECT_TRUE(got[17].elements.empty());
}

TEST(RespParser, ReplyErrorsAreNamed) {
  const std::vector<BadFrame> cases = {
      {"?\r\n", "Protocol error: unknown type byte '?'"},
      {std::string("\x01\r\n"), "Protocol error: unknown type byte 0x01"},
      {":abc\r\n", "Protocol error: invalid integer"},
      {":99999999999999999999\r\n", "Protocol error: invalid integer"},
      {",x\r\n", "Protocol error: invalid double"},
      {"#x\r\n", "Protocol error: invalid boolean"},
      {"_x\r\n", "Protocol error: invalid null"},
      {"(\r\n", "Protocol error: invalid big number"},
      {"=2\r\nab\r\n", "Protocol error: invalid verbatim string"},
      {"%-1\r\n", "Protocol error: invalid multibulk length"},
  };
  for (const auto& c : cases) {
    Parser p(Parser::Mode::kReply);
    auto o = p.parse(c.bytes);
    EXPECT_EQ(o.status, ParseStatus::kError) << c.bytes;
    EXPECT_EQ(o.error, c.error) << c.bytes;
  }
}

TEST(RespParser, DepthLimit) {
  ParserLimits limits;
  limits.max_depth = 3;
  Parser ok(Parser::Mode::kReply, limits);
  EXPECT_EQ(ok.parse("*1\r\n*1\r\n*1\r\n:1\r\n").status, ParseStatus::kValue);
  Parser deep(Parser::Mode::kReply, limits);
  auto o = deep.parse("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n");
  EXPECT_EQ(o.status, ParseStatus::kError);
  EXPECT_EQ(o.error, "Protocol error: too deep nesting");
}

TEST(RespParser, PartialBulkIsNotConsumed) {
  Parser p(Parser::Mode::kReply);
  auto o = p.parse("$10\r\n01234");
  EXPECT_EQ(o.status, ParseStatus::kNeedMore);
  EXPECT_EQ(o.consumed, 0u);
  auto full = p.parse("$10\r\n0123456789\r\n");
  ASSERT_EQ(full.status, ParseStatus::kValue);
  EXPECT_EQ(full.value.str, "0123456789");
}

}  // namespace
}  // namespace leasehold::resp
