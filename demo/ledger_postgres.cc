// The PostgreSQL ledger: a row of leasehold_demo_ledger. Plain libpq for
// the table, the reads and the unfenced UPDATE; PostgresFence for the
// fenced one (the same UPDATE inside fenced_exec).
#include <libpq-fe.h>

#include <charconv>

#include "demo/ledger_stores.h"
#include "leasehold/fence_postgres.h"

namespace leasehold::demo {
namespace {

constexpr const char* kSchemaSql =
    "BEGIN;"
    "SELECT pg_advisory_xact_lock(7368001);"  // concurrent demos: one CREATE at a time
    "CREATE TABLE IF NOT EXISTS leasehold_demo_ledger ("
    "  entry text PRIMARY KEY, writer text NOT NULL, token bigint NOT NULL,"
    "  body text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());"
    "COMMIT;";

constexpr const char* kUpdateSql =
    "UPDATE leasehold_demo_ledger SET writer = $1, token = $2, body = $3, updated_at = now() "
    "WHERE entry = $4";

struct PgResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

class PostgresLedger final : public Ledger {
 public:
  PostgresLedger(LedgerTarget target, PGconn* conn, std::unique_ptr<fence::PostgresFence> fence)
      : target_(std::move(target)), conn_(conn), fence_(std::move(fence)) {}
  ~PostgresLedger() override { PQfinish(conn_); }
  PostgresLedger(const PostgresLedger&) = delete;
  PostgresLedger& operator=(const PostgresLedger&) = delete;

  Status prepare(const std::string& initial_body) override {
    if (Status s = exec_simple(kSchemaSql); !s) return s;
    if (Status s = fence_->ensure_schema(); !s) return s;
    // A fresh record and no fence token for the entry yet.
    auto r = exec("DELETE FROM leasehold_fence WHERE resource = $1", {target_.entry});
    if (!r) return r.status();
    r = exec("INSERT INTO leasehold_demo_ledger (entry, writer, token, body) VALUES ($1, 'nobody', 0, $2) "
             "ON CONFLICT (entry) DO UPDATE SET writer = 'nobody', token = 0, body = EXCLUDED.body, "
             "updated_at = now()",
             {target_.entry, initial_body});
    return r.status();
  }

  Status write(const LedgerRecord& record) override {
    if (record.body.size() > kMaxBodyBytes) {
      return Status(ErrorCode::kLimitExceeded, "ledger body over 4096 bytes");
    }
    const std::string token = std::to_string(record.token);
    if (target_.fenced) {
      auto rows = fence_->fenced_exec(target_.entry, record.token, kUpdateSql,
                                      {record.writer, token, record.body, target_.entry});
      return rows.status();
    }
    auto r = exec(kUpdateSql, {record.writer, token, record.body, target_.entry});
    return r.status();
  }

  Result<LedgerRecord> read() override {
    auto r = exec("SELECT writer, token, body FROM leasehold_demo_ledger WHERE entry = $1",
                  {target_.entry});
    if (!r) return r.status();
    if (PQntuples(r->get()) != 1) {
      return Status(ErrorCode::kNotFound, "no ledger row '" + target_.entry + "'");
    }
    LedgerRecord rec;
    rec.writer = PQgetvalue(r->get(), 0, 0);
    const std::string token = PQgetvalue(r->get(), 0, 1);
    std::from_chars(token.data(), token.data() + token.size(), rec.token);
    rec.body = PQgetvalue(r->get(), 0, 2);
    return rec;
  }

  Result<std::optional<std::uint64_t>> highest() override {
    if (!target_.fenced) return std::optional<std::uint64_t>();
    return fence_->highest(target_.entry);
  }

  std::string describe() const override {
    return target_.fenced
               ? "PostgreSQL row '" + target_.entry + "' (UPDATE inside PostgresFence::fenced_exec)"
               : "PostgreSQL row '" + target_.entry + "' (plain UPDATE, no token check)";
  }

 private:
  Status error_of(const char* what) const {
    std::string message = std::string(what) + ": " + PQerrorMessage(conn_);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    return Status(PQstatus(conn_) == CONNECTION_OK ? ErrorCode::kIoError : ErrorCode::kUnavailable,
                  message);
  }

  Status exec_simple(const char* sql) {
    PgResult r(PQexec(conn_, sql));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK && PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      Status st = error_of("ledger schema");
      PgResult rollback(PQexec(conn_, "ROLLBACK"));
      return st;
    }
    return Status::ok();
  }

  Result<PgResult> exec(const char* sql, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    PgResult r(PQexecParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(),
                            nullptr, nullptr, 0));
    const ExecStatusType st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return error_of("ledger query");
    return r;
  }

  const LedgerTarget target_;
  PGconn* conn_;
  std::unique_ptr<fence::PostgresFence> fence_;
};

}  // namespace

Result<std::unique_ptr<Ledger>> open_postgres_ledger(const LedgerTarget& target) {
  PGconn* conn = PQconnectdb(target.location.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = PQerrorMessage(conn);
    PQfinish(conn);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return Status(ErrorCode::kUnavailable, "cannot connect to PostgreSQL: " + why);
  }
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  auto fence = fence::PostgresFence::connect(target.location);
  if (!fence) {
    PQfinish(conn);
    return fence.status();
  }
  return std::unique_ptr<Ledger>(new PostgresLedger(target, conn, std::move(*fence)));
}

}  // namespace leasehold::demo
