#include "driver/kmd/kmd.h"

namespace ork::driver {

// The backend that made the BO unmaps and frees it (rknpu MEM_DESTROY, rocket GEM_CLOSE).
Bo::~Bo() { kmd_.bo_release(*this); }

}  // namespace ork::driver
