// fence/pg_fence.cc: PostgresFence connection, schema, fenced_exec and the
// row-level variant.
#include <string>

#include "fence/pg_connection.h"
#include "fence/pg_values.h"
#include "leasehold/fence_postgres.h"

namespace leasehold::fence {

using detail::check_statement;
using detail::parse_bigint;
using detail::PgRows;
using detail::token_param;

namespace {

constexpr std::string_view kSchemaSql =
    "CREATE TABLE IF NOT EXISTS leasehold_fence ("
    " resource text PRIMARY KEY,"
    " token bigint NOT NULL,"
    " updated_at timestamptz NOT NULL DEFAULT now())";

// Serialises concurrent CREATE ... IF NOT EXISTS (which can otherwise fail
// with a unique violation on the catalog) across connections.
constexpr std::string_view kSchemaLockSql = "SELECT pg_advisory_xact_lock(7460921937408362561)";

constexpr std::string_view kAdmitSql =
    "INSERT INTO leasehold_fence (resource, token, updated_at) VALUES ($1, $2, now()) "
    "ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, updated_at = now() "
    "WHERE leasehold_fence.token <= EXCLUDED.token RETURNING token";

constexpr std::string_view kHighestSql = "SELECT token FROM leasehold_fence WHERE resource = $1";

Token token_or_zero(const PgRows& rows) {
  if (rows.rows.empty() || rows.rows[0].empty()) return 0;
  return static_cast<Token>(parse_bigint(rows.rows[0][0]).value_or(0));
}

}  // namespace

PostgresFence::PostgresFence(std::unique_ptr<detail::PgConnection> conn) : conn_(std::move(conn)) {}
PostgresFence::~PostgresFence() = default;

Result<std::unique_ptr<PostgresFence>> PostgresFence::connect(const std::string& conninfo,
                                                              PostgresFenceOptions options) {
  auto conn = detail::PgConnection::connect(conninfo, options.statement_timeout,
                                            options.idle_in_transaction_timeout);
  if (!conn) return conn.status();
  return std::unique_ptr<PostgresFence>(new PostgresFence(std::move(conn).value()));
}

std::string_view PostgresFence::schema_sql() { return kSchemaSql; }

Status PostgresFence::ensure_schema() { return run_in_transaction("create schema", std::string(kSchemaSql), {}); }

// BEGIN; advisory lock; `sql`; COMMIT. For DDL.
Status PostgresFence::run_in_transaction(std::string_view what, const std::string& sql,
                                         const SqlParams& params) {
  if (Status s = conn_->ensure_connected(); !s) return s;
  if (auto r = conn_->exec("begin", "BEGIN"); !r) return r.status();
  if (auto r = conn_->exec("schema lock", std::string(kSchemaLockSql)); !r) {
    conn_->rollback();
    return r.status();
  }
  if (auto r = conn_->exec(what, sql, params); !r) {
    conn_->rollback();
    return r.status();
  }
  if (auto r = conn_->exec("commit", "COMMIT"); !r) {
    conn_->rollback();
    return r.status();
  }
  return Status::ok();
}

Result<std::uint64_t> PostgresFence::fenced_exec(std::string_view resource, Token token,
                                                 std::string_view sql, const SqlParams& params) {
  if (Status s = validate_key(resource); !s) return s;
  Result<std::string> tok = token_param(token);
  if (!tok) return tok.status();
  if (Status s = check_statement(sql, params.size(), kMaxSqlBytes, kMaxParams); !s) return s;
  if (Status s = conn_->ensure_connected(); !s) return s;

  if (auto r = conn_->exec("begin", "BEGIN ISOLATION LEVEL READ COMMITTED"); !r) return r.status();
  const std::string key(resource);
  Result<PgRows> admitted = conn_->exec("admit token", std::string(kAdmitSql), {key, *tok});
  if (!admitted) {
    conn_->rollback();
    return admitted.status();
  }
  if (admitted->rows.empty()) {
    // Stale. The upsert locked the row, so this reads the token that beat us.
    Result<PgRows> current = conn_->exec("read token", std::string(kHighestSql), {key});
    conn_->rollback();
    if (!current) return current.status();
    return Admission{false, token_or_zero(*current)}.to_status(resource, token);
  }
  Result<PgRows> write = conn_->exec("fenced statement", std::string(sql), params);
  if (!write) {
    conn_->rollback();
    return write.status();
  }
  if (auto r = conn_->exec("commit", "COMMIT"); !r) {
    conn_->rollback();
    Status s = r.status();
    if (s.code() == ErrorCode::kUnavailable) {
      return Status(s.code(), s.message() + " (commit outcome unknown: check highest())");
    }
    return s;
  }
  return write->affected;
}

Result<std::optional<Token>> PostgresFence::highest(std::string_view resource) {
  if (Status s = validate_key(resource); !s) return s;
  if (Status s = conn_->ensure_connected(); !s) return s;
  Result<PgRows> r = conn_->exec("read token", std::string(kHighestSql), {std::string(resource)});
  if (!r) return r.status();
  if (r->rows.empty()) return std::optional<Token>();
  return std::optional<Token>(token_or_zero(*r));
}

Result<std::uint64_t> PostgresFence::fenced_update_row(std::string_view table,
                                                       std::string_view id_column,
                                                       std::string_view id, Token token,
                                                       std::string_view set_sql,
                                                       const SqlParams& params) {
  Result<std::string> tok = token_param(token);
  if (!tok) return tok.status();
  if (Status s = check_statement(set_sql, params.size() + 2, kMaxSqlBytes, kMaxParams); !s) return s;
  if (Status s = conn_->ensure_connected(); !s) return s;
  Result<std::string> t = conn_->quote_identifier(table);
  if (!t) return t.status();
  Result<std::string> col = conn_->quote_identifier(id_column);
  if (!col) return col.status();

  const std::string tok_ph = "$" + std::to_string(params.size() + 1);
  const std::string id_ph = "$" + std::to_string(params.size() + 2);
  std::string sql = "UPDATE " + *t + " SET ";
  if (!set_sql.empty()) sql += std::string(set_sql) + ", ";
  sql += "fence_token = " + tok_ph + " WHERE " + *col + " = " + id_ph +
         " AND (fence_token IS NULL OR fence_token <= " + tok_ph + ")";
  SqlParams all = params;
  all.emplace_back(*tok);
  all.emplace_back(std::string(id));
  Result<PgRows> r = conn_->exec("fenced row update", sql, all);
  if (!r) return r.status();
  if (r->affected > 0) return r->affected;

  // Nothing updated: the row is missing or carries a higher token (tokens
  // only rise, so what we read now is at least what the UPDATE saw).
  Result<PgRows> cur = conn_->exec(
      "read row token", "SELECT fence_token FROM " + *t + " WHERE " + *col + " = $1",
      {std::string(id)});
  if (!cur) return cur.status();
  const std::string what = std::string(table) + " row " + std::string(id);
  if (cur->rows.empty()) return Status(ErrorCode::kNotFound, "no " + what);
  const Token current = token_or_zero(*cur);
  if (current <= token) {
    return Status(ErrorCode::kConflict, what + " changed concurrently; retry");
  }
  return Admission{false, current}.to_status(what, token);
}

}  // namespace leasehold::fence
