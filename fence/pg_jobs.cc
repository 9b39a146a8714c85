// fence/pg_jobs.cc: the job-claim pattern (FOR UPDATE SKIP LOCKED) with the
// claimer's token recorded, and fenced complete/release/requeue.
#include <string>

#include "fence/pg_connection.h"
#include "fence/pg_values.h"
#include "leasehold/fence_postgres.h"

namespace leasehold::fence {

using detail::check_statement;
using detail::parse_bigint;
using detail::PgRows;
using detail::token_param;

Status PostgresFence::ensure_jobs_table(std::string_view table) {
  if (Status s = conn_->ensure_connected(); !s) return s;
  Result<std::string> t = conn_->quote_identifier(table);
  if (!t) return t.status();
  Result<std::string> index = conn_->quote_identifier(std::string(table.substr(0, 55)) + "_pending");
  if (!index) return index.status();
  if (Status s = run_in_transaction("create jobs table",
                                    "CREATE TABLE IF NOT EXISTS " + *t +
                                        " (id bigserial PRIMARY KEY,"
                                        " payload text NOT NULL DEFAULT '',"
                                        " owner text,"
                                        " fence_token bigint,"
                                        " done boolean NOT NULL DEFAULT false,"
                                        " updated_at timestamptz NOT NULL DEFAULT now())",
                                    {});
      !s) {
    return s;
  }
  return run_in_transaction("create jobs index",
                            "CREATE INDEX IF NOT EXISTS " + *index + " ON " + *t +
                                " (id) WHERE owner IS NULL AND NOT done",
                            {});
}

Result<std::int64_t> PostgresFence::add_job(std::string_view table, std::string_view payload) {
  if (Status s = conn_->ensure_connected(); !s) return s;
  Result<std::string> t = conn_->quote_identifier(table);
  if (!t) return t.status();
  Result<PgRows> r = conn_->exec("add job", "INSERT INTO " + *t + " (payload) VALUES ($1) RETURNING id",
                                 {std::string(payload)});
  if (!r) return r.status();
  std::optional<std::int64_t> id = r->rows.empty() ? std::nullopt : parse_bigint(r->rows[0][0]);
  if (!id) return Status(ErrorCode::kInternal, "add job: no id returned");
  return *id;
}

Result<std::optional<ClaimedJob>> PostgresFence::claim_job(std::string_view table,
                                                           std::string_view owner, Token token) {
  Result<std::string> tok = token_param(token);
  if (!tok) return tok.status();
  if (owner.empty()) return Status(ErrorCode::kInvalidArgument, "job owner is empty");
  if (Status s = conn_->ensure_connected(); !s) return s;
  Result<std::string> t = conn_->quote_identifier(table);
  if (!t) return t.status();
  const std::string sql = "UPDATE " + *t +
                          " SET owner = $1, fence_token = $2, updated_at = now()"
                          " WHERE id = (SELECT id FROM " + *t +
                          " WHERE owner IS NULL AND NOT done ORDER BY id"
                          " FOR UPDATE SKIP LOCKED LIMIT 1)"
                          " RETURNING id, payload";
  Result<PgRows> r = conn_->exec("claim job", sql, {std::string(owner), *tok});
  if (!r) return r.status();
  if (r->rows.empty()) return std::optional<ClaimedJob>();
  std::optional<std::int64_t> id = parse_bigint(r->rows[0][0]);
  if (!id) return Status(ErrorCode::kInternal, "claim job: bad id returned");
  return std::optional<ClaimedJob>(ClaimedJob{*id, r->rows[0][1].value_or("")});
}

Status PostgresFence::complete_job(std::string_view table, std::int64_t id, std::string_view owner,
                                   Token token, std::string_view result_sql,
                                   const SqlParams& params) {
  return job_update("complete job", table, id, owner, token, "done = true", result_sql, params);
}

Status PostgresFence::release_job(std::string_view table, std::int64_t id, std::string_view owner,
                                  Token token) {
  return job_update("release job", table, id, owner, token, "owner = NULL", {}, {});
}

// In one transaction: update job `id` only while it is claimed by (owner,
// token) and not done; then run `result_sql`; commit.
Status PostgresFence::job_update(std::string_view what, std::string_view table, std::int64_t id,
                                 std::string_view owner, Token token, const std::string& set_sql,
                                 std::string_view result_sql, const SqlParams& params) {
  Result<std::string> tok = token_param(token);
  if (!tok) return tok.status();
  if (Status s = check_statement(result_sql, params.size(), kMaxSqlBytes, kMaxParams); !s) return s;
  if (Status s = conn_->ensure_connected(); !s) return s;
  Result<std::string> t = conn_->quote_identifier(table);
  if (!t) return t.status();
  const std::string id_text = std::to_string(id);
  if (auto r = conn_->exec("begin", "BEGIN ISOLATION LEVEL READ COMMITTED"); !r) return r.status();
  Result<PgRows> upd = conn_->exec(
      what,
      "UPDATE " + *t + " SET " + set_sql + ", updated_at = now()"
      " WHERE id = $1 AND owner = $2 AND fence_token = $3 AND NOT done RETURNING id",
      {id_text, std::string(owner), *tok});
  if (!upd) {
    conn_->rollback();
    return upd.status();
  }
  if (upd->rows.empty()) {
    Result<PgRows> cur = conn_->exec("read job", "SELECT owner, fence_token, done FROM " + *t +
                                                     " WHERE id = $1",
                                     {id_text});
    conn_->rollback();
    if (!cur) return cur.status();
    const std::string job = "job " + id_text + " in " + std::string(table);
    if (cur->rows.empty()) return Status(ErrorCode::kNotFound, "no " + job);
    const auto& row = cur->rows[0];
    const bool done = row[2].value_or("f") == "t";
    const std::string cur_owner = row[0].value_or("");
    const std::string cur_token = row[1].value_or("none");
    if (set_sql == "done = true" && done && row[0] && cur_owner == owner && cur_token == *tok) {
      return Status::ok();  // a retried completion
    }
    std::string state = done ? "done" : (row[0] ? "claimed" : "pending");
    return Status(ErrorCode::kStaleToken, std::string(what) + ": " + job + " is no longer claimed by '" +
                                              std::string(owner) + "' with token " + *tok +
                                              " (now " + state + ", owner '" + cur_owner +
                                              "', token " + cur_token + ")");
  }
  if (!result_sql.empty()) {
    if (auto r = conn_->exec("job result statement", std::string(result_sql), params); !r) {
      conn_->rollback();
      return r.status();
    }
  }
  if (auto r = conn_->exec("commit", "COMMIT"); !r) {
    conn_->rollback();
    return r.status();
  }
  return Status::ok();
}

Result<std::uint64_t> PostgresFence::requeue_jobs_of(std::string_view table, std::string_view owner) {
  if (Status s = conn_->ensure_connected(); !s) return s;
  Result<std::string> t = conn_->quote_identifier(table);
  if (!t) return t.status();
  Result<PgRows> r = conn_->exec(
      "requeue jobs",
      "UPDATE " + *t + " SET owner = NULL, updated_at = now() WHERE owner = $1 AND NOT done",
      {std::string(owner)});
  if (!r) return r.status();
  return r->affected;
}

}  // namespace leasehold::fence
