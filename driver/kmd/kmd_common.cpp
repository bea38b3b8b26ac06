#include "driver/kmd/kmd_common.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "driver/os/ioctl.h"
#include "uapi/rknpu_ioctl.h"

namespace ork::driver {

void UniqueFd::reset() {
  if (fd_ >= 0) os_->close(fd_);
  fd_ = -1;
}

Result<UniqueFd> open_node(Os& os, const std::string& node) {
  int fd = os.open(node.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return make_error(-err, fmt::format("cannot open {}: {}", node, errno_text(-err)));
  }
  return UniqueFd(os, fd);
}

Result<DrmVersion> query_drm_version(Os& os, int fd, const std::string& node) {
  struct drm_version v {};
  int rc = ioctl_retry(os, fd, DRM_IOCTL_VERSION, &v);
  if (rc) return make_error(rc, fmt::format("{}: DRM_VERSION failed: {}", node, errno_text(rc)));
  DrmVersion out;
  out.name.resize(v.name_len);
  out.desc.resize(v.desc_len);
  std::string date(v.date_len, '\0');
  v.name = out.name.data();
  v.desc = out.desc.data();
  v.date = date.data();
  rc = ioctl_retry(os, fd, DRM_IOCTL_VERSION, &v);
  if (rc) return make_error(rc, fmt::format("{}: DRM_VERSION failed: {}", node, errno_text(rc)));
  out.major = v.version_major;
  out.minor = v.version_minor;
  out.patch = v.version_patchlevel;
  return out;
}

bool is_emulated(const DrmVersion& version) {
  return version.desc.find("[ork-emu]") != std::string::npos;
}

Result<int> core_count(int hardware_cores) {
  const char* env = std::getenv("ORK_CORES");
  if (!env || !*env) return hardware_cores;
  char* end = nullptr;
  long value = std::strtol(env, &end, 10);
  if (*end != '\0' || value < 1 || value > hardware_cores) {
    return make_error(-EINVAL, fmt::format("ORK_CORES = '{}': must be a whole number from 1 to {}",
                                           env, hardware_cores));
  }
  return static_cast<int>(value);
}

namespace {

Status validate_task(const TaskRef& t, int core, size_t index) {
  auto bad = [&](std::string what) {
    return Status(make_error(-EINVAL, fmt::format("core {} task {}: {}", core, index, what)));
  };
  if (t.regcmd_iova == 0) return bad("regcmd IOVA is 0");
  if (t.regcmd_iova >= (1ull << 32)) {
    return bad(fmt::format("regcmd IOVA 0x{:x} is not below 4 GiB (NPU addresses are 32-bit)",
                           t.regcmd_iova));
  }
  // PC BASE_ADDRESS keeps bits 31:4 only (rk3588-npu.md section 3).
  if (t.regcmd_iova % 16)
    return bad(fmt::format("regcmd IOVA 0x{:x} is not 16-byte aligned", t.regcmd_iova));
  if (t.regcmd_entries <= RKNPU_PC_DATA_EXTRA_AMOUNT) {
    return bad(
        fmt::format("regcmd_entries = {}: a task needs its register writes plus the "
                    "4-entry PC trailer",
                    t.regcmd_entries));
  }
  if (t.int_mask == 0) return bad("int_mask = 0: no completion interrupt would ever match");
  return Status::success();
}

}  // namespace

Status validate_submit(const SubmitDesc& desc, int cores) {
  if (desc.jobs.empty()) return make_error(-EINVAL, "submit: no core jobs (jobs is empty)");
  if (desc.timeout_ms == 0) return make_error(-EINVAL, "submit: timeout_ms = 0");
  std::set<int> seen;
  for (const CoreJob& job : desc.jobs) {
    if (job.core < 0 || job.core >= cores) {
      return make_error(-EINVAL, fmt::format("submit: core {} does not exist (this device uses "
                                             "cores 0..{})",
                                             job.core, cores - 1));
    }
    if (!seen.insert(job.core).second) {
      return make_error(-EINVAL,
                        fmt::format("submit: core {} has two jobs (one per core)", job.core));
    }
    if (job.tasks.empty()) {
      return make_error(-EINVAL, fmt::format("submit: core {} has an empty task list", job.core));
    }
    for (size_t i = 0; i < job.tasks.size(); ++i) {
      if (Status st = validate_task(job.tasks[i], job.core, i); !st) return st;
    }
  }
  for (const auto* list : {&desc.in_bos, &desc.out_bos}) {
    for (const Bo* bo : *list) {
      if (!bo) return make_error(-EINVAL, "submit: a null BO in in_bos/out_bos");
    }
  }
  return Status::success();
}

std::string errno_text(int negative_errno) {
  int err = -negative_errno;
  const char* name = strerrorname_np(err);
  return fmt::format("{}: {}", name ? name : fmt::format("errno {}", err), std::strerror(err));
}

const char* kmd_kind_name(KmdKind kind) { return kind == KmdKind::rknpu ? "rknpu" : "rocket"; }

const char* async_mode_name(AsyncMode mode) {
  switch (mode) {
    case AsyncMode::fence: return "fence";
    case AsyncMode::blocking: return "blocking";
    case AsyncMode::prep_bo: return "prep_bo";
  }
  return "unknown";
}

}  // namespace ork::driver
