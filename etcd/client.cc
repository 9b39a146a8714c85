#include "etcd/client.h"

#include <algorithm>

#include "etcd/connections.h"
#include "etcd/convert.h"
#include "etcd/endpoints.h"

namespace leasehold::etcd {

using detail::Stubs;
using detail::Retry;

Result<std::unique_ptr<Client>> Client::create(const ClientOptions& options) {
  auto targets = parse_endpoints(options.endpoints);
  if (!targets) return targets.status();
  if (options.call_timeout.count() <= 0) {
    return Status(ErrorCode::kInvalidArgument, "etcd call timeout must be > 0");
  }
  const ClientTls& tls = options.tls;
  if (tls.cert_pem.empty() != tls.key_pem.empty()) {
    return Status(ErrorCode::kInvalidArgument, "etcd client certificate and key go together (one is missing)");
  }
  const bool any_tls = std::any_of(targets->begin(), targets->end(), [](const EndpointUrl& e) { return e.tls; });
  if (!any_tls && (!tls.ca_pem.empty() || !tls.cert_pem.empty())) {
    return Status(ErrorCode::kInvalidArgument,
                  "etcd TLS certificates are given but no endpoint is https:// (" + options.endpoints + ")");
  }
  if (options.user.empty() && !options.password.empty()) {
    return Status(ErrorCode::kInvalidArgument, "an etcd password needs an etcd user");
  }
  return std::unique_ptr<Client>(new Client(std::make_unique<detail::Connections>(*targets, options)));
}

Status Client::check_access(std::string_view prefix) {
  const std::string probe = std::string(prefix) + "access-check";
  // Version is never below 0: the compare fails and only the failure branch
  // (a range) runs; etcd checks the permissions of both branches first.
  // (One key may appear once per branch: the delete uses another.)
  auto result = txn({Compare::version(probe, Compare::Op::kLess, 0)},
                    {TxnOp::put(probe, ""), TxnOp::del(probe + "/")},
                    {TxnOp::get(std::string(prefix), prefix_end(prefix), RangeOptions{.limit = 1, .keys_only = true})});
  return result.status();
}

void Client::set_password(std::string password) { connections_->auth().set_password(std::move(password)); }

Client::Client(std::unique_ptr<detail::Connections> connections) : connections_(std::move(connections)) {}
Client::~Client() = default;

std::chrono::milliseconds Client::call_timeout() const { return connections_->call_timeout(); }
std::size_t Client::endpoint_count() const { return connections_->size(); }
std::uint64_t Client::cluster_id() const { return connections_->cluster_id(); }
std::uint64_t Client::foreign_answers() const { return connections_->foreign_answers(); }

Result<RangeResult> Client::range(std::string_view key, std::string_view range_end,
                                  const RangeOptions& options) {
  if (Status s = detail::check_key(key); !s) return s;
  etcdserverpb::RangeRequest request;
  detail::to_proto(key, range_end, options, &request);
  etcdserverpb::RangeResponse response;
  Status s = connections_->unary("range", Retry::kIdempotent, detail::cluster_of(response),
                                 [&](const Stubs& ep, grpc::ClientContext& ctx) {
                                   return ep.kv->Range(&ctx, request, &response);
                                 });
  if (!s) return s;
  return detail::from_proto(response);
}

Result<PutResult> Client::put(std::string_view key, std::string_view value, std::int64_t lease) {
  if (Status s = detail::check_key(key); !s) return s;
  if (Status s = detail::check_value(value); !s) return s;
  etcdserverpb::PutRequest request;
  request.set_key(std::string(key));
  request.set_value(std::string(value));
  request.set_lease(lease);
  etcdserverpb::PutResponse response;
  Status s = connections_->unary("put", Retry::kMutation, detail::cluster_of(response),
                                 [&](const Stubs& ep, grpc::ClientContext& ctx) {
                                   return ep.kv->Put(&ctx, request, &response);
                                 });
  if (!s) return s;
  return PutResult{response.header().revision()};
}

Result<DeleteResult> Client::delete_range(std::string_view key, std::string_view range_end) {
  if (Status s = detail::check_key(key); !s) return s;
  etcdserverpb::DeleteRangeRequest request;
  request.set_key(std::string(key));
  if (!range_end.empty()) request.set_range_end(std::string(range_end));
  etcdserverpb::DeleteRangeResponse response;
  Status s = connections_->unary("delete", Retry::kMutation, detail::cluster_of(response),
                                 [&](const Stubs& ep, grpc::ClientContext& ctx) {
                                   return ep.kv->DeleteRange(&ctx, request, &response);
                                 });
  if (!s) return s;
  return DeleteResult{response.header().revision(), response.deleted()};
}

Result<TxnResult> Client::txn(const std::vector<Compare>& compares, const std::vector<TxnOp>& success,
                              const std::vector<TxnOp>& failure) {
  if (Status s = detail::check_txn(compares, success, failure); !s) return s;
  etcdserverpb::TxnRequest request;
  for (const Compare& c : compares) detail::to_proto(c, request.add_compare());
  for (const TxnOp& op : success) detail::to_proto(op, request.add_success());
  for (const TxnOp& op : failure) detail::to_proto(op, request.add_failure());
  bool writes = false;
  for (const auto* branch : {&success, &failure}) {
    for (const TxnOp& op : *branch) writes = writes || op.kind != TxnOp::Kind::kRange;
  }
  etcdserverpb::TxnResponse response;
  Status s = connections_->unary("txn", writes ? Retry::kMutation : Retry::kIdempotent, detail::cluster_of(response),
                                 [&](const Stubs& ep, grpc::ClientContext& ctx) {
                                   return ep.kv->Txn(&ctx, request, &response);
                                 });
  if (!s) return s;
  return detail::from_proto(response);
}

Result<std::int64_t> Client::compact(std::int64_t revision) {
  if (revision <= 0) return Status(ErrorCode::kInvalidArgument, "etcd compact revision must be > 0");
  etcdserverpb::CompactionRequest request;
  request.set_revision(revision);
  etcdserverpb::CompactionResponse response;
  // Compacting twice to the same revision is harmless: retry like a read.
  Status s = connections_->unary("compact", Retry::kIdempotent, detail::cluster_of(response),
                                 [&](const Stubs& ep, grpc::ClientContext& ctx) {
                                   return ep.kv->Compact(&ctx, request, &response);
                                 });
  if (!s) return s;
  return response.header().revision();
}

Result<LeaseGrant> Client::lease_grant(std::int64_t ttl_seconds) {
  if (ttl_seconds < 1) return Status(ErrorCode::kInvalidArgument, "etcd lease ttl must be >= 1 second");
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(ttl_seconds);
  etcdserverpb::LeaseGrantResponse response;
  // A lost reply leaves an orphan lease that simply expires: safe to retry.
  Status s = connections_->unary("lease grant", Retry::kIdempotent, detail::cluster_of(response),
                                 [&](const Stubs& ep, grpc::ClientContext& ctx) {
                                   return ep.lease->LeaseGrant(&ctx, request, &response);
                                 });
  if (!s) return s;
  if (!response.error().empty()) {
    return Status(ErrorCode::kInternal, "etcd lease grant: " + response.error());
  }
  return LeaseGrant{response.id(), response.ttl()};
}

Status Client::lease_revoke(std::int64_t lease_id) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease_id);
  etcdserverpb::LeaseRevokeResponse response;
  return connections_->unary("lease revoke", Retry::kIdempotent, detail::cluster_of(response),
                             [&](const Stubs& ep, grpc::ClientContext& ctx) {
                               return ep.lease->LeaseRevoke(&ctx, request, &response);
                             });
}

}  // namespace leasehold::etcd
