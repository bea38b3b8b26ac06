// An ork_tensor naming caller memory (the C API's host pointer case), for tests that call
// ork_matmul_submit and ork_batch_add_matmul on host buffers.
#pragma once

#include "ork/ork.h"

namespace ork::test {

inline ork_tensor host_tensor(void* p) {
  ork_tensor t{};
  t.host = p;
  return t;
}

}  // namespace ork::test
