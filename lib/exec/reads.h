// A run's tensor reads (the I/O thread's, lib/io/tensor_reader.h): the file ranges of each
// load, and into the run's statistics and, when asked, its trace (executor.h RunStats, trace.h).
#pragma once

#include <vector>

#include "lib/exec/exec_plan.h"
#include "lib/exec/executor.h"
#include "lib/io/tensor_reader.h"

namespace ork::exec {

// The file ranges load `step` reads into its slot: its tensor whole at the slot's start, or a
// fused member's pieces, each K-slice at its place in the group's buffer (fusion.h).
std::vector<io::TensorReader::Range> load_ranges(const PackedModel& model, const ExecPlan& plan, const Step& step);

// Every finished read's time into io_ns (and a trace slice on the I/O track), the bytes read
// and the reader's engine and fallbacks.
void account_reads(const io::TensorReader& reader, const ExecPlan& plan, const ModelDesc& desc, bool want_trace,
                   RunOutput& out);

}  // namespace ork::exec
