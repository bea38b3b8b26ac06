#include "driver/kmd/kmd.h"

#include "driver/common/npu_window.h"

namespace ork::driver {

Bo::Bo(Kmd& kmd, uint32_t handle, uint64_t iova, size_t size, uint8_t* map, uint64_t obj_addr)
    : kmd_(kmd), handle_(handle), iova_(iova), size_(size), map_(map), obj_addr_(obj_addr) {
  kmd_.resident_bytes_.fetch_add(size_, std::memory_order_relaxed);
}

// The backend that made the BO unmaps and frees it (rknpu MEM_DESTROY, rocket GEM_CLOSE).
Bo::~Bo() {
  kmd_.resident_bytes_.fetch_sub(size_, std::memory_order_relaxed);
  kmd_.bo_release(*this);
}

WindowInfo Kmd::estimate_window() const {
  constexpr uint64_t kWindow = hw::kNpuWindowBytes;
  WindowInfo w;
  w.window_bytes = kWindow;
  w.resident_bytes = resident_bytes();
  w.free_bytes = w.resident_bytes < kWindow ? kWindow - w.resident_bytes : 0;
  w.largest_free_bytes = w.free_bytes;
  w.exact = false;
  return w;
}

}  // namespace ork::driver
