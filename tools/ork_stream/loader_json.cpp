// LoaderStats as JSON (loader_json.h).
#include "tools/ork_stream/loader_json.h"

namespace ork::io::tools {

nlohmann::json stats_to_json(const LoaderStats& s) {
  return {
      {"source", source_name(s.source)},
      {"engine", engine_name(s.engine)},
      {"async", s.async},
      {"direct", s.direct},
      {"registered_buffers", s.registered_buffers},
      {"align_bytes", s.align_bytes},
      {"n_slots", s.n_slots},
      {"prefetch_depth", s.prefetch_depth},
      {"loads", s.loads},
      {"hits", s.hits},
      {"misses", s.misses},
      {"hit_rate", s.hit_rate()},
      {"layers_read", s.layers_read},
      {"bytes_read", s.bytes_read},
      {"prefetch_dropped", s.prefetch_dropped},
      {"io_ns", s.io_ns},
      {"wait_ns", s.wait_ns},
      {"chunks", s.engine_counters.chunks},
      {"short_reads", s.engine_counters.short_reads},
      {"retries", s.engine_counters.retries},
      {"cancelled", s.engine_counters.cancelled},
      {"max_in_flight", s.engine_counters.max_in_flight},
      {"fallbacks", s.fallbacks},
  };
}

}  // namespace ork::io::tools
