// demo/ledger.h: the shared resource the demo's workers write: the result
// record of "billing job 42". One record per run, holding who wrote it last,
// with which token, and what.
//
// Two stores, each written two ways:
//   PostgreSQL  a row of table leasehold_demo_ledger (entry = the record's key)
//               unfenced: a plain UPDATE of the row
//               fenced:   the same UPDATE through PostgresFence::fenced_exec
//                         (token check and write in one transaction, fence
//                         resource = the entry)
//   file        a file "<dir>/<entry>.ledger"
//               unfenced: open(O_TRUNC) + write, as a naive worker would
//               fenced:   FencedFileWriter (token check and rename under flock)
//
// Errors: kStaleToken from a fenced write whose token is lower than the
// highest one admitted (nothing changed), kUnavailable (no database),
// kIoError, kInvalidArgument (bad entry name), kNotFound (no record).
// Thread-safety: one Ledger object per thread (a PostgreSQL ledger is one
// connection).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "leasehold/status.h"

namespace leasehold::demo {

enum class LedgerStore : std::uint8_t { kPostgres, kFile };

struct LedgerTarget {
  LedgerStore store = LedgerStore::kFile;
  std::string location;  // PostgreSQL: a libpq conninfo; file: a directory
  std::string entry;     // the record's key: [A-Za-z0-9/_.-], 1..128 bytes
  bool fenced = false;
};

struct LedgerRecord {
  std::string writer;  // "A", "B", or "nobody" before any write
  std::uint64_t token = 0;
  std::string body;
  friend bool operator==(const LedgerRecord&, const LedgerRecord&) = default;
};

class Ledger {
 public:
  static constexpr std::size_t kMaxBodyBytes = 4096;

  virtual ~Ledger() = default;

  // Creates the table/file and resets the record to {"nobody", 0, body}.
  virtual Status prepare(const std::string& initial_body) = 0;
  // Writes the record, fenced or not as the target says.
  virtual Status write(const LedgerRecord& record) = 0;
  virtual Result<LedgerRecord> read() = 0;
  // Fenced ledgers: the highest token admitted for the entry (nullopt: none).
  virtual Result<std::optional<std::uint64_t>> highest() = 0;
  // "PostgreSQL row 'x' (plain UPDATE)" and the like.
  virtual std::string describe() const = 0;
};

// Opens the ledger (connects for PostgreSQL). Errors as above.
Result<std::unique_ptr<Ledger>> open_ledger(const LedgerTarget& target);

// "postgres" / "file"; parse_ledger_store is the inverse (kInvalidArgument).
std::string ledger_store_name(LedgerStore store);
Result<LedgerStore> parse_ledger_store(const std::string& name);

}  // namespace leasehold::demo
