// ORK_SCHED_EXAMPLES_DIR comes from tools/ork_sched/meson.build (this clone's source path).
#include "tools/ork_sched/examples_dir.h"

namespace ork::sched {

const char* examples_dir() { return ORK_SCHED_EXAMPLES_DIR; }

}  // namespace ork::sched
