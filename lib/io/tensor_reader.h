// The tensor reader: the one reader of streamed weights the product runs (lib/exec's
// executor streams a packed model's tensors through it). Its I/O thread reads tensors from
// the file into the caller's slots, in the order they are submitted, with lib/io's engines
// (io_uring with O_DIRECT and the slots registered as fixed buffers; pread and buffered I/O
// as fallbacks; ORK_IO_NO_URING, ORK_IO_NO_DIRECT and ORK_IO_NO_REGISTER force them,
// read_modes.h, the same choice as the layer loader's; docs/io.md). Every file access goes
// through the FileOs passed to open(), so the fault tests run this path (tests/lib/io).
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
#include "lib/io/stream_file.h"

namespace ork::io {

struct ReaderInfo {
  std::string engine;
  bool direct = false, registered = false;
  uint32_t align = 1;
  std::vector<std::string> fallbacks;
};

class TensorReader {
 public:
  // `rate_cap_bytes_per_ns` > 0: no read finishes sooner than its bytes at that rate (the
  // thread sleeps out the rest): a disk of at most that speed, for balanced benchmarks.
  // `os`: the file system seam (lib/io/file_os.h); tests pass a fake that fails io_uring
  // completions. It must outlive the reader.
  static Result<std::unique_ptr<TensorReader>> open(const std::string& path, std::vector<std::span<std::byte>> slots,
                                                    double rate_cap_bytes_per_ns = 0,
                                                    FileOs& os = real_file_os());
  ~TensorReader();  // cancels what is queued, joins the thread
  TensorReader(const TensorReader&) = delete;
  TensorReader& operator=(const TensorReader&) = delete;

  // Queues a read of [offset, offset + bytes) into slot `slot`; `id` names it for wait().
  void submit(int id, int slot, uint64_t offset, uint64_t bytes);
  // Blocks until read `id` is done. *hit: it was done before the call.
  Status wait(int id, bool* hit);

  const ReaderInfo& info() const { return info_; }
  struct Timing {
    int id = 0;
    int64_t begin_ns = 0, end_ns = 0;  // steady clock
  };
  std::vector<Timing> timings() const;  // every finished read
  uint64_t bytes_read() const;

 private:
  struct Job {
    int id, slot;
    uint64_t offset, bytes;
  };
  TensorReader() = default;
  void loop();
  Status read(const Job& job);  // one tensor into its slot (the I/O thread's)

  StreamFile file_;
  std::unique_ptr<ReadEngine> engine_;
  std::vector<std::span<std::byte>> slots_;
  ReaderInfo info_;
  mutable std::mutex mu_;
  std::condition_variable cv_job_, cv_done_;
  std::deque<Job> jobs_;
  std::vector<int> done_;  // per id: 0 pending, 1 done, -1 failed
  std::vector<Timing> timings_;
  Error error_;
  uint64_t bytes_ = 0;
  double rate_cap_ = 0;  // bytes per ns; 0 = none
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ork::io
