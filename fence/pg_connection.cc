// fence/pg_connection.cc: libpq calls, result conversion, error mapping.
#include "fence/pg_connection.h"

#include <charconv>
#include <string>

namespace leasehold::fence::detail {
namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

void ignore_notice(void*, const char*) {}

ErrorCode code_for_sqlstate(std::string_view state) {
  if (state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03") {
    return ErrorCode::kUnavailable;
  }
  if (state == "40001" || state == "40P01" || state.starts_with("23")) return ErrorCode::kConflict;
  if (state == "57014" || state == "55P03" || state == "25P03") return ErrorCode::kTimedOut;
  if (state.starts_with("42") || state.starts_with("22")) return ErrorCode::kInvalidArgument;
  return ErrorCode::kIoError;
}

std::string trimmed(const char* text) {
  std::string s = text ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Result<std::unique_ptr<PgConnection>> PgConnection::connect(
    const std::string& conninfo, std::chrono::milliseconds statement_timeout,
    std::chrono::milliseconds idle_timeout) {
  std::string info = conninfo;
  if (info.find("connect_timeout") == std::string::npos) info += " connect_timeout=10";
  PGconn* raw = PQconnectdb(info.c_str());
  if (raw == nullptr) return Status(ErrorCode::kUnavailable, "postgres: out of memory connecting");
  std::unique_ptr<PgConnection> conn(new PgConnection(raw));
  if (PQstatus(raw) != CONNECTION_OK) {
    return Status(ErrorCode::kUnavailable, "postgres: cannot connect: " + trimmed(PQerrorMessage(raw)));
  }
  PQsetNoticeProcessor(raw, ignore_notice, nullptr);
  const std::string setup =
      "SET statement_timeout = " + std::to_string(statement_timeout.count()) +
      "; SET idle_in_transaction_session_timeout = " + std::to_string(idle_timeout.count());
  ResultPtr res(PQexec(raw, setup.c_str()));
  if (PQresultStatus(res.get()) != PGRES_COMMAND_OK) return conn->error_from("session setup", res.get());
  return conn;
}

PgConnection::~PgConnection() { PQfinish(conn_); }

Status PgConnection::ensure_connected() {
  if (PQstatus(conn_) == CONNECTION_OK) return Status::ok();
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return Status(ErrorCode::kUnavailable, "postgres: reconnect failed: " + trimmed(PQerrorMessage(conn_)));
  }
  return Status::ok();
}

Status PgConnection::error_from(std::string_view what, PGresult* res) {
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = res ? trimmed(PQresultErrorMessage(res)) : "";
  if (message.empty()) message = trimmed(PQerrorMessage(conn_));
  ErrorCode code = state ? code_for_sqlstate(state) : ErrorCode::kIoError;
  if (PQstatus(conn_) != CONNECTION_OK) code = ErrorCode::kUnavailable;
  std::string text = "postgres (" + std::string(what) + "): " + message;
  if (state) text += " [SQLSTATE " + std::string(state) + "]";
  return Status(code, std::move(text));
}

Result<PgRows> PgConnection::exec(std::string_view what, const std::string& sql, const PgParams& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  ResultPtr res(PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr,
                             values.data(), nullptr, nullptr, 0));
  const ExecStatusType st = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return error_from(what, res.get());
  PgRows out;
  const int rows = PQntuples(res.get());
  const int cols = PQnfields(res.get());
  out.rows.resize(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    auto& row = out.rows[static_cast<std::size_t>(r)];
    for (int c = 0; c < cols; ++c) {
      if (PQgetisnull(res.get(), r, c)) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(std::string(PQgetvalue(res.get(), r, c),
                                     static_cast<std::size_t>(PQgetlength(res.get(), r, c))));
      }
    }
  }
  const char* affected = PQcmdTuples(res.get());
  if (affected != nullptr) {
    std::string_view digits(affected);
    std::from_chars(digits.data(), digits.data() + digits.size(), out.affected);
  }
  return out;
}

void PgConnection::rollback() {
  if (PQstatus(conn_) != CONNECTION_OK) return;
  ResultPtr res(PQexec(conn_, "ROLLBACK"));
}

Result<std::string> PgConnection::quote_identifier(std::string_view name) {
  if (name.empty() || name.size() > 63) {
    return Status(ErrorCode::kInvalidArgument,
                  "SQL identifier must be 1..63 bytes, got '" + std::string(name) + "'");
  }
  char* quoted = PQescapeIdentifier(conn_, name.data(), name.size());
  if (quoted == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "cannot quote identifier: " + trimmed(PQerrorMessage(conn_)));
  }
  std::string out(quoted);
  PQfreemem(quoted);
  return out;
}

}  // namespace leasehold::fence::detail
