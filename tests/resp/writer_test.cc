#include "resp/writer.h"

#include <gtest/gtest.h>

#include "resp/parser.h"

namespace leasehold::resp {
namespace {

std::string write2(auto&& fn) {
  std::string out;
  Writer w(out, Protocol::kResp2);
  fn(w);
  return out;
}
std::string write3(auto&& fn) {
  std::string out;
  Writer w(out, Protocol::kResp3);
  fn(w);
  return out;
}

TEST(RespWriter, Scalars) {
  EXPECT_EQ(write2([](Writer& w) { w.ok(); }), "+OK\r\n");
  EXPECT_EQ(write2([](Writer& w) { w.error("ERR bad\r\nthing"); }), "-ERR bad  thing\r\n");
  EXPECT_EQ(write2([](Writer& w) { w.integer(-7); }), ":-7\r\n");
  EXPECT_EQ(write2([](Writer& w) { w.bulk(std::string_view("a\0b", 3)); }), std::string("$3\r\na\0b\r\n", 9));
}

TEST(RespWriter, NullDependsOnProtocol) {
  EXPECT_EQ(write2([](Writer& w) { w.null(); }), "$-1\r\n");
  EXPECT_EQ(write2([](Writer& w) { w.null_array(); }), "*-1\r\n");
  EXPECT_EQ(write3([](Writer& w) { w.null(); }), "_\r\n");
  EXPECT_EQ(write3([](Writer& w) { w.null_array(); }), "_\r\n");
}

TEST(RespWriter, MapsFlattenInResp2) {
  auto fill = [](Writer& w) {
    w.map_header(1);
    w.bulk("k");
    w.integer(1);
  };
  EXPECT_EQ(write2(fill), "*2\r\n$1\r\nk\r\n:1\r\n");
  EXPECT_EQ(write3(fill), "%1\r\n$1\r\nk\r\n:1\r\n");
}

TEST(RespWriter, Resp3OnlyTypesDowngrade) {
  EXPECT_EQ(write2([](Writer& w) { w.boolean(true); }), ":1\r\n");
  EXPECT_EQ(write3([](Writer& w) { w.boolean(false); }), "#f\r\n");
  EXPECT_EQ(write2([](Writer& w) { w.dbl(1.5); }), "$3\r\n1.5\r\n");
  EXPECT_EQ(write3([](Writer& w) { w.dbl(1.5); }), ",1.5\r\n");
  EXPECT_EQ(write3([](Writer& w) { w.set_header(0); }), "~0\r\n");
  EXPECT_EQ(write2([](Writer& w) { w.set_header(0); }), "*0\r\n");
  EXPECT_EQ(write3([](Writer& w) { w.push_header(2); }), ">2\r\n");
  EXPECT_EQ(write3([](Writer& w) { w.verbatim("txt", "hi"); }), "=6\r\ntxt:hi\r\n");
  EXPECT_EQ(write2([](Writer& w) { w.verbatim("txt", "hi"); }), "$2\r\nhi\r\n");
}

TEST(RespWriter, ValueRoundTripsThroughParser) {
  Value v = Value::map({Value::bulk("a"), Value::array({Value::integer_value(1), Value::null()}),
                        Value::simple("b"), Value::error("ERR x")});
  std::string out;
  Writer(out, Protocol::kResp3).value(v);
  Parser p(Parser::Mode::kReply);
  auto o = p.parse(out);
  ASSERT_EQ(o.status, ParseStatus::kValue) << o.error;
  EXPECT_EQ(o.value, v);
  EXPECT_EQ(o.consumed, out.size());
}

TEST(RespWriter, AppendCommandIsAParsableRequest) {
  std::string out;
  append_command(out, {"SET", "k", std::string_view("v\r\n", 3)});
  Parser p(Parser::Mode::kRequest);
  auto o = p.parse(out);
  ASSERT_EQ(o.status, ParseStatus::kValue);
  ASSERT_EQ(o.value.elements.size(), 3u);
  EXPECT_EQ(o.value.elements[2].str, "v\r\n");
}

}  // namespace
}  // namespace leasehold::resp
