// The io_uring engine: one ring per loader, owned by the one thread that calls read()
// (the loader's I/O thread). A layer is read as independent chunk reads, queue_depth of them
// in flight, straight into the pre-touched slot. Not linked: a short read in a link chain
// cancels the rest (man io_uring_enter(2)). Completions arrive in any order and are matched
// to their chunk by user_data = chunk index. No SQPOLL: for a few large requests per layer
// the syscall cost is noise and the poller would burn one of our two cores (docs/io.md).
#include <liburing.h>
#include <sys/uio.h>

#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "lib/io/engine.h"

namespace ork::io {
namespace {

constexpr uint64_t kCancelTag = uint64_t{1} << 63;  // user_data of cancel requests
constexpr int kUringAgainRetries = 64;              // per chunk; 6.x retries itself

struct Pending {
  Chunk chunk;
  uint64_t got = 0;  // bytes in place at the start of the chunk
  int again = 0;
};

class UringEngine final : public ReadEngine {
 public:
  UringEngine(const StreamFile& file, unsigned depth) : file_(file), depth_(depth) {}
  ~UringEngine() override {
    if (ring_up_) io_uring_queue_exit(&ring_);
  }
  EngineKind kind() const override { return EngineKind::kUring; }
  Status setup(std::span<const std::span<std::byte>> slots, const UringOptions& options,
               std::vector<std::string>* fallbacks, bool* registered);
  Status read(const ReadPlan& plan, size_t slot_index, std::span<std::byte> slot) override;

 private:
  void register_slots(std::span<const std::span<std::byte>> slots, uint64_t max_iovec,
                      std::vector<std::string>* fallbacks);
  io_uring_sqe* next_sqe();
  void submit_chunk(size_t index, const ReadPlan& plan, size_t slot_index, std::byte* slot);
  Status handle_completion(size_t index, int res, const ReadPlan& plan);
  void submit_ready(size_t* next, const ReadPlan& plan, size_t slot_index, std::byte* slot);
  size_t reap(io_uring_cqe* cqe, const ReadPlan& plan, Status* failure);
  int wait_one(io_uring_cqe** cqe);
  void cancel_and_drain();

  const StreamFile& file_;
  unsigned depth_;
  io_uring ring_{};
  bool ring_up_ = false;
  bool fixed_file_ = false;
  bool fixed_buffers_ = false;
  uint64_t max_iovec_ = 0;
  std::vector<unsigned> first_buf_;  // per slot: index of its first registered iovec
  std::vector<const std::byte*> base_;  // per slot: its start (a read may land past it: TensorReader's `at`)
  std::vector<Pending> pending_;     // per chunk of the current read (reused)
  std::deque<size_t> to_submit_;     // chunks waiting for a submission queue entry
  std::vector<bool> in_flight_;
  unsigned in_flight_count_ = 0;
  unsigned cancels_in_flight_ = 0;
};

Status UringEngine::setup(std::span<const std::span<std::byte>> slots,
                          const UringOptions& options, std::vector<std::string>* fallbacks,
                          bool* registered) {
  // Twice the depth: room for one cancel per read in flight on close.
  const int rc = file_.os().uring_queue_init(depth_ * 2, &ring_, 0);
  if (rc < 0) return make_error(rc, fmt::format("io_uring setup refused: {}", errno_text(rc)));
  ring_up_ = true;
  io_uring_probe* probe = io_uring_get_probe_ring(&ring_);
  const bool can_read = probe != nullptr && io_uring_opcode_supported(probe, IORING_OP_READ);
  if (probe != nullptr) io_uring_free_probe(probe);
  if (!can_read) return make_error(-ENOSYS, "io_uring setup refused: no IORING_OP_READ");
  const int fd = file_.fd();
  fixed_file_ = file_.os().uring_register_files(&ring_, &fd, 1) == 0;  // small win only
  if (options.register_buffers) register_slots(slots, options.max_iovec_bytes, fallbacks);
  *registered = fixed_buffers_;
  return {};
}

// Registered buffers save the per-I/O page pinning under O_DIRECT. Each iovec is at most
// 1 GiB (-EFAULT beyond, verified on 6.18) and the total is charged to RLIMIT_MEMLOCK
// (-ENOMEM without CAP_IPC_LOCK): a refusal means plain reads, not an error.
void UringEngine::register_slots(std::span<const std::span<std::byte>> slots,
                                 uint64_t max_iovec, std::vector<std::string>* fallbacks) {
  std::vector<iovec> iovecs;
  for (const auto& slot : slots) {
    first_buf_.push_back(static_cast<unsigned>(iovecs.size()));
    base_.push_back(slot.data());
    for (uint64_t off = 0; off < slot.size(); off += max_iovec) {
      const uint64_t n = std::min<uint64_t>(max_iovec, slot.size() - off);
      iovecs.push_back(iovec{slot.data() + off, static_cast<size_t>(n)});
    }
  }
  const int rc = file_.os().uring_register_buffers(&ring_, iovecs.data(),
                                                   static_cast<unsigned>(iovecs.size()));
  if (rc == 0) {
    fixed_buffers_ = true;
    max_iovec_ = max_iovec;
    return;
  }
  first_buf_.clear();
  base_.clear();
  fallbacks->push_back(fmt::format("io_uring buffer registration refused ({}) -> plain reads",
                                   errno_text(rc)));
}

io_uring_sqe* UringEngine::next_sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {  // queue full: hand what we have to the kernel, then retry
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

void UringEngine::submit_chunk(size_t index, const ReadPlan& plan, size_t slot_index,
                               std::byte* slot) {
  const Pending& p = pending_[index];
  const uint64_t slot_off = p.chunk.slot_offset + p.got;
  const unsigned len = static_cast<unsigned>(p.chunk.length - p.got);
  const uint64_t off = p.chunk.file_offset + p.got;
  io_uring_sqe* sqe = next_sqe();
  const int fd = fixed_file_ ? 0 : file_.fd();
  // A fixed read must lie inside one registered iovec; chunk_bytes | max_iovec keeps it so
  // for a read from the slot's start, and a read further in is checked.
  const uint64_t at = slot_index < base_.size() ? static_cast<uint64_t>(slot - base_[slot_index]) + slot_off : 0;
  if (fixed_buffers_ && plan.chunk_bytes <= max_iovec_ && slot_index < first_buf_.size() &&
      at / max_iovec_ == (at + len - 1) / max_iovec_) {
    const int buf = static_cast<int>(first_buf_[slot_index] + at / max_iovec_);
    io_uring_prep_read_fixed(sqe, fd, slot + slot_off, len, off, buf);
  } else {
    io_uring_prep_read(sqe, fd, slot + slot_off, len, off);
  }
  if (fixed_file_) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, index);
  in_flight_[index] = true;
  ++in_flight_count_;
  counters_.max_in_flight = std::max<uint64_t>(counters_.max_in_flight, in_flight_count_);
}

// One completion of chunk `index`. Returns an error to abort the read; otherwise the chunk
// is either complete or queued again (short read, EINTR, EAGAIN).
Status UringEngine::handle_completion(size_t index, int res, const ReadPlan& plan) {
  Pending& p = pending_[index];
  if (res == -EINTR || (res == -EAGAIN && ++p.again <= kUringAgainRetries)) {
    ++counters_.retries;
    to_submit_.push_back(index);
    return {};
  }
  if (res < 0) {
    return make_error(res, fmt::format("io_uring read {} at offset {} ({} bytes): {}",
                                       file_.path(), p.chunk.file_offset + p.got,
                                       p.chunk.length - p.got, errno_text(res)));
  }
  if (res == 0 && p.got < p.chunk.need) {
    return eof_error(file_, p.chunk.file_offset + p.got, plan.need_end);
  }
  p.got += static_cast<uint64_t>(res);
  if (res == 0 || p.got >= p.chunk.need) return {};
  ++counters_.short_reads;
  if (p.got % plan.align_bytes != 0) {  // O_DIRECT: an unaligned remainder cannot be read in place
    if (file_ends_at(file_, p.chunk.file_offset + p.got)) return eof_error(file_, p.chunk.file_offset + p.got, plan.need_end);
    p.got = 0;  // start the chunk over
  }
  to_submit_.push_back(index);
  return {};
}

// Waits for one CQE; EINTR retried, a 100 ms timeout returns -ETIME so the caller can look
// at the cancel flag. *cqe is only valid when 0 is returned (axboe/liburing#1252).
int UringEngine::wait_one(io_uring_cqe** cqe) {
  __kernel_timespec timeout{.tv_sec = 0, .tv_nsec = 100'000'000};
  int rc;
  do {
    rc = io_uring_wait_cqe_timeout(&ring_, cqe, &timeout);
  } while (rc == -EINTR);
  return rc;
}

// Fills the ring up to its depth: chunks to resubmit (short reads, -EAGAIN) first, then new
// ones from *next.
void UringEngine::submit_ready(size_t* next, const ReadPlan& plan, size_t slot_index,
                               std::byte* slot) {
  const size_t n = plan.chunk_count();
  while (in_flight_count_ < depth_ && (!to_submit_.empty() || *next < n)) {
    size_t index;
    if (!to_submit_.empty()) {
      index = to_submit_.front();
      to_submit_.pop_front();
    } else {
      index = (*next)++;
      ++counters_.chunks;
    }
    submit_chunk(index, plan, slot_index, slot);
  }
}

// Reaps cqe and every completion already queued behind it; returns how many chunks finished
// whole. The first error lands in *failure and stops the reaping.
size_t UringEngine::reap(io_uring_cqe* cqe, const ReadPlan& plan, Status* failure) {
  size_t done = 0;
  do {
    const uint64_t tag = io_uring_cqe_get_data64(cqe);
    const int res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    if (tag & kCancelTag) {
      --cancels_in_flight_;
      continue;
    }
    const size_t index = static_cast<size_t>(tag);
    in_flight_[index] = false;
    --in_flight_count_;
    const size_t before = to_submit_.size();
    const Pending& p = pending_[index];
    Status st = handle_completion(
        index, file_.os().uring_completion(res, p.chunk.length - p.got), plan);
    if (!st && failure->ok()) *failure = st;
    if (st && to_submit_.size() == before) ++done;
  } while (failure->ok() && io_uring_peek_cqe(&ring_, &cqe) == 0);
  return done;
}

Status UringEngine::read(const ReadPlan& plan, size_t slot_index, std::span<std::byte> slot) {
  if (slot.size() < plan.slot_bytes()) {
    return make_error(-EINVAL, fmt::format("slot of {} bytes is smaller than the {} bytes read",
                                           slot.size(), plan.slot_bytes()));
  }
  const size_t n = plan.chunk_count();
  pending_.assign(n, Pending{});
  in_flight_.assign(n, false);
  to_submit_.clear();
  for (size_t i = 0; i < n; ++i) pending_[i].chunk = plan.chunk(i);
  size_t next = 0;
  size_t done = 0;
  Status failure;
  while (done < n) {
    if (cancel_requested()) {  // before submitting more: a close stops new reads at once
      ++counters_.cancelled;
      failure = make_error(-ECANCELED, "read cancelled: the loader is closing");
      break;
    }
    submit_ready(&next, plan, slot_index, slot.data());
    io_uring_submit(&ring_);
    io_uring_cqe* cqe = nullptr;
    const int rc = wait_one(&cqe);
    if (rc == -ETIME) continue;
    if (rc < 0) {
      failure = make_error(rc, fmt::format("io_uring wait: {}", errno_text(rc)));
      break;
    }
    done += reap(cqe, plan, &failure);
    if (!failure.ok()) break;
  }
  if (in_flight_count_ > 0 || cancels_in_flight_ > 0) cancel_and_drain();
  return failure;
}

// Teardown order (io_uring_prep_cancel(3); docs/io.md facts): cancel every read in flight, then
// reap every CQE, the cancels' own included, before the slot may be reused or freed. A read the
// device has already started cannot be stopped (-EALREADY); draining waits for it.
void UringEngine::cancel_and_drain() {
  for (size_t i = 0; i < in_flight_.size(); ++i) {
    if (!in_flight_[i]) continue;
    io_uring_sqe* sqe = next_sqe();
    io_uring_prep_cancel64(sqe, i, 0);
    io_uring_sqe_set_data64(sqe, kCancelTag | i);
    ++cancels_in_flight_;
  }
  io_uring_submit(&ring_);
  while (in_flight_count_ > 0 || cancels_in_flight_ > 0) {
    io_uring_cqe* cqe = nullptr;
    const int rc = wait_one(&cqe);
    if (rc == -ETIME) continue;
    if (rc < 0) break;  // the ring is unusable; queue_exit in the destructor reaps the rest
    const uint64_t tag = io_uring_cqe_get_data64(cqe);
    io_uring_cqe_seen(&ring_, cqe);
    if (tag & kCancelTag) {
      --cancels_in_flight_;
    } else {
      in_flight_[static_cast<size_t>(tag)] = false;
      --in_flight_count_;
    }
  }
}

}  // namespace

Status probe_uring(FileOs& os) {
  io_uring ring{};
  const int rc = os.uring_queue_init(4, &ring, 0);
  if (rc < 0) return make_error(rc, fmt::format("io_uring setup refused: {}", errno_text(rc)));
  io_uring_probe* probe = io_uring_get_probe_ring(&ring);
  const bool can_read = probe != nullptr && io_uring_opcode_supported(probe, IORING_OP_READ);
  if (probe != nullptr) io_uring_free_probe(probe);
  io_uring_queue_exit(&ring);
  if (!can_read) return make_error(-ENOSYS, "io_uring setup refused: no IORING_OP_READ");
  return {};
}

Result<std::unique_ptr<ReadEngine>> make_uring_engine(const StreamFile& file,
                                                      std::span<const std::span<std::byte>> slots,
                                                      const UringOptions& options,
                                                      std::vector<std::string>* fallbacks,
                                                      bool* registered) {
  if (options.queue_depth == 0 || options.queue_depth > 256) {
    return make_error(-EINVAL, fmt::format("io_uring queue depth {}: must be 1..256",
                                           options.queue_depth));
  }
  auto engine = std::make_unique<UringEngine>(file, options.queue_depth);
  Status st = engine->setup(slots, options, fallbacks, registered);
  if (!st) return st.error();
  return std::unique_ptr<ReadEngine>(std::move(engine));
}

}  // namespace ork::io
