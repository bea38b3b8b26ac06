// ork_run --project: the board projection of a model's matmuls (docs/execution.md "Board
// projection", lib/exec/project.h), for decode (M = 1) and prefill at M = 128.
#pragma once

#include <cstdint>
#include <string>

namespace ork::tools {

struct ProjectArgs {
  std::string path;            // a packed model file, or "" with synthetic
  std::string synthetic;       // a synthetic model's name (no file written)
  int layers = 28;
  std::string dtype = "int8";
  int cores = 3;
  uint64_t budget_bytes = 0;   // 0: the NPU's window (the board's RAM assumed to hold it)
  double disk_bytes_per_s = 1.2e9;
  double host_us = -1;         // < 0: measured on the zero-work emulator
  int repeats = 5;             // host-time calls per matmul (median)
  int64_t prefill_m = 128;
  // int4 --synthetic: the weights whose own bound sets each matmul's K-slice width
  // (lib/exec/int4_widths.h): "synthetic" (the model's), "q4_0" (shaped like real quantised
  // ones) or "floor" (480 everywhere). A packed file is laid out at 480: always floor.
  std::string int4_weights = "synthetic";
  uint64_t seed = 1;           // of the synthetic weights (ork_pack's default)
  bool fuse = true;            // fused groups where the executor runs them (ProjectOptions::fuse)
  bool json = false;
};

// Prints the projection (text or one JSON object); returns the exit code.
int run_project(const ProjectArgs& args);

}  // namespace ork::tools
