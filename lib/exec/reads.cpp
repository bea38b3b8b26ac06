// A run's tensor reads (reads.h).
#include "lib/exec/reads.h"

#include <tuple>

#include <fmt/format.h>

namespace ork::exec {

std::vector<io::TensorReader::Range> load_ranges(const PackedModel& model, const ExecPlan& plan, const Step& step) {
  const PackedTensor& t = model.tensor(step.layer, step.matmul);
  const size_t tensor = static_cast<size_t>(step.layer) * model.desc.matmuls.size() + static_cast<size_t>(step.matmul);
  std::vector<io::TensorReader::Range> out;
  for (const FusedPiece& p : plan.fusion.reads(tensor, t.bytes)) out.push_back({t.offset + p.from, p.bytes, p.at});
  return out;
}

void account_reads(const io::TensorReader& reader, const ExecPlan& plan, const ModelDesc& desc, bool want_trace,
                   RunOutput& out) {
  for (const auto& t : reader.timings()) {
    out.stats.io_ns += t.end_ns - t.begin_ns;
    if (want_trace) {
      const Step& s = plan.op_steps[static_cast<size_t>(t.id)];
      out.trace.push_back({fmt::format("load {}.{}.{}", s.token, s.layer, desc.matmuls[static_cast<size_t>(s.matmul)].name),
                           1, t.begin_ns, t.end_ns});
    }
  }
  out.stats.bytes_read = reader.bytes_read();
  const io::ReaderInfo& info = reader.info();
  std::tie(out.stats.engine, out.stats.direct, out.stats.registered, out.stats.fallbacks) =
      std::tie(info.engine, info.direct, info.registered, info.fallbacks);
}

}  // namespace ork::exec
