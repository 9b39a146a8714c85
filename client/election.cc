#include "leasehold/election.h"

namespace leasehold::client {

Election::Election(Session& session, std::string name)
    : session_(session), lock_name_("election/" + name) {}

Election::~Election() { (void)resign(); }

Status Election::campaign(std::string_view value, Millis timeout) {
  if (guard_.valid()) return proclaim(value);
  auto guard = LockGuard::acquire(session_, lock_name_, timeout);
  if (!guard) return guard.status();
  guard_ = std::move(*guard);
  return proclaim(value);
}

Status Election::proclaim(std::string_view value) {
  if (!guard_.valid()) return Status(ErrorCode::kNotHolder, "not leading " + lock_name_);
  auto put = guard_.put(lock_name_, value);
  return put ? Status::ok() : put.status();
}

Result<std::optional<Leader>> Election::leader() {
  Client& client = session_.client();
  auto value = client.fence_get(lock_name_);
  if (!value) return value.status();
  auto info = client.lock_info(lock_name_);
  if (!info) return info.status();
  if (!*info || (*info)->holders.empty()) return std::optional<Leader>{};
  const Holder& holder = (*info)->holders.front();
  Leader leader{holder.session, holder.token, std::nullopt};
  if (*value && (*value)->token == holder.token) leader.value = (*value)->value;
  return std::optional<Leader>(std::move(leader));
}

Status Election::resign() { return guard_.release(); }

}  // namespace leasehold::client
