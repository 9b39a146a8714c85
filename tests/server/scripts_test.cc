// EVAL / EVALSHA / SCRIPT for the recognised lock scripts and CONFIG GET,
// against a real server, also through real redis-cli and redis-benchmark.
// (redis-py's own Lock runs in clients/python/tests/test_redis_compat.py.)
#include <gtest/gtest.h>

#include <cstdio>

#include "testkit/server_process.h"

namespace leasehold::testing {
namespace {

using resp::Type;
using resp::Value;

constexpr const char* kReleaseSha = "c3f8721cbb97f72bc19e972846bd7aaf91901658";
constexpr const char* kExtendSha = "a4e8783852e6b949f9ef3a97212805108459a890";
constexpr const char* kReacquireSha = "1cac51482acf5858da00f6d685d68f886cd6b6b2";

std::string run_shell(const std::string& command) {
  std::string out;
  FILE* f = ::popen((command + " 2>&1").c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  ::pclose(f);
  return out;
}

class Scripts : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start(dir_.file("data")));
    c_ = server_.client();
    ASSERT_TRUE(c_.connected());
  }
  std::int64_t pttl(const std::string& key) { return c_.call({"PTTL", key}).integer; }
  std::string cli(const std::string& args) {
    return run_shell("timeout 60 redis-cli -p " + std::to_string(server_.port()) + " " + args);
  }

  TempDir dir_{"server-scripts"};
  ServerProcess server_;
  RespClient c_;
};

TEST_F(Scripts, RedisPyReleaseBySha) {
  ASSERT_EQ(c_.call({"SET", "k", "tok", "NX", "PX", "60000"}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"EVALSHA", kReleaseSha, "1", "k", "other"}), Value::integer_value(0));
  EXPECT_EQ(c_.call({"GET", "k"}), Value::bulk("tok")) << "a wrong token deletes nothing";
  EXPECT_EQ(c_.call({"EVALSHA", kReleaseSha, "1", "k", "tok"}), Value::integer_value(1));
  EXPECT_EQ(c_.call({"GET", "k"}).type, Type::kNull);
  EXPECT_EQ(c_.call({"EVALSHA", kReleaseSha, "1", "k", "tok"}), Value::integer_value(0));
  EXPECT_EQ(c_.call({"SET", "k", "again", "NX", "PX", "60000"}), Value::simple("OK")) << "the key is free";
}

TEST_F(Scripts, RedisPyExtendAddsOrReplaces) {
  ASSERT_EQ(c_.call({"SET", "k", "tok", "PX", "10000"}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"EVALSHA", kExtendSha, "1", "k", "nope", "50000", "0"}), Value::integer_value(0));
  EXPECT_LE(pttl("k"), 10000);
  EXPECT_EQ(c_.call({"EVALSHA", kExtendSha, "1", "k", "tok", "50000", "0"}), Value::integer_value(1));
  const auto added = pttl("k");
  EXPECT_GT(added, 50000) << "added to the remaining TTL";
  EXPECT_LE(added, 60000);
  EXPECT_EQ(c_.call({"EVALSHA", kExtendSha, "1", "k", "tok", "20000", "1"}), Value::integer_value(1));
  const auto replaced = pttl("k");
  EXPECT_GT(replaced, 10000);
  EXPECT_LE(replaced, 20000) << "replaced";
  // A key without expiry cannot be made (SET needs PX), so the script's
  // pttl < 0 branch only meets a missing key: not extended.
  EXPECT_EQ(c_.call({"SET", "forever", "tok"}).type, Type::kError);
  EXPECT_EQ(c_.call({"EVALSHA", kExtendSha, "1", "forever", "tok", "1000", "0"}), Value::integer_value(0));
  EXPECT_EQ(c_.call({"EVALSHA", kExtendSha, "1", "k", "tok", "abc", "0"}).type, Type::kError);
  EXPECT_EQ(c_.call({"EVALSHA", kExtendSha, "1", "k", "tok", "1000"}).str,
            "ERR this lock script needs 3 ARGV values, got 2");
}

TEST_F(Scripts, RedisPyReacquireResetsTheTtl) {
  ASSERT_EQ(c_.call({"SET", "k", "tok", "PX", "5000"}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"EVALSHA", kReacquireSha, "1", "k", "bad", "90000"}), Value::integer_value(0));
  EXPECT_EQ(c_.call({"EVALSHA", kReacquireSha, "1", "k", "tok", "90000"}), Value::integer_value(1));
  EXPECT_GT(pttl("k"), 60000);
  EXPECT_EQ(c_.call({"EVALSHA", kReacquireSha, "1", "absent", "tok", "90000"}), Value::integer_value(0));
  EXPECT_EQ(c_.call({"EVALSHA", kReacquireSha, "1", "k", "tok", "0"}), Value::integer_value(1));
  EXPECT_EQ(c_.call({"GET", "k"}).type, Type::kNull) << "PEXPIRE 0 inside the script deletes, as in Redis";
}

TEST_F(Scripts, ScriptLoadExistsFlush) {
  const std::string variant =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('DEL', KEYS[1])\nend\nreturn 0\n";
  Value sha = c_.call({"SCRIPT", "LOAD", variant});
  ASSERT_EQ(sha.type, Type::kBulkString) << sha.debug_string();
  ASSERT_EQ(sha.str.size(), 40u);
  Value exists = c_.call({"SCRIPT", "EXISTS", sha.str, kReleaseSha, "0000000000000000000000000000000000000000"});
  ASSERT_EQ(exists.elements.size(), 3u);
  EXPECT_EQ(exists.elements[0], Value::integer_value(1));
  EXPECT_EQ(exists.elements[1], Value::integer_value(1));
  EXPECT_EQ(exists.elements[2], Value::integer_value(0));
  ASSERT_EQ(c_.call({"SET", "k", "v", "PX", "60000"}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"EVALSHA", sha.str, "1", "k", "v"}), Value::integer_value(1));
  EXPECT_EQ(c_.call({"SCRIPT", "FLUSH"}), Value::simple("OK"));
  EXPECT_EQ(c_.call({"EVALSHA", sha.str, "1", "k", "v"}).str, "NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_EQ(c_.call({"EVALSHA", kReleaseSha, "1", "k", "v"}), Value::integer_value(0))
      << "the catalogue texts never need loading";
  EXPECT_EQ(c_.call({"SCRIPT", "LOAD", "return redis.call('flushall')"}).str.rfind("ERR leasehold runs no Lua", 0),
            0u);
  EXPECT_EQ(c_.call({"SCRIPT", "KILL"}).type, Type::kError);
}

TEST_F(Scripts, BadEvalArguments) {
  const std::string text = "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end";
  EXPECT_EQ(c_.call({"EVAL", text, "x"}).str, "ERR value is not an integer or out of range");
  EXPECT_EQ(c_.call({"EVAL", text, "-1"}).str, "ERR Number of keys can't be negative");
  EXPECT_EQ(c_.call({"EVAL", text, "3", "a"}).str, "ERR Number of keys can't be greater than number of args");
  EXPECT_EQ(c_.call({"EVAL", text, "2", "a", "b", "c"}).str,
            "ERR this lock script takes exactly one key (KEYS[1]), not 2");
  EXPECT_EQ(c_.call({"EVAL", text, "1", "a"}).str, "ERR this lock script needs 1 ARGV values, got 0");
  EXPECT_EQ(c_.call({"EVAL", text}).str, "ERR wrong number of arguments for 'eval' command");
  EXPECT_EQ(c_.call({"PING"}), Value::simple("PONG"));
}

TEST_F(Scripts, CanonicalReleaseThroughRedisCli) {
  EXPECT_EQ(cli("SET job:billing worker-42 NX PX 30000"), "OK\n");
  const std::string script =
      "'if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end'";
  EXPECT_EQ(cli("EVAL " + script + " 1 job:billing worker-7"), "0\n");
  EXPECT_EQ(cli("GET job:billing"), "worker-42\n");
  EXPECT_EQ(cli("EVAL " + script + " 1 job:billing worker-42"), "1\n");
  EXPECT_EQ(cli("GET job:billing"), "\n");
  // The seeds' form (upper-case names, a comment, no else) through redis-cli --eval.
  EXPECT_EQ(cli("SET r v PX 60000"), "OK\n");
  const std::string file = dir_.file("release.lua");
  FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("-- release only if we still own it\nif redis.call(\"GET\", KEYS[1]) == ARGV[1] then\n"
             "    return redis.call(\"DEL\", KEYS[1])\nend\nreturn 0\n", f);
  std::fclose(f);
  EXPECT_EQ(cli("--eval " + file + " r , x"), "0\n");
  EXPECT_EQ(cli("--eval " + file + " r , v"), "1\n");
}

TEST_F(Scripts, UnknownScriptRefusedThroughRedisCli) {
  const std::string out = cli("EVAL \"return redis.call('flushall')\" 0");
  EXPECT_NE(out.find("ERR leasehold runs no Lua"), std::string::npos) << out;
  EXPECT_NE(out.find("DELIFEQ key value"), std::string::npos) << out;
  EXPECT_NE(cli("EVALSHA 0123456789012345678901234567890123456789 0").find("NOSCRIPT"), std::string::npos);
}

TEST_F(Scripts, ConfigGetAnswersTools) {
  Value v = c_.call({"CONFIG", "GET", "save"});
  ASSERT_EQ(v.type, Type::kArray) << v.debug_string();
  ASSERT_EQ(v.elements.size(), 2u);
  EXPECT_EQ(v.elements[0], Value::bulk("save"));
  v = c_.call({"CONFIG", "GET", "appendonly", "maxmemory", "databases"});
  EXPECT_EQ(v.elements.size(), 6u) << v.debug_string();
  v = c_.call({"CONFIG", "GET", "*"});
  EXPECT_GE(v.elements.size(), 20u);
  EXPECT_EQ(c_.call({"CONFIG", "GET", "no-such-thing"}).elements.size(), 0u);
  EXPECT_EQ(c_.call({"CONFIG", "SET", "save", ""}).type, Type::kError);
  EXPECT_EQ(cli("CONFIG GET appendonly"), "appendonly\nyes\n");
}

TEST_F(Scripts, RedisBenchmarkPrintsNoConfigWarning) {
  const std::string out = run_shell("timeout 120 redis-benchmark -p " + std::to_string(server_.port()) +
                                    " -t ping -n 200 -c 2 -q");
  EXPECT_EQ(out.find("WARNING"), std::string::npos) << out;
  EXPECT_EQ(out.find("Could not fetch server CONFIG"), std::string::npos) << out;
  EXPECT_NE(out.find("PING_INLINE"), std::string::npos) << out;
}

}  // namespace
}  // namespace leasehold::testing
