// The executor's weight reads through an injected file system (RunOptions::file_os, the
// FaultyFileOs of lib/io's tests): the executor streams through lib/io's tensor reader, so
// what that reader survives (short reads, EINTR, on io_uring and on pread where io_uring is
// refused) leaves the chain equal to the CPU reference's, and what it cannot (EIO on every
// read) fails the run naming the errno and the model file. On the cpu device, which has no
// kernel interface (DeviceRef's kmd and runner null): the reads are the point here.
#include <gtest/gtest.h>

#include "driver/common/errno_text.h"
#include "lib/exec/executor.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/exec_util.h"
#include "tests/lib/io/io_test_util.h"

namespace ork::exec {
namespace {

struct IoModel {
  std::string path;
  PackedModel packed;
};

IoModel make_io_model() {
  auto d = synthetic_desc("tiny", 3, matmul::DType::int8);
  EXPECT_TRUE(d);
  IoModel m{testing::scratch("exec_io.ork"), {}};
  EXPECT_TRUE(write_synthetic(m.path, *d, 7));
  auto p = read_packed(m.path);
  EXPECT_TRUE(p) << p.error().message;
  m.packed = *p;
  return m;
}

Result<RunOutput> run_io(const IoModel& m, io::FileOs& os) {
  PlanOptions po;
  po.tokens = 2;
  po.budget_bytes = 96 << 10;  // under the model's 3 x 53 KiB: tensors are read every token
  auto plan = build_plan(m.packed, po);
  if (!plan) return plan.error();
  RunOptions ro;
  ro.file_os = &os;
  return run_plan(m.path, m.packed, *plan, po, DeviceRef::cpu(1), ro);
}

TEST(ExecutorFileOs, ShortReadsAndEintrOnEitherEngineLeaveTheChainExact) {
  const IoModel m = make_io_model();
  auto want = reference_chain(m.path, m.packed, 1, 2);
  ASSERT_TRUE(want) << want.error().message;
  for (bool refuse_uring : {false, true}) {
    SCOPED_TRACE(refuse_uring ? "io_uring refused" : "io_uring if this machine has it");
    io::test::FaultyFileOs os;
    if (refuse_uring) os.uring_init_error = -EPERM;
    os.pread_short_every = 2;
    os.pread_eintr_every = 5;
    os.cqe_short_every = 2;
    os.cqe_eintr_every = 5;
    auto out = run_io(m, os);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(out->stats.engine, refuse_uring || !io::test::uring_works() ? "pread" : "io_uring");
    EXPECT_EQ(out->stats.bytes_read, 2 * m.packed.weight_bytes());
    const Status same = compare_chains(m.packed, out->chain, *want);
    EXPECT_TRUE(same) << same.error().message;
  }
}

TEST(ExecutorFileOs, EioOnEveryReadFailsTheRunNamingItAndTheFile) {
  const IoModel m = make_io_model();
  for (bool refuse_uring : {false, true}) {
    SCOPED_TRACE(refuse_uring ? "io_uring refused" : "io_uring if this machine has it");
    io::test::FaultyFileOs os;
    if (refuse_uring) os.uring_init_error = -EPERM;
    os.pread_error = -EIO;
    os.cqe_error = -EIO;
    auto out = run_io(m, os);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, -EIO);
    EXPECT_NE(out.error().message.find(errno_text(EIO)), std::string::npos) << out.error().message;
    EXPECT_NE(out.error().message.find(m.path), std::string::npos) << out.error().message;
  }
}

}  // namespace
}  // namespace ork::exec
