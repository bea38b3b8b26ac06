// The executor's I/O thread (lib/exec/reader.cpp) on its io_uring path with faults injected
// at the completion (FileOs::uring_completion, lib/io/file_os.h): an -EIO completion fails
// the read naming the errno, and the reader reads on afterwards; short completions still give
// every byte of the tensor. Before, the executor's reads met io_uring errors only through a
// file truncated under them.
#include <gtest/gtest.h>

#include <cstring>

#include "driver/common/errno_text.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/reader.h"
#include "lib/exec/synthetic.h"
#include "lib/io/slot_buffer.h"
#include "tests/lib/exec/exec_util.h"
#include "tests/lib/io/io_test_util.h"

namespace ork::exec {
namespace {

struct Fixture {
  std::string path;
  PackedModel model;
  std::vector<uint8_t> bytes;  // the whole file
  io::SlotBuffer slot;
};

Fixture make_fixture() {
  Fixture f;
  auto d = synthetic_desc("tiny", 2, matmul::DType::int8);
  EXPECT_TRUE(d);
  f.path = testing::scratch("reader.ork");
  EXPECT_TRUE(write_synthetic(f.path, *d, 5));
  auto m = read_packed(f.path);
  EXPECT_TRUE(m) << m.error().message;
  f.model = *m;
  f.bytes = testing::read_all(f.path);
  uint64_t largest = 0;
  for (const auto& t : f.model.tensors) largest = std::max(largest, align_up(t.bytes, kPackAlign));
  auto s = io::SlotBuffer::allocate(largest);
  EXPECT_TRUE(s);
  f.slot = std::move(*s);
  return f;
}

// Reads every tensor into the slot; the first error, or an assertion on any byte that differs.
Status read_every_tensor(TensorReader& r, Fixture& f) {
  for (size_t i = 0; i < f.model.tensors.size(); ++i) {
    const PackedTensor& t = f.model.tensors[i];
    r.submit(static_cast<int>(i), 0, t.offset, t.bytes);
    bool hit = false;
    if (Status s = r.wait(static_cast<int>(i), &hit); !s) return s;
    EXPECT_EQ(std::memcmp(f.slot.data(), f.bytes.data() + t.offset, t.bytes), 0) << "tensor " << i;
  }
  return {};
}

TEST(TensorReaderUring, AnEioCompletionFailsTheReadThenItRecovers) {
  if (!io::test::uring_works()) GTEST_SKIP() << "no io_uring here: the reader reads with pread (reader.h)";
  Fixture f = make_fixture();
  io::test::FaultyFileOs os;
  auto r = TensorReader::open(f.path, {{f.slot.data(), f.slot.size()}}, 0, os);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ((*r)->info().engine, "io_uring");
  os.cqe_error = -EIO;
  const PackedTensor& t = f.model.tensors[0];
  (*r)->submit(0, 0, t.offset, t.bytes);
  bool hit = false;
  const Status s = (*r)->wait(0, &hit);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, -EIO);
  EXPECT_NE(s.error().message.find(errno_text(EIO)), std::string::npos) << s.error().message;
  os.cqe_error = 0;
  const Status again = read_every_tensor(**r, f);
  EXPECT_TRUE(again) << again.error().message;
}

TEST(TensorReaderUring, ShortCompletionsStillGiveEveryByte) {
  if (!io::test::uring_works()) GTEST_SKIP() << "no io_uring here: the reader reads with pread (reader.h)";
  Fixture f = make_fixture();
  io::test::FaultyFileOs os;
  os.cqe_short_every = 2;  // every other completion comes back a third short
  os.cqe_eintr_every = 5;
  auto r = TensorReader::open(f.path, {{f.slot.data(), f.slot.size()}}, 0, os);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ((*r)->info().engine, "io_uring");
  const Status s = read_every_tensor(**r, f);
  EXPECT_TRUE(s) << s.error().message;
}

}  // namespace
}  // namespace ork::exec
