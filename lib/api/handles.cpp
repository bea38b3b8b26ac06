// The live-handle sets (handles.h): one set of addresses per kind under one mutex.
#include "lib/api/handles.h"

#include <array>
#include <cstdint>
#include <mutex>
#include <unordered_set>

namespace ork::api {
namespace {

constexpr size_t kKinds = 6;

struct Registry {
  std::mutex mu;
  std::array<std::unordered_set<uintptr_t>, kKinds> live;
};

// Never destroyed: a handle released from another static object's destructor at exit still
// finds it.
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

uintptr_t key(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

const char* handle_kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::device: return "ork_device";
    case HandleKind::weights: return "ork_weights";
    case HandleKind::job: return "ork_job";
    case HandleKind::batch: return "ork_batch";
    case HandleKind::model: return "ork_model";
    case HandleKind::session: return "ork_session";
  }
  return "handle";
}

void handle_born(HandleKind kind, const void* p) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.live[static_cast<size_t>(kind)].insert(key(p));
}

bool handle_dies(HandleKind kind, const void* p) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.live[static_cast<size_t>(kind)].erase(key(p)) == 1;
}

bool handle_live(HandleKind kind, const void* p) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.live[static_cast<size_t>(kind)].count(key(p)) == 1;
}

}  // namespace ork::api
