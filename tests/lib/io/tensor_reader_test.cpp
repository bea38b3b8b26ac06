// The tensor reader (lib/io/tensor_reader.cpp), the path the executor streams weights by,
// under the faults the layer loader meets in loader_faults_test.cpp, through the same
// FaultyFileOs, on both its engines (io_uring; pread, where io_uring is refused): EIO and
// ENOSPC from pread and from io_uring completions (each failed read names the file, the
// offset and the errno, and the reader reads on afterwards), short reads and EINTR (every
// byte still exact), a file truncated under it (fails naming the end, reads again once the
// file is whole), and no descriptor left (open fails naming the file). The "tensors" are the
// synthetic model's layers widened to 4 KiB boundaries, as the packed file aligns its
// tensors (lib/exec/pack_file.h), so O_DIRECT reads them in place. Then the queue the layer
// loader reads through: urgent reads, withdrawn reads, each read's own error.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <gtest/gtest.h>

#include "driver/common/errno_text.h"
#include "lib/io/slot_buffer.h"
#include "lib/io/stream_file.h"
#include "lib/io/tensor_reader.h"
#include "tests/lib/io/io_test_util.h"

namespace ork::io {
namespace {

using test::expect_read_error;
using test::FaultyFileOs;

constexpr uint64_t kAlign = 4096;  // the packed file's tensor alignment

std::vector<char> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

enum class Engine { kUring, kPread };
const char* engine_label(Engine e) { return e == Engine::kUring ? "io_uring" : "pread"; }

class TensorReaderFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = test::make_model(dir_, "m.safetensors",
                              SyntheticSpec{.layers = 4, .hidden = 32, .ffn = 90, .vocab = 7, .dtype = "F32", .seed = 4});
    whole_ = read_whole(model_.path);
    uint64_t largest = 0;
    for (const Layer& l : model_.layout.layers) {
      const uint64_t begin = l.extent.offset / kAlign * kAlign;
      const uint64_t end = std::min<uint64_t>((l.extent.end() + kAlign - 1) / kAlign * kAlign, whole_.size());
      tensors_.push_back({begin, end - begin});
      largest = std::max(largest, end - begin);
    }
    auto s = SlotBuffer::allocate((largest + kAlign - 1) / kAlign * kAlign);
    ASSERT_TRUE(s) << s.error().message;
    slot_ = std::move(*s);
  }
  // The engines this machine has: pread always (io_uring refused through the FileOs).
  static std::vector<Engine> engines() {
    if (test::uring_works()) return {Engine::kUring, Engine::kPread};
    return {Engine::kPread};
  }
  std::unique_ptr<TensorReader> open(Engine engine, FaultyFileOs& os, const std::string& path) {
    if (engine == Engine::kPread) os.uring_init_error = -EPERM;
    auto r = TensorReader::open(path, {{slot_.data(), slot_.size()}}, 0, os);
    EXPECT_TRUE(r) << r.error().message;
    if (!r) return nullptr;
    EXPECT_EQ((*r)->info().engine, engine_label(engine));
    return std::move(*r);
  }
  // Reads tensor i into the slot: its error, or a failed expectation on the first byte that
  // differs from the file's.
  Status read(TensorReader& r, size_t i) {
    const Extent& t = tensors_[i];
    const int id = next_id_++;
    r.submit(id, 0, t.offset, t.length);
    bool hit = false;
    if (Status s = r.wait(id, &hit); !s) return s;
    EXPECT_EQ(std::memcmp(slot_.data(), whole_.data() + t.offset, t.length), 0) << "tensor " << i;
    return {};
  }
  // Every tensor, twice round, byte-exact.
  void expect_every_tensor_reads(TensorReader& r) {
    for (int round = 0; round < 2; ++round) {
      for (size_t i = 0; i < tensors_.size(); ++i) {
        const Status s = read(r, i);
        ASSERT_TRUE(s) << "tensor " << i << ": " << s.error().message;
      }
    }
  }
  test::TempDir dir_;
  test::Model model_;
  std::vector<char> whole_;
  std::vector<Extent> tensors_;
  SlotBuffer slot_;
  int next_id_ = 0;
};

TEST_F(TensorReaderFaults, EioAndEnospcNameTheFileAndOffsetThenItReadsOn) {
  for (Engine engine : engines()) {
    for (int err : {-EIO, -ENOSPC}) {
      SCOPED_TRACE(std::string(engine_label(engine)) + " " + errno_text(err));
      FaultyFileOs os;
      auto r = open(engine, os, model_.path);
      ASSERT_TRUE(r);
      os.pread_error = err;
      os.cqe_error = err;
      for (size_t i = 0; i < tensors_.size(); ++i) {
        const Status s = read(*r, i);
        ASSERT_FALSE(s);
        expect_read_error(s.error(), err, model_.path);
      }
      os.pread_error = 0;
      os.cqe_error = 0;
      expect_every_tensor_reads(*r);
    }
  }
}

TEST_F(TensorReaderFaults, ShortReadsAndEintrStillGiveEveryByte) {
  for (Engine engine : engines()) {
    SCOPED_TRACE(engine_label(engine));
    FaultyFileOs os;
    os.pread_short_every = 2;  // every other read comes back a third short
    os.pread_eintr_every = 5;
    os.cqe_short_every = 2;
    os.cqe_eintr_every = 5;
    auto r = open(engine, os, model_.path);
    ASSERT_TRUE(r);
    expect_every_tensor_reads(*r);
  }
}

TEST_F(TensorReaderFaults, FileTruncatedUnderItFailsNamingTheEndThenReadsAgain) {
  for (Engine engine : engines()) {
    SCOPED_TRACE(engine_label(engine));
    test::TempDir dir;
    auto m = test::make_model(dir, "t.safetensors", model_.spec);
    FaultyFileOs os;
    auto r = open(engine, os, m.path);
    ASSERT_TRUE(r);
    ASSERT_TRUE(read(*r, 0));
    const Extent last = tensors_.back();
    std::filesystem::resize_file(m.path, last.offset + last.length / 2);  // mid-way in the last tensor
    const Status s = read(*r, tensors_.size() - 1);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, -EIO);
    EXPECT_NE(s.error().message.find(m.path), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("unexpected end of file at offset"), std::string::npos) << s.error().message;
    ASSERT_TRUE(read(*r, 0));  // what is still inside the file reads
    {  // grown back in place (the reader holds the file open)
      std::ofstream back(m.path, std::ios::binary | std::ios::trunc);
      back.write(whole_.data(), static_cast<std::streamsize>(whole_.size()));
    }
    expect_every_tensor_reads(*r);
  }
}

// No descriptor free (RLIMIT_NOFILE lowered in a child): open fails naming the file, on both
// engines; with descriptors back, the same open reads.
TEST_F(TensorReaderFaults, FdExhaustionFailsTheOpenCleanly) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit low{};
    ::getrlimit(RLIMIT_NOFILE, &low);
    low.rlim_cur = 64;
    if (::setrlimit(RLIMIT_NOFILE, &low) != 0) ::_exit(10);
    std::vector<int> held;
    const int base = ::open("/dev/null", O_RDONLY);
    if (base < 0) ::_exit(14);
    for (int fd; (fd = ::dup(base)) >= 0;) held.push_back(fd);
    for (Engine engine : engines()) {
      FaultyFileOs os;
      if (engine == Engine::kPread) os.uring_init_error = -EPERM;
      auto r = TensorReader::open(model_.path, {{slot_.data(), slot_.size()}}, 0, os);
      if (r) ::_exit(11);
      if (r.error().message.find(model_.path) == std::string::npos) ::_exit(12);
    }
    for (int fd : held) ::close(fd);
    for (Engine engine : engines()) {
      FaultyFileOs os;
      if (engine == Engine::kPread) os.uring_init_error = -EPERM;
      auto r = TensorReader::open(model_.path, {{slot_.data(), slot_.size()}}, 0, os);
      if (!r || !read(**r, 1)) ::_exit(13);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 setrlimit, 11 opened anyway, 12 file not named, 13 not usable after";
}

// A tensor that does not fit its slot, or does not start on the file's alignment, is refused
// naming it, and the reader reads on.
TEST_F(TensorReaderFaults, ATensorLargerThanItsSlotIsRefusedByName) {
  FaultyFileOs os;
  auto r = open(engines().front(), os, model_.path);
  ASSERT_TRUE(r);
  r->submit(0, 0, 0, slot_.size() + kAlign);
  bool hit = false;
  const Status s = r->wait(0, &hit);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, -EINVAL);
  EXPECT_NE(s.error().message.find("does not fit slot 0"), std::string::npos) << s.error().message;
  next_id_ = 1;
  expect_every_tensor_reads(*r);
}

// One read of several ranges (a fused group's member, its K-slices apart in the slot:
// lib/exec/fusion.h): each range's bytes at its own place, in one read id, on every engine;
// the second range of the file lands before the first in the slot.
TEST_F(TensorReaderFaults, SeveralRangesLandEachAtItsPlace) {
  ASSERT_GE(slot_.size(), 2 * kAlign);
  ASSERT_GE(whole_.size(), 3 * kAlign);
  for (Engine e : engines()) {
    FaultyFileOs os;
    auto r = open(e, os, model_.path);
    ASSERT_TRUE(r);
    std::memset(slot_.data(), 0, slot_.size());
    r->submit(0, 0, {{0, kAlign, kAlign}, {2 * kAlign, kAlign, 0}});
    bool hit = false;
    ASSERT_TRUE(r->wait(0, &hit)) << engine_label(e);
    EXPECT_EQ(std::memcmp(slot_.data() + kAlign, whole_.data(), kAlign), 0) << engine_label(e);
    EXPECT_EQ(std::memcmp(slot_.data(), whole_.data() + 2 * kAlign, kAlign), 0) << engine_label(e);
    EXPECT_EQ(r->bytes_read(), 2 * kAlign) << engine_label(e);
    EXPECT_EQ(r->timings().size(), 1u) << engine_label(e);  // one read
  }
}

// The queue the layer loader reads through (lib/io/loader.cpp): an urgent read goes before
// every read queued, a read still queued can be withdrawn (not once it is done), and each
// failed read keeps its own error. Without a thread the reads run inside wait(), in queue
// order, so the order is seen exactly (timings() lists the reads as they ran).
class TensorReaderQueue : public TensorReaderFaults {
 protected:
  std::unique_ptr<TensorReader> start(FaultyFileOs& os) {
    std::vector<std::string> fallbacks;
    auto file = StreamFile::open(os, model_.path, /*want_direct=*/false, &fallbacks);
    EXPECT_TRUE(file) << file.error().message;
    if (!file) return nullptr;
    auto r = TensorReader::start(std::move(*file), {{slot_.data(), slot_.size()}},
                                 ReaderOptions{.uring = false, .threaded = false});
    EXPECT_TRUE(r) << r.error().message;
    return r ? std::move(*r) : nullptr;
  }
  void submit(TensorReader& r, int id, size_t tensor, bool urgent = false) {
    r.submit(id, 0, tensors_[tensor].offset, tensors_[tensor].length, urgent);
  }
  static std::vector<int> order(const TensorReader& r) {
    std::vector<int> ids;
    for (const auto& t : r.timings()) ids.push_back(t.id);
    return ids;
  }
};

TEST_F(TensorReaderQueue, AnUrgentReadGoesBeforeEveryReadQueued) {
  FaultyFileOs os;
  auto r = start(os);
  ASSERT_TRUE(r);
  submit(*r, 0, 0);
  submit(*r, 1, 1);
  submit(*r, 2, 2, /*urgent=*/true);
  bool hit = true;
  ASSERT_TRUE(r->wait(0, &hit));
  EXPECT_FALSE(hit);
  EXPECT_EQ(order(*r), (std::vector<int>{2, 0}));
  EXPECT_EQ(r->state(1), TensorReader::ReadState::kQueued);
  EXPECT_EQ(r->state(2), TensorReader::ReadState::kDone);
  ASSERT_TRUE(r->wait(1, &hit));
  EXPECT_EQ(order(*r), (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(std::memcmp(slot_.data(), whole_.data() + tensors_[1].offset, tensors_[1].length), 0);
  ASSERT_TRUE(r->wait(2, &hit));
  EXPECT_TRUE(hit);
}

TEST_F(TensorReaderQueue, AQueuedReadIsWithdrawnAndADoneOneIsNot) {
  FaultyFileOs os;
  auto r = start(os);
  ASSERT_TRUE(r);
  submit(*r, 0, 0);
  submit(*r, 1, 1);
  EXPECT_TRUE(r->withdraw(1));
  EXPECT_FALSE(r->withdraw(1));  // gone already
  bool hit = false;
  ASSERT_TRUE(r->wait(0, &hit));
  EXPECT_FALSE(r->withdraw(0));  // done
  EXPECT_EQ(order(*r), (std::vector<int>{0}));
  EXPECT_EQ(r->bytes_read(), tensors_[0].length);
  // Waiting for the withdrawn read, with no thread to read it, is an error, not a hang.
  const Status s = r->wait(1, &hit);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("read 1: not queued"), std::string::npos) << s.error().message;
}

TEST_F(TensorReaderQueue, EachFailedReadKeepsItsOwnError) {
  FaultyFileOs os;
  auto r = start(os);
  ASSERT_TRUE(r);
  r->submit(0, 0, 0, slot_.size() + kAlign);  // does not fit the slot: -EINVAL
  submit(*r, 1, 1);                            // fails with the file system's -EIO
  os.pread_error = -EIO;
  bool hit = false;
  const Status second = r->wait(1, &hit);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, -EIO);
  const Status first = r->wait(0, &hit);  // its own error, not the last read's
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code, -EINVAL);
  EXPECT_NE(first.error().message.find("does not fit slot 0"), std::string::npos) << first.error().message;
  EXPECT_EQ(r->state(0), TensorReader::ReadState::kFailed);
  os.pread_error = 0;
  submit(*r, 0, 2);  // an id is reused once its read is done
  ASSERT_TRUE(r->wait(0, &hit));
  EXPECT_EQ(r->state(0), TensorReader::ReadState::kDone);
}

TEST(TensorReaderOpen, ANegativeRateCapIsRefused) {
  std::byte b[1];
  auto r = TensorReader::open("/nonexistent", {{b, 1}}, -1.0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, -EINVAL);
  EXPECT_NE(r.error().message.find("read rate cap"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace ork::io
