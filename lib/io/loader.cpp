// LayerLoader at run time: load() / prefetch() on the compute thread, fills on the worker
// (the predictive-prefetch design, docs/io.md: worker_loop, enqueue with de-dup, a miss jumps the
// queue, L+1 prefetched after each load so it materialises during the compute of L).
#include <chrono>

#include <new>

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
  {
    std::lock_guard<std::mutex> lk(mutex_);
    stop_ = true;
    jobs_.clear();
  }
  if (engine_) engine_->cancel();  // the fill in progress returns -ECANCELED, drained
  cv_job_.notify_all();
  if (worker_.joinable()) worker_.join();
}

Status LayerLoader::fill(size_t slot_index) {
  Slot& slot = slots_[slot_index];
  const ReadPlan& plan = plans_[slot.layer];
  const uint64_t t0 = now_ns();
  Status st = engine_->read(plan, slot_index, slot.buffer.bytes());
  const uint64_t t1 = now_ns();
  std::lock_guard<std::mutex> lk(mutex_);
  stats_.io_ns += t1 - t0;
  stats_.engine_counters = engine_->counters();
  if (st) {
    ++stats_.layers_read;
    stats_.bytes_read += plan.layer_bytes;
  }
  return st;
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
  Status st = fill(0);
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
  int s = find_slot(layer);
  if (s >= 0 && slots_[s].state == SlotState::kReady) {
    ++stats_.hits;
  } else {
    ++stats_.misses;
    if (s < 0) {
      s = pick_victim(/*for_load=*/true);  // always found: the current slot qualifies
      queue_job(static_cast<size_t>(s), layer, /*urgent=*/true);
    } else if (slots_[s].state == SlotState::kQueued) {
      queue_job(static_cast<size_t>(s), layer, /*urgent=*/true);  // jump the queue
    }
    const uint64_t t0 = now_ns();
    Slot& slot = slots_[s];
    cv_ready_.wait(lk, [&] {
      return slot.state == SlotState::kReady || slot.state == SlotState::kFailed;
    });
    stats_.wait_ns += now_ns() - t0;
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
  if (find_slot(layer) >= 0) return;  // de-dup: already there, queued or loading
  const int s = pick_victim(/*for_load=*/false);
  if (s < 0) {
    ++stats_.prefetch_dropped;
    return;
  }
  slots_[s].tick = ++tick_;
  queue_job(static_cast<size_t>(s), layer, /*urgent=*/false);
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

void LayerLoader::queue_job(size_t slot_index, size_t layer, bool urgent) {
  Slot& slot = slots_[slot_index];
  if (slot.state == SlotState::kQueued) std::erase(jobs_, slot_index);
  slot.layer = layer;
  slot.state = SlotState::kQueued;
  slot.consumed = false;
  if (urgent) {
    jobs_.push_front(slot_index);
  } else {
    jobs_.push_back(slot_index);
  }
  cv_job_.notify_one();
}

// fill() on the worker thread, what it throws (std::bad_alloc under memory pressure) made the
// slot's error, which the caller's load() then returns, instead of std::terminate.
Status LayerLoader::fill_caught(size_t slot_index) noexcept {
  try {
    return fill(slot_index);
  } catch (const std::bad_alloc&) {
    return make_error(-ENOMEM, fmt::format("out of host memory filling slot {} on the I/O worker", slot_index));
  } catch (const std::exception& e) {
    return make_error(-EIO, fmt::format("filling slot {} on the I/O worker failed: {}", slot_index, e.what()));
  }
}

void LayerLoader::worker_loop() {
  std::unique_lock<std::mutex> lk(mutex_);
  for (;;) {
    cv_job_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
    if (stop_) return;
    const size_t s = jobs_.front();
    jobs_.pop_front();
    slots_[s].state = SlotState::kLoading;
    lk.unlock();
    Status st = fill_caught(s);  // unlocked: overlaps the caller's compute
    lk.lock();
    Slot& slot = slots_[s];
    slot.state = st ? SlotState::kReady : SlotState::kFailed;
    if (!st) slot.error = st.error();
    cv_ready_.notify_all();
  }
}

LoaderStats LayerLoader::stats() const {
  std::lock_guard<std::mutex> lk(mutex_);
  return stats_;
}

}  // namespace ork::io
