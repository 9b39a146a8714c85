#include "bench/load/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace leasehold::bench {
namespace {

constexpr const char* kLeasehold = "leasehold";
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

bool has_leasehold(const std::vector<Target>& targets) {
  for (const auto& t : targets) {
    if (t.name == kLeasehold) return true;
  }
  return false;
}

}  // namespace

std::string format_table(const std::vector<Row>& rows, const std::vector<Target>& targets,
                         const std::vector<RatioPair>& ratios) {
  std::vector<std::string> header = {"workload", "C"};
  for (const auto& t : targets) header.push_back(t.name);
  std::vector<std::string> others;
  if (has_leasehold(targets)) {
    for (const auto& t : targets) {
      if (t.name != kLeasehold) others.push_back(t.name);
    }
  }
  for (const auto& o : others) header.push_back("lh/" + o);
  for (const auto& r : ratios) header.push_back(r.numerator + "/" + r.denominator);
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
    for (const auto& o : others) line.push_back(ratio_text(row, kLeasehold, o));
    for (const auto& r : ratios) line.push_back(ratio_text(row, r.numerator, r.denominator));
    for (const auto& t : targets) {
      const Measurement* m = find(row, t.name);
      line.push_back(m == nullptr ? "" : fairness_text(*m));
    }
    cells.push_back(std::move(line));
  }

  std::vector<std::size_t> width(header.size(), 0);
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
  if (!errors.empty()) {
    out << "\n! = the cell hit an error (its count covers the time before it):\n";
    for (const auto& e : errors) out << "  " << e << '\n';
  }
  return out.str();
}

std::string format_csv(const std::vector<Row>& rows, const std::vector<Target>& targets) {
  std::ostringstream out;
  out << "workload,clients,target,ops_per_s,max_per_client,min_per_client,error\n";
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
      out << ',' << error << '\n';
    }
  }
  return out.str();
}

std::string format_goals(const std::vector<Row>& rows) {
  std::ostringstream out;
  int top = 0;
  for (const auto& row : rows) top = std::max(top, row.clients);
  out << "Goals (C=" << top << "):\n";

  const Row* w1 = nullptr;
  for (const auto& row : rows) {
    if (row.workload == "W1" && row.clients == top) w1 = &row;
  }
  const Measurement* lh1 = w1 ? find(*w1, kLeasehold) : nullptr;
  const Measurement* rd1 = w1 ? find(*w1, kRedisDefault) : nullptr;
  if (lh1 && rd1) {
    out << "  W1 leasehold >= redis-default: " << fmt("%.0f", lh1->ops_per_s) << " vs "
        << fmt("%.0f", rd1->ops_per_s) << " ops/s ("
        << fmt("%.2fx", rd1->ops_per_s > 0 ? lh1->ops_per_s / rd1->ops_per_s : 0) << ") -> "
        << (lh1->ops_per_s >= rd1->ops_per_s ? "met" : "NOT met") << '\n';
  } else {
    out << "  W1 leasehold >= redis-default: n/a\n";
  }

  bool any_w2 = false;
  for (const auto& row : rows) {
    if (row.clients != top || row.workload.rfind("W2", 0) != 0) continue;
    const Measurement* lh = find(row, kLeasehold);
    if (lh == nullptr) continue;
    for (const auto& [name, m] : row.by_target) {
      if (name.rfind("redis", 0) != 0) continue;  // the goal is about Redis spin-locks
      any_w2 = true;
      double ratio = m.ops_per_s > 0 ? lh->ops_per_s / m.ops_per_s : INFINITY;
      out << "  " << row.workload << " leasehold >= 10x " << name << " spin-lock: "
          << fmt("%.0f", lh->ops_per_s) << " vs " << fmt("%.0f", m.ops_per_s) << " grants/s ("
          << fmt("%.2fx", ratio) << ") -> " << (ratio >= 10 ? "met" : "NOT met") << '\n';
    }
  }
  // The leasehold W2 cell is shared by every W2 row of a client count: print it once.
  for (const auto& row : rows) {
    if (row.clients != top || row.workload.rfind("W2", 0) != 0) continue;
    const Measurement* lh = find(row, kLeasehold);
    if (lh == nullptr) continue;
    any_w2 = true;
    bool fair = lh->min_per_client > 0 &&
                static_cast<double>(lh->max_per_client) <=
                    1.05 * static_cast<double>(lh->min_per_client);
    out << "  W2 leasehold max/min grants per client <= 1.05: " << fairness_text(*lh) << " ("
        << lh->max_per_client << "/" << lh->min_per_client << ") -> "
        << (fair ? "met" : "NOT met") << '\n';
    break;
  }
  if (!any_w2) out << "  W2: n/a\n";
  return out.str();
}

// The W2 ceiling line: `needed` grants/s vs the floor target's C=1 rate.
std::string floor_text(const std::vector<Row>& rows, const std::string& floor, double needed) {
  const Measurement* one = nullptr;
  for (const auto& row : rows) {
    if (row.clients == 1 && row.workload.rfind("W2", 0) == 0) one = find(row, floor);
    if (one != nullptr) break;
  }
  std::ostringstream out;
  out << "  W2 ceiling: 20x needs " << fmt("%.0f", needed) << " grants/s; " << floor;
  if (one == nullptr || one->ops_per_s <= 0) {
    out << " at C=1: n/a\n";
    return out.str();
  }
  out << " did " << fmt("%.0f", one->ops_per_s)
      << " sequential durable writes/s (C=1), the most a chain of one durable write per grant can reach -> "
      << (needed > one->ops_per_s ? "the goal is above etcd's own write rate" : "within reach") << '\n';
  return out.str();
}

std::string format_etcd_goals(const std::vector<Row>& rows, const std::vector<RatioPair>& pairs) {
  std::ostringstream out;
  int top = 0;
  for (const auto& row : rows) top = std::max(top, row.clients);
  out << "Goals vs etcd's own mutex (C=" << top << "):\n";
  auto ratio_of = [](const Measurement& a, const Measurement& b) {
    return b.ops_per_s > 0 ? a.ops_per_s / b.ops_per_s : INFINITY;
  };
  for (const auto& pair : pairs) {
    const std::string label = pair.numerator + " vs " + pair.denominator;
    bool seen_w1 = false, seen_w2 = false;
    for (const auto& row : rows) {
      if (row.clients != top) continue;
      bool w1 = row.workload == "W1";
      bool w2 = row.workload.rfind("W2", 0) == 0;
      if ((!w1 && !w2) || (w1 && seen_w1) || (w2 && seen_w2)) continue;
      const Measurement* a = find(row, pair.numerator);
      const Measurement* b = find(row, pair.denominator);
      if (a == nullptr || b == nullptr) continue;
      double ratio = ratio_of(*a, *b);
      double goal = w1 ? 5 : 20;
      const char* unit = w1 ? "cycles/s" : "grants/s";
      out << "  " << (w1 ? "W1 " : "W2 ") << label << " >= " << fmt("%.0fx", goal) << ": "
          << fmt("%.0f", a->ops_per_s) << " vs " << fmt("%.0f", b->ops_per_s) << ' ' << unit
          << " (" << fmt("%.2fx", ratio) << ") -> " << (ratio >= goal ? "met" : "NOT met") << '\n';
      if (w2) {
        bool fair = a->min_per_client > 0 && static_cast<double>(a->max_per_client) <=
                                                 1.2 * static_cast<double>(a->min_per_client);
        out << "  W2 " << pair.numerator << " max/min grants per client <= 1.2: "
            << fairness_text(*a) << " (" << a->max_per_client << "/" << a->min_per_client
            << ") -> " << (fair ? "met" : "NOT met") << '\n';
        if (!pair.floor.empty()) out << floor_text(rows, pair.floor, goal * b->ops_per_s);
      }
      (w1 ? seen_w1 : seen_w2) = true;
    }
    if (!seen_w1) out << "  W1 " << label << ": n/a\n";
    if (!seen_w2) out << "  W2 " << label << ": n/a\n";
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
