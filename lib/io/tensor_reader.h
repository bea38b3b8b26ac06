// The tensor reader: the one reader of streamed weights, and lib/io's one I/O thread. lib/exec's
// executor streams a packed model's tensors through it (open()); the layer loader of the
// streaming benchmark (loader.h) is a user of it too (start()), its ring of slots kept on top.
// Its I/O thread reads ranges of the file into the caller's slots, in the order they are
// submitted (an urgent read first), with lib/io's engines (io_uring with O_DIRECT and the
// slots registered as fixed buffers; pread and buffered I/O as fallbacks; ORK_IO_NO_URING,
// ORK_IO_NO_DIRECT and ORK_IO_NO_REGISTER force them, read_modes.h; docs/io.md). Every file
// access goes through the FileOs the file was opened with, so the fault tests run this path
// (tests/lib/io).
//
// Threading: submit(), withdraw(), state() and wait() may come from any thread (the executor
// submits on its walking thread and waits on its device thread); what they share is under one
// mutex, and the I/O thread only reads. Without a thread (ReaderOptions::threaded false), a
// read runs on the thread that waits for it, inside wait().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "driver/common/result.h"
#include "lib/io/engine.h"
#include "lib/io/file_os.h"
#include "lib/io/read_plan.h"
#include "lib/io/stream_file.h"

namespace ork::io {

struct ReaderInfo {
  std::string engine;
  EngineKind kind = EngineKind::kPread;
  bool direct = false, registered = false;
  uint32_t align = 1;
  std::vector<std::string> fallbacks;
};

// How start() reads (open() takes the product's: the packed file's 4 KiB-aligned tensors).
struct ReaderOptions {
  uint64_t chunk_bytes = uint64_t{2} << 20;  // 1-4 MiB per read (docs/io.md)
  bool uring = true;                         // io_uring over the slots, else pread
  bool mmap = false;                         // copy out of a read-only mapping instead
  UringOptions uring_options;                // queue depth, registration, iovec bound
  bool threaded = true;                      // an I/O thread; false: reads run inside wait()
  bool allow_head = false;                   // a read may land past its slot's start
  bool keep_timings = true;                  // timings(): one entry per read
  // > 0: no read finishes sooner than its bytes at that rate (the thread sleeps out the
  // rest): a disk of at most that speed, for balanced benchmarks.
  double rate_cap_bytes_per_ns = 0;
};

class TensorReader {
 public:
  // The product's reader: `path` opened as the ORK_IO_NO_* switches allow, tensors aligned
  // to the packed file's 4 KiB. `os`: the file system seam (lib/io/file_os.h); tests pass a
  // fake that fails io_uring completions. It must outlive the reader.
  static Result<std::unique_ptr<TensorReader>> open(const std::string& path, std::vector<std::span<std::byte>> slots,
                                                    double rate_cap_bytes_per_ns = 0,
                                                    FileOs& os = real_file_os());
  // A reader over an opened file and its slots. `info`: what the caller already chose
  // (its fallbacks so far); the engine's choice is added to it.
  static Result<std::unique_ptr<TensorReader>> start(StreamFile file, std::vector<std::span<std::byte>> slots,
                                                     const ReaderOptions& options, ReaderInfo info = {});
  ~TensorReader();  // cancels what is queued and in flight, joins the thread
  TensorReader(const TensorReader&) = delete;
  TensorReader& operator=(const TensorReader&) = delete;

  // Queues a read of [offset, offset + bytes) into slot `slot` from its byte `at` on (a
  // multiple of the file's alignment: several tensors side by side in one slot); `id` names
  // it for wait() (an id is reused once its read is done or withdrawn). `urgent`: before
  // every read queued.
  void submit(int id, int slot, uint64_t offset, uint64_t bytes, bool urgent = false, uint64_t at = 0);
  // One range of a read: [offset, offset + bytes) of the file into its slot from byte `at` on.
  struct Range {
    uint64_t offset = 0, bytes = 0, at = 0;
  };
  // The same for several ranges into one slot under one id, read in order, done when every
  // range is (a fused group's member: its K-slices lie apart in the slot, lib/exec/fusion.h).
  void submit(int id, int slot, std::vector<Range> ranges, bool urgent = false);
  // Drops read `id` if it is still queued (true); false when it has started or is done.
  bool withdraw(int id);
  enum class ReadState { kQueued, kReading, kDone, kFailed };
  ReadState state(int id) const;
  // Blocks until read `id` is done; its own error if it failed. *hit: done before the call.
  Status wait(int id, bool* hit);

  const ReaderInfo& info() const { return info_; }
  const StreamFile& file() const { return file_; }
  struct Timing {
    int id = 0;
    int64_t begin_ns = 0, end_ns = 0;  // steady clock
  };
  std::vector<Timing> timings() const;  // every finished read (ReaderOptions::keep_timings)
  uint64_t bytes_read() const;          // of the reads that succeeded
  struct Totals {
    uint64_t reads_ok = 0, io_ns = 0;   // reads that succeeded; time spent in every read
    EngineCounters engine;              // the engine's counters after the last read
  };
  Totals totals() const;

 private:
  struct Job {
    int id = 0, slot = 0;
    std::vector<Range> ranges;  // in order; one for a tensor read whole
    uint64_t bytes() const;     // the ranges' bytes
  };
  TensorReader() = default;
  void loop();
  void run(const Job& job);     // one read, timed and recorded (the thread's, or wait()'s)
  Status read(const Job& job);  // its ranges into its slot
  Status read_range(int slot, const Range& range);

  StreamFile file_;
  std::unique_ptr<ReadEngine> engine_;
  std::vector<std::span<std::byte>> slots_;
  ReaderOptions options_;
  ReaderInfo info_;
  mutable std::mutex mu_;
  std::condition_variable cv_job_, cv_done_;
  std::deque<Job> jobs_;
  std::vector<int> done_;       // per id: 0 pending, 1 done, -1 failed
  std::vector<Error> errors_;   // per id: its read's error
  int reading_ = -1;            // the id being read
  std::vector<Timing> timings_;
  Totals totals_;
  uint64_t bytes_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ork::io
