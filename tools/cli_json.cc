// tools/cli_json.cc: see the header.
#include "tools/cli_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>

#include "common/text_encoding.h"

namespace leasehold::cli {

using nlohmann::json;

void put_text(json& j, const std::string& key, std::string_view bytes) {
  j[key] = std::string(bytes);  // invalid UTF-8 becomes U+FFFD at dump()
  if (!text::is_valid_utf8(bytes)) {
    j[key + "_b64"] = text::base64_encode(bytes);
    j[key + "_binary"] = true;
  }
}

json lock_json(const client::LockInfo& lock) {
  json j = json::object();
  put_text(j, "name", lock.name);
  j["mode"] = client::lock_mode_name(lock.mode);
  j["limit"] = lock.limit;
  j["last_token"] = lock.last_token;
  j["delay_ms"] = lock.delay_remaining.count();
  json holders = json::array();
  for (const auto& h : lock.holders) {
    json hj = {{"session", h.session}, {"token", h.token}, {"held_ms", h.held.count()}};
    put_text(hj, "owner", h.owner);
    holders.push_back(std::move(hj));
  }
  json waiters = json::array();
  for (const auto& w : lock.waiters) {
    json wj = {{"session", w.session}, {"mode", client::lock_mode_name(w.mode)}, {"waited_ms", w.waited.count()}};
    put_text(wj, "owner", w.owner);
    waiters.push_back(std::move(wj));
  }
  j["holders"] = std::move(holders);
  j["waiters"] = std::move(waiters);
  return j;
}

json session_json(const client::SessionInfo& s) {
  json j = {{"id", s.id},
            {"ttl_ms", s.ttl.count()},
            {"remaining_ms", s.remaining.count()},
            {"held", s.held},
            {"waiting", s.waiting}};
  put_text(j, "owner", s.owner);
  return j;
}

json history_json(const client::HistoryEntry& e) {
  json j = {{"id", e.id},           {"time_ms", e.time_ms}, {"log_index", e.log_index}, {"event", e.event},
            {"session", e.session}, {"token", e.token},     {"reason", e.reason}};
  put_text(j, "lock", e.lock);
  put_text(j, "owner", e.owner);
  if (e.wait_ms >= 0) j["wait_ms"] = e.wait_ms;
  if (e.hold_ms >= 0) j["hold_ms"] = e.hold_ms;
  if (e.event == "lock-delay") j["delay_ms"] = e.delay_ms;
  return j;
}

namespace {
// "-"? digits ("." digits)?: the JSON number forms INFO writes (no exponent).
bool is_plain_number(std::string_view v) {
  std::size_t i = v.starts_with('-') ? 1 : 0;
  const std::size_t int_start = i;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
  if (i == int_start) return false;
  if (i == v.size()) return true;
  if (v[i] != '.') return false;
  const std::size_t frac_start = ++i;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
  return i == v.size() && i > frac_start;
}
}  // namespace

void put_info_value(json& j, const std::string& key, std::string_view v) {
  if (is_plain_number(v) && v.size() <= 40) {
    const char* end = v.data() + v.size();
    if (v.find('.') == std::string_view::npos) {
      if (v.starts_with('-')) {
        std::int64_t n = 0;
        if (auto r = std::from_chars(v.data(), end, n); r.ec == std::errc{} && r.ptr == end) {
          j[key] = n;
          return;
        }
      } else {
        std::uint64_t n = 0;
        if (auto r = std::from_chars(v.data(), end, n); r.ec == std::errc{} && r.ptr == end) {
          j[key] = n;
          return;
        }
      }
    }
    double d = 0;
    if (auto r = std::from_chars(v.data(), end, d); r.ec == std::errc{} && r.ptr == end && std::isfinite(d)) {
      j[key] = d;
      return;
    }
  }
  put_text(j, key, v);
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace leasehold::cli
