// A least-recently-used map bounded by bytes, not by a count: O(1) lookup, touch and
// eviction, and entries grouped by an owner id (a weights id, a BO serial) so that
// everything an owner made can be dropped without a scan of the whole cache. Used by the
// runner's contexts (lib/matmul/run.h) and the emulator's prepared weights
// (driver/emu/npu/weight_cache.h); not synchronised (callers lock).
//
// The index is one flat open-addressed table of {hash, entry} pairs (16 bytes, four to a
// cache line; linear probing, at most half full, deletion by backward shift), so a hit reads
// one line of the index and then the entry's own node: a decode loop looks up one context
// per call among hundreds, and a node-based hash map read a bucket line and a node line of
// that weight's on each (docs/library.md "What grows with the model's size").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ork {

template <class Key, class Value, class Hash = std::hash<Key>>
class ByteLru {
 public:
  explicit ByteLru(size_t capacity_bytes) : capacity_(capacity_bytes) {}
  ByteLru(const ByteLru&) = delete;
  ByteLru& operator=(const ByteLru&) = delete;

  // The entry of `key`, made the most recently used; nullptr when absent.
  Value* find(const Key& key) {
    const size_t at = locate(key, mix(Hash{}(key)));
    if (at == kNone) return nullptr;
    Iter e = slots_[at].entry;
    lru_.splice(lru_.begin(), lru_, e);
    return &e->value;
  }

  // Inserts `value` (replacing the entry of the same key) as the most recently used, then
  // evicts the least recently used until bytes() <= capacity(). With `keep_new` the new
  // entry itself is never evicted (it may exceed the bound alone until the next insert:
  // the caller is about to use it); without, an entry bigger than the bound is not kept.
  // Returns the stored value, or nullptr when it was not kept.
  Value* insert(const Key& key, uint64_t group, Value value, size_t bytes, bool keep_new) {
    erase(key);
    lru_.push_front(Entry{std::move(value), key, bytes, group, {}});
    auto& members = groups_[group];
    members.push_front(lru_.begin());
    lru_.front().in_group = members.begin();
    add_to_index(mix(Hash{}(key)), lru_.begin());
    bytes_ += bytes;
    evict(keep_new ? 1 : 0);
    const size_t at = locate(key, mix(Hash{}(key)));
    return at == kNone ? nullptr : &slots_[at].entry->value;
  }

  bool erase(const Key& key) {
    const size_t at = locate(key, mix(Hash{}(key)));
    if (at == kNone) return false;
    drop(slots_[at].entry);
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
    slots_.clear();
    groups_.clear();
    size_ = 0;
    bytes_ = 0;
  }

  size_t capacity() const { return capacity_; }
  size_t bytes() const { return bytes_; }
  size_t size() const { return size_; }
  uint64_t evictions() const { return evictions_; }  // entries dropped by the bound
  // Keys from the most to the least recently used (tests, diagnostics).
  template <class Fn>
  void for_each(Fn fn) const {
    for (const Entry& e : lru_) fn(e.key, e.value);
  }

 private:
  struct Entry;
  using Iter = typename std::list<Entry>::iterator;
  struct Entry {  // what a hit reads first: the value, then the key it compares
    Value value;
    Key key;
    size_t bytes;
    uint64_t group;
    typename std::list<Iter>::iterator in_group;
  };
  struct Slot {
    uint64_t hash = 0;  // 0: empty (mix() never returns 0)
    Iter entry{};
  };
  static constexpr size_t kNone = ~size_t{0};

  // The caller's hash spread over every bit (std::hash of an integer is the integer), never 0.
  static uint64_t mix(size_t h) {
    uint64_t x = static_cast<uint64_t>(h) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    return x != 0 ? x : 1;
  }
  size_t mask() const { return slots_.size() - 1; }

  // The slot holding `key`, or kNone.
  size_t locate(const Key& key, uint64_t h) const {
    if (slots_.empty()) return kNone;
    for (size_t i = h & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return kNone;
      if (s.hash == h && s.entry->key == key) return i;
    }
  }
  void add_to_index(uint64_t h, Iter e) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = h & mask();
    while (slots_[i].hash != 0) i = (i + 1) & mask();
    slots_[i] = Slot{h, e};
    ++size_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : 2 * old.size(), Slot{});
    for (const Slot& s : old) {
      if (s.hash == 0) continue;
      size_t i = s.hash & mask();
      while (slots_[i].hash != 0) i = (i + 1) & mask();
      slots_[i] = s;
    }
  }
  // Empties slot `i` and shifts back the entries after it that probed past it, so that no
  // lookup stops early at the hole (linear probing's deletion, no tombstones).
  void remove_slot(size_t i) {
    for (size_t j = (i + 1) & mask(); slots_[j].hash != 0; j = (j + 1) & mask()) {
      const size_t home = slots_[j].hash & mask();
      if (((j - home) & mask()) >= ((j - i) & mask())) {  // its home is at or before i
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
  }

  void drop(Iter e) {
    auto g = groups_.find(e->group);
    g->second.erase(e->in_group);
    if (g->second.empty()) groups_.erase(g);
    bytes_ -= e->bytes;
    remove_slot(locate(e->key, mix(Hash{}(e->key))));
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
  std::vector<Slot> slots_;  // the index: a power of two of slots, at most half in use
  size_t size_ = 0;
  std::unordered_map<uint64_t, std::list<Iter>> groups_;
  size_t bytes_ = 0, capacity_;
  uint64_t evictions_ = 0;
};

}  // namespace ork
