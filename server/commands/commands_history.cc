// Audit history: LOCK.HISTORY name [COUNT n] [BEFORE id] (docs/operations.md).
#include "server/net/connection.h"
#include "server/commands/handler_util.h"
#include "server/observability/history_store.h"
#include "server/observability/observability.h"

namespace leasehold::server {
namespace {

constexpr std::uint64_t kMaxCount = 10'000;

void write_record(resp::Writer& w, const HistoryRecord& r) {
  w.map_header(12);
  w.bulk("id");
  w.integer(static_cast<std::int64_t>(r.id));
  w.bulk("time_ms");
  w.integer(r.wall_ms);
  w.bulk("log_index");
  w.integer(static_cast<std::int64_t>(r.log_index));
  w.bulk("event");
  w.bulk(audit_kind_name(r.event.kind));
  w.bulk("lock");
  w.bulk(r.event.lock);
  w.bulk("session");
  w.integer(static_cast<std::int64_t>(r.event.session));
  w.bulk("owner");
  w.bulk(r.event.owner);
  w.bulk("token");
  w.integer(static_cast<std::int64_t>(r.event.token));
  w.bulk("reason");
  w.bulk(r.event.reason);
  w.bulk("wait_ms");
  w.integer(r.event.wait_ms);
  w.bulk("hold_ms");
  w.integer(r.event.hold_ms);
  w.bulk("delay_ms");
  w.integer(r.event.delay_ms);
}

void lock_history(CommandContext& ctx) {
  const auto& a = ctx.args;
  std::uint64_t count = 20;
  std::uint64_t before = 0;
  for (std::size_t i = 2; i < a.size(); i += 2) {
    if (i + 1 >= a.size()) return ctx.reply.error_text(syntax_error("want LOCK.HISTORY name [COUNT n] [BEFORE id]"));
    if (iequals(a[i], "COUNT")) {
      auto n = parse_uint(a[i + 1], "COUNT", 1, kMaxCount);
      if (!n) return ctx.reply.error(n.status());
      count = *n;
    } else if (iequals(a[i], "BEFORE")) {
      auto n = parse_uint(a[i + 1], "BEFORE", 1, UINT64_MAX);
      if (!n) return ctx.reply.error(n.status());
      before = *n;
    } else {
      return ctx.reply.error_text(syntax_error("want LOCK.HISTORY name [COUNT n] [BEFORE id]"));
    }
  }
  const HistoryStore* history = ctx.server.observability().history();
  const std::vector<HistoryRecord> records =
      history != nullptr ? history->query(true, a[1], static_cast<std::size_t>(count), before)
                         : std::vector<HistoryRecord>{};
  ctx.reply.write([&](resp::Writer& w) {
    w.array_header(records.size());
    for (const HistoryRecord& r : records) write_record(w, r);
  });
}

}  // namespace

void add_history_commands(std::vector<CommandSpec>& out) {
  out.push_back({"LOCK.HISTORY", -2, kReadonly | kAdmin, "lock",
                 "The audit history of a lock, newest first (grants, releases, expiries, revokes, kills, lock-delays)",
                 "name [COUNT n] [BEFORE id]", &lock_history, kAclAdmin, {1, 1, 1}});
}

}  // namespace leasehold::server
