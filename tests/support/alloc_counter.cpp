// The global operator new and delete of a test executable that counts allocations
// (alloc_counter.h): malloc and free, each new counted while the calling thread counts.
#include "tests/support/alloc_counter.h"

#include <cstdlib>
#include <new>

void* operator new(std::size_t bytes) {
  if (ork::test::alloc_counting) ++ork::test::alloc_count;
  if (void* p = std::malloc(bytes ? bytes : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t bytes, std::align_val_t align) {
  if (ork::test::alloc_counting) ++ork::test::alloc_count;
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (bytes + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
