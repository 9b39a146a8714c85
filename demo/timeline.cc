#include "demo/timeline.h"

#include <array>
#include <charconv>
#include <cstdio>

namespace leasehold::demo {
namespace {

constexpr std::array<std::string_view, 9> kKindNames = {
    "info", "acquired", "pausing", "wrote", "rejected", "failed", "lost", "done", "error"};

std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

// Splits off the next tab-separated field.
std::string_view next_field(std::string_view& rest) {
  const auto tab = rest.find('\t');
  std::string_view field = rest.substr(0, tab);
  rest = tab == std::string_view::npos ? std::string_view{} : rest.substr(tab + 1);
  return field;
}

}  // namespace

std::string_view event_kind_name(EventKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < kKindNames.size() ? kKindNames[i] : "unknown";
}

std::string encode_event(const Event& e) {
  return "EV\t" + std::to_string(e.at_ns) + "\t" + std::string(event_kind_name(e.kind)) + "\t" +
         std::to_string(e.token) + "\t" + std::to_string(e.value) + "\t" + one_line(e.text) + "\n";
}

Result<Event> decode_event(std::string_view line) {
  auto bad = [&] {
    return Status(ErrorCode::kInvalidArgument, "not a worker event: '" + std::string(line) + "'");
  };
  std::string_view rest = line;
  if (next_field(rest) != "EV") return bad();
  Event e;
  if (!parse_number(next_field(rest), e.at_ns)) return bad();
  const std::string_view kind = next_field(rest);
  bool known = false;
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == kind) {
      e.kind = static_cast<EventKind>(i);
      known = true;
    }
  }
  if (!known) return bad();
  if (!parse_number(next_field(rest), e.token)) return bad();
  if (!parse_number(next_field(rest), e.value)) return bad();
  e.text = std::string(rest);
  return e;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fs", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

std::int64_t steady_ns(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

SteadyClock::time_point from_steady_ns(std::int64_t ns) {
  return SteadyClock::time_point(
      std::chrono::duration_cast<SteadyClock::duration>(std::chrono::nanoseconds(ns)));
}

std::int64_t Timeline::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - start_).count();
}

void Timeline::print(std::string_view actor, std::string_view text) {
  print_at(now_ns(), actor, text);
}

void Timeline::print_at(std::int64_t at_ns, std::string_view actor, std::string_view text) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "t=%+.3fs", static_cast<double>(at_ns) / 1e9);
  std::string line(stamp);
  line += "  ";
  line += actor;
  if (actor.size() < 7) line.append(7 - actor.size(), ' ');
  line += ' ';
  line += one_line(text);
  note(line);
}

void Timeline::note(std::string_view text) {
  std::lock_guard lock(mu_);
  lines_.emplace_back(text);
  out_ << text << '\n' << std::flush;
}

std::vector<std::string> Timeline::lines() const {
  std::lock_guard lock(mu_);
  return lines_;
}

}  // namespace leasehold::demo
