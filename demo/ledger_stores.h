// demo/ledger_stores.h: the two Ledger implementations (see ledger.h).
// Callers use open_ledger(), which validates the target first.
#pragma once

#include <memory>

#include "demo/ledger.h"

namespace leasehold::demo {

Result<std::unique_ptr<Ledger>> open_postgres_ledger(const LedgerTarget& target);
Result<std::unique_ptr<Ledger>> open_file_ledger(const LedgerTarget& target);

}  // namespace leasehold::demo
