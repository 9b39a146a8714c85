#include "server/net/delayed_errors.h"

#include <cstdint>
#include <utility>

namespace leasehold::server {

struct DelayedErrors::Pending {
  uv_timer_t timer;
  Responder reply;
  std::string text;
  DelayedErrors* owner;
};

namespace {
uv_handle_t* as_handle(void* h) { return static_cast<uv_handle_t*>(h); }
}  // namespace

void DelayedErrors::answer(Responder reply, std::string text, std::chrono::milliseconds delay) {
  if (loop_ == nullptr) return reply.error_text(text);
  auto* d = new Pending{uv_timer_t{}, std::move(reply), std::move(text), this};
  uv_timer_init(loop_, &d->timer);
  d->timer.data = d;
  pending_.insert(&d->timer);
  uv_timer_start(
      &d->timer,
      [](uv_timer_t* t) {
        auto* self = static_cast<Pending*>(t->data);
        self->owner->pending_.erase(t);
        self->reply.error_text(self->text);
        uv_close(as_handle(t), [](uv_handle_t* h) { delete static_cast<Pending*>(h->data); });
      },
      static_cast<std::uint64_t>(delay.count()), 0);
}

void DelayedErrors::close() {
  loop_ = nullptr;
  for (uv_timer_t* t : pending_) {
    uv_close(as_handle(t), [](uv_handle_t* h) { delete static_cast<Pending*>(h->data); });
  }
  pending_.clear();
}

}  // namespace leasehold::server
