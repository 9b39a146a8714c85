// etcd/types.h: plain value types of the etcd v3 client (keys, ranges,
// transactions). No gRPC or protobuf types leak into the public headers.
//
// Keys and values are byte strings (std::string may hold any bytes).
// Revisions are etcd's store revisions (int64, > 0 once anything was
// written); a lease id of 0 means "no lease".
// Thread-safety: plain values; safe to copy and move between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace leasehold::etcd {

// Limits checked on the client before anything is sent.
inline constexpr std::size_t kMaxKeyBytes = 64 * 1024;
inline constexpr std::size_t kMaxValueBytes = 1024 * 1024;  // etcd's default request limit is 1.5 MiB
inline constexpr std::size_t kMaxTxnOps = 128;              // etcd's default --max-txn-ops

struct KeyValue {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;  // revision of the key's creation
  std::int64_t mod_revision = 0;     // revision of its last modification
  std::int64_t version = 0;          // writes since creation (1 = just created)
  std::int64_t lease = 0;            // attached lease, 0 = none
};

// The smallest key greater than every key starting with `prefix` (etcd's
// "prefix end"); "\0" (all keys) when the prefix is empty or all 0xff.
std::string prefix_end(std::string_view prefix);

enum class SortOrder : std::uint8_t { kNone = 0, kAscend = 1, kDescend = 2 };
enum class SortTarget : std::uint8_t { kKey = 0, kVersion = 1, kCreate = 2, kMod = 3, kValue = 4 };

struct RangeOptions {
  std::int64_t limit = 0;     // 0 = no limit
  std::int64_t revision = 0;  // read at this past revision; 0 = latest
  SortOrder sort_order = SortOrder::kNone;
  SortTarget sort_target = SortTarget::kKey;
  bool keys_only = false;
  bool count_only = false;
  bool serializable = false;  // true: served by the member locally (may be stale)
  std::int64_t min_create_revision = 0;  // 0 = no bound
  std::int64_t max_create_revision = 0;  // 0 = no bound
};

struct RangeResult {
  std::int64_t revision = 0;  // store revision the read saw
  std::vector<KeyValue> kvs;
  bool more = false;       // more keys matched than `limit`
  std::int64_t count = 0;  // number of keys matched
};

struct PutResult {
  std::int64_t revision = 0;  // revision of this write
};

struct DeleteResult {
  std::int64_t revision = 0;
  std::int64_t deleted = 0;  // number of keys removed
};

// One predicate of a transaction: `target(key) op operand`. A key that does
// not exist has create_revision, mod_revision, version and lease 0.
struct Compare {
  enum class Target : std::uint8_t { kVersion = 0, kCreateRevision = 1, kModRevision = 2, kValue = 3, kLease = 4 };
  enum class Op : std::uint8_t { kEqual = 0, kGreater = 1, kLess = 2, kNotEqual = 3 };

  std::string key;
  Target target = Target::kVersion;
  Op op = Op::kEqual;
  std::int64_t number = 0;  // operand for every target except kValue
  std::string value;        // operand for kValue

  static Compare create_revision(std::string key, Op op, std::int64_t revision);
  static Compare mod_revision(std::string key, Op op, std::int64_t revision);
  static Compare version(std::string key, Op op, std::int64_t version);
  static Compare value_is(std::string key, Op op, std::string value);
  static Compare lease(std::string key, Op op, std::int64_t lease);
};

// One operation inside a transaction branch.
struct TxnOp {
  enum class Kind : std::uint8_t { kRange, kPut, kDelete };
  Kind kind = Kind::kRange;
  std::string key;
  std::string range_end;  // kRange, kDelete: "" = just `key`
  std::string value;      // kPut
  std::int64_t lease = 0; // kPut
  RangeOptions range;     // kRange

  static TxnOp get(std::string key, std::string range_end = {}, RangeOptions options = {});
  static TxnOp put(std::string key, std::string value, std::int64_t lease = 0);
  static TxnOp del(std::string key, std::string range_end = {});
};

// The result of one TxnOp, same position as in the executed branch.
using TxnOpResult = std::variant<RangeResult, PutResult, DeleteResult>;

struct TxnResult {
  bool succeeded = false;  // all compares held: the success branch ran
  std::int64_t revision = 0;
  std::vector<TxnOpResult> responses;
};

struct LeaseGrant {
  std::int64_t id = 0;
  std::int64_t ttl_seconds = 0;  // as granted by etcd (may exceed the request)
};

}  // namespace leasehold::etcd
