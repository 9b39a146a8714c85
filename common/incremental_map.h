// common/incremental_map.h: an unordered map that grows one bucket at a
// time and never allocates more than one small block at once.
//
// Why: std::unordered_map grows by rehashing every element into a bucket
// array twice as large, in one call. At a million sessions that was one
// insert taking 60-80 ms on the project's test VM, and the event loop doing
// it served nobody meanwhile. Draining into a second std::unordered_map a
// few elements per insert (this map's previous design) left the new bucket
// array itself: 10-20 MiB zeroed at once, and on a VM the first write to a
// fresh page costs ~14 µs (37-48 ms per 10 MiB; bench/long_turns.py showed
// every event-loop turn over 10 ms of a 1M-session open was that memset).
//
// How: linear hashing. The buckets are numbered 0..bucket_count()-1; a key
// goes to bucket h & (2^L - 1), or h & (2^(L+1) - 1) when that first bucket
// has already been split in this round. When the elements outnumber
// kMaxLoad times the buckets, one insert splits one bucket (relinks its
// chain, 2-4 nodes on average) into itself and a new bucket at the end: a
// split every kMaxLoad inserts. The bucket pointers live
// in segments of kSegmentBuckets (32 KiB), allocated as the buckets reach
// them, so no single step allocates more than one segment. h is the key's
// std::hash mixed (murmur3's 64-bit finalizer), so ascending ids and ids
// with a stride spread evenly.
//
// Elements are nodes that never move: pointers and references to values
// stay valid for as long as the element exists, as with std::unordered_map.
// The nodes come from a NodePool (common/node_pool.h): no malloc header or
// rounding per element, and memory freed by erase is kept for later
// inserts, not returned to the system, until the map is destroyed.
//
// Interface: the subset of std::unordered_map's the project uses (find,
// end, contains, count, operator[], try_emplace, erase by key or iterator,
// size, empty, reserve, iteration in unspecified order). Iterators are
// invalidated by any insert or erase (unlike std::unordered_map's, which
// survive inserts that do not rehash). begin() walks to the first non-empty
// bucket. Erasing never shrinks the buckets.
//
// Ownership: owns its nodes and segments. Movable, not copyable.
// Thread-safety: none; one owner, like std::unordered_map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/node_pool.h"
#include "common/prefetch.h"

namespace leasehold {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class IncrementalMap {
 public:
  using key_type = Key;
  using mapped_type = Value;
  using value_type = std::pair<const Key, Value>;
  static constexpr std::size_t kSegmentBuckets = 4096;  // 32 KiB of bucket pointers
  static constexpr std::size_t kInitialBuckets = 16;    // a power of two
  // Elements per bucket before a split: 2 keeps chains short (about 2 nodes
  // on average) at half the bucket pointers of 1 (4 bytes per element).
  static constexpr std::size_t kMaxLoad = 2;

 private:
  struct Node {
    template <typename... Args>
    explicit Node(const Key& key, Args&&... args)
        : kv(std::piecewise_construct, std::forward_as_tuple(key), std::forward_as_tuple(std::forward<Args>(args)...)) {}
    Node* next = nullptr;
    value_type kv;
  };

 public:
  template <bool Const>
  class Iter {
    using MapPtr = std::conditional_t<Const, const IncrementalMap*, IncrementalMap*>;

   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = IncrementalMap::value_type;
    using difference_type = std::ptrdiff_t;
    using reference = std::conditional_t<Const, const value_type&, value_type&>;
    using pointer = std::conditional_t<Const, const value_type*, value_type*>;

    Iter() = default;
    operator Iter<true>() const  // NOLINT(google-explicit-constructor): like std iterators
      requires(!Const)
    {
      return Iter<true>(map_, bucket_, node_);
    }

    reference operator*() const { return node_->kv; }
    pointer operator->() const { return &node_->kv; }
    Iter& operator++() {
      node_ = node_->next;
      if (node_ == nullptr) seek(bucket_ + 1);
      return *this;
    }
    Iter operator++(int) {
      Iter old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const Iter& a, const Iter& b) { return a.node_ == b.node_; }

   private:
    friend class IncrementalMap;
    template <bool>
    friend class Iter;
    Iter(MapPtr map, std::size_t bucket, Node* node) : map_(map), bucket_(bucket), node_(node) {}
    // The first element in bucket `from` or after it (end: node_ null).
    void seek(std::size_t from) {
      node_ = nullptr;
      for (bucket_ = from; bucket_ < map_->bucket_count(); ++bucket_) {
        node_ = map_->head(bucket_);
        if (node_ != nullptr) return;
      }
    }
    MapPtr map_ = nullptr;
    std::size_t bucket_ = 0;
    Node* node_ = nullptr;
  };
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;

  IncrementalMap() { add_buckets_through(kInitialBuckets - 1); }
  ~IncrementalMap() { clear(); }
  // The moved-from map is left empty and usable (it gets fresh buckets).
  IncrementalMap(IncrementalMap&& other) noexcept : IncrementalMap() { swap(other); }
  IncrementalMap& operator=(IncrementalMap&& other) noexcept {
    if (this != &other) {
      IncrementalMap taken(std::move(other));
      swap(taken);  // the old contents leave with `taken`
    }
    return *this;
  }
  IncrementalMap(const IncrementalMap&) = delete;
  IncrementalMap& operator=(const IncrementalMap&) = delete;

  iterator begin() {
    iterator it(this, 0, nullptr);
    it.seek(0);
    return it;
  }
  iterator end() { return iterator(this, 0, nullptr); }
  const_iterator begin() const {
    const_iterator it(this, 0, nullptr);
    it.seek(0);
    return it;
  }
  const_iterator end() const { return const_iterator(this, 0, nullptr); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Buckets in use: round_ + split_ (tests; grows by one per split).
  std::size_t bucket_count() const { return round_ + split_; }

  iterator find(const Key& key) {
    const std::size_t b = bucket_of(hash_of(key));
    Node* n = find_in(b, key);
    return n == nullptr ? end() : iterator(this, b, n);
  }
  const_iterator find(const Key& key) const {
    const std::size_t b = bucket_of(hash_of(key));
    Node* n = find_in(b, key);
    return n == nullptr ? end() : const_iterator(this, b, n);
  }
  bool contains(const Key& key) const { return find(key) != end(); }

  // Hints for a walk that looks up many keys in a known order (a snapshot
  // in id order): each lookup of a large map costs a cache miss on the
  // bucket pointer and another on the chain's first node, one after the
  // other. prefetch_slot(key) starts fetching the key's bucket pointer;
  // prefetch_chain(key), a few lookups later when that pointer is likely
  // cached, starts fetching the first node it points to. The misses of
  // several keys then overlap. Neither changes the map or its iterators;
  // O(1); any key (present or not) is fine.
  void prefetch_slot(const Key& key) const {
    const std::size_t b = bucket_of(hash_of(key));
    prefetch_for_read(&segments_[b / kSegmentBuckets][b % kSegmentBuckets]);
  }
  void prefetch_chain(const Key& key) const {
    const Node* first = head(bucket_of(hash_of(key)));
    if (first != nullptr) prefetch_for_read(first);
  }
  std::size_t count(const Key& key) const { return contains(key) ? 1 : 0; }

  // Inserts Value(args...) under `key` unless the key exists. Splits at
  // most one bucket first.
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(const Key& key, Args&&... args) {
    const std::uint64_t h = hash_of(key);
    std::size_t b = bucket_of(h);
    if (Node* found = find_in(b, key); found != nullptr) return {iterator(this, b, found), false};
    if (size_ + 1 > kMaxLoad * bucket_count()) {
      split_one();
      b = bucket_of(h);  // the split may have moved the key's bucket
    }
    void* block = pool_.allocate();
    Node* node = nullptr;
    try {
      node = ::new (block) Node(key, std::forward<Args>(args)...);
    } catch (...) {
      pool_.deallocate(block);
      throw;
    }
    Node*& first = head(b);
    node->next = first;
    first = node;
    ++size_;
    return {iterator(this, b, node), true};
  }
  Value& operator[](const Key& key) { return try_emplace(key).first->second; }

  std::size_t erase(const Key& key) {
    for (Node** link = &head(bucket_of(hash_of(key))); *link != nullptr; link = &(*link)->next) {
      if ((*link)->kv.first == key) {
        unlink(link);
        return 1;
      }
    }
    return 0;
  }
  // Returns the iterator after `pos` (in this map's iteration order).
  iterator erase(iterator pos) {
    iterator after = pos;
    ++after;
    for (Node** link = &head(pos.bucket_); *link != nullptr; link = &(*link)->next) {
      if (*link == pos.node_) {
        unlink(link);
        break;
      }
    }
    return after;
  }

  // Buckets for `n` elements without further splits: O(n) now (meant for
  // filling an empty map, e.g. on restore).
  void reserve(std::size_t n) {
    while (kMaxLoad * bucket_count() < n) split_one();
  }

 private:
  // The key's std::hash, mixed (murmur3's 64-bit finalizer).
  static std::uint64_t hash_of(const Key& key) {
    auto h = static_cast<std::uint64_t>(Hash{}(key));
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
  }
  std::size_t bucket_of(std::uint64_t h) const {
    const std::size_t b = h & (round_ - 1);
    return b < split_ ? h & (2 * round_ - 1) : b;
  }
  Node* find_in(std::size_t b, const Key& key) const {
    for (Node* n = head(b); n != nullptr; n = n->next) {
      if (n->kv.first == key) return n;
    }
    return nullptr;
  }
  Node*& head(std::size_t b) { return segments_[b / kSegmentBuckets][b % kSegmentBuckets]; }
  Node* head(std::size_t b) const { return segments_[b / kSegmentBuckets][b % kSegmentBuckets]; }

  void add_buckets_through(std::size_t last) {
    while (segments_.size() * kSegmentBuckets <= last) {
      segments_.push_back(std::make_unique<Node*[]>(kSegmentBuckets));  // zeroed
    }
  }

  // Splits bucket split_ into itself and bucket round_ + split_.
  void split_one() {
    const std::size_t from = split_;
    const std::size_t to = round_ + split_;
    add_buckets_through(to);
    const std::size_t mask = 2 * round_ - 1;
    Node* chain = head(from);
    Node* stay = nullptr;
    Node* move = nullptr;
    while (chain != nullptr) {
      Node* next = chain->next;
      Node*& list = (hash_of(chain->kv.first) & mask) == to ? move : stay;
      chain->next = list;
      list = chain;
      chain = next;
    }
    head(from) = stay;
    head(to) = move;
    if (++split_ == round_) {
      round_ *= 2;
      split_ = 0;
    }
  }

  void unlink(Node** link) {
    Node* gone = *link;
    *link = gone->next;
    destroy(gone);
    --size_;
  }

  void destroy(Node* n) noexcept {
    n->~Node();
    pool_.deallocate(n);
  }

  void clear() {
    for (std::size_t b = 0; b < bucket_count() && size_ > 0; ++b) {
      Node* n = head(b);
      while (n != nullptr) {
        Node* next = n->next;
        destroy(n);
        --size_;
        n = next;
      }
      head(b) = nullptr;
    }
  }

  void swap(IncrementalMap& other) noexcept {
    std::swap(segments_, other.segments_);
    std::swap(round_, other.round_);
    std::swap(split_, other.split_);
    std::swap(size_, other.size_);
    pool_.swap(other.pool_);
  }

  // Bucket b is segments_[b / kSegmentBuckets][b % kSegmentBuckets].
  std::vector<std::unique_ptr<Node*[]>> segments_;
  std::size_t round_ = kInitialBuckets;  // buckets at the start of this round (a power of two)
  std::size_t split_ = 0;                // buckets of this round split so far
  std::size_t size_ = 0;
  NodePool<sizeof(Node), alignof(Node)> pool_;  // every node (no malloc header per element)
};

}  // namespace leasehold
