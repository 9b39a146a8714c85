#include "bench/load/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace leasehold::bench {
namespace {

constexpr const char* kLeasehold = "leasehold";
constexpr const char* kLeaseholdLease = "leasehold-lease";
constexpr const char* kRedisAlways = "redis-always";
constexpr const char* kRedisDefault = "redis-default";

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string ops_text(const Measurement& m) {
  return m.error.empty() ? fmt("%.0f", m.ops_per_s) : fmt("%.0f!", m.ops_per_s);
}

std::string fairness_text(const Measurement& m) {
  if (!m.has_fairness) return "";
  if (m.min_per_client == 0) return "inf(" + std::to_string(m.max_per_client) + "/0)";
  return fmt("%.2f", static_cast<double>(m.max_per_client) /
                         static_cast<double>(m.min_per_client));
}

const Measurement* find(const Row& row, const std::string& target) {
  auto it = row.by_target.find(target);
  return it == row.by_target.end() ? nullptr : &it->second;
}

std::string ratio_text(const Row& row, const std::string& numerator,
                       const std::string& denominator) {
  const Measurement* a = find(row, numerator);
  const Measurement* b = find(row, denominator);
  if (a == nullptr || b == nullptr || b->ops_per_s <= 0) return "-";
  return fmt("%.2fx", a->ops_per_s / b->ops_per_s);
}

void pad(std::ostringstream& out, const std::string& text, std::size_t width, bool left) {
  std::size_t fill = text.size() < width ? width - text.size() : 0;
  if (left) out << text << std::string(fill, ' ');
  else out << std::string(fill, ' ') << text;
}

bool is_w2(const Row& row) { return row.workload.rfind("W2", 0) == 0; }

// The ceiling of a row's workload at its C; -1 when there is none (W3).
double ceiling_of(const Row& row, const Ceiling& c) {
  if (row.workload == "W1") return c.batching_per_s(row.clients);
  if (is_w2(row)) return c.handoff_per_s();
  return -1;
}

std::string latency_text(const LatencySummary& l) {
  if (l.samples == 0) return "-";
  auto ms = [](double us) { return fmt(us < 10000 ? "%.2f" : "%.0f", us / 1000); };
  return ms(l.p50_us) + "/" + ms(l.p99_us);
}

std::string render(const std::vector<std::vector<std::string>>& cells) {
  std::vector<std::size_t> width(cells.front().size(), 0);
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  std::ostringstream out;
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (i > 0) out << "  ";
      pad(out, line[i], width[i], i == 0);
    }
    out << '\n';
  }
  return out.str();
}

// "  <label>: A vs B unit (R x) -> met" with R = a / b judged against `goal`.
std::string goal_line(const std::string& label, double a, double b, double goal, const char* unit) {
  double ratio = b > 0 ? a / b : INFINITY;
  return "  " + label + ": " + fmt("%.0f", a) + " vs " + fmt("%.0f", b) + " " + unit + " (" +
         fmt("%.2fx", ratio) + ") -> " + (ratio >= goal ? "met" : "NOT met") + "\n";
}

// `limit_text`: the limit as the goal states it ("1.05", "1.2").
std::string fairness_line(const std::string& label, const Measurement& m, const char* limit_text) {
  double limit = std::strtod(limit_text, nullptr);
  bool fair = m.min_per_client > 0 &&
              static_cast<double>(m.max_per_client) <= limit * static_cast<double>(m.min_per_client);
  return "  " + label + " max/min grants per client <= " + limit_text +
         ": " + fairness_text(m) + " (" + std::to_string(m.max_per_client) + "/" +
         std::to_string(m.min_per_client) + ") -> " + (fair ? "met" : "NOT met") + "\n";
}

bool has_leasehold(const std::vector<Target>& targets) {
  for (const auto& t : targets) {
    if (t.name == kLeasehold) return true;
  }
  return false;
}

}  // namespace

std::string format_table(const std::vector<Row>& rows, const std::vector<Target>& targets,
                         const std::vector<RatioPair>& ratios, const Ceiling* ceiling) {
  bool with_ceiling = ceiling != nullptr && ceiling->valid();
  std::vector<std::string> header = {"workload", "C"};
  for (const auto& t : targets) header.push_back(t.name);
  if (with_ceiling) header.push_back("ceiling");
  std::vector<std::string> others;
  if (has_leasehold(targets)) {
    for (const auto& t : targets) {
      if (t.name != kLeasehold) others.push_back(t.name);
    }
  }
  std::vector<std::string> durable;  // leasehold targets, for "<t>/ceiling"
  for (const auto& t : targets) {
    if (with_ceiling && t.system == System::kLeasehold) durable.push_back(t.name);
  }
  for (const auto& o : others) header.push_back("lh/" + o);
  for (const auto& r : ratios) header.push_back(r.numerator + "/" + r.denominator);
  for (const auto& d : durable) header.push_back(d + "/ceiling");
  for (const auto& t : targets) header.push_back("max/min " + t.name);

  std::vector<std::vector<std::string>> cells;
  cells.push_back(header);
  std::vector<std::string> errors;
  for (const auto& row : rows) {
    std::vector<std::string> line = {row.workload, std::to_string(row.clients)};
    for (const auto& t : targets) {
      const Measurement* m = find(row, t.name);
      line.push_back(m == nullptr ? "-" : ops_text(*m));
      if (m != nullptr && !m->error.empty()) {
        errors.push_back(row.workload + " C=" + std::to_string(row.clients) + " " + t.name +
                         ": " + m->error);
      }
    }
    double limit = with_ceiling ? ceiling_of(row, *ceiling) : -1;
    if (with_ceiling) line.push_back(limit > 0 ? fmt("%.0f", limit) : "-");
    for (const auto& o : others) line.push_back(ratio_text(row, kLeasehold, o));
    for (const auto& r : ratios) line.push_back(ratio_text(row, r.numerator, r.denominator));
    for (const auto& d : durable) {
      const Measurement* m = find(row, d);
      line.push_back(m == nullptr || limit <= 0 ? "-" : fmt("%.2fx", m->ops_per_s / limit));
    }
    for (const auto& t : targets) {
      const Measurement* m = find(row, t.name);
      line.push_back(m == nullptr ? "" : fairness_text(*m));
    }
    cells.push_back(std::move(line));
  }

  std::string out = render(cells);
  if (!errors.empty()) {
    out += "\n! = the cell hit an error (its count covers the time before it):\n";
    for (const auto& e : errors) out += "  " + e + "\n";
  }
  return out;
}

std::string format_latency_table(const std::vector<Row>& rows, const std::vector<Target>& targets) {
  std::vector<std::string> header = {"latency ms", "C"};
  for (const auto& t : targets) header.push_back(t.name);
  std::vector<std::vector<std::string>> cells;
  cells.push_back(header);
  for (const auto& row : rows) {
    if (row.workload != "W1" && !is_w2(row)) continue;
    std::vector<std::string> line = {row.workload == "W1" ? "W1 acquire" : row.workload + " hand-off",
                                     std::to_string(row.clients)};
    for (const auto& t : targets) {
      const Measurement* m = find(row, t.name);
      line.push_back(m == nullptr ? "-" : latency_text(is_w2(row) ? m->handoff : m->acquire));
    }
    cells.push_back(std::move(line));
  }
  return render(cells);
}

std::string format_csv(const std::vector<Row>& rows, const std::vector<Target>& targets) {
  std::ostringstream out;
  out << "workload,clients,target,ops_per_s,max_per_client,min_per_client,error,"
         "acquire_p50_us,acquire_p99_us,handoff_p50_us,handoff_p99_us\n";
  auto us = [](double v) { return v < 0 ? std::string() : fmt("%.1f", v); };
  for (const auto& row : rows) {
    for (const auto& t : targets) {
      const Measurement* m = find(row, t.name);
      if (m == nullptr) continue;
      std::string error = m->error;
      for (char& c : error) {
        if (c == ',' || c == '\n' || c == '\r') c = ' ';
      }
      out << row.workload << ',' << row.clients << ',' << t.name << ','
          << fmt("%.1f", m->ops_per_s) << ',';
      if (m->has_fairness) out << m->max_per_client << ',' << m->min_per_client;
      else out << ',';
      out << ',' << error << ',' << us(m->acquire.p50_us) << ',' << us(m->acquire.p99_us) << ','
          << us(m->handoff.p50_us) << ',' << us(m->handoff.p99_us) << '\n';
    }
  }
  return out.str();
}

// The W1 goals (0.8x the batching ceiling, which counts only the disk and
// the round trip; 1.5x redis-always) are rates. The same W1 cell against a
// column that writes nothing durable (redis-default, leasehold-lease)
// measures what this machine's cores do for the same clients with no disk
// at all: when that is below a goal's rate, the goal is beyond the machine
// (server and clients share the cores), a limit the run measured rather
// than a gap in the durable path. "" when neither column ran.
std::string w1_cpu_limit_line(const Row* w1, double goal_per_s) {
  if (w1 == nullptr) return "";
  const Measurement* fastest = nullptr;
  std::string name;
  for (const char* column : {kRedisDefault, kLeaseholdLease}) {
    const Measurement* m = find(*w1, column);
    if (m == nullptr || !m->error.empty() || m->ops_per_s <= 0) continue;
    if (fastest == nullptr || m->ops_per_s > fastest->ops_per_s) {
      fastest = m;
      name = column;
    }
  }
  if (fastest == nullptr) return "";
  const bool beyond = fastest->ops_per_s < goal_per_s;
  return "  limit: W1 with no durable write at all on this machine (" + name +
         ", the fastest column that writes nothing durable): " + fmt("%.0f", fastest->ops_per_s) + " cycles/s, " +
         fmt("%.2fx", goal_per_s > 0 ? fastest->ops_per_s / goal_per_s : INFINITY) + " of the goal's " +
         fmt("%.0f", goal_per_s) +
         (beyond ? " -> the goal is beyond these cores (CPU-bound: the clients share them), not only the disk\n"
                 : " -> the cores allow the goal\n");
}

// The W2 hand-off ceiling counts only the disk and a PING's round trip. A
// hand-off also costs the server's own work for the release, the grant and
// the previous holder's next enqueue, and two client wake-ups, on cores the
// clients share. The same W2 cell against leasehold-lease (no command
// waits for a disk) measures that part; with the fsync p50 added it gives
// the best this server's hand-off path allows on this machine. Below the
// goal's rate, the goal needs a faster no-disk path, not only a faster
// commit. "" when the lease column did not run on W2.
std::string w2_no_disk_limit_line(const Row* w2, const Ceiling& ceiling, double goal_per_s) {
  if (w2 == nullptr) return "";
  const Measurement* lease = find(*w2, kLeaseholdLease);
  if (lease == nullptr || !lease->error.empty() || lease->ops_per_s <= 0) return "";
  const double no_disk_ms = 1000.0 / lease->ops_per_s;
  const double fsync_ms = ceiling.fsync_us() / 1000.0;
  const double limit_per_s = 1000.0 / (no_disk_ms + fsync_ms);
  const bool beyond = limit_per_s < goal_per_s;
  return "  limit: W2 hand-off with no durable write (leasehold-lease, the same clients) " + fmt("%.3f", no_disk_ms) +
         " ms; + fsync p50 " + fmt("%.3f", fsync_ms) + " ms = " + fmt("%.0f", limit_per_s) + " grants/s, " +
         fmt("%.2fx", goal_per_s > 0 ? limit_per_s / goal_per_s : INFINITY) + " of the goal's " +
         fmt("%.0f", goal_per_s) +
         (beyond ? " -> the goal needs a faster hand-off than the server's no-disk path on these cores, not only a "
                   "faster commit\n"
                 : " -> the no-disk path allows the goal: the rest is the commit\n");
}

int goal_clients(const std::vector<Row>& rows) {
  int top = 0;
  for (const auto& row : rows) {
    if (row.clients == 32) return 32;
    top = std::max(top, row.clients);
  }
  return top;
}

std::string format_goals(const std::vector<Row>& rows, const Ceiling* ceiling) {
  std::ostringstream out;
  int top = goal_clients(rows);
  bool with_ceiling = ceiling != nullptr && ceiling->valid();
  out << "Goals (C=" << top << "):\n";

  const Row* w1 = nullptr;
  const Row* w2 = nullptr;      // any W2 row: the queueing cells are in every one
  const Row* w2_r0 = nullptr;   // the no-sleep spin-lock row
  for (const auto& row : rows) {
    if (row.clients != top) continue;
    if (row.workload == "W1") w1 = &row;
    if (is_w2(row) && w2 == nullptr) w2 = &row;
    if (row.workload == "W2 r=0") w2_r0 = &row;
  }
  auto cell = [](const Row* row, const char* name) { return row ? find(*row, name) : nullptr; };

  // The plain durable client.
  const Measurement* lh1 = cell(w1, kLeasehold);
  if (lh1 && with_ceiling) {
    out << goal_line("W1 leasehold >= 0.8x batching ceiling C/(2(fsync+RTT))", lh1->ops_per_s,
                     ceiling->batching_per_s(top), 0.8, "cycles/s");
    out << w1_cpu_limit_line(w1, ceiling->batching_per_s(top) * 0.8);
  } else {
    out << "  W1 leasehold >= 0.8x batching ceiling: n/a\n";
  }
  const Measurement* ra1 = cell(w1, kRedisAlways);
  if (lh1 && ra1) {
    out << goal_line("W1 leasehold >= 1.5x redis-always", lh1->ops_per_s, ra1->ops_per_s, 1.5, "cycles/s");
    // When no durable write at all stays below 1.5x redis-always, so must
    // a durable server: said under a missed goal.
    if (lh1->ops_per_s < ra1->ops_per_s * 1.5) out << w1_cpu_limit_line(w1, ra1->ops_per_s * 1.5);
  } else {
    out << "  W1 leasehold >= 1.5x redis-always: n/a\n";
  }
  const Measurement* lh2 = cell(w2, kLeasehold);
  if (lh2 && with_ceiling) {
    out << goal_line("W2 leasehold >= 0.8x hand-off ceiling 1/(fsync+RTT)", lh2->ops_per_s,
                     ceiling->handoff_per_s(), 0.8, "grants/s");
    out << w2_no_disk_limit_line(w2, *ceiling, ceiling->handoff_per_s() * 0.8);
  } else {
    out << "  W2 leasehold >= 0.8x hand-off ceiling: n/a\n";
  }
  bool any_spin = false;
  for (const auto& row : rows) {
    if (row.clients != top || !is_w2(row)) continue;
    const Measurement* lh = find(row, kLeasehold);
    const Measurement* ra = find(row, kRedisAlways);
    if (lh == nullptr || ra == nullptr) continue;
    any_spin = true;
    out << goal_line(row.workload + " leasehold >= 2x redis-always spin-lock", lh->ops_per_s, ra->ops_per_s,
                     2, "grants/s");
  }
  if (!any_spin) out << "  W2 leasehold >= 2x redis-always spin-lock: n/a\n";
  if (lh2) out << fairness_line("W2 leasehold", *lh2, "1.05");
  else out << "  W2 leasehold max/min grants per client <= 1.05: n/a\n";

  // The `lease` durability mode, when it ran.
  const Measurement* ll1 = cell(w1, kLeaseholdLease);
  const Measurement* ll2 = cell(w2, kLeaseholdLease);
  if (ll1 || ll2) {
    const Measurement* rd1 = cell(w1, kRedisDefault);
    const Measurement* rd2 = cell(w2_r0, kRedisDefault);
    if (ll1 && rd1) {
      out << goal_line("W1 leasehold-lease >= 1.0x redis-default", ll1->ops_per_s, rd1->ops_per_s, 1.0,
                       "cycles/s");
    } else {
      out << "  W1 leasehold-lease >= 1.0x redis-default: n/a\n";
    }
    const Measurement* ll2r0 = cell(w2_r0, kLeaseholdLease);
    if (ll2r0 && rd2) {
      out << goal_line("W2 r=0 leasehold-lease >= 2x redis-default spin-lock", ll2r0->ops_per_s,
                       rd2->ops_per_s, 2, "grants/s");
    } else {
      out << "  W2 r=0 leasehold-lease >= 2x redis-default spin-lock: n/a\n";
    }
    if (ll2) out << fairness_line("W2 leasehold-lease", *ll2, "1.05");
  }

  // For the record: every leasehold column against redis-default and the ceilings.
  const Measurement* rd1 = cell(w1, kRedisDefault);
  for (const char* name : {kLeasehold, "leasehold-p", kLeaseholdLease}) {
    const Measurement* a1 = cell(w1, name);
    const Measurement* a2 = cell(w2_r0 ? w2_r0 : w2, name);
    if (a1 == nullptr && a2 == nullptr) continue;
    std::vector<std::string> parts;
    auto add = [&](const char* what, const Measurement* a, const Measurement* b, double den) {
      if (a == nullptr) return;
      if (b != nullptr) den = b->ops_per_s;
      if (den > 0) parts.push_back(std::string(what) + " " + fmt("%.2fx", a->ops_per_s / den));
    };
    const Measurement* rd2 = cell(w2_r0, kRedisDefault);
    const Measurement* ra2 = cell(w2_r0, kRedisAlways);
    add("W1/redis-default", a1, rd1, 0);
    add("W1/redis-always", a1, ra1, 0);
    if (with_ceiling) add("W1/ceiling", a1, nullptr, ceiling->batching_per_s(top));
    add("W2/redis-default(r=0)", a2, rd2, 0);
    add("W2/redis-always(r=0)", a2, ra2, 0);
    if (with_ceiling) add("W2/ceiling", a2, nullptr, ceiling->handoff_per_s());
    if (parts.empty()) continue;
    out << "  ratios " << name << ":";
    for (std::size_t i = 0; i < parts.size(); ++i) out << (i ? ", " : " ") << parts[i];
    out << '\n';
  }
  return out.str();
}

// The C=1 W2 rate of the floor target (sequential durable writes/s), or null.
const Measurement* floor_cell(const std::vector<Row>& rows, const std::string& floor) {
  for (const auto& row : rows) {
    if (row.clients != 1 || !is_w2(row)) continue;
    if (const Measurement* m = find(row, floor)) return m;
  }
  return nullptr;
}

// What the W2 goal leaves a hand-off besides its log write. The goal's
// reference (`floor`) is etcd's cheapest fenced write; leasehold's log
// append (`log_floor`, the same etcd, C=1) is a bigger txn. One hand-off
// is one append plus everything else on its path: the grant's reply, the
// client's release, the node's parse, apply and thread hops. At 0.8x of the
// floor's rate a hand-off may take 1 / (0.8 x floor) in all; minus one
// append, that is the budget of everything else.
std::string etcd_log_append_limit_line(const RatioPair& pair, const Measurement& floor, const Measurement& log_floor) {
  const double goal_per_s = 0.8 * floor.ops_per_s;
  const double hand_off_ms = 1000.0 / goal_per_s;
  const double append_ms = 1000.0 / log_floor.ops_per_s;
  const double rest_ms = hand_off_ms - append_ms;
  return "  limit: one log append alone (" + pair.log_floor + " at C=1, a txn shaped like leasehold's) " +
         fmt("%.0f", log_floor.ops_per_s) + " appends/s, " + fmt("%.2fx", log_floor.ops_per_s / floor.ops_per_s) +
         " of " + pair.floor + "; at the goal's " + fmt("%.0f", goal_per_s) + " grants/s a hand-off has " +
         fmt("%.3f", hand_off_ms) + " ms, " + fmt("%.3f", append_ms) + " of them the append" +
         (rest_ms > 0 ? ", leaving " + fmt("%.3f", rest_ms) +
                            " ms for the rest of its path (reply, client, node)\n"
                      : " -> the goal is beyond one log append per hand-off on this etcd\n");
}

std::string format_etcd_goals(const std::vector<Row>& rows, const std::vector<RatioPair>& pairs) {
  std::ostringstream out;
  int top = goal_clients(rows);
  out << "Goals of leasehold on etcd (C=" << top << "):\n";
  for (const auto& pair : pairs) {
    const std::string label = pair.numerator + " vs " + pair.denominator;
    const Row* w1 = nullptr;
    const Row* w2 = nullptr;
    for (const auto& row : rows) {
      if (row.clients != top) continue;
      if (row.workload == "W1" && w1 == nullptr) w1 = &row;
      if (is_w2(row) && w2 == nullptr) w2 = &row;
    }
    const Measurement* a1 = w1 ? find(*w1, pair.numerator) : nullptr;
    const Measurement* b1 = w1 ? find(*w1, pair.denominator) : nullptr;
    if (a1 && b1) out << goal_line("W1 " + label + " >= 5x", a1->ops_per_s, b1->ops_per_s, 5, "cycles/s");
    else out << "  W1 " << label << ": n/a\n";
    const Measurement* a2 = w2 ? find(*w2, pair.numerator) : nullptr;
    const Measurement* b2 = w2 ? find(*w2, pair.denominator) : nullptr;
    if (a2 == nullptr) {
      out << "  W2 " << label << ": n/a\n";
      continue;
    }
    const Measurement* floor = pair.floor.empty() ? nullptr : floor_cell(rows, pair.floor);
    if (floor && floor->ops_per_s > 0) {
      out << goal_line("W2 " + pair.numerator + " >= 0.8x " + pair.floor + " at C=1 (etcd's sequential write rate)",
                       a2->ops_per_s, floor->ops_per_s, 0.8, "grants/s");
      const Measurement* log_floor = pair.log_floor.empty() ? nullptr : floor_cell(rows, pair.log_floor);
      if (log_floor && log_floor->ops_per_s > 0) out << etcd_log_append_limit_line(pair, *floor, *log_floor);
    } else if (!pair.floor.empty()) {
      out << "  W2 " << pair.numerator << " >= 0.8x " << pair.floor << " at C=1: n/a\n";
    }
    out << fairness_line("W2 " + pair.numerator, *a2, "1.2");
    if (b2 && b2->ops_per_s > 0) {
      out << "  W2 " << label << " (for the record; the 20x goal was withdrawn): "
          << fmt("%.2fx", a2->ops_per_s / b2->ops_per_s) << '\n';
    }
  }
  return out.str();
}

bool any_errors(const std::vector<Row>& rows) {
  for (const auto& row : rows) {
    for (const auto& [name, m] : row.by_target) {
      if (!m.error.empty()) return true;
    }
  }
  return false;
}

}  // namespace leasehold::bench
