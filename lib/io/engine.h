// A read engine fills one slot with one layer's bytes, blocking until they are all there.
// The loader (loader.h) decides which layer goes into which slot and on which thread; the
// engine only moves bytes. Engines: pread (one chunk at a time), io_uring (several chunks
// in flight), mmap (a copy out of the mapping).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/io/read_plan.h"
#include "lib/io/stream_file.h"

namespace ork::io {

enum class EngineKind { kPread, kUring, kMmap };
const char* engine_name(EngineKind kind);

// Counters an engine keeps; read by the loader under its lock after each read.
struct EngineCounters {
  uint64_t chunks = 0;         // reads issued (not counting resubmissions)
  uint64_t short_reads = 0;    // completions with 0 < result < asked: remainder resubmitted
  uint64_t retries = 0;        // EINTR / EAGAIN reissues
  uint64_t cancelled = 0;      // reads cancelled by close
  uint64_t max_in_flight = 0;  // most reads outstanding at once (io_uring; 1 for pread)
};

class ReadEngine {
 public:
  virtual ~ReadEngine() = default;
  virtual EngineKind kind() const = 0;
  // Reads plan's range into `slot` (slot.size() >= plan.slot_bytes()). `slot_index` names
  // the slot for engines that registered the slots' memory.
  virtual Status read(const ReadPlan& plan, size_t slot_index, std::span<std::byte> slot) = 0;
  // Called from another thread on close: the read in progress returns -ECANCELED soon, with
  // nothing of it left in flight, and so does every later one.
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  const EngineCounters& counters() const { return counters_; }

 protected:
  bool cancel_requested() const { return cancelled_.load(std::memory_order_relaxed); }
  EngineCounters counters_;

 private:
  std::atomic<bool> cancelled_{false};
};

// The pread engine, blocking, one chunk at a time.
std::unique_ptr<ReadEngine> make_pread_engine(const StreamFile& file);

// The mmap engine: maps the whole file once; a read is a memcpy out of the mapping.
Result<std::unique_ptr<ReadEngine>> make_mmap_engine(const StreamFile& file);

struct UringOptions {
  unsigned queue_depth = 8;            // chunk reads in flight
  bool register_buffers = true;        // try io_uring_register_buffers on the slots
  uint64_t max_iovec_bytes = uint64_t{1} << 30;  // kernel limit per registered iovec (1 GiB)
};

// The io_uring engine. On a refused setup it returns the error and the loader falls back to
// the pread engine; a refused registration is not an error (see *fallbacks).
// `slots` are registered as fixed buffers when allowed.
Result<std::unique_ptr<ReadEngine>> make_uring_engine(const StreamFile& file,
                                                      std::span<const std::span<std::byte>> slots,
                                                      const UringOptions& options,
                                                      std::vector<std::string>* fallbacks,
                                                      bool* registered);

// Whether io_uring can be set up here with IORING_OP_READ (a throwaway ring); the error
// names why not (EPERM: sysctl or seccomp; ENOSYS: no kernel support or no liburing).
Status probe_uring(FileOs& os);

// "unexpected end of file": the message a read that ran off the end of the file returns.
Error eof_error(const StreamFile& file, uint64_t offset, uint64_t need_end);

// Whether the file, as it is now (fstat), ends at or before `offset`. Under O_DIRECT a short
// read that ends unaligned cannot be continued in place, so the engines read the chunk again
// from its start; when the file was cut short under the reader at an odd byte, the kernel
// ends every such read there, and reading again would return the same bytes for ever. Asked
// on an unaligned short read: true is that end (an error), false a short read to retry.
bool file_ends_at(const StreamFile& file, uint64_t offset);

}  // namespace ork::io
