#include "client/decode.h"

#include <string>

namespace leasehold::client::detail {
namespace {

Status shape_error(std::string_view what, const resp::Value& got) {
  return Status(ErrorCode::kInternal, "unexpected reply for " + std::string(what) + ": " +
                                          got.debug_string());
}

// A RESP3 map or a RESP2 flat array of alternating key/value.
const resp::Value* field(const resp::Value& map, std::string_view key) {
  if (map.type != resp::Type::kMap && map.type != resp::Type::kArray) return nullptr;
  for (std::size_t i = 0; i + 1 < map.elements.size(); i += 2) {
    const auto& k = map.elements[i];
    if ((k.type == resp::Type::kBulkString || k.type == resp::Type::kSimpleString) &&
        k.str == key) {
      return &map.elements[i + 1];
    }
  }
  return nullptr;
}

Result<std::int64_t> int_field(const resp::Value& map, std::string_view key) {
  const resp::Value* v = field(map, key);
  if (v == nullptr) return Status(ErrorCode::kInternal, "reply lacks field '" + std::string(key) + "'");
  return decode_integer(*v, key);
}

Result<std::string> text_field(const resp::Value& map, std::string_view key) {
  const resp::Value* v = field(map, key);
  if (v == nullptr) return Status(ErrorCode::kInternal, "reply lacks field '" + std::string(key) + "'");
  return decode_text(*v, key);
}

std::uint64_t u64(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

}  // namespace

Result<std::int64_t> decode_integer(const resp::Value& value, std::string_view what) {
  if (value.type == resp::Type::kInteger) return value.integer;
  if (value.type == resp::Type::kBulkString || value.type == resp::Type::kSimpleString) {
    try {
      std::size_t used = 0;
      long long v = std::stoll(value.str, &used);
      if (used == value.str.size()) return static_cast<std::int64_t>(v);
    } catch (...) {
    }
  }
  return shape_error(what, value);
}

Status decode_ok(const resp::Value& value, std::string_view what) {
  if (value.type == resp::Type::kSimpleString) return Status::ok();
  return shape_error(what, value);
}

Result<std::string> decode_text(const resp::Value& value, std::string_view what) {
  switch (value.type) {
    case resp::Type::kBulkString:
    case resp::Type::kSimpleString:
    case resp::Type::kVerbatim:
      return value.str;
    default:
      return shape_error(what, value);
  }
}

Result<LockMode> decode_mode(std::string_view text) {
  if (text == "exclusive") return LockMode::kExclusive;
  if (text == "shared") return LockMode::kShared;
  if (text == "semaphore") return LockMode::kSemaphore;
  return Status(ErrorCode::kInternal, "unknown lock mode '" + std::string(text) + "'");
}

Result<LockInfo> decode_lock(const resp::Value& value) {
  LockInfo info;
  auto name = text_field(value, "name");
  auto mode_text = text_field(value, "mode");
  auto limit = int_field(value, "limit");
  auto last_token = int_field(value, "last_token");
  if (!name) return name.status();
  if (!mode_text) return mode_text.status();
  if (!limit) return limit.status();
  if (!last_token) return last_token.status();
  auto mode = decode_mode(*mode_text);
  if (!mode) return mode.status();
  info.name = *name;
  info.mode = *mode;
  info.limit = static_cast<std::uint32_t>(u64(*limit));
  info.last_token = u64(*last_token);
  if (auto delay = int_field(value, "delay_ms")) info.delay_remaining = Millis(*delay);

  if (const resp::Value* holders = field(value, "holders"); holders != nullptr) {
    for (const auto& h : holders->elements) {
      auto session = int_field(h, "session");
      auto token = int_field(h, "token");
      if (!session) return session.status();
      if (!token) return token.status();
      Holder holder{u64(*session), "", u64(*token), Millis(0)};
      if (auto owner = text_field(h, "owner")) holder.owner = *owner;
      if (auto held = int_field(h, "held_ms")) holder.held = Millis(*held);
      info.holders.push_back(std::move(holder));
    }
  }
  if (const resp::Value* waiters = field(value, "waiters"); waiters != nullptr) {
    for (const auto& w : waiters->elements) {
      auto session = int_field(w, "session");
      if (!session) return session.status();
      Waiter waiter{u64(*session), "", info.mode, Millis(0)};
      if (auto owner = text_field(w, "owner")) waiter.owner = *owner;
      if (auto m = text_field(w, "mode")) {
        if (auto parsed = decode_mode(*m)) waiter.mode = *parsed;
      }
      if (auto waited = int_field(w, "waited_ms")) waiter.waited = Millis(*waited);
      info.waiters.push_back(std::move(waiter));
    }
  }
  return info;
}

Result<SessionInfo> decode_session(const resp::Value& value) {
  auto id = int_field(value, "id");
  if (!id) return id.status();
  SessionInfo info;
  info.id = u64(*id);
  if (auto owner = text_field(value, "owner")) info.owner = *owner;
  if (auto ttl = int_field(value, "ttl_ms")) info.ttl = Millis(*ttl);
  if (auto remaining = int_field(value, "remaining_ms")) info.remaining = Millis(*remaining);
  if (auto held = int_field(value, "held")) info.held = u64(*held);
  if (auto waiting = int_field(value, "waiting")) info.waiting = u64(*waiting);
  return info;
}

Result<HistoryEntry> decode_history(const resp::Value& value) {
  auto id = int_field(value, "id");
  auto event = text_field(value, "event");
  if (!id) return id.status();
  if (!event) return event.status();
  HistoryEntry e;
  e.id = u64(*id);
  e.event = *event;
  if (auto v = int_field(value, "time_ms")) e.time_ms = *v;
  if (auto v = int_field(value, "log_index")) e.log_index = u64(*v);
  if (auto v = text_field(value, "lock")) e.lock = *v;
  if (auto v = int_field(value, "session")) e.session = u64(*v);
  if (auto v = text_field(value, "owner")) e.owner = *v;
  if (auto v = int_field(value, "token")) e.token = u64(*v);
  if (auto v = text_field(value, "reason")) e.reason = *v;
  if (auto v = int_field(value, "wait_ms")) e.wait_ms = *v;
  if (auto v = int_field(value, "hold_ms")) e.hold_ms = *v;
  if (auto v = int_field(value, "delay_ms")) e.delay_ms = *v;
  return e;
}

Result<std::optional<FencedValue>> decode_fenced(const resp::Value& value) {
  if (value.is_null()) return std::optional<FencedValue>{};
  if (value.type != resp::Type::kArray || value.elements.size() != 2) {
    return shape_error("FENCE.GET", value);
  }
  auto text = decode_text(value.elements[0], "FENCE.GET value");
  auto token = decode_integer(value.elements[1], "FENCE.GET token");
  if (!text) return text.status();
  if (!token) return token.status();
  return std::optional<FencedValue>(FencedValue{*text, u64(*token)});
}

}  // namespace leasehold::client::detail
