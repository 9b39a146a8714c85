// torture/faults/disk_fault_shim_state.h: the shim's state, shared by
// disk_fault_shim_core.cc (fd table, control file, journal, opens and
// namespace changes) and disk_fault_shim_undo.cc (writes of durable bytes,
// their undo entries and data file, syncs). Internal to the shim.
// Thread-safety: everything in Shim, File included, is guarded by Shim::mu,
// except File::gate (see WriteHold in disk_fault_shim_internal.h).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace leasehold::torture::disk_fault::detail {

// A regular file under the directory, shared by every fd open on it.
struct File {
  std::string path;                // its name now (follows renames)
  unsigned long long durable = 0;  // its size at its last sync, or at its first open or creation
  unsigned long long pending = 0;  // undo entries journaled since that sync
  bool gone = false;               // unlinked or replaced by a rename: no more lines for it
  std::shared_mutex gate;          // see WriteHold
};

struct Tracked {  // an fd at or under the directory
  std::string path;            // as opened (a directory's fsync journals it)
  bool dir = false;
  std::shared_ptr<File> file;  // regular files only
};

// The undo data file of this process, beside the journal: the pre-images
// the undo lines point into. Emptied whenever no entry in it is live any
// more (each voided by a sync, or its file gone for good), so it holds at
// most the bytes overwritten since the last syncs.
struct UndoData {
  int fd = -1;
  pid_t pid = 0;  // the process that opened it (a forked child opens its own)
  std::string path;
  unsigned long long bytes = 0;  // its size
  unsigned long long live = 0;   // the sum of every File::pending and Shim::orphans
};

struct Faults {
  bool eio_write = false;
  bool eio_fsync = false;
  bool enospc = false;
  // `only:<prefix>`: the faults hit only files whose path below the
  // directory starts with this (e.g. "rocksdb/"); empty: every file.
  std::string only;
};

struct Shim {
  std::mutex mu;
  bool enabled = false;
  std::string dir;      // realpath of LEASEHOLD_FAULT_DIR
  std::string control;  // control file path, may be empty
  std::string journal;  // journal path, may be empty
  int journal_fd = -1;
  unsigned backups = 0;
  std::unordered_map<int, Tracked> fds;
  std::unordered_map<std::string, std::shared_ptr<File>> files;  // by File::path
  // Per directory: live undo entries of files that a rename into it
  // replaced (the power cut restores such a file until the directory's
  // fsync makes the rename durable).
  std::unordered_map<std::string, unsigned long long> orphans;
  UndoData undo;
  Faults faults;
  struct stat control_seen {};
  bool control_present = false;
};

// The process's state, made from the environment at the first call.
Shim& shim();
// close() without the shim's bookkeeping (safe with mu held).
int close_untracked(int fd);
// The faults in force (mu held): re-reads the control file on change.
const Faults& current_faults(Shim& s);
// Whether the faults in force apply to the tracked `path` (absolute, under
// the directory): always, unless an `only:` prefix leaves it out.
bool faults_apply(const Shim& s, const Faults& faults, const std::string& path);
// Appends one line, "\n" included, to the journal (mu held); false if it
// could not (no journal configured, or the write failed).
bool journal_line(Shim& s, const std::string& line);
// Appends "<op>\t<size>\t<a>" (mu held).
void journal(Shim& s, const char* op, unsigned long long size, const std::string& a);
// The directory holding `path`.
std::string parent_of(const std::string& path);
// `n` undo entries are no longer live (mu held); with none left, the data
// file is emptied.
void release(Shim& s, unsigned long long n);
// `f` left the namespace for good (unlinked, or a new file took its name):
// its entries no longer apply (mu held).
void drop(Shim& s, File& f);

}  // namespace leasehold::torture::disk_fault::detail
