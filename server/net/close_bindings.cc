#include "server/net/close_bindings.h"

#include <algorithm>
#include <utility>

namespace leasehold::server {

void CloseBindings::open(uv_loop_t* loop, EndSession end) {
  loop_ = loop;
  end_ = std::move(end);
  uv_timer_init(loop_, &timer_);
  timer_.data = this;
}

void CloseBindings::close() {
  if (loop_ == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  loop_ = nullptr;
  due_.clear();
  pending_.clear();
  ending_.clear();
}

void CloseBindings::bind(core::SessionId session, std::uint64_t conn) {
  cancel(session);
  if (auto found = conn_of_.find(session); found != conn_of_.end()) {
    if (found->second == conn) return;
    unbind(session);
  }
  conn_of_.emplace(session, conn);
  sessions_of_[conn].push_back(session);
}

void CloseBindings::keepalive(core::SessionId session) { cancel(session); }

void CloseBindings::connection_closed(std::uint64_t conn, bool by_peer, const GraceOf& grace_of) {
  const auto found = sessions_of_.find(conn);
  if (found == sessions_of_.end()) return;
  const std::vector<core::SessionId> sessions = std::move(found->second);
  sessions_of_.erase(found);
  if (loop_ == nullptr) return;
  const Clock::time_point now = Clock::now();
  for (core::SessionId s : sessions) {
    const auto c = conn_of_.find(s);
    if (c == conn_of_.end() || c->second != conn) continue;  // re-bound elsewhere
    conn_of_.erase(c);
    if (!by_peer) continue;
    const std::optional<std::uint32_t> grace = grace_of(s);
    if (!grace) continue;
    cancel(s);
    pending_.emplace(s, due_.emplace(now + std::chrono::milliseconds(*grace), s));
  }
  arm();
}

void CloseBindings::session_ended(core::SessionId session) {
  ending_.erase(session);
  cancel(session);
  unbind(session);
}

void CloseBindings::cancel(core::SessionId session) {
  const auto found = pending_.find(session);
  if (found == pending_.end()) return;
  due_.erase(found->second);
  pending_.erase(found);
}

void CloseBindings::unbind(core::SessionId session) {
  const auto found = conn_of_.find(session);
  if (found == conn_of_.end()) return;
  const auto list = sessions_of_.find(found->second);
  if (list != sessions_of_.end()) {
    std::erase(list->second, session);
    if (list->second.empty()) sessions_of_.erase(list);
  }
  conn_of_.erase(found);
}

void CloseBindings::arm() {
  if (loop_ == nullptr) return;
  if (due_.empty()) {
    uv_timer_stop(&timer_);
    return;
  }
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(due_.begin()->first - Clock::now());
  uv_timer_start(
      &timer_, [](uv_timer_t* t) { static_cast<CloseBindings*>(t->data)->fire(); },
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, wait.count())), 0);
}

void CloseBindings::fire() {
  const Clock::time_point now = Clock::now();
  std::vector<core::SessionId> ended;
  while (!due_.empty() && due_.begin()->first <= now) {
    ended.push_back(due_.begin()->second);
    pending_.erase(due_.begin()->second);
    due_.erase(due_.begin());
  }
  for (core::SessionId s : ended) {
    ending_.insert(s);
    end_(s);
  }
  arm();
}

}  // namespace leasehold::server
