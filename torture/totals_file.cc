// torture/totals_file.cc: see totals_file.h.
#include "torture/totals_file.h"

#include <nlohmann/json.hpp>

namespace leasehold::torture {
namespace {

using nlohmann::json;

constexpr int kFormat = 1;

Status bad(const std::string& where, const std::string& why) {
  return {ErrorCode::kInvalidArgument, "totals.json: " + where + ": " + why};
}

// The reader: every member of the torture section must be there with its type.
class Reader {
 public:
  template <typename T>
  Status number(const json& j, const std::string& where, const char* name, T& out) {
    const auto it = j.find(name);
    if (it == j.end()) return bad(where + "." + name, "missing");
    if (!it->is_number_unsigned()) return bad(where + "." + name, "not a whole number >= 0");
    out = it->get<T>();
    return {};
  }
  Status object(const json& j, const std::string& where, const char* name, const json*& out) {
    const auto it = j.find(name);
    if (it == j.end()) return bad(where + "." + name, "missing");
    if (!it->is_object()) return bad(where + "." + name, "not an object");
    out = &*it;
    return {};
  }
  Status counts(const json& j, const std::string& where, const char* name, std::map<std::string, int>& out) {
    const json* o = nullptr;
    if (Status st = object(j, where, name, o); !st) return st;
    for (const auto& [k, v] : o->items()) {
      if (!v.is_number_unsigned()) return bad(where + "." + name + "." + k, "not a whole number >= 0");
      out[k] = v.get<int>();
    }
    return {};
  }
  Status stamp(const json& j, const std::string& where, const char* name, RunStamp& out) {
    const json* o = nullptr;
    if (Status st = object(j, where, name, o); !st) return st;
    for (auto [member, field] : {std::pair{"commit", &out.commit}, std::pair{"date", &out.date}}) {
      const auto it = o->find(member);
      if (it == o->end() || !it->is_string()) return bad(where + "." + name + "." + member, "missing or not a string");
      *field = it->get<std::string>();
    }
    return {};
  }
};

Status read_torture(const json& t, Totals& out) {
  Reader r;
  const std::string w = "torture";
  const json* modes = nullptr;
  const json* faults = nullptr;
  Status st = r.object(t, w, "modes", modes);
  if (st) st = r.object(t, w, "faults", faults);
  if (st) st = r.counts(t, w, "clocks", out.clocks);
  if (st) st = r.counts(t, w, "checks", out.checks);
  if (st) st = r.number(t, w, "unchecked_keys", out.unchecked_keys);
  if (st) st = r.stamp(t, w, "first", out.first);
  if (st) st = r.stamp(t, w, "last", out.last);
  if (!st) return st;
  for (const auto& [name, m] : modes->items()) {
    const std::string mw = w + ".modes." + name;
    if (!m.is_object()) return bad(mw, "not an object");
    ModeTotals& mt = out.modes[name];
    st = r.number(m, mw, "runs", mt.runs);
    if (st) st = r.number(m, mw, "operations", mt.ops);
    if (st) st = r.number(m, mw, "ms", mt.ms);
    if (st) st = r.number(m, mw, "violations", mt.violations);
    if (st) st = r.number(m, mw, "stopped_early", mt.stopped_early);
    if (st) st = r.number(m, mw, "no_primary", mt.no_primary);
    if (st) st = r.number(m, mw, "not_checked", mt.not_checked);
    if (!st) return st;
  }
  for (const auto& [name, f] : faults->items()) {
    const std::string fw = w + ".faults." + name;
    if (!f.is_object()) return bad(fw, "not an object");
    FaultTotals& ft = out.faults[name];
    st = r.number(f, fw, "injected", ft.injected);
    if (st) st = r.counts(f, fw, "by_mode", ft.by_mode);
    if (st) st = r.number(f, fw, "runs", ft.runs);
    if (st) st = r.number(f, fw, "operations", ft.ops);
    if (st) st = r.number(f, fw, "violations", ft.violations);
    if (!st) return st;
  }
  return {};
}

Result<json> parse_file(const std::string& text) {
  if (text.empty()) return json{{"format", kFormat}};
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return bad("the file", "not JSON");
  if (!j.is_object()) return bad("the file", "not a JSON object");
  const auto format = j.find("format");
  if (format == j.end() || !format->is_number_integer() || format->get<int>() != kFormat) {
    return bad("format", "missing or not " + std::to_string(kFormat) + " (a file this tool does not know)");
  }
  return j;
}

json torture_json(const Totals& t) {
  json modes = json::object();
  for (const auto& [name, m] : t.modes) {
    modes[name] = {{"runs", m.runs},           {"operations", m.ops},           {"ms", m.ms},
                   {"violations", m.violations}, {"stopped_early", m.stopped_early}, {"no_primary", m.no_primary},
                   {"not_checked", m.not_checked}};
  }
  json faults = json::object();
  for (const auto& [name, f] : t.faults) {
    faults[name] = {{"injected", f.injected}, {"by_mode", f.by_mode}, {"runs", f.runs},
                    {"operations", f.ops},    {"violations", f.violations}};
  }
  return {{"modes", modes},
          {"faults", faults},
          {"clocks", t.clocks},
          {"checks", t.checks},
          {"unchecked_keys", t.unchecked_keys},
          {"first", {{"commit", t.first.commit}, {"date", t.first.date}}},
          {"last", {{"commit", t.last.commit}, {"date", t.last.date}}}};
}

// The layout of totals_file.h (scripts/reliability_totals.py's dump() is the same).
std::string layout(const json& j, int depth) {
  if (!j.is_object() || depth >= 3 || j.empty()) return j.dump();
  std::string out = "{\n";
  bool first = true;
  for (const auto& [k, v] : j.items()) {
    if (!first) out += ",\n";
    first = false;
    out += std::string(static_cast<std::size_t>(depth) + 1, ' ') + json(k).dump() + ": " + layout(v, depth + 1);
  }
  return out + "\n" + std::string(static_cast<std::size_t>(depth), ' ') + "}";
}

}  // namespace

Result<Totals> parse_totals(const std::string& text) {
  auto j = parse_file(text);
  if (!j) return j.status();
  Totals totals;
  const auto t = j->find("torture");
  if (t == j->end()) return totals;
  if (!t->is_object()) return bad("torture", "not an object");
  if (Status st = read_torture(*t, totals); !st) return st;
  return totals;
}

Result<std::string> write_totals(const std::string& text, const Totals& totals) {
  if (auto old = parse_totals(text); !old) return old.status();  // never rewrite a file this tool cannot read
  auto j = parse_file(text);
  if (!j) return j.status();
  (*j)["torture"] = torture_json(totals);
  return layout(*j, 0) + "\n";
}

std::string replace_section(const std::string& page, const std::string& name, const std::string& body) {
  const std::string begin = "<!-- begin " + name + " -->\n";
  const std::string end = "<!-- end " + name + " -->\n";
  const std::string section = begin + body + (body.empty() || body.back() == '\n' ? "" : "\n") + end;
  const auto b = page.find(begin);
  const auto e = b == std::string::npos ? std::string::npos : page.find(end, b);
  if (e == std::string::npos) return page + (page.empty() || page.back() == '\n' ? "" : "\n") + "\n" + section;
  return page.substr(0, b) + section + page.substr(e + end.size());
}

}  // namespace leasehold::torture
