// common/incremental_map.h: an unordered map that never rehashes all its
// elements in one call.
//
// std::unordered_map grows by rehashing every element at once: at a million
// sessions that is one insert taking 60-80 ms on the project's test VM
// (leasehold_core_bench --benchmark_filter=OpenLongestApply), and the event
// loop doing it serves nobody meanwhile. IncrementalMap keeps a `current`
// table with room for twice the elements it had when it last grew. When
// `current` would have to rehash, it becomes `draining` and a new, larger
// `current` starts empty; every later insert first moves a few elements
// (kMovesPerInsert) from `draining` to `current`. Elements move as node
// handles (extract/insert), so they never move in memory: pointers and
// references to values stay valid for as long as the element exists, as
// with std::unordered_map. A lookup tries both tables while one drains.
//
// The cost of growing is then one allocation of zeroed buckets (8 bytes per
// bucket) instead of relinking every node.
//
// Interface: the subset of std::unordered_map's the project uses (find,
// end, contains, count, operator[], try_emplace, erase by key or iterator,
// size, empty, reserve, iteration in unspecified order). Iterators are
// invalidated by any insert or erase (unlike std::unordered_map's, which
// survive inserts that do not rehash).
//
// Thread-safety: none; one owner, like std::unordered_map.
#pragma once

#include <cstddef>
#include <functional>
#include <iterator>
#include <unordered_map>
#include <utility>

namespace leasehold {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class IncrementalMap {
  using Table = std::unordered_map<Key, Value, Hash>;

 public:
  using key_type = Key;
  using mapped_type = Value;
  using value_type = typename Table::value_type;
  static constexpr std::size_t kMovesPerInsert = 8;

  template <bool Const>
  class Iter {
    using TableIt = std::conditional_t<Const, typename Table::const_iterator, typename Table::iterator>;
    using TablePtr = std::conditional_t<Const, const Table*, Table*>;

   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = IncrementalMap::value_type;
    using difference_type = std::ptrdiff_t;
    using reference = std::conditional_t<Const, const value_type&, value_type&>;
    using pointer = std::conditional_t<Const, const value_type*, value_type*>;

    Iter() = default;
    Iter(TablePtr table, TableIt it, TablePtr next) : table_(table), it_(it), next_(next) { skip_to_next_table(); }
    operator Iter<true>() const  // NOLINT(google-explicit-constructor): like std iterators
      requires(!Const)
    {
      return Iter<true>(table_, it_, next_);
    }

    reference operator*() const { return *it_; }
    pointer operator->() const { return &*it_; }
    Iter& operator++() {
      ++it_;
      skip_to_next_table();
      return *this;
    }
    Iter operator++(int) {
      Iter old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const Iter& a, const Iter& b) { return a.table_ == b.table_ && a.it_ == b.it_; }

   private:
    friend class IncrementalMap;
    // The draining table is walked first, then current (next_ = null).
    void skip_to_next_table() {
      if (next_ != nullptr && it_ == table_->end()) {
        table_ = next_;
        it_ = table_->begin();
        next_ = nullptr;
      }
    }
    TablePtr table_ = nullptr;
    TableIt it_{};
    TablePtr next_ = nullptr;
  };
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;

  iterator begin() {
    return draining_.empty() ? iterator(&current_, current_.begin(), nullptr)
                             : iterator(&draining_, draining_.begin(), &current_);
  }
  iterator end() { return iterator(&current_, current_.end(), nullptr); }
  const_iterator begin() const {
    return draining_.empty() ? const_iterator(&current_, current_.begin(), nullptr)
                             : const_iterator(&draining_, draining_.begin(), &current_);
  }
  const_iterator end() const { return const_iterator(&current_, current_.end(), nullptr); }

  std::size_t size() const { return current_.size() + draining_.size(); }
  // Elements still in the draining table (tests).
  std::size_t draining() const { return draining_.size(); }
  bool empty() const { return size() == 0; }

  iterator find(const Key& key) {
    if (!draining_.empty()) {
      if (auto it = draining_.find(key); it != draining_.end()) return iterator(&draining_, it, &current_);
    }
    auto it = current_.find(key);
    return it == current_.end() ? end() : iterator(&current_, it, nullptr);
  }
  const_iterator find(const Key& key) const {
    if (!draining_.empty()) {
      if (auto it = draining_.find(key); it != draining_.end()) return const_iterator(&draining_, it, &current_);
    }
    auto it = current_.find(key);
    return it == current_.end() ? end() : const_iterator(&current_, it, nullptr);
  }
  bool contains(const Key& key) const { return find(key) != end(); }
  std::size_t count(const Key& key) const { return contains(key) ? 1 : 0; }

  // Inserts a default value under `key` unless one exists.
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(const Key& key, Args&&... args) {
    if (auto found = find(key); found != end()) return {found, false};
    before_insert();
    auto [it, inserted] = current_.try_emplace(key, std::forward<Args>(args)...);
    return {iterator(&current_, it, nullptr), inserted};
  }
  Value& operator[](const Key& key) { return try_emplace(key).first->second; }

  std::size_t erase(const Key& key) {
    if (!draining_.empty() && draining_.erase(key) == 1) return 1;
    return current_.erase(key);
  }
  // Returns the iterator after `pos` (in this map's iteration order).
  iterator erase(iterator pos) {
    Table* table = pos.table_;
    Table* next = pos.next_;
    auto after = table->erase(pos.it_);
    return iterator(table, after, next);
  }

  // Room for `n` elements without growing. Finishes a drain first (O(its
  // size): meant for filling an empty map, e.g. on restore).
  void reserve(std::size_t n) {
    drain(draining_.size());
    current_.reserve(n);
  }

 private:
  void before_insert() {
    drain(kMovesPerInsert);
    // Would this insert rehash `current`? Then it drains into a new table
    // with room for twice as many (reserved now: one zeroed allocation).
    if (!draining_.empty() ||
        static_cast<double>(current_.size() + 1) <=
            static_cast<double>(current_.bucket_count()) * static_cast<double>(current_.max_load_factor())) {
      return;
    }
    draining_.swap(current_);
    current_.reserve(2 * draining_.size() + 16);
    drain(kMovesPerInsert);
  }

  void drain(std::size_t moves) {
    for (std::size_t i = 0; i < moves && !draining_.empty(); ++i) current_.insert(draining_.extract(draining_.begin()));
    if (draining_.empty() && draining_.bucket_count() > 1) Table().swap(draining_);  // free its buckets
  }

  Table current_;
  Table draining_;
};

}  // namespace leasehold
