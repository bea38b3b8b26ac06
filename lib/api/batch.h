// Batches (ork_batch_*): matmuls recorded once and replayed as one kernel job, their tasks
// chained per core (docs/library.md "Asynchronous jobs and batches").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "driver/kmd/kmd.h"
#include "lib/api/backend.h"
#include "lib/api/buffer.h"
#include "lib/api/handles.h"
#include "lib/api/tensor.h"
#include "lib/matmul/context.h"
#include "lib/matmul/run.h"
#include "ork/ork.h"

namespace ork::api {

// One matmul of a batch: its operands as resolved at ork_batch_add_matmul (held: their
// buffers cannot be destroyed while the batch lives) and, once recorded, its own context.
struct BatchItem {
  const ork_weights* weights = nullptr;
  int64_t m = 0;
  ork_matmul_options opt{};
  matmul::RunOptions run;
  CallTypes types;  // A and C dtypes, resolved at add
  Operand a_op, c_op;
  TensorRef a_ref, c_ref;
  BufferUse a_use, c_use;
  std::shared_ptr<matmul::Context> ctx;  // the batch's own (not the runner's cache)
};

// The device closed: the batch keeps only ork_batch_destroy.
void batch_device_closed(ork_batch& batch);
// Weights going: a batch using them refuses later submits (naming why).
void batch_weights_gone(ork_batch& batch, const ork_weights* weights);

}  // namespace ork::api

struct ork_batch {
  ork::api::Live<ork::api::HandleKind::batch> live{this};  // until destroyed (handles.h)
  ork_device* device = nullptr;  // null once the device was closed
  std::vector<ork::api::BatchItem> items;
  bool recorded = false;            // contexts built and chained into `desc`
  ork::driver::CheckedSubmit desc;  // the one job of every item's tasks, checked once
  std::string refused;              // non-empty: why every later submit is refused
};
