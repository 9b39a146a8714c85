// fence/pg_connection.h (internal): a libpq connection that returns Status
// values. Text parameters only; every call is one statement (PQexecParams).
//
// Error mapping (SQLSTATE class -> ErrorCode), with the server's message:
//   08xxx, 57P01-57P03, connection lost   kUnavailable
//   40001, 40P01 (serialisation/deadlock) kConflict (retry)
//   23xxx (integrity constraint)          kConflict
//   57014 (statement timeout), 55P03,
//   25P03 (idle-in-transaction timeout)   kTimedOut
//   42xxx (syntax, unknown table), 22xxx  kInvalidArgument
//   anything else                         kIoError
//
// Thread-safety: one object per thread.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::fence::detail {

using PgParams = std::vector<std::optional<std::string>>;

// A finished statement's rows (text values; nullopt is NULL).
struct PgRows {
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::uint64_t affected = 0;  // PQcmdTuples: rows inserted/updated/deleted
};

class PgConnection {
 public:
  // Connects (bounded by connect_timeout in conninfo, 10 s if absent) and
  // sets the session's statement and idle-in-transaction timeouts.
  static Result<std::unique_ptr<PgConnection>> connect(const std::string& conninfo,
                                                       std::chrono::milliseconds statement_timeout,
                                                       std::chrono::milliseconds idle_timeout);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement. `what` names it in error messages.
  Result<PgRows> exec(std::string_view what, const std::string& sql, const PgParams& params = {});

  // Runs "ROLLBACK", ignoring errors (used on every failure path).
  void rollback();

  // If the connection is broken, tries one reset. Errors: kUnavailable.
  Status ensure_connected();

  // Quotes an SQL identifier (table/column name). Errors: kInvalidArgument.
  Result<std::string> quote_identifier(std::string_view name);

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  Status error_from(std::string_view what, PGresult* res);

  PGconn* conn_;
};

}  // namespace leasehold::fence::detail
