// leasehold/fence_postgres.h: fencing for data in PostgreSQL. The token
// check and the guarded write happen in ONE transaction or statement, so a
// stale token changes nothing and is reported as kStaleToken.
//
// Schema (ensure_schema() creates it; see schema_sql()):
//   CREATE TABLE leasehold_fence (
//     resource   text PRIMARY KEY,         -- the fenced resource's name
//     token      bigint NOT NULL,          -- highest admitted token
//     updated_at timestamptz NOT NULL DEFAULT now());  -- display only
// and, for row-level fencing, a `fence_token bigint` column on the guarded
// rows (fenced_update_row), and a jobs table for claims (ensure_jobs_table).
//
// fenced_exec(resource, token, sql, params) runs, in one READ COMMITTED
// transaction:
//   INSERT INTO leasehold_fence(resource, token) VALUES ($1, $2)
//     ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, updated_at = now()
//     WHERE leasehold_fence.token <= EXCLUDED.token RETURNING token
// and only if that returned a row, the caller's statement; then COMMIT. The
// upsert takes the resource row's lock until commit, so racing writers of a
// resource run one after another, and a writer whose token was overtaken
// while it waited sees the newer row and gets kStaleToken.
//
// Tokens: PostgreSQL has no unsigned 64-bit type; tokens above INT64_MAX are
// refused with kInvalidArgument (leasehold's tokens start at 1 and count
// commands, so this is never reached in practice).
//
// Timeouts: each statement is bounded by `statement_timeout` (kTimedOut). A
// holder that pauses inside a transaction is cut off by the server after
// `idle_in_transaction_timeout`: its transaction is rolled back and its later
// COMMIT fails (kUnavailable) -- a paused holder cannot keep the row locked.
//
// Errors: kStaleToken (nothing changed), kNotFound (row/job absent),
// kInvalidArgument (bad SQL/identifier/token), kConflict (serialisation
// failure, deadlock or constraint violation: retry or fix), kTimedOut,
// kUnavailable (connection lost; if lost during COMMIT the outcome is
// unknown -- re-check with highest()), kIoError (other server errors). Every
// message carries the server's text and SQLSTATE. No exception escapes.
//
// Thread-safety: one PostgresFence (one connection) per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/fence.h"
#include "leasehold/status.h"

namespace leasehold::fence {

namespace detail {
class PgConnection;
}

// Text parameters for $1..$n of the caller's SQL; nullopt is SQL NULL.
using SqlParams = std::vector<std::optional<std::string>>;

struct PostgresFenceOptions {
  std::chrono::milliseconds statement_timeout{10000};
  std::chrono::milliseconds idle_in_transaction_timeout{30000};
};

// A job handed out by claim_job().
struct ClaimedJob {
  std::int64_t id = 0;
  std::string payload;
};

class PostgresFence {
 public:
  static constexpr std::size_t kMaxParams = 1000;
  static constexpr std::size_t kMaxSqlBytes = 1 << 20;

  // Connects with a libpq connection string ("host=... port=... dbname=...").
  // Errors: kUnavailable (with libpq's reason).
  static Result<std::unique_ptr<PostgresFence>> connect(const std::string& conninfo,
                                                        PostgresFenceOptions options = {});
  ~PostgresFence();
  PostgresFence(const PostgresFence&) = delete;
  PostgresFence& operator=(const PostgresFence&) = delete;

  // The DDL of the leasehold_fence table (idempotent: IF NOT EXISTS).
  static std::string_view schema_sql();
  // Runs schema_sql() under an advisory lock, safe to call from many
  // processes at once.
  Status ensure_schema();

  // Admits `token` for `resource` (as above) and, if admitted, runs `sql`
  // (one statement, placeholders $1..$n bound to `params`) in the same
  // transaction. Returns the rows affected by `sql`.
  // Errors: kStaleToken if token < the recorded token (nothing ran); others
  // as listed above (the transaction was rolled back).
  Result<std::uint64_t> fenced_exec(std::string_view resource, Token token, std::string_view sql,
                                    const SqlParams& params = {});

  // The recorded token for `resource`, or nullopt.
  Result<std::optional<Token>> highest(std::string_view resource);

  // Row-level fencing, one statement:
  //   UPDATE <table> SET <set_sql>, fence_token = $T
  //   WHERE <id_column> = $I AND (fence_token IS NULL OR fence_token <= $T)
  // where $T = $(n+1) and $I = $(n+2) follow the caller's n params. Returns
  // the rows updated (>= 1). Errors: kStaleToken (the row's fence_token is
  // higher; nothing changed), kNotFound (no such row), others as above.
  Result<std::uint64_t> fenced_update_row(std::string_view table, std::string_view id_column,
                                          std::string_view id, Token token, std::string_view set_sql,
                                          const SqlParams& params = {});

  // --- Job claims (a jobs table: id, payload, owner, fence_token, done) ---

  // Creates the jobs table `table` if absent:
  //   id bigserial PRIMARY KEY, payload text NOT NULL DEFAULT '',
  //   owner text, fence_token bigint, done boolean NOT NULL DEFAULT false,
  //   updated_at timestamptz NOT NULL DEFAULT now()
  // plus a partial index on the pending jobs.
  Status ensure_jobs_table(std::string_view table);
  // Inserts a pending job; returns its id.
  Result<std::int64_t> add_job(std::string_view table, std::string_view payload);
  // Claims the lowest-id pending job for `owner`, recording `token`:
  //   UPDATE t SET owner = $1, fence_token = $2 WHERE id = (SELECT id FROM t
  //     WHERE owner IS NULL AND NOT done ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
  //   RETURNING id, payload
  // Concurrent claimers never get the same job and never wait on each other.
  // Returns nullopt when no job is pending.
  Result<std::optional<ClaimedJob>> claim_job(std::string_view table, std::string_view owner,
                                              Token token);
  // Marks job `id` done if it is still claimed by (owner, token), and if
  // `result_sql` is not empty runs it (with `params`) in the same
  // transaction. Repeating a successful completion is OK (idempotent).
  // Errors: kStaleToken (the job was released, requeued or claimed by
  // someone else; nothing changed), kNotFound, others as above.
  Status complete_job(std::string_view table, std::int64_t id, std::string_view owner, Token token,
                      std::string_view result_sql = {}, const SqlParams& params = {});
  // Gives job `id` back (pending) if still claimed by (owner, token).
  // Errors: as complete_job.
  Status release_job(std::string_view table, std::int64_t id, std::string_view owner, Token token);
  // Puts every unfinished job of `owner` back to pending (for a supervisor
  // that learned the owner's session expired). Their late complete/release
  // then fails with kStaleToken. Returns how many jobs were requeued.
  Result<std::uint64_t> requeue_jobs_of(std::string_view table, std::string_view owner);

 private:
  explicit PostgresFence(std::unique_ptr<detail::PgConnection> conn);
  Status run_in_transaction(std::string_view what, const std::string& sql, const SqlParams& params);
  Status job_update(std::string_view what, std::string_view table, std::int64_t id,
                    std::string_view owner, Token token, const std::string& set_sql,
                    std::string_view result_sql, const SqlParams& params);

  std::unique_ptr<detail::PgConnection> conn_;
};

}  // namespace leasehold::fence
