// The packed model file: writer and checked reader (pack_file.h).
#include "lib/exec/pack_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "driver/common/errno_text.h"
#include "driver/common/json.h"
#include "driver/common/int4.h"
#include "lib/exec/activation.h"
#include "lib/matmul/context.h"
#include "lib/matmul/int4_bound.h"

namespace ork::exec {
namespace {

constexpr size_t kHeaderFields = 56;  // bytes covered by the header checksum

template <typename T>
void put(uint8_t* p, size_t at, T v) { std::memcpy(p + at, &v, sizeof v); }
template <typename T>
T get(const uint8_t* p, size_t at) {
  T v;
  std::memcpy(&v, p + at, sizeof v);
  return v;
}

nlohmann::json tensor_table(const PackedModel& m) {
  nlohmann::json t = nlohmann::json::array();
  for (const auto& e : m.tensors)
    t.push_back({e.layer, e.matmul, e.offset, e.bytes, e.scale_offset, e.scale_bytes, e.slice_k});
  return t;
}

// The description's reserved space: the tensor table's final size is not known before the
// offsets are, so room for the longest numbers (20 digits each) is reserved and the JSON
// padded with spaces.
uint64_t json_reserve(const ModelDesc& desc) {
  const size_t count = static_cast<size_t>(desc.layers) * desc.matmuls.size();
  return align_up(desc_to_json(desc).size() + 64 + count * (7 * 21 + 4), kPackAlign);
}

}  // namespace

Result<uint64_t> packed_file_bytes(const ModelDesc& desc, const std::function<bool(int, int)>& scaled) {
  if (auto s = check_desc(desc); !s) return s.error();
  std::vector<uint64_t> tensor(desc.matmuls.size()), scales(desc.matmuls.size());
  for (size_t j = 0; j < desc.matmuls.size(); ++j) {
    auto b = packed_bytes_at_most(desc.dtype, desc.matmuls[j].k, desc.matmuls[j].n);
    if (!b) return b.error();
    tensor[j] = align_up(*b, kPackAlign);
    scales[j] = align_up(static_cast<uint64_t>(desc.matmuls[j].n) * sizeof(float), kPackAlign);
  }
  // Sums of at most 2^31 layers x a few matmuls of at most 2^40 bytes each: checked anyway.
  uint64_t total = kPackHeaderBytes + json_reserve(desc);
  for (int l = 0; l < desc.layers; ++l) {
    for (size_t j = 0; j < desc.matmuls.size(); ++j) {
      const uint64_t add = tensor[j] + (scaled && scaled(l, static_cast<int>(j)) ? scales[j] : 0);
      if (__builtin_add_overflow(total, add, &total))
        return make_error(-EFBIG, "the packed model would be larger than 2^64 bytes");
    }
  }
  return total;
}

Result<matmul::Plan> layout_plan(matmul::DType dtype, int64_t k, int64_t n, int64_t slice_k) {
  return matmul::make_plan(matmul::Shape{1, k, n}, matmul::PlanOptions{.dtype = dtype, .cores = 1, .slice_k = slice_k});
}

Result<uint64_t> packed_bytes(matmul::DType dtype, int64_t k, int64_t n, int64_t slice_k) {
  auto plan = layout_plan(dtype, k, n, slice_k);
  if (!plan) return plan.error();
  return static_cast<uint64_t>(plan->b_bytes());
}

Result<uint64_t> packed_bytes_at_most(matmul::DType dtype, int64_t k, int64_t n) {
  auto most = packed_bytes(dtype, k, n);
  if (!most || dtype != matmul::DType::int4) return most;
  // int4: the width is the weights' own (int4_bound.h), its padding under 32 K a slice;
  // every width a file may hold, 113 plans of arithmetic.
  for (int64_t w = matmul::kInt4SliceK; w <= matmul::kInt4MaxSliceK; w += matmul::kKAlign) {
    auto b = packed_bytes(dtype, k, n, w);
    if (!b) return b.error();
    most = std::max(*most, *b);
  }
  return most;
}

uint64_t PackedModel::weight_bytes() const {
  uint64_t s = 0;
  for (const auto& t : tensors) s += t.bytes;
  return s;
}

uint64_t PackedModel::largest_layer_bytes() const {
  uint64_t best = 0;
  for (int l = 0; l < desc.layers; ++l) {
    uint64_t s = 0;
    for (size_t j = 0; j < desc.matmuls.size(); ++j) s += tensor(l, static_cast<int>(j)).bytes;
    best = std::max(best, s);
  }
  return best;
}

Result<PackWriter> PackWriter::create(const std::string& path, const ModelDesc& desc) {
  if (auto s = check_desc(desc); !s) return s.error();
  PackWriter w;
  w.path_ = path;
  w.model_.desc = desc;
  w.json_reserve_ = json_reserve(desc);
  w.model_.data_offset = kPackHeaderBytes + w.json_reserve_;
  w.cursor_ = w.model_.data_offset;
  auto out = OutputFile::create(path);
  if (!out) return out.error();
  w.out_.emplace(std::move(*out));
  return w;
}

PackWriter::PackWriter(PackWriter&& o) noexcept
    : out_(std::move(o.out_)), path_(std::move(o.path_)), model_(std::move(o.model_)), json_reserve_(o.json_reserve_),
      cursor_(o.cursor_), packed_(std::move(o.packed_)) {
  o.out_.reset();
}

PackWriter::~PackWriter() = default;

Status PackWriter::write_at(uint64_t offset, const void* data, size_t bytes) {
  if (!out_) return make_error(-EBADF, fmt::format("{}: the writer is finished", path_));
  return out_->write_at(offset, data, bytes);
}

Status PackWriter::add(int layer, int mi, const void* row_major, std::span<const float> scales, int64_t slice_k) {
  const size_t expect = model_.tensors.size();
  const size_t per = model_.desc.matmuls.size();
  if (layer != static_cast<int>(expect / per) || mi != static_cast<int>(expect % per))
    return make_error(-EINVAL, fmt::format("tensor layer {} matmul {} added out of order", layer, mi));
  const MatmulDesc& md = model_.desc.matmuls[static_cast<size_t>(mi)];
  if (model_.desc.dtype == matmul::DType::int4 && slice_k == 0) {  // the weights' own width
    auto w = matmul::int4_safe_slice_k({static_cast<const uint8_t*>(row_major), static_cast<size_t>(int4::packed_bytes(md.k * md.n))},
                                       md.k, md.n);
    if (!w) return make_error(w.error().code, fmt::format("tensor \"{}\" of layer {}: {}", md.name, layer, w.error().message));
    slice_k = *w;
  }
  auto plan = layout_plan(model_.desc.dtype, md.k, md.n, slice_k);
  if (!plan) return plan.error();
  // One buffer for every tensor, zeroed as a new one is: a block of its own per tensor was
  // a fresh mapping faulted in 4 KiB at a time (docs/reliability.md "CI time", lever 57).
  std::vector<uint8_t>& native = packed_;
  native.assign(static_cast<size_t>(plan->b_bytes()), 0);
  if (auto s = matmul::pack_weights(*plan, row_major, native); !s) return s;
  PackedTensor t{layer, mi, cursor_, native.size(), 0, 0, slice_k};
  if (auto s = write_at(t.offset, native.data(), native.size()); !s) return s;
  cursor_ = align_up(t.offset + t.bytes, kPackAlign);
  if (!scales.empty()) {
    if (static_cast<int64_t>(scales.size()) != md.n)
      return make_error(-EINVAL, fmt::format("tensor \"{}\": {} scales for N = {}", md.name, scales.size(), md.n));
    t.scale_offset = cursor_;
    t.scale_bytes = scales.size_bytes();
    if (auto s = write_at(t.scale_offset, scales.data(), scales.size_bytes()); !s) return s;
    cursor_ = align_up(t.scale_offset + t.scale_bytes, kPackAlign);
  }
  model_.tensors.push_back(t);
  return {};
}

Status PackWriter::finish() {
  const size_t count = static_cast<size_t>(model_.desc.layers) * model_.desc.matmuls.size();
  if (model_.tensors.size() != count)
    return make_error(-EINVAL, fmt::format("{} of {} tensors written", model_.tensors.size(), count));
  model_.file_bytes = cursor_;
  nlohmann::json j;
  auto desc_json = parse_json_bounded(desc_to_json(model_.desc), "model description");
  if (!desc_json) return desc_json.error();
  j["model"] = std::move(*desc_json);
  j["tensors"] = tensor_table(model_);
  const std::string text = j.dump();
  if (text.size() > json_reserve_) return make_error(-EINVAL, "the tensor table outgrew its reserved space");
  std::vector<uint8_t> head(kPackHeaderBytes + json_reserve_, 0);
  std::memcpy(head.data() + kPackHeaderBytes, text.data(), text.size());
  std::memcpy(head.data(), kPackMagic, 8);
  put<uint32_t>(head.data(), 8, kPackVersion);
  put<uint32_t>(head.data(), 12, static_cast<uint32_t>(kPackHeaderBytes));
  put<uint64_t>(head.data(), 16, kPackHeaderBytes);
  put<uint64_t>(head.data(), 24, text.size());
  put<uint64_t>(head.data(), 32, model_.data_offset);
  put<uint64_t>(head.data(), 40, model_.file_bytes);
  put<uint64_t>(head.data(), 48, fingerprint({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
  put<uint64_t>(head.data(), kHeaderFields, fingerprint({head.data(), kHeaderFields}));
  if (auto s = write_at(0, head.data(), head.size()); !s) return s;
  // The last tensor's padding: the file ends on the 4 KiB boundary the header states.
  const PackedTensor& last = model_.tensors.back();
  const uint64_t written = last.scale_bytes != 0 ? last.scale_offset + last.scale_bytes : last.offset + last.bytes;
  const uint8_t zero = 0;
  if (written < model_.file_bytes)
    if (auto s = write_at(model_.file_bytes - 1, &zero, 1); !s) return s;
  Status s = out_->commit();
  out_.reset();  // committed, or the temporary file removed
  return s;
}

namespace {

// Where the header says the description is, and the file's version (its table's rows).
struct JsonSpan {
  uint64_t offset = 0, bytes = 0;
  uint32_t version = kPackVersion;
};

// The fixed header: magic, version, checksum, offsets in order. Fills m's offsets.
Result<JsonSpan> parse_header(std::span<const uint8_t> head, uint64_t file_bytes, PackedModel& m) {
  // The magic before the size: a short file of other bytes (/etc/passwd) is not a packed
  // model at all, only one that starts like one is a truncated packed model.
  if (!head.empty() && std::memcmp(head.data(), kPackMagic, std::min<size_t>(head.size(), 8)) != 0)
    return make_error(-EINVAL, "not a packed model file (bad magic; pack it with ork_pack)");
  if (head.size() < kPackHeaderBytes)
    return make_error(-EINVAL, fmt::format("model file truncated: {} bytes, smaller than the {}-byte header",
                                           file_bytes, kPackHeaderBytes));
  const uint8_t* p = head.data();
  if (std::memcmp(p, kPackMagic, 8) != 0) return make_error(-EINVAL, "not a packed model file (bad magic; pack it with ork_pack)");
  const auto version = get<uint32_t>(p, 8);
  if (version == 1)
    return make_error(-EINVAL, fmt::format("packed model version 1 (its checksums use an FNV-1a basis one digit short): "
                                           "this build reads version {}; repack the model with ork_pack", kPackVersion));
  if (version < kPackOldestVersion || version > kPackVersion)
    return make_error(-EINVAL, fmt::format("packed model version {}: this build reads versions {} to {}", version,
                                           kPackOldestVersion, kPackVersion));
  if (get<uint64_t>(p, kHeaderFields) != fingerprint({p, kHeaderFields}))
    return make_error(-EINVAL, "packed model header is corrupted (checksum mismatch)");
  const JsonSpan js{get<uint64_t>(p, 16), get<uint64_t>(p, 24), version};
  m.data_offset = get<uint64_t>(p, 32);
  m.file_bytes = get<uint64_t>(p, 40);
  // data_offset >= json offset first: the difference is unsigned (a data offset of 0 once let
  // a description of 2^64 - 4096 bytes through, read far past the buffer: fuzz/crashes/pack_file).
  if (get<uint32_t>(p, 12) != kPackHeaderBytes || js.offset != kPackHeaderBytes || m.data_offset < js.offset ||
      js.bytes > m.data_offset - js.offset || m.data_offset % kPackAlign != 0 || m.data_offset > m.file_bytes)
    return make_error(-EINVAL, "packed model header is corrupted (offsets out of order)");
  if (file_bytes < m.file_bytes)
    return make_error(-EINVAL, fmt::format("model file truncated: {} bytes, the header says {}", file_bytes, m.file_bytes));
  if (head.size() < js.offset + js.bytes)
    return make_error(-EINVAL, fmt::format("model file truncated inside its description ({} bytes)", head.size()));
  return js;
}

// One row of the tensor table: [layer, matmul, offset, bytes, scale offset, scale bytes] and,
// from version 3, slice_k; integers whole and in range (json_int_value): a layer of 2^32 is
// no layer 0.
Result<PackedTensor> table_entry(const nlohmann::json& e, size_t i, uint32_t version) {
  constexpr const char* kWhat = "packed model tensor table";
  const size_t fields = version >= 3 ? 7 : 6;
  if (!e.is_array() || e.size() != fields)
    return make_error(-EINVAL, fmt::format("{}: tensors[{}] is not [layer, matmul, offset, bytes, scale offset, scale bytes{}]",
                                           kWhat, i, version >= 3 ? ", slice_k" : ""));
  PackedTensor t;
  // Each field's name for its error alone (json_int_value calls it only then).
  const auto field = [i](size_t f) { return [i, f] { return fmt::format("tensors[{}][{}]", i, f); }; };
  int* ints[] = {&t.layer, &t.matmul};
  for (size_t f = 0; f < 2; ++f) {
    auto v = json_int_value<int>(e[f], field(f), 0, std::numeric_limits<int>::max(), kWhat);
    if (!v) return v.error();
    *ints[f] = *v;
  }
  uint64_t* sizes[] = {&t.offset, &t.bytes, &t.scale_offset, &t.scale_bytes};
  for (size_t f = 2; f < 6; ++f) {
    auto v = json_int_value<uint64_t>(e[f], field(f), 0, UINT64_MAX, kWhat);
    if (!v) return v.error();
    *sizes[f - 2] = *v;
  }
  if (fields == 7) {  // the range here; which widths the tensor's dtype takes: check_tensors
    auto v = json_int_value<int64_t>(e[6], field(6), 0, matmul::kInt4MaxSliceK, kWhat);
    if (!v) return v.error();
    t.slice_k = *v;
  }
  return t;
}

// The description (checksummed JSON): the model and the tensor table, into m.
Status parse_description(std::span<const uint8_t> head, JsonSpan span, PackedModel& m) {
  const uint8_t* js = head.data() + span.offset;
  if (get<uint64_t>(head.data(), 48) != fingerprint({js, span.bytes}))
    return make_error(-EINVAL, "packed model description is corrupted (checksum mismatch)");
  auto parsed = parse_json_bounded({reinterpret_cast<const char*>(js), span.bytes}, "packed model description");
  if (!parsed) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (!j.is_object() || !j.contains("model") || !j.contains("tensors") || !j["tensors"].is_array())
    return make_error(-EINVAL, "packed model description is not an object with \"model\" and a \"tensors\" list");
  auto desc = desc_from_json(j["model"]);
  if (!desc) return desc.error();
  m.desc = std::move(*desc);
  const nlohmann::json& table = j["tensors"];
  m.tensors.reserve(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    auto t = table_entry(table[i], i, span.version);
    if (!t) return t.error();
    m.tensors.push_back(*t);
  }
  return Status::success();
}

// A tensor an older version laid out otherwise than this build reads it: refused naming the
// version, to be repacked (the bytes would be read in another order, to wrong sums).
Status check_layout_version(uint32_t version, matmul::DType dtype, int64_t kp, const PackedTensor& t,
                            const MatmulDesc& md, int layer) {
  if (version < 4 && t.slice_k > matmul::kInt4SliceK && kp > t.slice_k && kp % t.slice_k != 0)
    return make_error(-EINVAL, fmt::format("packed model version {}: tensor \"{}\" of layer {} is int4 in K-slices of its "
                                           "own width with a narrower last slice, which version 4 pads to full width; "
                                           "repack the model with ork_pack", version, md.name, layer));
  if (version < 5 && dtype == matmul::DType::int8 && kp > matmul::full_k_limit(dtype))
    return make_error(-EINVAL, fmt::format("packed model version {}: tensor \"{}\" of layer {} is int8 of K = {} in K-slices "
                                           "of 2048, which version 5 lays out in the fewest slices of at most {}; repack "
                                           "the model with ork_pack", version, md.name, layer, md.k, matmul::kInt8MaxSliceK));
  return {};
}

// Every matmul of every layer has its tensor, in order, of the size its shape packs to,
// aligned inside the file.
Status check_tensors(const PackedModel& m, uint32_t version) {
  const size_t per = m.desc.matmuls.size();
  const size_t count = static_cast<size_t>(m.desc.layers) * per;
  // Ranges checked without a sum that can wrap (offset + bytes past 2^64 once passed).
  auto inside = [&](uint64_t off, uint64_t bytes) {
    return off % kPackAlign == 0 && off >= m.data_offset && off <= m.file_bytes && bytes <= m.file_bytes - off;
  };
  for (size_t i = 0; i < count; ++i) {
    const int layer = static_cast<int>(i / per), mi = static_cast<int>(i % per);
    const MatmulDesc& md = m.desc.matmuls[i % per];
    if (i >= m.tensors.size() || m.tensors[i].layer != layer || m.tensors[i].matmul != mi)
      return make_error(-EINVAL, fmt::format("tensor \"{}\" of layer {} is missing from the packed model", md.name, layer));
    const PackedTensor& t = m.tensors[i];
    const auto kp = static_cast<int64_t>(align_up(static_cast<uint64_t>(md.k), matmul::kKAlign));
    if (Status s = check_layout_version(version, m.desc.dtype, kp, t, md, layer); !s) return s;
    // The width (int4 only, one its plan takes: make_plan names a bad one), then the bytes it packs to.
    auto layout = layout_plan(m.desc.dtype, md.k, md.n, t.slice_k);
    if (!layout) return make_error(-EINVAL, fmt::format("tensor \"{}\" of layer {}: {}", md.name, layer, layout.error().message));
    const auto want = static_cast<uint64_t>(layout->b_bytes());
    if (t.bytes != want)
      return make_error(-EINVAL, fmt::format("tensor \"{}\" of layer {}: {} bytes, {} x {} {} packs to {}", md.name, layer,
                                             t.bytes, md.k, md.n, dtype_key(m.desc.dtype), want));
    if (!inside(t.offset, t.bytes) || (t.scale_bytes != 0 && !inside(t.scale_offset, t.scale_bytes)))
      return make_error(-EINVAL, fmt::format("tensor \"{}\" of layer {}: offset {} is not 4 KiB aligned inside the file",
                                             md.name, layer, t.offset));
  }
  if (m.tensors.size() != count)
    return make_error(-EINVAL, fmt::format("packed model lists {} tensors, the description has {}", m.tensors.size(), count));
  return Status::success();
}

}  // namespace

Result<PackedModel> parse_packed(std::span<const uint8_t> head, uint64_t file_bytes) {
  PackedModel m;
  auto json = parse_header(head, file_bytes, m);
  if (!json) return json.error();
  if (Status st = parse_description(head, *json, m); !st) return st.error();
  if (Status st = check_tensors(m, json->version); !st) return st.error();
  return m;
}

Result<PackedModel> read_packed(const std::string& path) {
  // Only a regular file, named before it is opened: a FIFO would block the open, and a
  // directory opens for reading and its ftell after SEEK_END is LONG_MAX, once reported as a
  // truncated model of that many bytes.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return make_error(-EINVAL, fmt::format("{}: {}, not a packed model file", echo_capped(path), file_kind(st.st_mode)));
  auto fd = open_regular_input(path);
  if (!fd) return fd.error();
  std::FILE* f = ::fdopen(*fd, "rb");
  if (f == nullptr || ::fstat(*fd, &st) != 0) {
    const int err = errno;
    if (f != nullptr) std::fclose(f); else ::close(*fd);
    return make_error(-err, fmt::format("{}: {}", echo_capped(path), errno_text(err)));
  }
  const long size = static_cast<long>(st.st_size);
  // The header first; then as much as it says the description spans (at most 64 MiB).
  std::vector<uint8_t> head(static_cast<size_t>(std::clamp<long>(size, 0, static_cast<long>(kPackHeaderBytes))));
  size_t got = std::fread(head.data(), 1, head.size(), f);
  if (got == kPackHeaderBytes) {
    const uint64_t want = std::min<uint64_t>({get<uint64_t>(head.data(), 32), static_cast<uint64_t>(size),
                                                kPackHeaderBytes + kPackMaxDescriptionBytes});
    if (want > got) {
      head.resize(want);
      got += std::fread(head.data() + got, 1, want - got, f);
    }
  }
  std::fclose(f);
  head.resize(got);
  auto m = parse_packed(head, static_cast<uint64_t>(size));
  if (!m) return make_error(m.error().code, fmt::format("{}: {}", path, m.error().message));
  return m;
}

}  // namespace ork::exec
