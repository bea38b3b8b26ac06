// A run's tensor reads (the I/O thread's, lib/io/tensor_reader.h) into its statistics and,
// when asked, its trace (executor.h RunStats, trace.h).
#pragma once

#include "lib/exec/exec_plan.h"
#include "lib/exec/executor.h"
#include "lib/io/tensor_reader.h"

namespace ork::exec {

// Every finished read's time into io_ns (and a trace slice on the I/O track), the bytes read
// and the reader's engine and fallbacks.
void account_reads(const io::TensorReader& reader, const ExecPlan& plan, const ModelDesc& desc, bool want_trace,
                   RunOutput& out);

}  // namespace ork::exec
