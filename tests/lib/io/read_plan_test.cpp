// ReadPlan arithmetic: aligned ranges, chunk boundaries, the tail chunk.
#include <gtest/gtest.h>

#include "lib/io/read_plan.h"

namespace ork::io {
namespace {

TEST(ReadPlan, BufferedIsTheLayerItself) {
  auto p = plan_read(Extent{1001, 10000}, 1, 4096);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->file_begin, 1001u);
  EXPECT_EQ(p->file_end, 11001u);
  EXPECT_EQ(p->head_bytes, 0u);
  EXPECT_EQ(p->slot_bytes(), 10000u);
  ASSERT_EQ(p->chunk_count(), 3u);
  const Chunk last = p->chunk(2);
  EXPECT_EQ(last.file_offset, 1001u + 8192u);
  EXPECT_EQ(last.slot_offset, 8192u);
  EXPECT_EQ(last.length, 10000u - 8192u);  // the tail, shorter than a chunk
  EXPECT_EQ(last.need, 10000u - 8192u);
}

TEST(ReadPlan, DirectRoundsOutToTheAlignment) {
  // Layer [1001, 11001) with 512-byte alignment: read [512, 11264), layer at slot + 489.
  auto p = plan_read(Extent{1001, 10000}, 512, 4096);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->file_begin, 512u);
  EXPECT_EQ(p->file_end, 11264u);
  EXPECT_EQ(p->head_bytes, 489u);
  EXPECT_EQ(p->need_end, 11001u);
  ASSERT_EQ(p->chunk_count(), 3u);
  const Chunk c0 = p->chunk(0);
  EXPECT_EQ(c0.file_offset, 512u);
  EXPECT_EQ(c0.length, 4096u);
  EXPECT_EQ(c0.need, 4096u);
  const Chunk c2 = p->chunk(2);
  EXPECT_EQ(c2.file_offset, 512u + 8192u);
  EXPECT_EQ(c2.length, 11264u - 8704u);  // 2560: aligned tail
  EXPECT_EQ(c2.need, 11001u - 8704u);    // 2297: the bytes past it may be past EOF
  EXPECT_EQ(c2.length % 512, 0u);
}

TEST(ReadPlan, ExactMultipleHasNoTail) {
  auto p = plan_read(Extent{4096, 8192}, 4096, 4096);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->head_bytes, 0u);
  ASSERT_EQ(p->chunk_count(), 2u);
  EXPECT_EQ(p->chunk(1).length, 4096u);
  EXPECT_EQ(p->chunk(1).need, 4096u);
}

TEST(ReadPlan, RejectsBadArguments) {
  auto a = plan_read(Extent{0, 100}, 3, 4096);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "alignment 3 bytes: must be a power of two");
  auto c = plan_read(Extent{0, 100}, 4096, 1024);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            "chunk size 1024 bytes: must be a power of two and >= the alignment (4096 bytes)");
  auto e = plan_read(Extent{0, 0}, 1, 4096);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "layer of 0 bytes: nothing to read");
  auto o = plan_read(Extent{UINT64_MAX - 10, 100}, 1, 4096);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().code, -EOVERFLOW);
}

}  // namespace
}  // namespace ork::io
