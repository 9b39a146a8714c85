// torture/totals_file.h: the reliability aggregate kept in the repository,
// docs/reliability/totals.json, and the generated sections of
// docs/RELIABILITY.md.
//
// The file is one JSON object: {"format": 1, "torture": {...}, "fuzz":
// {...}, "stress": {...}}. This side reads and writes "torture" (report.h's
// Totals) and keeps the other sections as they are; scripts/fuzz-ledger.sh
// owns "fuzz" and scripts/stress-test-run.sh "stress" (both through
// scripts/reliability_totals.py). Every writer lays the file out the same
// way: objects down to the third level one member a line, deeper ones on
// one line, keys sorted, so that a rewrite changes only the lines whose
// numbers changed.
//
// Errors: parse_totals returns kInvalidArgument naming the member that is
// missing or of the wrong type (the caller then writes nothing).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "leasehold/status.h"
#include "torture/report.h"

namespace leasehold::torture {

// The "torture" section of a totals file's text ("" or a file without that
// section: empty Totals).
Result<Totals> parse_totals(const std::string& text);

// The totals file's new text: `text` (the old file, may be "") with its
// "torture" section replaced by `totals`. kInvalidArgument when `text` is
// not a totals file or its "torture" section is malformed (parse_totals).
Result<std::string> write_totals(const std::string& text, const Totals& totals);

// `page` with the text between "<!-- begin NAME -->" and "<!-- end NAME -->"
// replaced by `body` (the section appended when the page has none).
std::string replace_section(const std::string& page, const std::string& name, const std::string& body);

}  // namespace leasehold::torture
