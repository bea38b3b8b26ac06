// The rocket path against the mainline kernel's published uAPI, written again here from the
// header itself (torvalds/linux include/uapi/drm/rocket_accel.h @ f088104d837a, MIT):
// field order and types -> offsets and sizes by hand; ioctl numbers from the _IOC encoding
// (include/uapi/asm-generic/ioctl.h: nr 7..0, type 15..8, size 29..16, dir 31..30 with
// write = 1, read = 2; drm.h: type 'd', DRM_COMMAND_BASE 0x40). Then the bytes libork's
// rocket backend hands the kernel at SUBMIT are read back at those offsets, not through
// libork's structs (docs/regcmd-contract.md section 8).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "uapi/rocket_accel.h"
#include "driver/emu/kernel/zero_work.h"

namespace {

constexpr uint32_t ioc(uint32_t dir, uint32_t nr, uint32_t size) {
  return (dir << 30) | (size << 16) | (uint32_t{'d'} << 8) | (0x40 + nr);
}
constexpr uint32_t kW = 1, kRW = 3;  // DRM_IOW = _IOC_WRITE, DRM_IOWR = _IOC_READ | _IOC_WRITE

#define EXPECT_FIELD(type, member, off, bytes)            \
  do {                                                    \
    EXPECT_EQ(offsetof(type, member), size_t{off}) << #member; \
    EXPECT_EQ(sizeof(type::member), size_t{bytes}) << #member; \
  } while (0)

TEST(RocketUapi, StructsHaveTheMainlineFieldOrderOffsetsAndSizes) {
  EXPECT_FIELD(drm_rocket_create_bo, size, 0, 4);
  EXPECT_FIELD(drm_rocket_create_bo, handle, 4, 4);
  EXPECT_FIELD(drm_rocket_create_bo, dma_address, 8, 8);
  EXPECT_FIELD(drm_rocket_create_bo, offset, 16, 8);
  EXPECT_EQ(sizeof(drm_rocket_create_bo), 24u);

  EXPECT_FIELD(drm_rocket_prep_bo, handle, 0, 4);
  EXPECT_FIELD(drm_rocket_prep_bo, reserved, 4, 4);
  EXPECT_FIELD(drm_rocket_prep_bo, timeout_ns, 8, 8);
  EXPECT_TRUE(std::is_signed_v<decltype(drm_rocket_prep_bo::timeout_ns)>);  // __s64
  EXPECT_EQ(sizeof(drm_rocket_prep_bo), 16u);

  EXPECT_FIELD(drm_rocket_fini_bo, handle, 0, 4);
  EXPECT_FIELD(drm_rocket_fini_bo, reserved, 4, 4);
  EXPECT_EQ(sizeof(drm_rocket_fini_bo), 8u);

  EXPECT_FIELD(drm_rocket_task, regcmd, 0, 4);
  EXPECT_FIELD(drm_rocket_task, regcmd_count, 4, 4);
  EXPECT_EQ(sizeof(drm_rocket_task), 8u);

  EXPECT_FIELD(drm_rocket_job, tasks, 0, 8);
  EXPECT_FIELD(drm_rocket_job, in_bo_handles, 8, 8);
  EXPECT_FIELD(drm_rocket_job, out_bo_handles, 16, 8);
  EXPECT_FIELD(drm_rocket_job, task_count, 24, 4);
  EXPECT_FIELD(drm_rocket_job, task_struct_size, 28, 4);
  EXPECT_FIELD(drm_rocket_job, in_bo_handle_count, 32, 4);
  EXPECT_FIELD(drm_rocket_job, out_bo_handle_count, 36, 4);
  EXPECT_EQ(sizeof(drm_rocket_job), 40u);

  EXPECT_FIELD(drm_rocket_submit, jobs, 0, 8);
  EXPECT_FIELD(drm_rocket_submit, job_count, 8, 4);
  EXPECT_FIELD(drm_rocket_submit, job_struct_size, 12, 4);
  EXPECT_FIELD(drm_rocket_submit, reserved, 16, 8);
  EXPECT_EQ(sizeof(drm_rocket_submit), 24u);
}

TEST(RocketUapi, IoctlNumbersFollowFromTheMainlineDefinitions) {
  EXPECT_EQ(DRM_ROCKET_CREATE_BO, 0x00);
  EXPECT_EQ(DRM_ROCKET_SUBMIT, 0x01);
  EXPECT_EQ(DRM_ROCKET_PREP_BO, 0x02);
  EXPECT_EQ(DRM_ROCKET_FINI_BO, 0x03);
  EXPECT_EQ(DRM_IOCTL_ROCKET_CREATE_BO, ioc(kRW, 0x00, 24));  // DRM_IOWR
  EXPECT_EQ(DRM_IOCTL_ROCKET_SUBMIT, ioc(kW, 0x01, 24));      // DRM_IOW
  EXPECT_EQ(DRM_IOCTL_ROCKET_PREP_BO, ioc(kW, 0x02, 16));     // DRM_IOW
  EXPECT_EQ(DRM_IOCTL_ROCKET_FINI_BO, ioc(kW, 0x03, 8));      // DRM_IOW
  EXPECT_EQ(ioc(kW, 0x01, 24), 0x40186441u);                  // the encoding itself, once by hand
}

// An Os that passes everything to the fake kernel and copies out, byte for byte, what a
// ROCKET_SUBMIT points at: the submit, its job array, each job's tasks and handles.
struct RecordedSubmit {
  std::vector<uint8_t> submit;
  std::vector<std::vector<uint8_t>> jobs, tasks;
  std::vector<std::vector<uint32_t>> in_handles, out_handles;
};

template <class T>
T rocket_field(const std::vector<uint8_t>& b, size_t off) {
  T v{};
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}
std::vector<uint8_t> bytes(uint64_t ptr, size_t n) {
  const auto* p = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(ptr));
  return std::vector<uint8_t>(p, p + n);
}

class RocketRecordingOs final : public ork::driver::Os {
 public:
  explicit RocketRecordingOs(ork::driver::Os& inner) : inner_(inner) {}
  std::vector<RecordedSubmit> submits;

  int ioctl(int fd, unsigned long request, void* arg) override {
    if (request == ioc(kW, 0x01, 24)) record(arg);
    return inner_.ioctl(fd, request, arg);
  }
  int open(const char* p, int f) override { return inner_.open(p, f); }
  int close(int fd) override { return inner_.close(fd); }
  void* mmap(void* a, size_t l, int p, int f, int fd, off_t o, int* e) override { return inner_.mmap(a, l, p, f, fd, o, e); }
  int munmap(void* a, size_t l) override { return inner_.munmap(a, l); }
  int poll(struct pollfd* f, nfds_t n, int t) override { return inner_.poll(f, n, t); }
  std::vector<std::string> list_nodes(const char* g) override { return inner_.list_nodes(g); }

 private:
  // Offsets: the mainline layout above (submit: jobs 0, job_count 8, job_struct_size 12;
  // job: tasks 0, in 8, out 16, task_count 24, task_struct_size 28, in/out counts 32/36).
  void record(const void* arg) {
    RecordedSubmit r;
    r.submit = bytes(reinterpret_cast<uintptr_t>(arg), 24);
    const uint32_t count = rocket_field<uint32_t>(r.submit, 8), stride = rocket_field<uint32_t>(r.submit, 12);
    for (uint32_t j = 0; j < count; ++j) {
      r.jobs.push_back(bytes(rocket_field<uint64_t>(r.submit, 0) + uint64_t{j} * stride, 40));
      const std::vector<uint8_t>& job = r.jobs.back();
      r.tasks.push_back(bytes(rocket_field<uint64_t>(job, 0), size_t{rocket_field<uint32_t>(job, 24)} * rocket_field<uint32_t>(job, 28)));
      auto handles = [&](size_t ptr_off, size_t count_off) {
        std::vector<uint32_t> h(rocket_field<uint32_t>(job, count_off));
        if (!h.empty()) std::memcpy(h.data(), bytes(rocket_field<uint64_t>(job, ptr_off), h.size() * 4).data(), h.size() * 4);
        return h;
      };
      r.in_handles.push_back(handles(8, 32));
      r.out_handles.push_back(handles(16, 36));
    }
    submits.push_back(std::move(r));
  }
  ork::driver::Os& inner_;
};

TEST(RocketUapi, TheSubmitLiborkSendsHasTheMainlineJobLayout) {
  // The PC stands in: every task completes (this test is about the bytes of the submit).
  ork::emu::FakeKernelConfig cfg;
  cfg.executor = ork::emu::zero_work_executor(0x300);
  ork::emu::FakeKernel kernel(cfg);
  RocketRecordingOs os(kernel);
  auto kmd = ork::driver::open_rocket(os, "/dev/accel/accel0");
  ASSERT_TRUE(kmd.ok()) << kmd.error().message;
  auto regcmd = (*kmd)->bo_create(65536, ork::driver::BoUsage::regcmd);
  auto in = (*kmd)->bo_create(4096, ork::driver::BoUsage::data);
  auto out = (*kmd)->bo_create(4096, ork::driver::BoUsage::data);
  ASSERT_TRUE(regcmd.ok() && in.ok() && out.ok());
  // Two cores' jobs: 2 tasks of 108 words (an MTX-sized task, trailer included) and 1 of 20.
  const uint64_t base = (*regcmd)->iova();
  ork::driver::SubmitDesc d;
  d.jobs = {{0, {{base, 108, 0x300}, {base + 1024, 108, 0x300}}}, {1, {{base + 4096, 20, 0x300}}}};
  d.in_bos = {in->get()};
  d.out_bos = {out->get()};
  ASSERT_TRUE((*kmd)->submit(d).ok());

  ASSERT_EQ(os.submits.size(), 1u);
  const RecordedSubmit& s = os.submits[0];
  EXPECT_EQ(rocket_field<uint32_t>(s.submit, 8), 2u);    // job_count
  EXPECT_EQ(rocket_field<uint32_t>(s.submit, 12), 40u);  // job_struct_size = sizeof(struct drm_rocket_job)
  EXPECT_EQ(rocket_field<uint64_t>(s.submit, 16), 0u);   // reserved, must be zero
  const std::vector<std::vector<std::pair<uint64_t, uint32_t>>> want = {
      {{base, 108}, {base + 1024, 108}}, {{base + 4096, 20}}};
  for (size_t j = 0; j < 2; ++j) {
    SCOPED_TRACE("job " + std::to_string(j));
    EXPECT_EQ(rocket_field<uint32_t>(s.jobs[j], 24), want[j].size());  // task_count
    EXPECT_EQ(rocket_field<uint32_t>(s.jobs[j], 28), 8u);              // task_struct_size
    EXPECT_EQ(s.in_handles[j], std::vector<uint32_t>{(*in)->handle()});
    EXPECT_EQ(s.out_handles[j], std::vector<uint32_t>{(*out)->handle()});
    for (size_t t = 0; t < want[j].size(); ++t) {
      // regcmd: the task's IOVA (32 bits); regcmd_count: its words, PC trailer included.
      EXPECT_EQ(rocket_field<uint32_t>(s.tasks[j], 8 * t + 0), want[j][t].first);
      EXPECT_EQ(rocket_field<uint32_t>(s.tasks[j], 8 * t + 4), want[j][t].second);
    }
  }
}

}  // namespace
