#include "server/base/max_hold.h"


#include <fmt/format.h>

#include "common/duration_text.h"
#include "core/types.h"

namespace leasehold::server {
namespace {

Status bad(std::string_view text, std::string_view why) {
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("--max-hold '{}': {} (want PREFIX=DURATION, e.g. jobs/=10m or =90s)", text, why));
}

}  // namespace

Result<MaxHold> parse_max_hold(std::string_view text) {
  const auto eq = text.rfind('=');
  if (eq == std::string_view::npos) return bad(text, "no '='");
  auto duration = parse_duration_text(text.substr(eq + 1));
  if (!duration) return bad(text, duration.status().message());
  if (duration->count() == 0) return bad(text, "the duration must be above 0");
  if (static_cast<std::uint64_t>(duration->count()) > core::kMaxSessionTtlMs) {
    return bad(text, fmt::format("the duration is over the largest lease, {} ms (about 24.8 days)",
                                 core::kMaxSessionTtlMs));
  }
  return MaxHold{std::string(text.substr(0, eq)), static_cast<std::uint64_t>(duration->count())};
}

Status validate_max_holds(const std::vector<MaxHold>& rules) {
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const MaxHold& r = rules[i];
    if (r.ms == 0 || r.ms > core::kMaxSessionTtlMs) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("--max-hold for prefix '{}': {} ms is out of range (1 to {} ms)", r.prefix, r.ms,
                                core::kMaxSessionTtlMs));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (rules[j].prefix == r.prefix) {
        return Status(ErrorCode::kInvalidArgument,
                      fmt::format("--max-hold: prefix '{}' is given twice", r.prefix));
      }
    }
  }
  return Status::ok();
}

const MaxHold* max_hold_for(const std::vector<MaxHold>& rules, std::string_view lock) {
  const MaxHold* best = nullptr;
  for (const MaxHold& r : rules) {
    if (lock.starts_with(r.prefix) && (best == nullptr || r.prefix.size() > best->prefix.size())) best = &r;
  }
  return best;
}

Status over_max_hold(std::string_view what, std::uint64_t ms, const MaxHold& rule) {
  return Status(ErrorCode::kLimitExceeded, fmt::format("{} {} ms is over the max hold {} ms of prefix '{}' (--max-hold)",
                                                       what, ms, rule.ms, rule.prefix));
}

}  // namespace leasehold::server
