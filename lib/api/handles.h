// Live handles (ork.h "Handles"): every device, weights, job, batch, model and session the
// library hands out is registered here until its close / destroy / release, so that a
// second release, or a wait on a released job, is refused with a message instead of
// reading freed memory. The check looks the pointer up in a set; it never touches the
// object behind it. What it cannot tell: a released pointer whose address a new handle of
// the same kind has since taken is that new handle (as with free() in libc).
#pragma once

namespace ork::api {

enum class HandleKind { device, weights, job, batch, model, session };

// "ork_device", "ork_weights", ...: how a message names the kind.
const char* handle_kind_name(HandleKind kind);
// `p` is given out (idempotent).
void handle_born(HandleKind kind, const void* p);
// `p` stops being a live handle: false when it was not one (released already, or never
// given out). Atomic: of two threads releasing one handle, one gets true.
bool handle_dies(HandleKind kind, const void* p);
bool handle_live(HandleKind kind, const void* p);

// A member that registers its object for as long as it lives (declare it in the handle's
// struct as `Live<HandleKind::job> live{this};`).
template <HandleKind Kind>
class Live {
 public:
  explicit Live(const void* self) : self_(self) { handle_born(Kind, self_); }
  ~Live() { handle_dies(Kind, self_); }
  Live(const Live&) = delete;
  Live& operator=(const Live&) = delete;

 private:
  const void* self_;
};

}  // namespace ork::api
