// Asynchronous jobs (ork_matmul_submit, ork_batch_submit; ork_job_wait, ork_job_release):
// what a job is inside, and each device's queue of them (docs/library.md "Asynchronous jobs
// and batches"). Everything here runs with the device's mutex held (device.h).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "driver/kmd/kmd.h"
#include "lib/api/buffer.h"
#include "lib/api/handles.h"
#include "lib/api/stats.h"
#include "lib/api/tensor.h"
#include "lib/matmul/job.h"
#include "ork/ork.h"

struct ork_batch;

namespace ork::api {

// Where one matmul of a job puts its C: the matmul job (lib/matmul/job.h) writes the dense
// `c`; at completion it is scattered into a strided C and C's CPU access ends.
struct JobStep {
  Operand c_op;
  TensorRef c_ref;
  BufferUse c_use;                  // C's buffer cannot be destroyed while the job runs
  std::vector<uint8_t> c_scratch;   // a strided C is unpacked here, then scattered
  void* c = nullptr;                // the dense C the unpack writes
  bool c_started = false;           // C's dma-buf CPU access begun (ended at completion)
};

enum class JobState {
  in_flight,  // on the device (or, for a several-submit matmul, its first submit is)
  done,       // completed: `status` / `error` are its outcome
  closed,     // its device was closed before it was waited: waited there, result discarded
};

}  // namespace ork::api

struct ork_job {
  ork::api::Live<ork::api::HandleKind::job> live{this};  // until released (handles.h)
  ork_device* device = nullptr;  // null once the device was closed
  ork::api::JobState state = ork::api::JobState::in_flight;
  bool waited = false;   // ork_job_wait returned its outcome: a second wait is refused
  bool discard = false;  // released unwaited: completed without writing C
  std::vector<ork::api::JobStep> steps;
  // The one kernel job of its matmuls (null on cpu): holds their contexts until it
  // completes, also if the runner's cache evicts them meanwhile.
  std::unique_ptr<ork::matmul::Job> mm;
  std::unique_ptr<ork::api::CallMeter> meter;        // accounts the job at its completion
  ork_stats* stats_out = nullptr;                    // options.stats: filled at completion
  ork_status status = ORK_OK;                        // the outcome once done
  std::string error;                                 // its ork_last_error()
};

namespace ork::api {

// A device's jobs: in flight in submission order, and every job not yet released.
class JobQueue {
 public:
  explicit JobQueue(ork_device& device) : device_(device) {}
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  // A new job: tracked until released; in flight unless already done (cpu).
  void add(ork_job* job);
  // Completes in-flight jobs in submission order up to and including `job` within
  // `timeout_ms` (-1: no limit). ORK_E_TIMEOUT naming "still in flight" when the time ran
  // out first (`job` stays in flight); ORK_OK otherwise (the job's outcome is in it).
  ork_status complete_through(ork_job* job, int64_t timeout_ms);
  // Completes every in-flight job (their outcomes stay in them).
  void complete_all();
  // The owner releases `job`: completed first (discarding C) if still in flight.
  void release(ork_job* job);
  // The device closing: every in-flight job is waited for on the device, its result
  // discarded; every job and batch loses its device.
  void close();

  // Weights going: every in-flight job completes; batches using them refuse from now on.
  void drop_weights(const ork_weights* weights);
  void add_batch(ork_batch* b) { batches_.insert(b); }
  void remove_batch(ork_batch* b) { batches_.erase(b); }
  bool empty() const { return inflight_.empty(); }

 private:
  // The front job: its matmul job completed within timeout_ms (or drained when discarded),
  // then every step's C scattered. false: still in flight after timeout_ms.
  bool complete_front(int64_t timeout_ms);
  void settle(ork_job& job, ork_status status);

  ork_device& device_;
  std::deque<ork_job*> inflight_;  // submission order
  std::set<ork_job*> live_;        // every job not yet released
  std::set<ork_batch*> batches_;
};

}  // namespace ork::api
