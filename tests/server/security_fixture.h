// tests/server/security_fixture.h: a real server with a users file and
// password file (docs/security.md), and helpers to drive it with the RESP
// test client, redis-cli and redis-py.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "testkit/server_process.h"

namespace leasehold::testing {

// Runs a shell command; its stdout and stderr. Bounded by `timeout` (seconds).
inline std::string sh(const std::string& command, int timeout_s = 30) {
  std::string out;
  const std::string full = "timeout " + std::to_string(timeout_s) + " sh -c '" + command + "' 2>&1";
  FILE* f = ::popen(full.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  ::pclose(f);
  return out;
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// SHA-256 hex of `password`, by the sha256sum tool (not our code).
inline std::string sha256_hex(const std::string& password) {
  return sh("printf %s " + password + " | sha256sum").substr(0, 64);
}

// The users every security test uses.
inline std::string standard_users() {
  return "# test users\n"
         "user default off\n"
         "user admin on #" + sha256_hex("adminpw") + " ~* +@all\n"
         "user alice on #" + sha256_hex("alicepw") + " ~locks/* ~keys/* +@lock +@read +@fence\n"
         "user bob on #" + sha256_hex("bobpw") + " ~locks/* +@lock +@read\n"
         "user reader on #" + sha256_hex("readpw") + " allkeys +@read\n"
         "user fencer on #" + sha256_hex("fencepw") + " ~f/* ~locks/* +@fence\n"
         "user carol off #" + sha256_hex("carolpw") + " ~* +@all\n";
}

class SecureServer : public ::testing::Test {
 protected:
  void SetUp() override {
    write_text(users_file(), standard_users());
    ASSERT_TRUE(server_.start(dir_.file("data"), {"--users-file", users_file()}));
  }
  std::string users_file() const { return dir_.file("users.acl"); }
  // A connection authenticated as `user` (AUTH must answer +OK).
  RespClient login(const std::string& user, const std::string& password) {
    RespClient c = server_.client();
    resp::Value v = c.call({"AUTH", user, password});
    EXPECT_EQ(v, resp::Value::simple("OK")) << user << ": " << v.debug_string();
    return c;
  }
  std::int64_t open_session(RespClient& c) {
    resp::Value v = c.call({"SESSION.OPEN", "30000"});
    EXPECT_EQ(v.type, resp::Type::kInteger) << v.debug_string();
    return v.integer;
  }
  std::string redis_cli(const std::string& args) {
    return sh("redis-cli --no-auth-warning -p " + std::to_string(server_.port()) + " " + args);
  }
  // Runs a redis-py snippet with `r` connected (port in PORT); its output.
  std::string redis_py(const std::string& connect_args, const std::string& body) {
    const std::string script = dir_.file("t.py");
    write_text(script, "import redis, sys\nPORT = " + std::to_string(server_.port()) +
                           "\nr = redis.Redis(host=\"127.0.0.1\", port=PORT, socket_timeout=10, " +
                           connect_args + ")\n" + body);
    return sh("/usr/bin/python3 " + script, 60);
  }

  TempDir dir_{"server-security"};
  ServerProcess server_;
};

}  // namespace leasehold::testing
