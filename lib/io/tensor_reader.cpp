// The tensor reader's I/O thread (tensor_reader.h).
#include "lib/io/tensor_reader.h"

#include <algorithm>
#include <chrono>
#include <new>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "lib/io/read_modes.h"

namespace ork::io {
namespace {

int64_t reader_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr uint64_t kPackedAlign = 4096;  // the packed file aligns every tensor to 4 KiB (lib/exec/pack_file.h)

}  // namespace

Result<std::unique_ptr<TensorReader>> TensorReader::open(const std::string& path, std::vector<std::span<std::byte>> slots,
                                                         double rate_cap_bytes_per_ns, FileOs& os) {
  if (!(rate_cap_bytes_per_ns >= 0)) return make_error(-EINVAL, fmt::format("read rate cap {}: must be >= 0", rate_cap_bytes_per_ns));
  ReaderInfo info;
  const ReadModes modes = apply_io_env({}, /*use_env=*/true, &info.fallbacks);
  auto file = StreamFile::open(os, path, modes.direct, &info.fallbacks);
  if (!file) return file.error();
  const ReaderOptions o{.uring = modes.uring,
                        .uring_options = UringOptions{.register_buffers = modes.register_buffers},
                        .rate_cap_bytes_per_ns = rate_cap_bytes_per_ns};
  const uint32_t align = file->align_bytes();
  if (align > kPackedAlign || o.chunk_bytes % align != 0)
    return make_error(-EINVAL, fmt::format("{}: O_DIRECT alignment {} is larger than the packed file's 4 KiB", path, align));
  return start(std::move(*file), std::move(slots), o, std::move(info));
}

Result<std::unique_ptr<TensorReader>> TensorReader::start(StreamFile file, std::vector<std::span<std::byte>> slots,
                                                          const ReaderOptions& options, ReaderInfo info) {
  if (!(options.rate_cap_bytes_per_ns >= 0))
    return make_error(-EINVAL, fmt::format("read rate cap {}: must be >= 0", options.rate_cap_bytes_per_ns));
  std::unique_ptr<TensorReader> r(new TensorReader());
  r->options_ = options;
  r->info_ = std::move(info);
  r->file_ = std::move(file);
  r->slots_ = std::move(slots);
  r->info_.direct = r->file_.direct();
  r->info_.align = r->file_.align_bytes();
  if (options.mmap) {
    auto e = make_mmap_engine(r->file_);
    if (!e) return e.error();
    r->engine_ = std::move(*e);
  } else {
    r->engine_ = make_read_engine(r->file_, r->slots_, options.uring, options.uring_options, &r->info_.fallbacks,
                                  &r->info_.registered);
  }
  r->info_.kind = r->engine_->kind();
  r->info_.engine = engine_name(r->info_.kind);
  if (options.threaded) r->thread_ = std::thread([p = r.get()] { p->loop(); });
  return r;
}

TensorReader::~TensorReader() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
    jobs_.clear();
  }
  if (engine_) engine_->cancel();  // the read in progress returns -ECANCELED, drained
  cv_job_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TensorReader::submit(int id, int slot, uint64_t offset, uint64_t bytes, bool urgent, uint64_t at) {
  submit(id, slot, std::vector<Range>{{offset, bytes, at}}, urgent);
}

uint64_t TensorReader::Job::bytes() const {
  uint64_t sum = 0;
  for (const Range& r : ranges) sum += r.bytes;
  return sum;
}

void TensorReader::submit(int id, int slot, std::vector<Range> ranges, bool urgent) {
  {
    std::lock_guard lk(mu_);
    const auto need = static_cast<size_t>(id) + 1;
    if (done_.size() < need) {
      done_.resize(need, 0);
      errors_.resize(need);
    }
    done_[static_cast<size_t>(id)] = 0;
    Job job{id, slot, std::move(ranges)};
    if (urgent) {
      jobs_.push_front(std::move(job));
    } else {
      jobs_.push_back(std::move(job));
    }
  }
  cv_job_.notify_one();
}

bool TensorReader::withdraw(int id) {
  std::lock_guard lk(mu_);
  const auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& j) { return j.id == id; });
  if (it == jobs_.end()) return false;
  jobs_.erase(it);
  return true;
}

TensorReader::ReadState TensorReader::state(int id) const {
  std::lock_guard lk(mu_);
  const int d = done_.at(static_cast<size_t>(id));
  if (d > 0) return ReadState::kDone;
  if (d < 0) return ReadState::kFailed;
  return reading_ == id ? ReadState::kReading : ReadState::kQueued;
}

Status TensorReader::wait(int id, bool* hit) {
  std::unique_lock lk(mu_);
  const auto i = static_cast<size_t>(id);
  *hit = done_.at(i) != 0;
  while (!options_.threaded && done_[i] == 0 && !jobs_.empty()) {  // no thread: the reads run here, in order
    const Job job = std::move(jobs_.front());
    jobs_.pop_front();
    reading_ = job.id;
    lk.unlock();
    run(job);
    lk.lock();
  }
  if (!options_.threaded && done_[i] == 0) return make_error(-EINVAL, fmt::format("read {}: not queued", id));
  cv_done_.wait(lk, [&] { return done_[i] != 0; });
  if (done_[i] < 0) return errors_[i];
  return {};
}

std::vector<TensorReader::Timing> TensorReader::timings() const {
  std::lock_guard lk(mu_);
  return timings_;
}

uint64_t TensorReader::bytes_read() const {
  std::lock_guard lk(mu_);
  return bytes_;
}

TensorReader::Totals TensorReader::totals() const {
  std::lock_guard lk(mu_);
  return totals_;
}

Status TensorReader::read(const Job& job) {
  if (job.ranges.empty()) return make_error(-EINVAL, fmt::format("read {}: no range", job.id));
  for (const Range& r : job.ranges)
    if (Status s = read_range(job.slot, r); !s) return s;
  return {};
}

Status TensorReader::read_range(int slot_index, const Range& r) {
  auto plan = plan_read({r.offset, r.bytes}, info_.align, options_.chunk_bytes);
  std::span<std::byte> slot = slots_[static_cast<size_t>(slot_index)];
  if (!plan) return plan.error();
  if (r.at > slot.size() || r.at % std::max<uint64_t>(info_.align, 1) != 0)
    return make_error(-EINVAL, fmt::format("a read into slot {} at byte {}: past its {} bytes or off the alignment {}",
                                           slot_index, r.at, slot.size(), info_.align));
  slot = slot.subspan(r.at);
  if ((plan->head_bytes != 0 && !options_.allow_head) || plan->slot_bytes() > slot.size())
    return make_error(-EINVAL, fmt::format("tensor at {} ({} bytes) does not fit slot {} of {} bytes", r.offset, r.bytes,
                                           slot_index, slot.size()));
  return engine_->read(*plan, static_cast<size_t>(slot_index), slot);
}

void TensorReader::run(const Job& job) {
  const int64_t t0 = reader_now_ns();
  const uint64_t first = job.ranges.empty() ? 0 : job.ranges.front().offset;  // the file offset errors name
  Status st;
  try {  // the reading thread's own: what it calls may throw (std::bad_alloc), the read fails with it
    st = read(job);
  } catch (const std::bad_alloc&) {
    st = make_error(-ENOMEM, fmt::format("out of host memory reading the tensor at {} ({} bytes)", first, job.bytes()));
  } catch (const std::exception& e) {
    st = make_error(-EIO, fmt::format("reading the tensor at {}: {}", first, e.what()));
  }
  if (st && options_.rate_cap_bytes_per_ns > 0)  // the capped disk: this read takes at least bytes / rate
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(
        t0 + static_cast<int64_t>(static_cast<double>(job.bytes()) / options_.rate_cap_bytes_per_ns))));
  const int64_t t1 = reader_now_ns();
  {
    std::lock_guard lk(mu_);
    if (!st) errors_[static_cast<size_t>(job.id)] = st.error();
    done_[static_cast<size_t>(job.id)] = st ? 1 : -1;
    reading_ = -1;
    if (options_.keep_timings) timings_.push_back({job.id, t0, t1});
    totals_.io_ns += static_cast<uint64_t>(t1 - t0);
    totals_.engine = engine_->counters();
    if (st) {
      ++totals_.reads_ok;
      bytes_ += job.bytes();
    }
  }
  cv_done_.notify_all();
}

void TensorReader::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lk(mu_);
      cv_job_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      reading_ = job.id;
    }
    run(job);
  }
}

}  // namespace ork::io
