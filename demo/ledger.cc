#include "demo/ledger.h"

#include "demo/ledger_stores.h"

namespace leasehold::demo {
namespace {

constexpr std::size_t kMaxEntryBytes = 128;

Status validate_entry(const std::string& entry) {
  if (entry.empty() || entry.size() > kMaxEntryBytes) {
    return Status(ErrorCode::kInvalidArgument, "ledger entry must be 1..128 bytes");
  }
  for (char c : entry) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '/' || c == '_' || c == '.' || c == '-';
    if (!ok) {
      return Status(ErrorCode::kInvalidArgument,
                    "ledger entry '" + entry + "' may hold only letters, digits and / _ . -");
    }
  }
  if (entry.find("..") != std::string::npos) {
    return Status(ErrorCode::kInvalidArgument, "ledger entry '" + entry + "' may not hold '..'");
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Ledger>> open_ledger(const LedgerTarget& target) {
  if (Status s = validate_entry(target.entry); !s) return s;
  if (target.location.empty()) {
    return Status(ErrorCode::kInvalidArgument, "ledger location (conninfo or directory) is empty");
  }
  if (target.store == LedgerStore::kPostgres) return open_postgres_ledger(target);
  return open_file_ledger(target);
}

std::string ledger_store_name(LedgerStore store) {
  return store == LedgerStore::kPostgres ? "postgres" : "file";
}

Result<LedgerStore> parse_ledger_store(const std::string& name) {
  if (name == "postgres") return LedgerStore::kPostgres;
  if (name == "file") return LedgerStore::kFile;
  return Status(ErrorCode::kInvalidArgument, "unknown ledger store '" + name + "' (postgres, file)");
}

}  // namespace leasehold::demo
