// Fuzz harness: the head of a packed model file (lib/exec/pack_file.h: the 4096-byte header
// and the JSON description after it) through parse_packed, as read_packed hands it over.
// Each input runs twice: as given (file size = input size), and with both FNV-1a checksums
// recomputed and the file as long as its header says, so that the fuzzer also reaches the
// checks behind them (offsets, the description, the tensor table). An accepted model must
// describe only tensors inside its file. Errors are fine; a crash, a sanitizer report or a
// tensor outside the file is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "lib/exec/pack_file.h"

namespace {

uint64_t get_u64(const uint8_t* p, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[at + i];
  return v;
}

void put_u64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t fnv1a(const uint8_t* p, size_t n) {  // 64-bit FNV-1a, as the writer's fingerprint
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64-bit basis (lib/exec/activation.h)
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Whatever parse_packed accepts, the executor reads: every range must lie in the file.
void check_accepted(const ork::exec::PackedModel& m) {
  auto inside = [&](uint64_t off, uint64_t bytes) { return off <= m.file_bytes && bytes <= m.file_bytes - off; };
  for (const auto& t : m.tensors) {
    if (!inside(t.offset, t.bytes) || t.offset < m.data_offset) std::abort();
    if (t.scale_bytes != 0 && !inside(t.scale_offset, t.scale_bytes)) std::abort();
  }
  (void)m.weight_bytes();
  (void)m.largest_layer_bytes();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ork::exec;
  if (auto m = parse_packed({data, size}, size)) check_accepted(*m);
  if (size < kPackHeaderBytes) return 0;
  std::vector<uint8_t> fixed(data, data + size);
  const uint64_t json_off = get_u64(data, 16), json_bytes = get_u64(data, 24);
  if (json_off <= size && json_bytes <= size - json_off) put_u64(fixed, 48, fnv1a(data + json_off, json_bytes));
  put_u64(fixed, 56, fnv1a(fixed.data(), 56));
  if (auto m = parse_packed(fixed, get_u64(data, 40))) check_accepted(*m);
  return 0;
}
