// Names to dense ids for the parser and the stream checks: one flat open-addressing table,
// so that a 1M-op stream costs no node allocation per name (a std::unordered_map<std::string,
// int> allocated a node and a string per entry and was a fifth of a 1M-op schedule's time,
// docs/sched.md "Speed").
//
// The table stores views of names longer than 16 bytes (shorter ones are copied): the caller
// keeps the named text alive and unmoved while the table is used (the parser's input text; a
// finalized stream's op and buffer names).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ork::sched {

class NameTable {
 public:
  explicit NameTable(size_t expected = 0);

  // The hash every lookup starts from; a caller that looked ahead (prefetch) passes it back
  // to insert rather than hashing the name twice.
  static uint64_t hash(std::string_view name);

  // What a lookup tries before the index: the table keeps its own for find(name); each thread
  // that looks names up at once passes its own.
  struct Guesses {
    // Streams name what they declared a few lines before (a wait's start): a small
    // direct-mapped cache of recent entries answers those without touching the index.
    static constexpr size_t kRecent = 4096;
    std::vector<uint32_t> recent = std::vector<uint32_t>(kRecent, 0);  // hash % kRecent -> entry index + 1 (0: none)
    // Streams first use their names in the order they declared them (ork_sched's own format
    // and the generators declare every buffer up front): the entry after the last one found
    // by the index is tried next, one sequential read where the index costs a cache and TLB
    // miss.
    uint32_t next = 0;  // entry index + 1 of the guess (0: none)
    // Their first uses interleave with uses of names declared earlier (a decode layer's
    // program reads its new weight and the older activation), which moves next back: the
    // entry after the furthest one found is the second guess, the next name used for the
    // first time.
    uint32_t frontier = 0;  // entry index + 1 of that guess (0: none)
    uint64_t index_lookups = 0;
  };
  // The id stored for `name`, or -1.
  int find(std::string_view name) const;
  // The same with the name's hash and the caller's guesses: the table is only read, so
  // threads may look up at once while nothing is inserted (the parser's op lines, parse.cpp).
  int find(std::string_view name, uint64_t hash, Guesses& guesses) const;
  // Stores name -> id when the name is new and returns id; else returns the stored id.
  int insert(std::string_view name, int id) { return insert(name, hash(name), id); }
  int insert(std::string_view name, uint64_t hash, int id);
  // Starts loading the index slot a name of this hash would probe first, for an insert or
  // find a few names later: a million-name index misses the cache on every new name, one miss
  // at a time otherwise (docs/sched.md section 5, sixth round, for what it gains and what
  // still grows). Callers look ahead in their input (the parser's declare, link_programs) and keep the
  // hash for the insert.
  void prefetch_hash(uint64_t hash) const { __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]); }
  size_t size() const { return entries_.size(); }
  // Finds the guesses did not answer, that went to the index (tests: the guesses' hit rate).
  uint64_t index_lookups() const;

 private:
  // Entries in insertion order, and a hash index of 8-byte slots over them (Python's compact
  // dict). On 1M names the index is 16 MiB where slots holding the entries were 48: a lookup
  // misses the cache once in the index, and the entry and the name's text are near the ones
  // looked up before (streams name what they declared in order).
  // A name of up to kInline bytes is copied into its entry: a match then reads the entry
  // alone, where the name's text, far back in a 57 MB stream, was one more cache miss per
  // lookup (docs/sched.md section 5, "The parse in one pass").
  static constexpr size_t kInline = 16;
  struct Entry {
    uint64_t hash = 0;
    int id = -1;
    uint32_t size = 0;
    union {
      const char* data;  // size > kInline
      char bytes[kInline];
    };
    std::string_view name() const {
      return size > kInline ? std::string_view(data, size) : std::string_view(bytes, size);
    }
  };
  struct Slot {
    uint32_t entry = 0;  // entry index + 1; 0: empty
    uint32_t tag = 0;    // the hash's high half: most mismatches never touch the entry
  };
  bool matches(uint32_t entry, std::string_view name, uint64_t hash) const;
  size_t probe(std::string_view name, uint64_t hash) const;  // the slot holding name, or an empty one
  void grow();

  std::vector<Slot> slots_;  // a power of two, at most 1/2 full
  std::vector<Entry> entries_;
  mutable Guesses guesses_;  // find(name)'s and insert's

};

}  // namespace ork::sched
