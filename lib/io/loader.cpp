// LayerLoader at run time: load() / prefetch() on the compute thread, the reads on the tensor
// reader's thread (the predictive-prefetch design, docs/io.md: a request already queued is not
// queued twice, a miss jumps the queue, L+1 prefetched after each load so it materialises
// during the compute of L).
#include <chrono>

#include <fmt/format.h>

#include "lib/io/loader.h"

namespace ork::io {
namespace {

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

LayerLoader::~LayerLoader() {
  reader_.reset();  // the read in progress cancelled and drained, the thread joined, before the slots go
}

std::span<const std::byte> LayerLoader::layer_bytes(size_t slot_index) const {
  const Slot& slot = slots_[slot_index];
  const ReadPlan& plan = plans_[slot.layer];
  return slot.buffer.bytes().subspan(plan.head_bytes, plan.layer_bytes);
}

Result<std::span<const std::byte>> LayerLoader::load(size_t layer) {
  if (layer >= layers_.size()) {
    return make_error(-EINVAL, fmt::format("layer {}: out of range, the file has {} layers",
                                           layer, layers_.size()));
  }
  if (!stats_.async) return load_sync(layer);
  std::unique_lock<std::mutex> lk(mutex_);
  return load_async(layer, lk);
}

// One slot, filled on the caller's thread: every new layer is a miss whose wait is the I/O.
Result<std::span<const std::byte>> LayerLoader::load_sync(size_t layer) {
  Slot& slot = slots_[0];
  {
    std::lock_guard<std::mutex> lk(mutex_);
    ++stats_.loads;
    if (slot.state == SlotState::kReady && slot.layer == layer) {
      ++stats_.hits;
      return layer_bytes(0);
    }
    ++stats_.misses;
    slot.layer = layer;
    slot.state = SlotState::kLoading;
  }
  const uint64_t t0 = now_ns();
  reader_->submit(0, 0, layers_[layer].offset, layers_[layer].length);
  bool hit = false;
  Status st = reader_->wait(0, &hit);  // no reader thread: the read runs here
  std::lock_guard<std::mutex> lk(mutex_);
  stats_.wait_ns += now_ns() - t0;
  slot.state = st ? SlotState::kReady : SlotState::kEmpty;
  if (!st) return st.error();
  current_ = 0;
  return layer_bytes(0);
}

Result<std::span<const std::byte>> LayerLoader::load_async(size_t layer,
                                                           std::unique_lock<std::mutex>& lk) {
  ++stats_.loads;
  refresh();
  int s = find_slot(layer);
  if (s >= 0 && slots_[s].state == SlotState::kReady) {
    ++stats_.hits;
  } else {
    ++stats_.misses;
    if (s < 0) {
      auto v = claim_for_load(layer);
      if (!v) return v.error();
      s = *v;
    } else if (slots_[s].state == SlotState::kQueued && reader_->withdraw(s)) {
      queue_job(static_cast<size_t>(s), layer, /*urgent=*/true);  // jump the queue
    }
    const uint64_t t0 = now_ns();
    lk.unlock();
    bool hit = false;
    Status st = reader_->wait(s, &hit);
    lk.lock();
    stats_.wait_ns += now_ns() - t0;
    slots_[s].state = st ? SlotState::kReady : SlotState::kFailed;
    if (!st) slots_[s].error = st.error();
  }
  Slot& slot = slots_[s];
  if (slot.state == SlotState::kFailed) {
    Error error = slot.error;
    slot.state = SlotState::kEmpty;  // a later load may try again
    return error;
  }
  slot.tick = ++tick_;
  slot.consumed = true;
  current_ = s;
  if (options_.auto_prefetch) {
    for (size_t k = 1; k <= options_.prefetch_depth; ++k) {
      const size_t next = layer + k;
      if (next >= layers_.size() && !options_.wrap) break;
      prefetch_locked(next % layers_.size());
    }
  }
  return layer_bytes(static_cast<size_t>(s));
}

// A slot for a load that missed, its read queued first. A victim still queued is withdrawn
// from the reader; one whose read started meanwhile is Loading, and another is chosen. Always
// found: the reader reads one slot at a time, and the current slot qualifies.
Result<int> LayerLoader::claim_for_load(size_t layer) {
  for (size_t tries = 0; tries <= slots_.size(); ++tries) {
    const int v = pick_victim(/*for_load=*/true);
    if (v < 0) break;
    if (slots_[v].state == SlotState::kQueued && !reader_->withdraw(v)) {
      slots_[v].state = SlotState::kLoading;
      continue;
    }
    queue_job(static_cast<size_t>(v), layer, /*urgent=*/true);
    return v;
  }
  return make_error(-EBUSY, fmt::format("layer {}: no slot to load it into, every slot is being read", layer));
}

Status LayerLoader::prefetch(size_t layer) {
  if (layer >= layers_.size()) {
    return make_error(-EINVAL, fmt::format("prefetch of layer {}: out of range, the file has "
                                           "{} layers", layer, layers_.size()));
  }
  if (!stats_.async) return {};
  std::lock_guard<std::mutex> lk(mutex_);
  prefetch_locked(layer);
  return {};
}

void LayerLoader::prefetch_locked(size_t layer) {
  refresh();
  if (find_slot(layer) >= 0) return;  // de-dup: already there, queued or loading
  const int s = pick_victim(/*for_load=*/false);  // never a slot handed to the reader
  if (s < 0) {
    ++stats_.prefetch_dropped;
    return;
  }
  slots_[s].tick = ++tick_;
  queue_job(static_cast<size_t>(s), layer, /*urgent=*/false);
}

void LayerLoader::refresh() {
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.state != SlotState::kQueued && s.state != SlotState::kLoading) continue;
    switch (reader_->state(static_cast<int>(i))) {
      case TensorReader::ReadState::kQueued: break;
      case TensorReader::ReadState::kReading: s.state = SlotState::kLoading; break;
      case TensorReader::ReadState::kDone: s.state = SlotState::kReady; break;
      case TensorReader::ReadState::kFailed: {
        bool hit = false;
        s.error = reader_->wait(static_cast<int>(i), &hit).error();  // done: returns at once
        s.state = SlotState::kFailed;
        break;
      }
    }
  }
}

void LayerLoader::set_prefetch_depth(size_t depth) {
  std::lock_guard<std::mutex> lk(mutex_);
  options_.prefetch_depth = std::min(depth, options_.n_slots - 1);
  stats_.prefetch_depth = options_.prefetch_depth;
}

int LayerLoader::find_slot(size_t layer) const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.layer == layer && s.state != SlotState::kEmpty && s.state != SlotState::kFailed) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// An empty slot first, else the least recently used one. Never a slot being filled. A
// prefetch takes only a free slot: never the current one (its bytes are in use), nor one
// queued or filled for a load still to come; a load may take any of them, since the caller
// has moved on.
int LayerLoader::pick_victim(bool for_load) const {
  int best = -1;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.state == SlotState::kLoading) continue;
    if (!for_load && (static_cast<int>(i) == current_ || s.state == SlotState::kQueued ||
                      (s.state == SlotState::kReady && !s.consumed))) {
      continue;
    }
    if (s.state == SlotState::kEmpty || s.state == SlotState::kFailed) return static_cast<int>(i);
    if (best < 0 || s.tick < slots_[best].tick) best = static_cast<int>(i);
  }
  return best;
}

// The slot is not in the reader's queue (empty, read, or just withdrawn): its read goes in.
void LayerLoader::queue_job(size_t slot_index, size_t layer, bool urgent) {
  Slot& slot = slots_[slot_index];
  slot.layer = layer;
  slot.state = SlotState::kQueued;
  slot.consumed = false;
  const Extent& e = layers_[layer];
  reader_->submit(static_cast<int>(slot_index), static_cast<int>(slot_index), e.offset, e.length, urgent);
}

LoaderStats LayerLoader::stats() const {
  std::lock_guard<std::mutex> lk(mutex_);
  LoaderStats s = stats_;
  const TensorReader::Totals t = reader_->totals();  // the reads: the reader's figures
  s.io_ns = t.io_ns;
  s.layers_read = t.reads_ok;
  s.bytes_read = reader_->bytes_read();
  s.engine_counters = t.engine;
  return s;
}

}  // namespace ork::io
