// Fenced key-value: FENCE.PUT / FENCE.GET.
#include "server/commands/command_args.h"
#include "server/commands/handler_util.h"

namespace leasehold::server {
namespace {

void fence_put(CommandContext& ctx) {
  auto cmd = parse_fence_put(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  propose(ctx, std::move(cmd).value(), [](const core::ApplyResult& r, Responder& reply) {
    if (r.reply.is_error()) return reply.error(r.reply.error);
    reply.integer(static_cast<std::int64_t>(r.reply.token));
  });
}

void fence_get(CommandContext& ctx) {
  auto v = ctx.server.node().fence_get(ctx.args[1]);  // only durable values, in every mode
  if (!v) return ctx.reply.write([](resp::Writer& w) { w.null_array(); });
  ctx.reply.write([&](resp::Writer& w) {
    w.array_header(2);
    w.bulk(v->value);
    w.integer(static_cast<std::int64_t>(v->token));
  });
}

}  // namespace

void add_fence_commands(std::vector<CommandSpec>& out) {
  out.push_back({"FENCE.PUT", 5, kWrite, "fence", "Writes a value only with a current holder's token",
                 "key value lock token", &fence_put, kAclFence, {1, 3, 2}});
  out.push_back({"FENCE.GET", 2, kReadonly | kFast, "fence", "Reads a fenced value and the token that wrote it",
                 "key", &fence_get, kAclFence, {1, 1, 1}});
}

}  // namespace leasehold::server
