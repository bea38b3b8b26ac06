// Names to dense ids for the parser and the stream checks: one flat open-addressing table
// of (hash, id) slots, so that a 1M-op stream costs no node allocation per name (a
// std::unordered_map<std::string, int> allocated a node and a string per entry and was a
// fifth of a 1M-op schedule's time, docs/sched.md "Speed").
//
// The table stores views: the caller keeps the named text alive and unmoved while the table
// is used (the parser's input text; a finalized stream's op and buffer names).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ork::sched {

class NameTable {
 public:
  explicit NameTable(size_t expected = 0);

  // The id stored for `name`, or -1.
  int find(std::string_view name) const;
  // Stores name -> id when the name is new and returns id; else returns the stored id.
  int insert(std::string_view name, int id);
  size_t size() const { return count_; }

 private:
  // The name's bytes are in the slot (pointer and length), so a lookup touches the slot and
  // the text only: on 1M-name tables every touch is a cache miss.
  struct Slot {
    const char* data = nullptr;
    uint32_t size = 0;
    int id = -1;  // -1: empty
    uint64_t hash = 0;
  };
  size_t probe(std::string_view name, uint64_t hash) const;  // the slot holding name, or an empty one
  // Streams name what they declared a few lines before (a load's buffer, a wait's start):
  // a small direct-mapped cache of recent slots, which stays in the CPU's cache, answers
  // most lookups without touching the large table.
  static constexpr size_t kRecent = 4096;
  mutable std::vector<uint32_t> recent_;  // hash % kRecent -> slot index + 1 (0: none)
  void grow();

  std::vector<Slot> slots_;  // a power of two, at most 1/2 full
  size_t count_ = 0;
};

}  // namespace ork::sched
