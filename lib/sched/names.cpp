#include "lib/sched/names.h"

#include <algorithm>
#include <bit>
#include <functional>

namespace ork::sched {

namespace {
uint32_t tag_of(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
}  // namespace

NameTable::NameTable(size_t expected) : recent_(kRecent, 0) {
  slots_.resize(std::bit_ceil(std::max<size_t>(16, expected * 2)));
  entries_.reserve(expected);  // untouched capacity costs no page
}

bool NameTable::matches(uint32_t entry, std::string_view name, uint64_t hash) const {
  const Entry& e = entries_[entry];
  return e.hash == hash && std::string_view(e.data, e.size) == name;
}

size_t NameTable::probe(std::string_view name, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {  // linear probing; the table is never full
    const Slot& s = slots_[i];
    if (s.entry == 0 || (s.tag == tag_of(hash) && matches(s.entry - 1, name, hash))) return i;
  }
}

int NameTable::find(std::string_view name) const {
  const uint64_t hash = std::hash<std::string_view>{}(name);
  uint32_t& hint = recent_[hash % kRecent];
  if (hint != 0 && matches(hint - 1, name, hash)) return entries_[hint - 1].id;
  uint32_t entry = 0;
  if (next_ != 0 && next_ <= entries_.size() && matches(next_ - 1, name, hash)) {
    entry = next_;
  } else if (frontier_ != 0 && frontier_ != next_ && frontier_ <= entries_.size() &&
             matches(frontier_ - 1, name, hash)) {
    entry = frontier_;
  } else {
    ++index_lookups_;
    entry = slots_[probe(name, hash)].entry;
    if (entry == 0) return -1;
  }
  hint = entry;
  next_ = entry + 1;
  frontier_ = std::max(frontier_, next_);
  return entries_[entry - 1].id;
}

void NameTable::grow() {
  std::vector<Slot>(slots_.size() * 2).swap(slots_);  // entries stay: only the index is rebuilt
  const size_t mask = slots_.size() - 1;
  for (size_t e = 0; e < entries_.size(); ++e) {
    size_t i = entries_[e].hash & mask;
    while (slots_[i].entry != 0) i = (i + 1) & mask;
    slots_[i] = {static_cast<uint32_t>(e + 1), tag_of(entries_[e].hash)};
  }
}

void NameTable::prefetch(std::string_view name) const {
  const uint64_t hash = std::hash<std::string_view>{}(name);
  __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
}

int NameTable::insert(std::string_view name, int id) {
  const uint64_t hash = std::hash<std::string_view>{}(name);
  size_t at = probe(name, hash);
  if (slots_[at].entry != 0) return entries_[slots_[at].entry - 1].id;
  if ((entries_.size() + 1) * 2 > slots_.size()) {
    grow();
    at = probe(name, hash);
  }
  entries_.push_back({name.data(), static_cast<uint32_t>(name.size()), id, hash});
  const auto entry = static_cast<uint32_t>(entries_.size());
  slots_[at] = {entry, tag_of(hash)};
  recent_[hash % kRecent] = entry;
  return id;
}

}  // namespace ork::sched
