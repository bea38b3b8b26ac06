#include "lib/sched/names.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace ork::sched {

namespace {

uint32_t tag_of(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }

// The 128-bit product's halves folded: every input bit reaches every output bit.
uint64_t fold_multiply(uint64_t a, uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

uint64_t load64(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

uint32_t load32(const char* p) {
  uint32_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

// The last n bytes, 0 < n < 8, as one word (wyhash's way: two overlapping loads, or three
// bytes); the caller mixes n in, which tells the overlaps apart.
uint64_t tail_word(const char* p, size_t n) {
  if (n >= 4) return uint64_t{load32(p + n - 4)} << 32 | load32(p);
  const auto byte = [&](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])}; };
  return byte(0) << 16 | byte(n / 2) << 8 | byte(n - 1);
}

}  // namespace

// A word at a time through a multiply-fold (the mixing step of wyhash, Wang Yi's public
// domain hash): std::hash's byte-wise murmur was 7 % of parse_stream at 1M ops, where the
// names are 2-20 bytes. The constants are 2^64 / phi and a large odd number.
uint64_t NameTable::hash(std::string_view name) {
  constexpr uint64_t kPhi = 0x9e3779b97f4a7c15ull, kOdd = 0xd6e8feb86659fd93ull;
  uint64_t h = fold_multiply(kPhi ^ name.size(), kOdd);  // mixed first: a plain xor of the length cancelled tail bytes
  const char* p = name.data();
  size_t n = name.size();
  for (; n >= 8; p += 8, n -= 8) h = fold_multiply(h ^ load64(p), kOdd);
  if (n > 0) h = fold_multiply(h ^ tail_word(p, n), kOdd);
  return fold_multiply(h, kPhi);
}

NameTable::NameTable(size_t expected) {
  slots_.resize(std::bit_ceil(std::max<size_t>(16, expected * 2)));
  entries_.reserve(expected);  // untouched capacity costs no page
}

bool NameTable::matches(uint32_t entry, std::string_view name, uint64_t hash) const {
  const Entry& e = entries_[entry];
  return e.hash == hash && e.name() == name;
}

size_t NameTable::probe(std::string_view name, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {  // linear probing; the table is never full
    const Slot& s = slots_[i];
    if (s.entry == 0 || (s.tag == tag_of(hash) && matches(s.entry - 1, name, hash))) return i;
  }
}

int NameTable::find(std::string_view name) const { return find(name, hash(name), guesses_); }

int NameTable::find(std::string_view name, uint64_t hash, Guesses& guesses) const {
  uint32_t& hint = guesses.recent[hash % Guesses::kRecent];
  if (hint != 0 && hint <= entries_.size() && matches(hint - 1, name, hash)) return entries_[hint - 1].id;
  uint32_t entry = 0;
  const uint32_t next = guesses.next, frontier = guesses.frontier;
  if (next != 0 && next <= entries_.size() && matches(next - 1, name, hash)) {
    entry = next;
  } else if (frontier != 0 && frontier != next && frontier <= entries_.size() && matches(frontier - 1, name, hash)) {
    entry = frontier;
  } else {
    ++guesses.index_lookups;
    entry = slots_[probe(name, hash)].entry;
    if (entry == 0) return -1;
  }
  hint = entry;
  guesses.next = entry + 1;
  guesses.frontier = std::max(frontier, guesses.next);
  return entries_[entry - 1].id;
}

uint64_t NameTable::index_lookups() const { return guesses_.index_lookups; }

void NameTable::grow() {
  std::vector<Slot>(slots_.size() * 2).swap(slots_);  // entries stay: only the index is rebuilt
  const size_t mask = slots_.size() - 1;
  for (size_t e = 0; e < entries_.size(); ++e) {
    size_t i = entries_[e].hash & mask;
    while (slots_[i].entry != 0) i = (i + 1) & mask;
    slots_[i] = {static_cast<uint32_t>(e + 1), tag_of(entries_[e].hash)};
  }
}

int NameTable::insert(std::string_view name, uint64_t hash, int id) {
  size_t at = probe(name, hash);
  if (slots_[at].entry != 0) return entries_[slots_[at].entry - 1].id;
  if ((entries_.size() + 1) * 2 > slots_.size()) {
    grow();
    at = probe(name, hash);
  }
  Entry& e = entries_.emplace_back();
  e.hash = hash;
  e.id = id;
  e.size = static_cast<uint32_t>(name.size());
  if (name.size() > kInline) e.data = name.data();
  else std::memcpy(e.bytes, name.data(), name.size());
  const auto entry = static_cast<uint32_t>(entries_.size());
  slots_[at] = {entry, tag_of(hash)};
  guesses_.recent[hash % Guesses::kRecent] = entry;
  return id;
}

}  // namespace ork::sched
