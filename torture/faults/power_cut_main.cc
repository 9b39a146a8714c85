// `leasehold-power-cut JOURNAL`: drops every byte the process that wrote
// JOURNAL (through the disk-fault shim) had not fsynced, and puts back the
// fsynced bytes it had overwritten since. Run it after
// kill -9 of that process (torture/faults/power_cut.h). Exit 0 with a
// summary on stdout; 1 with the error on stderr.
#include <iostream>

#include "torture/faults/power_cut.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: leasehold-power-cut JOURNAL   (after kill -9 of the process that wrote it)\n";
    return 2;
  }
  auto report = leasehold::torture::power_cut(argv[1]);
  if (!report) {
    std::cerr << "leasehold-power-cut: " << report.status().to_string() << "\n";
    return 1;
  }
  for (const auto& p : report->deleted) std::cout << "deleted " << p << "\n";
  for (const auto& p : report->renames_undone) std::cout << "rename undone " << p << "\n";
  for (const auto& p : report->overwrites_undone) std::cout << "overwrite undone " << p << "\n";
  for (const auto& p : report->truncated) std::cout << "truncated " << p << "\n";
  std::cout << "bytes dropped " << report->bytes_dropped << "\n";
  std::cout << "bytes restored " << report->bytes_restored << "\n";
  return 0;
}
