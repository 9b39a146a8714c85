#include "etcd/auth.h"

#include "etcd/connections.h"

namespace leasehold::etcd::detail {
namespace {

bool says(const grpc::Status& status, std::string_view text) {
  return status.error_message().find(text) != std::string::npos;
}

}  // namespace

void Auth::set_password(std::string password) {
  std::lock_guard lock(mu_);
  password_ = std::move(password);
}

void Auth::invalidate(const std::string& token) {
  std::lock_guard lock(mu_);
  if (token_ && *token_ == token) token_.reset();
}

bool Auth::needs_new_token(const grpc::Status& status) {
  if (status.ok()) return false;
  return status.error_code() == grpc::StatusCode::UNAUTHENTICATED || says(status, "invalid auth token") ||
         says(status, "revision of auth store is old") || says(status, "user name is empty");
}

void Auth::attach(grpc::ClientContext& context, const std::string& token) {
  if (!token.empty()) context.AddMetadata("token", token);
}

Result<std::string> Auth::token(Connections& connections, std::chrono::steady_clock::time_point deadline) {
  {
    std::lock_guard lock(mu_);
    if (token_) return *token_;
  }
  std::lock_guard serial(authenticate_mu_);
  etcdserverpb::AuthenticateRequest request;
  {
    std::lock_guard lock(mu_);
    if (token_) return *token_;  // another thread authenticated meanwhile
    request.set_name(user_);
    request.set_password(password_);
  }
  etcdserverpb::AuthenticateResponse response;
  grpc::Status answer;
  Status s = connections.unary_until(
      "authenticate", Retry::kIdempotent, deadline, nullptr, cluster_of(response),
      [&](const Stubs& ep, grpc::ClientContext& ctx) {
        answer = ep.auth->Authenticate(&ctx, request, &response);
        return answer;
      });
  std::string token;
  if (!s) {
    if (answer.error_code() == grpc::StatusCode::FAILED_PRECONDITION && says(answer, "not enabled")) {
      token.clear();  // etcd has authentication off: send no token
    } else if (says(answer, "authentication failed")) {
      return Status(ErrorCode::kInvalidArgument, "etcd authentication as user '" + user_ +
                                                     "' failed: wrong user name or password (" + s.message() + ")");
    } else if (s.code() == ErrorCode::kUnavailable) {
      return s;
    } else {
      return Status(ErrorCode::kInvalidArgument,
                    "etcd authentication as user '" + user_ + "' failed (" + s.message() + ")");
    }
  } else {
    token = response.token();
  }
  std::lock_guard lock(mu_);
  token_ = token;
  return token;
}

}  // namespace leasehold::etcd::detail
