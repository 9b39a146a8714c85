#include "demo/pause_demo.h"

#include <cstdio>
#include <memory>
#include <random>

#include "demo/loopback.h"
#include "demo/pause_scenario.h"
#include "demo/private_services.h"

namespace leasehold::demo {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kMinTtl{200};
constexpr milliseconds kMaxTtl{60'000};
constexpr milliseconds kMaxPause{600'000};

Status validate(const PauseDemoOptions& o) {
  auto bad = [](const std::string& why) { return Status(ErrorCode::kInvalidArgument, why); };
  if (o.leasehold_binary.empty()) return bad("no leasehold binary to run the workers with");
  if (o.lock.empty() || o.lock.size() > 200) return bad("the lock name must be 1..200 bytes");
  if (o.ttl < kMinTtl || o.ttl > kMaxTtl) return bad("--ttl must be between 200ms and 60s");
  if (o.pause <= o.ttl || o.pause > kMaxPause) {
    return bad("--pause must be longer than --ttl (the point is that the lease runs out) and at most 10m");
  }
  return Status::ok();
}

std::string run_id() {
  std::random_device rd;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", rd());
  return buf;
}

// Where the ledger lives for both runs. Owns what it started.
struct LedgerPlace {
  LedgerStore store = LedgerStore::kPostgres;
  std::string location;
  std::string note;
  std::unique_ptr<PrivatePostgres> postgres;
  ScratchDir files;
};

Result<std::unique_ptr<LedgerPlace>> choose_ledger(const PauseDemoOptions& o) {
  auto place = std::make_unique<LedgerPlace>();
  std::string no_pg;
  if (o.resource != ResourceChoice::kFile) {
    if (!o.pg_conninfo.empty()) {
      // The user named this database: fail now, clearly, if it is not there.
      auto probe = open_ledger({LedgerStore::kPostgres, o.pg_conninfo, "demo/probe", false});
      if (!probe) return Status(probe.status().code(), "--pg: " + probe.status().message());
      place->location = o.pg_conninfo;
      place->note = "PostgreSQL given by --pg / LEASEHOLD_PG_CONNINFO";
      return place;
    }
    auto pg = PrivatePostgres::start(o.pg_bin_dir);
    if (pg) {
      place->location = (*pg)->conninfo();
      place->note = "private PostgreSQL on 127.0.0.1:" + std::to_string((*pg)->port()) +
                    " (cluster in " + (*pg)->cluster_dir() + ", removed at the end)";
      place->postgres = std::move(*pg);
      return place;
    }
    if (o.resource == ResourceChoice::kPostgres) return pg.status();
    no_pg = pg.status().message();
  }
  auto dir = ScratchDir::create("leasehold-demo-ledger");
  if (!dir) return dir.status();
  place->store = LedgerStore::kFile;
  place->files = std::move(*dir);
  place->location = place->files.path();
  place->note = no_pg.empty()
                    ? "files in " + place->location
                    : "PostgreSQL is not available (" + no_pg + "); using files in " +
                          place->location + " instead: the fenced run uses the fenced file writer";
  return place;
}

}  // namespace

Result<ResourceChoice> parse_resource_choice(const std::string& text) {
  if (text == "auto") return ResourceChoice::kAuto;
  if (text == "postgres") return ResourceChoice::kPostgres;
  if (text == "file") return ResourceChoice::kFile;
  return Status(ErrorCode::kInvalidArgument, "--resource must be auto, postgres or file, not '" + text + "'");
}

bool PauseDemoReport::all_as_expected() const {
  if (runs.size() != 2) return false;
  for (const auto& r : runs) {
    if (!r.as_expected) return false;
  }
  return true;
}

Result<PauseDemoReport> run_pause_demo(const PauseDemoOptions& o, std::ostream& out) {
  if (Status s = validate(o); !s) return s;
  out << "leasehold demo pause: the GC-pause failure of lease-based locks, on a real server\n"
      << "  Worker A takes lock " << o.lock << " (session TTL " << seconds_text(o.ttl)
      << ") and starts a write; a stop-the-world pause (SIGSTOP) freezes it for "
      << seconds_text(o.pause) << ".\n"
      << "  Its lease expires, worker B gets the lock with a higher token and writes; then A wakes\n"
      << "  up and finishes its write with its old token. Once without fencing, once with it.\n\n"
      << std::flush;

  std::unique_ptr<PrivateLeaseholdServer> server;
  std::string endpoints = o.endpoints;
  if (endpoints.empty()) {
    auto started = PrivateLeaseholdServer::start(o.leasehold_binary);
    if (!started) return started.status();
    server = std::move(*started);
    endpoints = server->endpoint();
    out << "lock service: private leasehold server on " << endpoints << " (data in "
        << server->data_dir() << ", removed at the end)\n";
  } else {
    out << "lock service: leasehold at " << endpoints << "\n";
  }
  auto endpoint_list = client::parse_endpoints(endpoints);
  if (!endpoint_list) return endpoint_list.status();
  client::ClientOptions co;
  co.endpoints = *endpoint_list;
  co.call_timeout = milliseconds(3000);
  co.name = "demo";
  auto checker = client::Client::create(co);
  if (!checker) return checker.status();
  if (Status s = (*checker)->ping(); !s) return Status(s.code(), "leasehold server: " + s.message());

  auto place = choose_ledger(o);
  if (!place) return place.status();
  out << "ledger: " << (*place)->note << "\n" << std::flush;

  PauseDemoReport report;
  report.store = (*place)->store;
  report.store_note = (*place)->note;
  const std::string id = run_id();
  int number = 1;
  for (bool fenced : {false, true}) {
    if (o.cancelled && o.cancelled()) return Status(ErrorCode::kUnavailable, "interrupted");
    out << "\n=== " << number++ << " of 2: " << (fenced ? "FENCED" : "UNFENCED")
        << " ledger ===\n" << std::flush;
    Timeline timeline(out, SteadyClock::now());
    ScenarioConfig cfg;
    cfg.leasehold_binary = o.leasehold_binary;
    cfg.endpoints = endpoints;
    cfg.lock = o.lock;
    cfg.ttl = o.ttl;
    cfg.pause = o.pause;
    cfg.ledger = LedgerTarget{(*place)->store, (*place)->location,
                              "demo/job-42/" + id + (fenced ? "/fenced" : "/unfenced"), fenced};
    cfg.cancelled = o.cancelled;
    report.runs.push_back(run_pause_scenario(cfg, timeline, checker->get()));
  }
  if (o.cancelled && o.cancelled()) return Status(ErrorCode::kUnavailable, "interrupted");
  out << "\n";
  for (const auto& r : report.runs) out << r.verdict << "\n";
  out << (report.all_as_expected()
              ? "Both outcomes as expected: without fencing the paused holder corrupts the data; "
                "with fencing the resource refuses it.\n"
              : "UNEXPECTED: at least one run did not play out as it should (see above).\n")
      << std::flush;
  return report;
}

}  // namespace leasehold::demo
