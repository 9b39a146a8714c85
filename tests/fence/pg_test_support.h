// tests/fence/pg_test_support.h: the private PostgreSQL of the `postgres`
// CTest fixture (tests/services/postgres.sh), plain libpq for test setup and
// checks (independent of the code under test), and unique names per test.
#pragma once

#include <libpq-fe.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace leasehold::fence::testing {

// The connection string: $LEASEHOLD_PG_CONNINFO, else the fixture's file
// $LEASEHOLD_BUILD_DIR/services/postgres/conninfo. Empty if neither exists.
inline std::string pg_conninfo() {
  if (const char* env = std::getenv("LEASEHOLD_PG_CONNINFO"); env && *env) return env;
  const char* build = std::getenv("LEASEHOLD_BUILD_DIR");
  if (build == nullptr) return "";
  std::ifstream in(std::string(build) + "/services/postgres/conninfo");
  std::string line;
  std::getline(in, line);
  return line;
}

// Runs `sql` (may hold several statements) and returns the first column of
// each row of the last result. Fails the test on error.
inline std::vector<std::optional<std::string>> psql(const std::string& sql) {
  std::vector<std::optional<std::string>> out;
  PGconn* conn = PQconnectdb(pg_conninfo().c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    ADD_FAILURE() << "psql connect: " << PQerrorMessage(conn);
    PQfinish(conn);
    return out;
  }
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  PGresult* res = PQexec(conn, sql.c_str());
  const ExecStatusType st = PQresultStatus(res);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    ADD_FAILURE() << "psql '" << sql << "': " << PQresultErrorMessage(res);
  } else {
    for (int r = 0; r < PQntuples(res); ++r) {
      if (PQgetisnull(res, r, 0)) {
        out.emplace_back(std::nullopt);
      } else {
        out.emplace_back(std::string(PQgetvalue(res, r, 0)));
      }
    }
  }
  PQclear(res);
  PQfinish(conn);
  return out;
}

// "<prefix>_<pid>_<n>": tables and resources no other test process uses.
inline std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

// Fails the test early with a clear message when there is no database.
class PgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conninfo_ = pg_conninfo();
    ASSERT_FALSE(conninfo_.empty())
        << "no PostgreSQL: run through ctest (fixture `postgres`), or run "
           "tests/services/postgres.sh start <build>/services/postgres, or set LEASEHOLD_PG_CONNINFO";
  }
  std::string conninfo_;
};

}  // namespace leasehold::fence::testing
