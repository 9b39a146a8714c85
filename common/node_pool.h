// common/node_pool.h: fixed-size blocks carved from 64 KiB slabs, for
// containers with one small node per element (IncrementalMap).
//
// Why: malloc adds a header to every block and rounds it up to 16 bytes:
// a 64-byte map node costs 80 bytes, a 32-byte one 48. At ten million
// sessions, held in three such maps, that was about 500 MB of headers and
// padding. A pool of same-sized blocks has neither.
//
// How: allocate() takes the most recently freed block, or else the next
// unused block of the newest slab, or else a new slab (one allocation of
// kSlabBytes, never more at once, never zeroed). deallocate() pushes the
// block on an intrusive free list. Slabs are returned to the system only
// when the pool is destroyed: after a peak, freed blocks are reused by later
// allocations but the memory stays with the pool (as malloc's own free
// lists mostly do).
//
// Under AddressSanitizer the blocks not handed out (unused slab space,
// freed blocks) are poisoned, so a use of an erased element is still
// reported as with malloc.
//
// Errors: allocate() throws std::bad_alloc like operator new.
// Ownership: owns its slabs; blocks handed out stay valid until deallocated
// or the pool is destroyed (the caller destroys its objects first). Movable
// (blocks stay where they are), not copyable.
// Thread-safety: none; one owner.
#pragma once

#include <sanitizer/asan_interface.h>  // ASAN_(UN)POISON_MEMORY_REGION: no-ops without ASan

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace leasehold {

template <std::size_t BlockSize, std::size_t BlockAlign>
class NodePool {
  static_assert(BlockAlign >= alignof(void*) && (BlockAlign & (BlockAlign - 1)) == 0);
  static constexpr std::size_t kBlock = (BlockSize + BlockAlign - 1) / BlockAlign * BlockAlign;

 public:
  static constexpr std::size_t kSlabBytes = 64 * 1024;
  static constexpr std::size_t kBlocksPerSlab = kSlabBytes / kBlock;
  static_assert(kBlocksPerSlab >= 1, "block larger than a slab");

  NodePool() = default;
  ~NodePool() {
    for (const auto& slab : slabs_) ASAN_UNPOISON_MEMORY_REGION(slab->bytes, sizeof(Slab));
  }
  NodePool(NodePool&& other) noexcept { swap(other); }
  NodePool& operator=(NodePool&& other) noexcept {
    if (this != &other) {
      NodePool taken(std::move(other));
      swap(taken);
    }
    return *this;
  }
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

  // Uninitialised storage for one object of up to BlockSize bytes.
  void* allocate() {
    if (free_ != nullptr) {
      FreeBlock* b = free_;
      ASAN_UNPOISON_MEMORY_REGION(b, kBlock);
      free_ = b->next;
      return b;
    }
    if (slabs_.empty() || used_in_last_ == kBlocksPerSlab) {
      slabs_.push_back(std::unique_ptr<Slab>(new Slab));
      ASAN_POISON_MEMORY_REGION(slabs_.back()->bytes, sizeof(Slab));
      used_in_last_ = 0;
    }
    std::byte* block = slabs_.back()->bytes + kBlock * used_in_last_++;
    ASAN_UNPOISON_MEMORY_REGION(block, kBlock);
    return block;
  }

  // Returns a block from allocate() whose object was destroyed.
  void deallocate(void* block) noexcept {
    auto* b = ::new (block) FreeBlock;
    b->next = free_;
    free_ = b;
    ASAN_POISON_MEMORY_REGION(block, kBlock);
  }

  // Bytes held from the system (tests, INFO-style accounting).
  std::size_t slab_bytes() const { return slabs_.size() * sizeof(Slab); }
  static constexpr std::size_t block_bytes() { return kBlock; }

  void swap(NodePool& other) noexcept {
    std::swap(slabs_, other.slabs_);
    std::swap(used_in_last_, other.used_in_last_);
    std::swap(free_, other.free_);
  }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  struct Slab {
    alignas(BlockAlign) std::byte bytes[kBlocksPerSlab * kBlock];
  };

  std::vector<std::unique_ptr<Slab>> slabs_;
  std::size_t used_in_last_ = 0;  // blocks of slabs_.back() handed out (never reused blocks)
  FreeBlock* free_ = nullptr;
};

}  // namespace leasehold
