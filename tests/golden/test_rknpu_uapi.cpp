// The vendor path against the vendor driver's published uAPI, written again here from the
// header (mtx512/rk3588-npu include/rknpu-ioctl.h @ 472394787d3f, a copy of the rknpu
// driver's include/rknpu_ioctl.h; the 0.9.x renames of two fields keep their offsets):
// field offsets by hand, and the bytes libork's rknpu backend hands the kernel at SUBMIT
// (the submit, and the rknpu_task records it wrote into the task BO) read back at those
// offsets, not through libork's structs (docs/regcmd-contract.md section 8).
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <vector>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/kmd/kmd.h"
#include "uapi/rknpu_ioctl.h"
#include "driver/emu/kernel/zero_work.h"

namespace {

constexpr uint32_t ioc_rw(uint32_t nr, uint32_t size) {  // DRM_IOWR: dir 3, type 'd', 0x40 + nr
  return (3u << 30) | (size << 16) | (uint32_t{'d'} << 8) | (0x40 + nr);
}

#define EXPECT_AT(type, member, off) EXPECT_EQ(offsetof(type, member), size_t{off}) << #member

TEST(RknpuUapi, TaskAndSubmitHaveThePublishedOffsets) {
  // struct rknpu_task (__packed): eight __u32, then __u64 regcmd_addr.
  EXPECT_AT(rknpu_task, flags, 0);
  EXPECT_AT(rknpu_task, op_idx, 4);
  EXPECT_AT(rknpu_task, enable_mask, 8);
  EXPECT_AT(rknpu_task, int_mask, 12);
  EXPECT_AT(rknpu_task, int_clear, 16);
  EXPECT_AT(rknpu_task, int_status, 20);
  EXPECT_AT(rknpu_task, regcfg_amount, 24);
  EXPECT_AT(rknpu_task, regcfg_offset, 28);
  EXPECT_AT(rknpu_task, regcmd_addr, 32);
  EXPECT_EQ(sizeof(rknpu_task), 40u);
  // struct rknpu_submit: six 32-bit fields, four 64-bit, core_mask, fence_fd, subcore_task[5].
  EXPECT_AT(rknpu_submit, flags, 0);
  EXPECT_AT(rknpu_submit, timeout, 4);
  EXPECT_AT(rknpu_submit, task_start, 8);
  EXPECT_AT(rknpu_submit, task_number, 12);
  EXPECT_AT(rknpu_submit, task_counter, 16);
  EXPECT_AT(rknpu_submit, priority, 20);
  EXPECT_AT(rknpu_submit, task_obj_addr, 24);
  EXPECT_AT(rknpu_submit, iommu_domain_id, 32);  // the header's __u64 regcfg_obj_addr
  EXPECT_AT(rknpu_submit, task_base_addr, 40);
  EXPECT_AT(rknpu_submit, hw_elapse_time, 48);   // the header's __u64 user_data
  EXPECT_AT(rknpu_submit, core_mask, 56);
  EXPECT_AT(rknpu_submit, fence_fd, 60);
  EXPECT_AT(rknpu_submit, subcore_task, 64);
  EXPECT_EQ(sizeof(rknpu_submit), 64u + 5 * 8);
  EXPECT_EQ(DRM_IOCTL_RKNPU_SUBMIT, ioc_rw(0x01, 104));
  EXPECT_EQ(DRM_IOCTL_RKNPU_MEM_CREATE, ioc_rw(0x02, 48));
  EXPECT_EQ(DRM_IOCTL_RKNPU_MEM_MAP, ioc_rw(0x03, 16));
}

template <class T>
T rknpu_field(const uint8_t* b, size_t off) {
  T v{};
  std::memcpy(&v, b + off, sizeof v);
  return v;
}

// Passes everything to the fake kernel; remembers where each BO is mapped (MEM_CREATE gives
// handle and obj_addr at 0 and 16, MEM_MAP the mmap offset at 8) and, at SUBMIT, copies the
// submit and the task records it names out of the task BO's mapping.
class RknpuRecordingOs final : public ork::driver::Os {
 public:
  explicit RknpuRecordingOs(ork::driver::Os& inner) : inner_(inner) {}
  std::vector<uint8_t> submit;
  std::vector<std::vector<uint8_t>> tasks;  // one 40-byte record per task of the submit

  int ioctl(int fd, unsigned long request, void* arg) override {
    auto* b = static_cast<uint8_t*>(arg);
    if (request == ioc_rw(0x01, 104)) record(b);
    const int rc = inner_.ioctl(fd, request, arg);
    if (rc == 0 && request == ioc_rw(0x02, 48)) obj_of_handle_[rknpu_field<uint32_t>(b, 0)] = rknpu_field<uint64_t>(b, 16);
    if (rc == 0 && request == ioc_rw(0x03, 16)) handle_of_offset_[rknpu_field<uint64_t>(b, 8)] = rknpu_field<uint32_t>(b, 0);
    return rc;
  }
  void* mmap(void* a, size_t l, int p, int f, int fd, off_t o, int* error) override {
    void* m = inner_.mmap(a, l, p, f, fd, o, error);
    if (m && handle_of_offset_.count(static_cast<uint64_t>(o)))
      map_of_obj_[obj_of_handle_[handle_of_offset_[static_cast<uint64_t>(o)]]] = static_cast<uint8_t*>(m);
    return m;
  }
  int open(const char* p, int f) override { return inner_.open(p, f); }
  int close(int fd) override { return inner_.close(fd); }
  int munmap(void* a, size_t l) override { return inner_.munmap(a, l); }
  int poll(struct pollfd* f, nfds_t n, int t) override { return inner_.poll(f, n, t); }
  std::vector<std::string> list_nodes(const char* g) override { return inner_.list_nodes(g); }

 private:
  void record(const uint8_t* s) {
    submit.assign(s, s + 104);
    const uint8_t* task_bo = map_of_obj_.count(rknpu_field<uint64_t>(s, 24)) ? map_of_obj_[rknpu_field<uint64_t>(s, 24)] : nullptr;
    ASSERT_NE(task_bo, nullptr) << "SUBMIT names a task BO that was never mapped";
    const uint32_t start = rknpu_field<uint32_t>(s, 8), number = rknpu_field<uint32_t>(s, 12);
    for (uint32_t t = start; t < start + number; ++t) tasks.emplace_back(task_bo + 40 * t, task_bo + 40 * t + 40);
  }
  ork::driver::Os& inner_;
  std::map<uint32_t, uint64_t> obj_of_handle_;
  std::map<uint64_t, uint32_t> handle_of_offset_;
  std::map<uint64_t, uint8_t*> map_of_obj_;
};

TEST(RknpuUapi, TheTasksLiborkSubmitsHaveThePublishedLayout) {
  ork::emu::FakeKernelConfig cfg;  // the PC stands in: this test is about the bytes
  cfg.executor = ork::emu::zero_work_executor(0x300);
  ork::emu::FakeKernel kernel(cfg);
  RknpuRecordingOs os(kernel);
  auto kmd = ork::driver::open_rknpu(os, "/dev/dri/card1");
  ASSERT_TRUE(kmd.ok()) << kmd.error().message;
  auto regcmd = (*kmd)->bo_create(65536, ork::driver::BoUsage::regcmd);
  auto out = (*kmd)->bo_create(4096, ork::driver::BoUsage::data);
  ASSERT_TRUE(regcmd.ok() && out.ok());
  const uint64_t base = (*regcmd)->iova();
  ork::driver::SubmitDesc d;  // one core, two MTX-sized tasks of 108 words (trailer included)
  d.jobs = {{0, {{base, 108, 0x300}, {base + 1024, 108, 0x300}}}};
  d.out_bos = {out->get()};
  ASSERT_TRUE((*kmd)->submit(d).ok());

  ASSERT_EQ(os.submit.size(), 104u);
  const uint8_t* s = os.submit.data();
  EXPECT_EQ(rknpu_field<uint32_t>(s, 0) & 1u, 1u);    // RKNPU_JOB_PC: the only mode the driver accepts
  EXPECT_EQ(rknpu_field<uint32_t>(s, 12), 2u);        // task_number
  EXPECT_EQ(rknpu_field<uint32_t>(s, 56), 1u);        // core_mask: core 0
  EXPECT_EQ(rknpu_field<uint32_t>(s, 64 + 0), rknpu_field<uint32_t>(s, 8));  // subcore_task[0].task_start
  EXPECT_EQ(rknpu_field<uint32_t>(s, 64 + 4), 2u);                   // subcore_task[0].task_number
  ASSERT_EQ(os.tasks.size(), 2u);
  for (size_t t = 0; t < 2; ++t) {
    const uint8_t* r = os.tasks[t].data();
    EXPECT_EQ(rknpu_field<uint32_t>(r, 8), 0x0du) << "enable_mask (MTX: CNA|CORE|DPU)";
    EXPECT_EQ(rknpu_field<uint32_t>(r, 12), 0x300u) << "int_mask";
    EXPECT_EQ(rknpu_field<uint32_t>(r, 16), 0x1ffffu) << "int_clear";
    EXPECT_EQ(rknpu_field<uint32_t>(r, 24), 104u) << "regcfg_amount: the words without the 4 PC entries";
    EXPECT_EQ(rknpu_field<uint64_t>(r, 32), base + 1024 * t) << "regcmd_addr";
  }
}

}  // namespace
