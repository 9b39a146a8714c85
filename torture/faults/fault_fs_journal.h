// torture/faults/fault_fs_journal.h: the undo journal of leasehold-fault-fs
// (fault_fs.h), for its power cut: what each file held at its last
// successful fsync/fdatasync, so that cut() can drop every byte written
// since.
//
// Per file changed since its last sync (keyed by the backing inode): its
// size before the first change since that sync (what a file the daemon
// never saw changed holds counts as durable) and, for every
// write, truncate or hole punch since, the bytes it overwrote (inside the
// old size). before_*() must be called before the change reaches the
// backing file, synced() after a sync succeeded. cut() puts every
// journaled file back: the overwritten bytes restored (latest change
// first), the size cut to the synced one, then fsynced; the journal is
// empty afterwards. Files created, renamed or unlinked are not undone
// (directory entries stay as they are), and an unlinked file's cut is lost
// with it.
// Ownership: the journal reopens each file it tracks read-write (through
// /proc/self/fd: a file closed or unlinked since is still cut) and closes
// it in synced(), cut() or its destructor.
// Errors: a before_*() that cannot read the old bytes returns -errno (the
// caller fails its call with it); cut() counts the files it could not
// restore in CutReport::errors.
// Thread-safety: every method may be called from any thread (one mutex).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace leasehold::torture::fault_fs {

struct CutReport {
  int files = 0;              // files put back
  std::uint64_t dropped = 0;  // bytes beyond the synced size, plus bytes restored
  int errors = 0;
};

class Journal {
 public:
  Journal() = default;
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  int before_write(int fd, off_t off, std::size_t len);
  int before_truncate(int fd, off_t new_size);
  int before_punch(int fd, off_t off, off_t len);  // fallocate that zeroes a range
  void synced(int fd);
  CutReport cut();

 private:
  struct Undo {
    off_t off;
    std::string old;
  };
  struct File {
    int fd = -1;
    off_t synced_size = 0;
    std::vector<Undo> undo;
  };
  // The entry of fd's inode (created with the current size as synced).
  File* file(int fd, off_t* size);
  int save(File& f, off_t size, off_t off, off_t len);

  std::mutex mu_;
  std::map<std::pair<dev_t, ino_t>, File> files_;
};

}  // namespace leasehold::torture::fault_fs
