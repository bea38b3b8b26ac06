#include "lib/sched/names.h"

#include <algorithm>
#include <bit>
#include <functional>

namespace ork::sched {

NameTable::NameTable(size_t expected) : recent_(kRecent, 0) {
  slots_.resize(std::bit_ceil(std::max<size_t>(16, expected * 2)));
}

size_t NameTable::probe(std::string_view name, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {  // linear probing; the table is never full
    const Slot& s = slots_[i];
    if (s.id < 0 || (s.hash == hash && std::string_view(s.data, s.size) == name)) return i;
  }
}

int NameTable::find(std::string_view name) const {
  const uint64_t hash = std::hash<std::string_view>{}(name);
  uint32_t& hint = recent_[hash % kRecent];
  if (hint != 0) {
    const Slot& s = slots_[hint - 1];
    if (s.hash == hash && std::string_view(s.data, s.size) == name) return s.id;
  }
  const size_t at = probe(name, hash);
  if (slots_[at].id >= 0) hint = static_cast<uint32_t>(at + 1);
  return slots_[at].id;
}

void NameTable::grow() {
  std::fill(recent_.begin(), recent_.end(), 0);  // slot indices change
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id < 0) continue;
    size_t i = s.hash & mask;
    while (slots_[i].id >= 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

int NameTable::insert(std::string_view name, int id) {
  const uint64_t hash = std::hash<std::string_view>{}(name);
  size_t at = probe(name, hash);
  if (slots_[at].id >= 0) return slots_[at].id;
  if ((count_ + 1) * 2 > slots_.size()) {
    grow();
    at = probe(name, hash);
  }
  slots_[at] = {name.data(), static_cast<uint32_t>(name.size()), id, hash};
  recent_[hash % kRecent] = static_cast<uint32_t>(at + 1);
  ++count_;
  return id;
}

}  // namespace ork::sched
