// Every numeric argument of the session, lock, fence and compat commands,
// sent at the edges of the 64-bit ranges to a held lock (key) and to a free
// one: an out-of-range value gets a clear error (-ERR or -LIMIT) and
// changes nothing; a legal value gets its ordinary reply. The server runs in
// the sanitizer build too, where an overflow in a conversion of such a
// number (e.g. WAIT 9223372036854775807 made nanoseconds) stops it.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "testkit/eventually.h"
#include "testkit/server_process.h"

namespace leasehold::testing {
namespace {

using resp::Type;
using resp::Value;

const std::string kZero = "0";
const std::string kMinusOne = "-1";
const std::string kInt64Max = "9223372036854775807";
const std::string kInt64Min = "-9223372036854775808";
const std::string kTwo63 = "9223372036854775808";
const std::string kTwo64 = "18446744073709551616";
const std::vector<std::string> kValues = {kZero, kMinusOne, kInt64Max, kInt64Min, kTwo63, kTwo64};

// A command with placeholders: $N the number under test, $L a lock name,
// $K a compat key, $A the holder's session, $B a second session, $T the
// holder's token, $S a stale token. `legal`: the values the argument
// accepts (their reply may still be a domain error such as -EXPIRED); every
// other value must get -ERR or -LIMIT.
struct Template {
  std::vector<std::string> words;
  std::set<std::string> legal;
};

// Drops the fields that change with time alone (remaining_ms, held_ms,
// waited_ms) from a RESP3 reply.
Value without_clocks(Value v) {
  if (v.type == Type::kMap) {
    std::vector<Value> kept;
    for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2) {
      const std::string& key = v.elements[i].str;
      if (key == "remaining_ms" || key == "held_ms" || key == "waited_ms") continue;
      kept.push_back(v.elements[i]);
      kept.push_back(without_clocks(v.elements[i + 1]));
    }
    v.elements = std::move(kept);
    return v;
  }
  for (Value& e : v.elements) e = without_clocks(std::move(e));
  return v;
}

class WireNumbers : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start(dir_.file("data")));
    c_ = server_.client();
    sender_ = server_.client();
    ASSERT_TRUE(c_.connected());
    ASSERT_TRUE(sender_.connected());
    ASSERT_EQ(c_.call({"HELLO", "3"}).type, Type::kMap);
    ASSERT_EQ(sender_.call({"HELLO", "3"}).type, Type::kMap);
    a_ = open_session();
    b_ = open_session();
    const Value t = c_.call({"LOCK.ACQUIRE", "held", a_});
    ASSERT_EQ(t.type, Type::kInteger) << t.debug_string();
    token_ = std::to_string(t.integer);
    stale_ = std::to_string(t.integer + 1'000'000);
    ASSERT_EQ(c_.call({"FENCE.PUT", "fk", "v", "held", token_}).type, Type::kInteger);
    ASSERT_EQ(c_.call({"SET", "ck", "v", "PX", "120000"}), Value::simple("OK"));
  }

  std::string open_session() {
    const Value v = c_.call({"SESSION.OPEN", "120000", "OWNER", "wire-numbers"});
    EXPECT_EQ(v.type, Type::kInteger) << v.debug_string();
    return std::to_string(v.integer);
  }

  // What the commands under test could change.
  std::vector<Value> snapshot() {
    std::vector<Value> out;
    for (std::vector<std::string> read : std::vector<std::vector<std::string>>{
             {"LOCK.INFO", "held"}, {"LOCK.INFO", "free"}, {"LOCK.INFO", "ck"}, {"LOCK.LIST", "COUNT", "100"},
             {"SESSION.LIST", "COUNT", "100"}, {"GET", "ck"}, {"GET", "cfree"}, {"FENCE.GET", "fk"}}) {
      out.push_back(without_clocks(c_.call(read)));
    }
    return out;
  }

  std::vector<std::string> fill(const std::vector<std::string>& words, const std::string& n, bool held) {
    std::vector<std::string> out;
    for (const std::string& w : words) {
      if (w == "$N") out.push_back(n);
      else if (w == "$L") out.push_back(held ? "held" : "free");
      else if (w == "$K") out.push_back(held ? "ck" : "cfree");
      else if (w == "$A") out.push_back(a_);
      else if (w == "$B") out.push_back(b_);
      else if (w == "$T") out.push_back(token_);
      else if (w == "$S") out.push_back(stale_);
      else out.push_back(w);
    }
    return out;
  }

  // Sends `args`; checks the reply and that nothing changed (or, for a
  // legal value that does change state, checks the change and undoes it).
  void check(const std::vector<std::string>& args, bool legal) {
    const std::string what = ::testing::PrintToString(args);
    std::vector<Value> before = snapshot();
    const bool blocks = legal && args[0] == "LOCK.ACQUIRE" && args[1] == "held" && args.size() == 5 && args[3] == "WAIT";
    Value reply;
    if (blocks) {
      // WAIT 0 on a held lock: queued with no deadline. Cancel it.
      ASSERT_TRUE(sender_.send(args)) << what;
      ASSERT_TRUE(eventually([&] {
        const Value info = c_.call({"LOCK.INFO", "held"});
        const Value* waiters = info.find("waiters");
        return waiters != nullptr && waiters->elements.size() == 1;
      }, std::chrono::seconds(10))) << what;
      ASSERT_EQ(c_.call({"LOCK.CANCEL", "held", b_}), Value::simple("OK")) << what;
      auto r = sender_.read();
      ASSERT_TRUE(r) << what << ": " << r.status().to_string();
      reply = *r;
      EXPECT_TRUE(reply.is_null()) << what << " -> " << reply.debug_string();
    } else {
      reply = sender_.call(args);
    }
    ASSERT_NE(reply.str.rfind("IO ", 0), 0u) << what << ": the server stopped answering: " << reply.str;
    EXPECT_NE(reply.str.rfind("INTERNAL", 0), 0u) << what << " -> " << reply.str;
    if (!legal) {
      EXPECT_TRUE(reply.is_error()) << what << " -> " << reply.debug_string();
      EXPECT_TRUE(reply.str.rfind("ERR ", 0) == 0 || reply.str.rfind("LIMIT ", 0) == 0)
          << what << " -> " << reply.str;
    } else if (args[0] == "LOCK.ACQUIRE" && reply.type == Type::kInteger) {
      // Granted (the free lock): release it again.
      ASSERT_EQ(c_.call({"LOCK.RELEASE", args[1], b_, std::to_string(reply.integer)}), Value::simple("OK")) << what;
    } else if (args[0] == "PEXPIRE" && reply == Value::integer_value(1)) {
      // A past expiry deletes the key (Redis); put it back and take a new baseline.
      EXPECT_EQ(c_.call({"GET", args[1]}).type, Type::kNull) << what;
      ASSERT_EQ(c_.call({"SET", args[1], "v", "PX", "120000"}), Value::simple("OK")) << what;
      before = snapshot();
    }
    EXPECT_EQ(snapshot(), before) << what << " -> " << reply.debug_string() << " changed the state";
    EXPECT_EQ(sender_.call({"PING"}), Value::simple("PONG")) << what;
  }

  TempDir dir_{"server-wire-numbers"};
  ServerProcess server_;
  RespClient c_;       // state before and after
  RespClient sender_;  // the commands under test
  std::string a_, b_, token_, stale_;
};

TEST_F(WireNumbers, EdgeValuesGetAClearErrorAndChangeNothing) {
  const std::set<std::string> ids = {kInt64Max, kTwo63};  // in range, no such session / token
  const std::vector<Template> templates = {
      {{"SESSION.OPEN", "$N"}, {}},
      {{"SESSION.OPEN", "$N", "OWNER", "x"}, {}},
      {{"SESSION.KEEPALIVE", "$N"}, ids},
      {{"SESSION.CLOSE", "$N"}, ids},
      {{"SESSION.KILL", "$N"}, ids},
      {{"SESSION.WATCH", "$N"}, ids},
      {{"SESSION.LIST", "AFTER", "$N"}, {kZero, kInt64Max, kTwo63}},
      {{"SESSION.LIST", "COUNT", "$N"}, {}},
      {{"LOCK.ACQUIRE", "$L", "$N"}, ids},
      {{"LOCK.ACQUIRE", "$L", "$B", "LIMIT", "$N"}, {}},
      {{"LOCK.ACQUIRE", "$L", "$B", "WAIT", "$N"}, {kZero}},
      {{"LOCK.ACQUIRE", "$L", "$B", "DELAY", "$N"}, {kZero}},
      {{"LOCK.ACQUIRE", "$L", "$B", "SEQ", "$N"}, {kInt64Max}},
      {{"LOCK.RELEASE", "$L", "$N", "$T"}, ids},
      {{"LOCK.RELEASE", "$L", "$A", "$N"}, ids},
      {{"LOCK.RELEASE", "$L", "$A", "$S", "SEQ", "$N"}, {kInt64Max}},
      {{"LOCK.CANCEL", "$L", "$N"}, ids},
      {{"LOCK.ACQUIRE", "$L", "$B", "LEASE", "$N"}, {}},  // 1 .. 2^31-1 ms
      {{"LOCK.EXTEND", "$L", "$A", "$T", "$N"}, {}},
      {{"LOCK.EXTEND", "$L", "$N", "$T", "1000"}, ids},
      {{"LOCK.EXTEND", "$L", "$A", "$N", "1000"}, ids},
      {{"LOCK.TRANSFER", "$L", "$N", "$T", "$B"}, ids},
      {{"LOCK.TRANSFER", "$L", "$A", "$N", "$B"}, ids},
      {{"LOCK.TRANSFER", "$L", "$A", "$S", "$N"}, ids},
      {{"LOCK.LIST", "COUNT", "$N"}, {}},
      {{"LOCK.LIST", "$L", "COUNT", "$N"}, {}},
      {{"LOCK.HISTORY", "$L", "COUNT", "$N"}, {}},
      {{"LOCK.HISTORY", "$L", "BEFORE", "$N"}, ids},
      {{"FENCE.PUT", "fk", "w", "$L", "$N"}, ids},
      {{"SET", "$K", "w", "PX", "$N"}, {}},
      {{"SET", "$K", "w", "EX", "$N"}, {}},
      {{"SET", "$K", "w", "NX", "PX", "$N"}, {}},
      {{"PEXPIRE", "$K", "$N"}, {kZero, kMinusOne, kInt64Min}},  // Redis: a past expiry deletes
  };
  for (const Template& t : templates) {
    const bool per_lock = std::find_if(t.words.begin(), t.words.end(), [](const std::string& w) {
                            return w == "$L" || w == "$K";
                          }) != t.words.end();
    for (const bool held : per_lock ? std::vector<bool>{true, false} : std::vector<bool>{true}) {
      for (const std::string& n : kValues) {
        check(fill(t.words, n, held), t.legal.count(n) > 0);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// The reported case: a second session waits on a held lock for
// INT64_MAX ms. The parse refuses it, naming WAIT and its range.
TEST_F(WireNumbers, WaitBeyondTheRangeIsRefusedAtParse) {
  const Value r = sender_.call({"LOCK.ACQUIRE", "held", b_, "WAIT", kInt64Max});
  EXPECT_EQ(r.str, "ERR WAIT is not an integer or out of range (0 to 9223372036854)") << r.debug_string();
  const Value info = c_.call({"LOCK.INFO", "held"});
  ASSERT_NE(info.find("waiters"), nullptr) << info.debug_string();
  EXPECT_TRUE(info.find("waiters")->elements.empty()) << info.debug_string();
  EXPECT_EQ(sender_.call({"PING"}), Value::simple("PONG"));
}

}  // namespace
}  // namespace leasehold::testing
