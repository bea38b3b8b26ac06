// LayerLoader behaviour: hits and misses, explicit prefetch, the prefetch depth knob, bad
// arguments, read errors that leave the loader usable, and cancellation on close.
#include <atomic>
#include <chrono>
#include <new>
#include <thread>

#include <gtest/gtest.h>

#include "lib/io/loader.h"
#include "tests/lib/io/io_test_util.h"

namespace ork::io {
namespace {

using test::FaultyFileOs;

class Loader : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = test::make_model(dir_, "m.safetensors",
                              SyntheticSpec{.layers = 5, .hidden = 32, .ffn = 90, .vocab = 7,
                                            .dtype = "F32", .seed = 9});
  }
  std::unique_ptr<LayerLoader> open(LoaderOptions o, FileOs& os = real_file_os()) {
    o.use_env = false;
    auto l = LayerLoader::open(model_.path, layer_extents(model_.layout), o, os);
    EXPECT_TRUE(l.ok()) << l.error().message;
    return l.ok() ? std::move(l.value()) : nullptr;
  }
  // Waits (bounded) until the background thread has completed `n` fills.
  static bool wait_layers_read(const LayerLoader& l, uint64_t n) {
    for (int i = 0; i < 5000; ++i) {
      if (l.stats().layers_read >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  test::TempDir dir_;
  test::Model model_;
};

TEST_F(Loader, PrefetchedLayerIsAHit) {
  for (SourceKind source : {SourceKind::kWorker, SourceKind::kUring}) {
    auto l = open({.source = source, .n_slots = 2, .prefetch_depth = 1});
    ASSERT_TRUE(l);
    ASSERT_TRUE(l->load(0).ok());        // miss: nothing was there
    ASSERT_TRUE(wait_layers_read(*l, 2));  // layer 1 prefetched in the background
    auto b = l->load(1);
    ASSERT_TRUE(b.ok());
    EXPECT_TRUE(test::layer_matches(model_, 1, b.value()));
    const LoaderStats s = l->stats();
    EXPECT_EQ(s.loads, 2u);
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.hits, 1u);
    // Layer 2's prefetch (started by load(1)) may or may not have finished by now.
    EXPECT_TRUE(s.layers_read == 2 || s.layers_read == 3) << s.layers_read;
    EXPECT_EQ(s.bytes_read, s.layers_read * model_.layout.layers[0].extent.length);
    EXPECT_DOUBLE_EQ(s.hit_rate(), 0.5);
  }
}

TEST_F(Loader, SyncSourceMissesOnEveryNewLayer) {
  auto l = open({.source = SourceKind::kSync, .n_slots = 4});
  ASSERT_TRUE(l);
  ASSERT_TRUE(l->load(2).ok());
  ASSERT_TRUE(l->load(2).ok());  // same layer again: still in the slot
  ASSERT_TRUE(l->load(3).ok());
  ASSERT_TRUE(l->prefetch(4).ok());  // ignored: no background thread
  const LoaderStats s = l->stats();
  EXPECT_FALSE(s.async);
  EXPECT_EQ(s.n_slots, 1u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.layers_read, 2u);
}

TEST_F(Loader, ExplicitPrefetchAndDroppedPrefetch) {
  auto l = open({.source = SourceKind::kWorker, .n_slots = 2, .auto_prefetch = false});
  ASSERT_TRUE(l);
  ASSERT_TRUE(l->prefetch(3).ok());
  ASSERT_TRUE(wait_layers_read(*l, 1));
  ASSERT_TRUE(l->load(3).ok());
  EXPECT_EQ(l->stats().hits, 1u);
  ASSERT_TRUE(l->prefetch(0).ok());  // the one free slot
  ASSERT_TRUE(l->prefetch(1).ok());  // none free: slot 0 holds layer 0 for a load to come,
                                     // slot 1 is current
  ASSERT_TRUE(wait_layers_read(*l, 2));
  const LoaderStats s = l->stats();
  EXPECT_EQ(s.prefetch_dropped, 1u);
  auto b = l->load(0);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(test::layer_matches(model_, 0, b.value()));
  EXPECT_EQ(l->stats().hits, 2u);
}

TEST_F(Loader, PrefetchDepthIsClampedToTheRing) {
  auto l = open({.source = SourceKind::kUring, .n_slots = 3, .prefetch_depth = 9});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->stats().prefetch_depth, 2u);
  l->set_prefetch_depth(1);
  EXPECT_EQ(l->stats().prefetch_depth, 1u);
  l->set_prefetch_depth(100);
  EXPECT_EQ(l->stats().prefetch_depth, 2u);
  ASSERT_TRUE(l->load(0).ok());
  ASSERT_TRUE(wait_layers_read(*l, 3));  // layers 1 and 2 prefetched
  ASSERT_TRUE(l->load(1).ok());
  ASSERT_TRUE(l->load(2).ok());
  EXPECT_EQ(l->stats().hits, 2u);
}

TEST_F(Loader, BadArgumentsAreNamed) {
  auto l = open({.source = SourceKind::kWorker});
  ASSERT_TRUE(l);
  auto r = l->load(5);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "layer 5: out of range, the file has 5 layers");
  EXPECT_EQ(l->prefetch(7).error().message,
            "prefetch of layer 7: out of range, the file has 5 layers");
  const auto extents = layer_extents(model_.layout);
  auto past = LayerLoader::open(model_.path, {Extent{model_.file.file_bytes - 4, 8}}, {});
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().message,
            "layer 0 ends at byte " + std::to_string(model_.file.file_bytes + 4) + " but " +
                model_.path + " has " + std::to_string(model_.file.file_bytes) + " bytes");
  EXPECT_EQ(LayerLoader::open(model_.path, extents, {.n_slots = 0}).error().message,
            "n_slots = 0: must be >= 1");
  EXPECT_EQ(LayerLoader::open(model_.path, extents, {.chunk_bytes = 5000}).error().message,
            "chunk_bytes = 5000: must be a power of two in [4 KiB, 64 MiB]");
  EXPECT_EQ(LayerLoader::open(model_.path, extents, {.queue_depth = 0}).error().message,
            "queue_depth = 0: must be 1..256");
  EXPECT_EQ(LayerLoader::open(model_.path, {}, {}).error().message, "no layers: need at least one");
  EXPECT_EQ(LayerLoader::open(dir_.file("nope"), extents, {.direct = DirectMode::kOff})
                .error()
                .message,
            "open " + dir_.file("nope") + ": ENOENT (No such file or directory)");
  EXPECT_EQ(parse_source("fast").error().message,
            "unknown source \"fast\": expected sync, worker, uring or mmap");
}

TEST_F(Loader, ReadErrorIsReportedAndTheLoaderStaysUsable) {
  for (SourceKind source : {SourceKind::kSync, SourceKind::kWorker, SourceKind::kUring}) {
    FaultyFileOs os;
    auto l = open({.source = source, .n_slots = 2, .auto_prefetch = false}, os);
    ASSERT_TRUE(l);
    os.pread_error = -EIO;
    os.cqe_error = -EIO;
    auto r = l->load(1);
    ASSERT_FALSE(r.ok()) << source_name(source);
    EXPECT_EQ(r.error().code, -EIO);
    EXPECT_NE(r.error().message.find("EIO (Input/output error)"), std::string::npos)
        << r.error().message;
    os.pread_error = 0;
    os.cqe_error = 0;
    auto b = l->load(1);
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_TRUE(test::layer_matches(model_, 1, b.value()));
  }
}

// What the worker thread's read throws (std::bad_alloc) is the load's error, not std::terminate.
TEST_F(Loader, ThrowOnTheWorkerIsTheLoadsError) {
  struct ThrowingOs : FaultyFileOs {
    std::atomic<bool> armed{false};
    ssize_t pread(int fd, void* buf, size_t length, off_t offset) override {
      if (armed) throw std::bad_alloc();
      return FaultyFileOs::pread(fd, buf, length, offset);
    }
  } os;
  auto l = open({.source = SourceKind::kWorker, .n_slots = 2, .auto_prefetch = false}, os);
  ASSERT_TRUE(l);
  os.armed = true;
  auto r = l->load(1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, -ENOMEM);
  EXPECT_NE(r.error().message.find("out of host memory"), std::string::npos) << r.error().message;
}

TEST_F(Loader, CloseCancelsReadsInFlight) {
  // 16 MiB layers read 64 KiB at a time: closing right after a load leaves the prefetch of
  // the next layers in flight; the destructor must cancel and drain them, not hang or crash.
  test::TempDir dir;
  auto big = test::make_model(dir, "big.safetensors",
                              SyntheticSpec{.layers = 3, .hidden = 1024, .ffn = 1365,
                                            .vocab = 1, .dtype = "F16", .seed = 2});
  for (SourceKind source : {SourceKind::kWorker, SourceKind::kUring}) {
    LoaderOptions o{.source = source, .n_slots = 3, .prefetch_depth = 2,
                    .chunk_bytes = 64 * 1024, .queue_depth = 2, .use_env = false};
    auto l = LayerLoader::open(big.path, layer_extents(big.layout), o);
    ASSERT_TRUE(l.ok()) << l.error().message;
    auto b = l.value()->load(0);
    ASSERT_TRUE(b.ok());
    EXPECT_TRUE(test::layer_matches(big, 0, b.value()));
    l.value().reset();  // returns once every read is cancelled or complete
  }
}

TEST_F(Loader, UringKeepsQueueDepthReadsInFlight) {
  if (!test::uring_works()) GTEST_SKIP() << "io_uring is refused here";
  // A layer is 2*32 + 4*32*32 + 3*90*32 floats = 51200 bytes: at least 13 chunks of 4 KiB.
  auto l = open({.source = SourceKind::kUring, .n_slots = 2, .chunk_bytes = 4096,
                 .queue_depth = 5});
  ASSERT_TRUE(l);
  for (size_t i = 0; i < l->layer_count(); ++i) {
    auto b = l->load(i);
    ASSERT_TRUE(b.ok());
    ASSERT_TRUE(test::layer_matches(model_, i, b.value()));
  }
  const LoaderStats s = l->stats();
  EXPECT_EQ(s.engine, EngineKind::kUring);
  EXPECT_EQ(s.engine_counters.max_in_flight, 5u);
  EXPECT_GE(s.engine_counters.chunks, 5u * 13u);
}

TEST_F(Loader, UringCancelMidReadDrainsAndStops) {
  if (!test::uring_works()) GTEST_SKIP() << "io_uring is refused here";
  // The close arrives while reads are in flight: at the first completion of a 13-chunk read
  // with 4 in flight. The engine must stop submitting, cancel and reap the rest, and return
  // -ECANCELED; a second read is refused the same way.
  FaultyFileOs os;
  std::vector<std::string> fallbacks;
  auto f = StreamFile::open(os, model_.path, true, &fallbacks);
  ASSERT_TRUE(f.ok());
  auto plan = plan_read(model_.layout.layers[0].extent, f->align_bytes(), 4096);
  ASSERT_TRUE(plan.ok());
  ASSERT_GE(plan->chunk_count(), 13u);
  auto slot = SlotBuffer::allocate(plan->slot_bytes());
  ASSERT_TRUE(slot.ok());
  std::vector<std::span<std::byte>> slots{slot->bytes()};
  bool registered = false;
  auto e = make_uring_engine(f.value(), slots, UringOptions{.queue_depth = 4}, &fallbacks,
                             &registered);
  ASSERT_TRUE(e.ok()) << e.error().message;
  ReadEngine* engine = e.value().get();
  os.on_completion = [engine] { engine->cancel(); };
  Status st = engine->read(plan.value(), 0, slot->bytes());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, -ECANCELED);
  EXPECT_EQ(engine->counters().cancelled, 1u);
  EXPECT_EQ(engine->counters().chunks, 4u);  // the first 4 in flight, none submitted after
  EXPECT_FALSE(engine->read(plan.value(), 0, slot->bytes()).ok());
}

TEST_F(Loader, EngineCancelReturnsEcanceled) {
  std::vector<std::string> fallbacks;
  auto f = StreamFile::open(real_file_os(), model_.path, false, &fallbacks);
  ASSERT_TRUE(f.ok());
  auto plan = plan_read(model_.layout.layers[0].extent, 1, 4096);
  ASSERT_TRUE(plan.ok());
  auto slot = SlotBuffer::allocate(plan->slot_bytes());
  ASSERT_TRUE(slot.ok());
  std::vector<std::span<std::byte>> slots{slot->bytes()};
  std::vector<std::unique_ptr<ReadEngine>> engines;
  engines.push_back(make_pread_engine(f.value()));
  auto m = make_mmap_engine(f.value());
  ASSERT_TRUE(m.ok());
  engines.push_back(std::move(m.value()));
  bool registered = false;
  auto u = make_uring_engine(f.value(), slots, {}, &fallbacks, &registered);
  if (u.ok()) engines.push_back(std::move(u.value()));
  for (auto& e : engines) {
    ASSERT_TRUE(e->read(plan.value(), 0, slot->bytes()).ok()) << engine_name(e->kind());
    e->cancel();
    Status st = e->read(plan.value(), 0, slot->bytes());
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, -ECANCELED);
    EXPECT_EQ(e->counters().cancelled, 1u);
  }
}

}  // namespace
}  // namespace ork::io
