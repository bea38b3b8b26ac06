// A least-recently-used map bounded by bytes, not by a count: O(1) lookup (a hash map into
// a recency list), O(1) touch and eviction, and entries grouped by an owner id (a weights
// id, a BO serial) so that everything an owner made can be dropped without a scan of the
// whole cache. Used by the runner's contexts (lib/matmul/run.h) and the emulator's
// prepared weights (driver/emu/npu/weight_cache.h); not synchronised (callers lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <unordered_map>
#include <utility>

namespace ork {

template <class Key, class Value, class Hash = std::hash<Key>>
class ByteLru {
 public:
  explicit ByteLru(size_t capacity_bytes) : capacity_(capacity_bytes) {}
  ByteLru(const ByteLru&) = delete;
  ByteLru& operator=(const ByteLru&) = delete;

  // The entry of `key`, made the most recently used; nullptr when absent.
  Value* find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return &it->second->value;
  }

  // Inserts `value` (replacing the entry of the same key) as the most recently used, then
  // evicts the least recently used until bytes() <= capacity(). With `keep_new` the new
  // entry itself is never evicted (it may exceed the bound alone until the next insert:
  // the caller is about to use it); without, an entry bigger than the bound is not kept.
  // Returns the stored value, or nullptr when it was not kept.
  Value* insert(const Key& key, uint64_t group, Value value, size_t bytes, bool keep_new) {
    erase(key);
    lru_.push_front(Entry{key, std::move(value), bytes, group, {}});
    auto& members = groups_[group];
    members.push_front(lru_.begin());
    lru_.front().in_group = members.begin();
    index_.emplace(key, lru_.begin());
    bytes_ += bytes;
    evict(keep_new ? 1 : 0);
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second->value;
  }

  bool erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    drop(it->second);
    return true;
  }

  // Drops every entry of `group` for which pred(key, value) holds; returns how many.
  template <class Pred>
  size_t erase_group_if(uint64_t group, Pred pred) {
    auto g = groups_.find(group);
    if (g == groups_.end()) return 0;
    size_t n = 0;
    for (auto m = g->second.begin(); m != g->second.end();) {
      auto entry = *m++;
      if (!pred(entry->key, entry->value)) continue;
      ++n;
      if (g->second.size() == 1) {  // drop() erases the group itself with its last member
        drop(entry);
        break;
      }
      drop(entry);
    }
    return n;
  }
  size_t erase_group(uint64_t group) {
    return erase_group_if(group, [](const Key&, const Value&) { return true; });
  }

  void set_capacity(size_t bytes) {
    capacity_ = bytes;
    evict(0);
  }
  void clear() {
    lru_.clear();
    index_.clear();
    groups_.clear();
    bytes_ = 0;
  }

  size_t capacity() const { return capacity_; }
  size_t bytes() const { return bytes_; }
  size_t size() const { return index_.size(); }
  uint64_t evictions() const { return evictions_; }  // entries dropped by the bound
  // Keys from the most to the least recently used (tests, diagnostics).
  template <class Fn>
  void for_each(Fn fn) const {
    for (const Entry& e : lru_) fn(e.key, e.value);
  }

 private:
  struct Entry;
  using Iter = typename std::list<Entry>::iterator;
  struct Entry {
    Key key;
    Value value;
    size_t bytes;
    uint64_t group;
    typename std::list<Iter>::iterator in_group;
  };

  void drop(Iter e) {
    auto g = groups_.find(e->group);
    g->second.erase(e->in_group);
    if (g->second.empty()) groups_.erase(g);
    bytes_ -= e->bytes;
    index_.erase(e->key);
    lru_.erase(e);
  }
  // Evicts from the back while over the bound, keeping the `keep` most recent entries.
  void evict(size_t keep) {
    while (bytes_ > capacity_ && lru_.size() > keep) {
      drop(std::prev(lru_.end()));
      ++evictions_;
    }
  }

  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<Key, Iter, Hash> index_;
  std::unordered_map<uint64_t, std::list<Iter>> groups_;
  size_t bytes_ = 0, capacity_;
  uint64_t evictions_ = 0;
};

}  // namespace ork
