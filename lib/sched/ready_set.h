// A set of positions 0..n-1 kept as a three-level bitset: insert, erase and "first / next
// position in the set" cost a few word operations, with no allocation after construction.
// It replaces std::set<int> for listSchedule's ready queues, which allocated a tree node per
// ready op (docs/sched.md "Speed"); iteration is in increasing position, i.e. in priority order.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace ork::sched::detail {

class ReadySet {
 public:
  explicit ReadySet(int n = 0)
      : n_(n), l0_(words(n)), l1_(words(static_cast<int>(l0_.size()))), l2_(words(static_cast<int>(l1_.size()))) {}

  void insert(int pos) {
    if (set(l0_, pos)) ++count_;
    set(l1_, pos >> 6);
    set(l2_, pos >> 12);
  }
  void erase(int pos) {
    uint64_t& w0 = l0_[static_cast<size_t>(pos >> 6)];
    const uint64_t bit = uint64_t{1} << (pos & 63);
    if (!(w0 & bit)) return;
    --count_;
    w0 &= ~bit;
    if (w0) return;
    uint64_t& w1 = l1_[static_cast<size_t>(pos >> 12)];
    w1 &= ~(uint64_t{1} << ((pos >> 6) & 63));
    if (w1) return;
    l2_[static_cast<size_t>(pos >> 18)] &= ~(uint64_t{1} << ((pos >> 12) & 63));
  }
  bool contains(int pos) const { return (l0_[static_cast<size_t>(pos >> 6)] >> (pos & 63)) & 1; }
  bool empty() const { return count_ == 0; }
  int size() const { return count_; }

  // The smallest position >= from in the set, or -1.
  int next(int from) const {
    if (from < 0) from = 0;
    if (from >= n_) return -1;
    if (int p = in_word(l0_, from); p >= 0) return p;
    const int w0 = (from >> 6) + 1;  // the next word of level 0
    if (w0 >= static_cast<int>(l0_.size())) return -1;
    if (int w = in_word(l1_, w0); w >= 0) return lowest(l0_, w);
    const int w1 = (w0 >> 6) + 1;  // the next word of level 1
    if (w1 >= static_cast<int>(l1_.size())) return -1;
    if (int w = in_word(l2_, w1); w >= 0) return lowest(l0_, lowest(l1_, w));
    for (int i = (w1 >> 6) + 1; i < static_cast<int>(l2_.size()); ++i)
      if (l2_[static_cast<size_t>(i)])
        return lowest(l0_, lowest(l1_, i * 64 + std::countr_zero(l2_[static_cast<size_t>(i)])));
    return -1;
  }
  int first() const { return empty() ? -1 : next(0); }

  struct Iterator {
    const ReadySet* set;
    int pos;
    int operator*() const { return pos; }
    Iterator& operator++() {
      pos = set->next(pos + 1);
      return *this;
    }
    bool operator!=(const Iterator& o) const { return pos != o.pos; }
  };
  Iterator begin() const { return {this, first()}; }
  Iterator end() const { return {this, -1}; }

 private:
  static std::vector<uint64_t> words(int bits) { return std::vector<uint64_t>(static_cast<size_t>(bits + 63) / 64 + 1, 0); }
  static bool set(std::vector<uint64_t>& v, int i) {
    uint64_t& w = v[static_cast<size_t>(i >> 6)];
    const uint64_t bit = uint64_t{1} << (i & 63);
    const bool fresh = !(w & bit);
    w |= bit;
    return fresh;
  }
  // The lowest set bit >= i within i's word, or -1.
  static int in_word(const std::vector<uint64_t>& v, int i) {
    const uint64_t bits = v[static_cast<size_t>(i >> 6)] & (~uint64_t{0} << (i & 63));
    return bits ? (i & ~63) + std::countr_zero(bits) : -1;
  }
  // The lowest set bit of word w (non-empty).
  static int lowest(const std::vector<uint64_t>& v, int w) {
    return w * 64 + std::countr_zero(v[static_cast<size_t>(w)]);
  }

  int n_ = 0, count_ = 0;
  std::vector<uint64_t> l0_, l1_, l2_;
};

}  // namespace ork::sched::detail
