// The tensor reader's I/O thread (tensor_reader.h).
#include "lib/io/tensor_reader.h"

#include <chrono>
#include <new>
#include <thread>

#include <fmt/format.h>

#include "lib/io/read_modes.h"
#include "lib/io/read_plan.h"

namespace ork::io {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr uint64_t kChunkBytes = uint64_t{2} << 20;  // 1-4 MiB per read (docs/io.md)

}  // namespace

Result<std::unique_ptr<TensorReader>> TensorReader::open(const std::string& path, std::vector<std::span<std::byte>> slots,
                                                         double rate_cap_bytes_per_ns, FileOs& os) {
  if (!(rate_cap_bytes_per_ns >= 0)) return make_error(-EINVAL, fmt::format("read rate cap {}: must be >= 0", rate_cap_bytes_per_ns));
  std::unique_ptr<TensorReader> r(new TensorReader());
  r->rate_cap_ = rate_cap_bytes_per_ns;
  r->slots_ = std::move(slots);
  const ReadModes modes = apply_io_env({}, /*use_env=*/true, &r->info_.fallbacks);
  auto file = StreamFile::open(os, path, modes.direct, &r->info_.fallbacks);
  if (!file) return file.error();
  r->file_ = std::move(*file);
  r->info_.direct = r->file_.direct();
  r->info_.align = r->file_.align_bytes();
  if (r->info_.align > 4096 || kChunkBytes % r->info_.align != 0)
    return make_error(-EINVAL, fmt::format("{}: O_DIRECT alignment {} is larger than the packed file's 4 KiB", path,
                                           r->info_.align));
  r->engine_ = make_read_engine(r->file_, r->slots_, modes.uring, UringOptions{.register_buffers = modes.register_buffers},
                                &r->info_.fallbacks, &r->info_.registered);
  r->info_.engine = engine_name(r->engine_->kind());
  r->thread_ = std::thread([p = r.get()] { p->loop(); });
  return r;
}

TensorReader::~TensorReader() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
    jobs_.clear();
  }
  if (engine_) engine_->cancel();
  cv_job_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TensorReader::submit(int id, int slot, uint64_t offset, uint64_t bytes) {
  {
    std::lock_guard lk(mu_);
    if (done_.size() <= static_cast<size_t>(id)) done_.resize(static_cast<size_t>(id) + 1, 0);
    done_[static_cast<size_t>(id)] = 0;
    jobs_.push_back({id, slot, offset, bytes});
  }
  cv_job_.notify_one();
}

Status TensorReader::wait(int id, bool* hit) {
  std::unique_lock lk(mu_);
  *hit = done_.at(static_cast<size_t>(id)) != 0;
  cv_done_.wait(lk, [&] { return done_[static_cast<size_t>(id)] != 0; });
  if (done_[static_cast<size_t>(id)] < 0) return error_;
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

Status TensorReader::read(const Job& job) {
  auto plan = plan_read({job.offset, job.bytes}, info_.align, kChunkBytes);
  std::span<std::byte> slot = slots_[static_cast<size_t>(job.slot)];
  if (!plan) return plan.error();
  if (plan->head_bytes != 0 || plan->slot_bytes() > slot.size())
    return make_error(-EINVAL, fmt::format("tensor at {} ({} bytes) does not fit slot {} of {} bytes", job.offset, job.bytes,
                                           job.slot, slot.size()));
  return engine_->read(*plan, static_cast<size_t>(job.slot), slot);
}

void TensorReader::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lk(mu_);
      cv_job_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = jobs_.front();
      jobs_.pop_front();
    }
    const int64_t t0 = now_ns();
    Status st;
    try {  // the thread's own: what it calls may throw (std::bad_alloc), the read fails with it
      st = read(job);
    } catch (const std::bad_alloc&) {
      st = make_error(-ENOMEM, fmt::format("out of host memory reading the tensor at {} ({} bytes)", job.offset, job.bytes));
    } catch (const std::exception& e) {
      st = make_error(-EIO, fmt::format("reading the tensor at {}: {}", job.offset, e.what()));
    }
    if (st && rate_cap_ > 0)  // the capped disk: this read takes at least bytes / rate
      std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(
          t0 + static_cast<int64_t>(static_cast<double>(job.bytes) / rate_cap_))));
    const int64_t t1 = now_ns();
    {
      std::lock_guard lk(mu_);
      if (!st) error_ = st.error();
      done_[static_cast<size_t>(job.id)] = st ? 1 : -1;
      timings_.push_back({job.id, t0, t1});
      if (st) bytes_ += job.bytes;
    }
    cv_done_.notify_all();
  }
}

}  // namespace ork::io
