// Where the worked example streams (tools/ork_sched/examples) are: this clone's absolute
// path, compiled into examples_dir.cpp alone. That one small object differs between clones;
// ork_sched_bench and the sched tests that read the examples stay the same in every clone, so
// the compiler cache serves them to a clean clone (docs/reliability.md "CI time").
#pragma once

namespace ork::sched {

const char* examples_dir();

}  // namespace ork::sched
