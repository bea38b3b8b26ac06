// The known-good int8 call that the fault, injected-fault and core-mask tests run on the
// device under test (the test's parameter), around whatever they break: A (M x K) and W
// (K x N), the oracle's C, the weights on the device, and ork_matmul into got_. Each test
// opens its device its own way (with or without ORK_EMU_FAULTS) and picks its operands.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "lib/ref/oracle.h"
#include "ork/ork.h"

namespace ork::e2e {

class Int8Call : public ::testing::TestWithParam<const char*> {
 protected:
  Int8Call(int64_t m, int64_t k, int64_t n) : m_(m), k_(k), n_(n) {}

  void TearDown() override {
    ork_weights_destroy(w_handle_);
    ork_device_close(dev_);
  }

  // A, then W, from mt19937(seed), each element the low byte of one draw; the oracle's C.
  void draw(unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<int8_t> a(static_cast<size_t>(m_ * k_)), w(static_cast<size_t>(k_ * n_));
    for (auto& x : a) x = static_cast<int8_t>(rng());
    for (auto& x : w) x = static_cast<int8_t>(rng());
    set_operands(std::move(a), std::move(w));
  }
  // Given operands; the oracle's C.
  void set_operands(std::vector<int8_t> a, std::vector<int8_t> w) {
    a_ = std::move(a);
    w_ = std::move(w);
    want_.assign(static_cast<size_t>(m_ * n_), 0);
    EXPECT_TRUE(ork::ref::matmul_int8(a_, w_, want_, {m_, k_, n_}).ok());
  }
  ork_status create_weights() { return ork_weights_create(dev_, ORK_DTYPE_INT8, k_, n_, w_.data(), &w_handle_); }

  // The call with `options`, C first filled with `fill` (so a cell the call left shows).
  ork_status run_with(const ork_matmul_options& options, int32_t fill) {
    got_.assign(static_cast<size_t>(m_ * n_), fill);
    return ork_matmul(dev_, w_handle_, a_.data(), m_, got_.data(), &options);
  }
  // The call on `cores` cores.
  ork_status run_on(int cores, int32_t fill) {
    const ork_matmul_options opt{.struct_size = sizeof(opt), .cores = cores, .mc_cap = 0};
    return run_with(opt, fill);
  }
  ork::emu::Faults& faults() { return dev_->fake->faults(); }

  const int64_t m_, k_, n_;
  ork_device* dev_ = nullptr;
  ork_weights* w_handle_ = nullptr;
  std::vector<int8_t> a_, w_;
  std::vector<int32_t> want_, got_;
};

}  // namespace ork::e2e
