// A packed test model kept for a test program's life, with the CPU reference of its two
// tokens computed once per row count (lib/exec/chain_reference.h). Shared by the executor's
// fused-group tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "lib/exec/chain_reference.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/synthetic.h"

namespace ork::exec::testing {

struct CachedModel {
  std::string path;
  PackedModel model;
  std::map<int64_t, ChainResult> want;

  // Reads the packed file at `p` into model and path; false (the failure recorded) when it
  // cannot be read.
  bool load(const std::string& p) {
    auto m = read_packed(p);
    EXPECT_TRUE(m) << m.error().message;
    if (!m) return false;
    model = std::move(*m);
    path = p;
    return true;
  }

  // Writes the synthetic model `d` (weights from `seed`) at `p` and loads it; false (the
  // failure recorded) when either step fails.
  bool write_and_load(const std::string& p, const ModelDesc& d, uint64_t seed) {
    const Status w = write_synthetic(p, d, seed);
    EXPECT_TRUE(w) << w.error().message;
    return w && load(p);
  }

  // The reference at m rows, two tokens; nullptr (the failure recorded) when it cannot be made.
  const ChainResult* reference(int64_t m) {
    if (!want.count(m)) {
      auto r = reference_chain(path, model, m, 2);
      EXPECT_TRUE(r) << r.error().message;
      if (!r) return nullptr;
      want.emplace(m, std::move(*r));
    }
    return &want.at(m);
  }
};

}  // namespace ork::exec::testing
