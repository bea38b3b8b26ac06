// A map bounded by bytes, not by a count, that evicts by a clock (second chance): O(1)
// lookup, insert and eviction, and entries grouped by an owner id (a weights id, a BO serial)
// so that everything an owner made can be dropped without a scan of the whole cache. Used by
// the runner's contexts (lib/matmul/run.h) and the emulator's prepared weights
// (driver/emu/npu/weight_cache.h); not synchronised (callers lock).
//
// The index is one flat open-addressed table (linear probing, at most a quarter full, deletion
// by backward shift) whose slot holds the key, the value itself and the entry's reference bit,
// so a hit reads the slot and nothing else: a decode loop looks up one context per call among
// hundreds, and a slot that pointed to a node read a line of the node too, and a recency list
// wrote the neighbours' nodes on every hit (docs/library.md "What grows with the model's
// size"). For the runner's key and value a slot is one cache line (run.h checks it).
//
// Recency is a clock: a hit sets the entry's reference bit (a write only when it was clear,
// so a loop that fits dirties nothing), and eviction sweeps a hand over the slots, clearing
// the bits it meets and evicting the first entry whose bit is clear. A new entry starts with
// its bit clear (a build is not a hit) and is never evicted by its own insert. What a user
// relies on holds: within an eviction, an entry found since the hand last passed it goes only
// when no entry unfound since then is left. Unlike a strict LRU, a loop over more entries
// than fit does not evict exactly the one it needs next (the hand's order is the table's).
// What only inserts and drops read (an entry's bytes, its group) lives in a node per entry.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ork {

// A process-wide, never-repeating stamp for ByteLru::generation(): one counter for every cache,
// so a stamp one cache handed out is never another's (starts at 1: 0 is no cache's).
inline uint64_t next_lru_generation() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

template <class Key, class Value, class Hash = std::hash<Key>>
class ByteLru {
  struct Slot;

 public:
  // The bytes of one slot of the index, a multiple of the cache line (the slot is aligned
  // to it): a hit reads one slot, so for small keys and values one line.
  static constexpr size_t slot_bytes() { return sizeof(Slot); }

  explicit ByteLru(size_t capacity_bytes) : capacity_(capacity_bytes) {}
  ByteLru(const ByteLru&) = delete;
  ByteLru& operator=(const ByteLru&) = delete;

  // The entry of `key`, marked referenced; nullptr when absent. The pointer is valid until
  // the next insert, erase, set_capacity or clear (entries move within the index).
  Value* find(const Key& key) {
    const size_t at = locate(key, mix(Hash{}(key)));
    if (at == kNone) return nullptr;
    Slot& s = slots_[at];
    if (!s.referenced) s.referenced = true;  // no store when already set: a hot loop writes nothing
    return &s.value;
  }

  // Inserts `value` (replacing the entry of the same key), then evicts by the clock until
  // bytes() <= capacity(), never the new entry. With `keep_new` the new entry is kept even
  // alone over the bound (until the next insert: the caller is about to use it); without,
  // an entry bigger than the whole bound is not kept and evicts nothing. Returns the stored
  // value (valid as find's), or nullptr when it was not kept.
  Value* insert(const Key& key, uint64_t group, Value value, size_t bytes, bool keep_new) {
    erase(key);
    if (!keep_new && bytes > capacity_) return nullptr;
    // At most a quarter full: a slot is a line, so each further probe of a hit is a line more
    // (linear probing's expected probes, 1.31 at half full, are 1.17 at a quarter).
    if (4 * (size_ + 1) > slots_.size()) grow();
    const uint32_t node = new_node(group, bytes);
    const uint64_t h = mix(Hash{}(key));
    size_t i = h & mask();
    while (slots_[i].hash != 0) i = (i + 1) & mask();
    slots_[i].hash = h;
    slots_[i].key = key;
    slots_[i].value = std::move(value);
    slots_[i].node = node;
    slots_[i].referenced = false;
    nodes_[node].slot = static_cast<uint32_t>(i);
    ++size_;
    bytes_ += bytes;
    evict(node);
    return &slots_[nodes_[node].slot].value;
  }

  bool erase(const Key& key) {
    const size_t at = locate(key, mix(Hash{}(key)));
    if (at == kNone) return false;
    drop(at);
    return true;
  }

  // Drops every entry of `group` for which pred(key, value) holds; returns how many.
  template <class Pred>
  size_t erase_group_if(uint64_t group, Pred pred) {
    auto g = groups_.find(group);
    if (g == groups_.end()) return 0;
    size_t n = 0;
    for (uint32_t at = g->second; at != kNil;) {
      const uint32_t next = nodes_[at].next;  // read first: drop() frees the node (and the group with its last)
      const Slot& s = slots_[nodes_[at].slot];
      if (pred(s.key, s.value)) {
        drop(nodes_[at].slot);
        ++n;
      }
      at = next;
    }
    return n;
  }
  size_t erase_group(uint64_t group) {
    return erase_group_if(group, [](const Key&, const Value&) { return true; });
  }

  void set_capacity(size_t bytes) {
    capacity_ = bytes;
    evict(kNil);
  }
  void clear() {
    generation_ = next_lru_generation();
    slots_.clear();
    nodes_.clear();
    free_nodes_.clear();
    groups_.clear();
    size_ = 0;
    bytes_ = 0;
    hand_ = 0;
  }

  // The cache's stamp, new (process-wide, next_lru_generation) whenever an entry is dropped
  // (erase, eviction, clear): while it is unchanged, every value a find() or insert() of this
  // cache returned under it is still in the cache, under the same key, at the same address
  // for a value that points elsewhere (a shared_ptr's object). A holder that remembers
  // what it found with the stamp may skip find() while the stamp stands
  // (lib/matmul/run.h ContextMemo), and the clock loses nothing by it: the hand clears bits only in an
  // eviction sweep, which ends in a drop, so an entry whose bit was cleared since its last
  // find() is always looked up again.
  uint64_t generation() const { return generation_; }
  size_t capacity() const { return capacity_; }
  size_t bytes() const { return bytes_; }
  size_t size() const { return size_; }
  uint64_t evictions() const { return evictions_; }  // entries dropped by the bound
  // Every entry, in no particular order (tests, diagnostics); marks nothing.
  template <class Fn>
  void for_each(Fn fn) const {
    for (const Slot& s : slots_)
      if (s.hash != 0) fn(s.key, s.value);
  }

 private:
  static constexpr uint32_t kNil = ~uint32_t{0};
  static constexpr size_t kNone = ~size_t{0};
  // What a hit reads: the hash, the key it compares, the value, the bit. One cache line
  // for the runner's contexts (a 32-byte key and a shared_ptr).
  struct alignas(64) Slot {
    uint64_t hash = 0;  // 0: empty (mix() never returns 0)
    Key key{};
    Value value{};
    uint32_t node = kNil;  // its entry's node in nodes_
    bool referenced = false;
  };
  // What only an insert, a drop and a group's walk read. Indices, not pointers: nodes_ grows.
  struct Node {
    size_t bytes = 0;
    uint64_t group = 0;
    uint32_t slot = 0;                  // where its entry is in slots_ (kept as entries move)
    uint32_t prev = kNil, next = kNil;  // the other members of its group
  };

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
      if (s.hash == h && s.key == key) return i;
    }
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_ = std::vector<Slot>(old.empty() ? 16 : 2 * old.size());
    for (Slot& s : old) {
      if (s.hash == 0) continue;
      size_t i = s.hash & mask();
      while (slots_[i].hash != 0) i = (i + 1) & mask();
      nodes_[s.node].slot = static_cast<uint32_t>(i);
      slots_[i] = std::move(s);
    }
    hand_ = 0;
  }
  uint32_t new_node(uint64_t group, size_t bytes) {
    uint32_t n;
    if (!free_nodes_.empty()) {
      n = free_nodes_.back();
      free_nodes_.pop_back();
    } else {
      n = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    auto [g, fresh] = groups_.try_emplace(group, n);
    nodes_[n] = Node{bytes, group, 0, kNil, fresh ? kNil : g->second};
    if (!fresh) {
      nodes_[g->second].prev = n;
      g->second = n;
    }
    return n;
  }
  void free_node(uint32_t n) {
    Node& node = nodes_[n];
    if (node.next != kNil) nodes_[node.next].prev = node.prev;
    if (node.prev != kNil) nodes_[node.prev].next = node.next;
    else if (node.next != kNil) groups_[node.group] = node.next;
    else groups_.erase(node.group);
    bytes_ -= node.bytes;
    free_nodes_.push_back(n);
  }
  // Drops the entry in slot `i`: its node, then the slot, shifting back the entries after it
  // that probed past it so that no lookup stops early at the hole (linear probing's deletion,
  // no tombstones). Entries only move back into the hole, so a hand at `i` meets them next.
  void drop(size_t i) {
    generation_ = next_lru_generation();
    free_node(slots_[i].node);
    for (size_t j = (i + 1) & mask(); slots_[j].hash != 0; j = (j + 1) & mask()) {
      const size_t home = slots_[j].hash & mask();
      if (((j - home) & mask()) >= ((j - i) & mask())) {  // its home is at or before i
        nodes_[slots_[j].node].slot = static_cast<uint32_t>(i);
        slots_[i] = std::move(slots_[j]);
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
  }
  // The clock: while over the bound, the hand clears the bits it meets and evicts the first
  // entry whose bit is clear, passing over `keep` (the entry being inserted, or kNil).
  void evict(uint32_t keep) {
    while (bytes_ > capacity_ && size_ > (keep != kNil ? 1u : 0u)) {
      Slot& s = slots_[hand_];
      if (s.hash == 0 || s.node == keep) {
        hand_ = (hand_ + 1) & mask();
      } else if (s.referenced) {
        s.referenced = false;
        hand_ = (hand_ + 1) & mask();
      } else {
        drop(hand_);  // the hand stays: the next entry of its run moved here
        ++evictions_;
      }
    }
  }

  std::vector<Slot> slots_;  // the index: a power of two of slots, at most a quarter in use
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_nodes_;
  std::unordered_map<uint64_t, uint32_t> groups_;  // group -> its first member's node
  size_t size_ = 0, hand_ = 0;
  size_t bytes_ = 0, capacity_;
  uint64_t evictions_ = 0;
  uint64_t generation_ = next_lru_generation();
};

}  // namespace ork
