// Golden streams (docs/regcmd-contract.md section 8): for each public capture or public
// writer's stream of a known matmul shape, libork's planner and emitter are asked for the
// same shape at the same buffer addresses, both streams are decoded by the independent
// decoder (npu_facts.h, no libork header), and compared field by field. Every difference
// must be one the golden file declares, with its reason; a declared difference that no
// longer occurs fails too, so the list stays true.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "golden_file.h"
#include "npu_facts.h"
#include "ork_stream.h"

namespace golden {
namespace {

constexpr size_t kTrailer = 4;  // PC chain base, chain amount, marker, op-enable (contract 5)

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string data_path(const std::string& file) {
  const char* dir = std::getenv("ORK_GOLDEN_DIR");
  return std::string(dir ? dir : "tests/golden/data") + "/" + file;
}

// The body's register file: key -> the last value written (the PC applies writes in order;
// a register written twice, as the vendor runtime's preamble does, holds the second value).
struct RegisterFile {
  std::map<std::string, uint32_t> value;
  std::map<std::string, const RegFact*> reg;
  std::vector<std::string> errors;
};

RegisterFile load(const std::vector<uint64_t>& words) {
  RegisterFile rf;
  for (size_t i = 0; i + kTrailer < words.size(); ++i) {
    const Decoded d = decode(words[i]);
    if (!d.error.empty()) {
      rf.errors.push_back("word " + std::to_string(i) + " " + hex(words[i]) + ": " + d.error);
      continue;
    }
    if (d.key == "PADDING") continue;
    if (d.reg == nullptr) {
      rf.errors.push_back("word " + std::to_string(i) + " " + hex(words[i]) + ": " + d.key + " in the body");
      continue;
    }
    rf.value[d.key] = d.word.value;
    rf.reg[d.key] = d.reg;
  }
  return rf;
}

// The trailer's shape, by the decoder: [PC.BASE_ADDRESS or zero, PC.REGISTER_AMOUNTS or
// zero, MARKER, OP_ENABLE]. Returns the problems found.
std::vector<std::string> check_trailer(const std::vector<uint64_t>& w) {
  std::vector<std::string> p;
  if (w.size() < kTrailer + 1 || w.size() % 2 != 0) {
    p.push_back("a task is an even number of words, body and 4-word trailer: " + std::to_string(w.size()));
    return p;
  }
  const size_t t = w.size() - kTrailer;
  const char* want[] = {"PC.BASE_ADDRESS", "PC.REGISTER_AMOUNTS", "MARKER", "OP_ENABLE"};
  for (size_t i = 0; i < kTrailer; ++i) {
    const Decoded d = decode(w[t + i]);
    const bool zero_ok = i < 2 && d.key == "PADDING";
    if (!d.error.empty() || (d.key != want[i] && !zero_ok))
      p.push_back("trailer." + std::to_string(i + 1) + " = " + hex(w[t + i]) + " is not " + want[i]);
  }
  return p;
}

std::vector<Difference> compare(const std::vector<uint64_t>& g, const std::vector<uint64_t>& o,
                                size_t& fields_compared) {
  std::vector<Difference> found;
  const RegisterFile rg = load(g), ro = load(o);
  std::set<std::string> keys;
  for (const auto& [k, v] : rg.value) keys.insert(k);
  for (const auto& [k, v] : ro.value) keys.insert(k);
  for (const std::string& k : keys) {
    const bool in_g = rg.value.count(k) != 0, in_o = ro.value.count(k) != 0;
    if (!in_g || !in_o) {
      found.push_back({"written:" + k, in_g ? 1u : 0u, in_o ? 1u : 0u, ""});
      continue;
    }
    const std::vector<FieldValue> fg = fields_of(*rg.reg.at(k), rg.value.at(k));
    const std::vector<FieldValue> fo = fields_of(*ro.reg.at(k), ro.value.at(k));
    for (size_t f = 0; f < fg.size(); ++f, ++fields_compared)
      if (fg[f].value != fo[f].value) found.push_back({k + "." + fg[f].name, fg[f].value, fo[f].value, ""});
  }
  for (size_t i = 0; i < kTrailer; ++i) {
    const uint64_t wg = g[g.size() - kTrailer + i], wo = o[o.size() - kTrailer + i];
    if (wg != wo) found.push_back({"trailer." + std::to_string(i + 1), wg, wo, ""});
  }
  return found;
}

uint32_t field(const std::vector<uint64_t>& words, const std::string& key, const std::string& name) {
  const RegisterFile rf = load(words);
  if (!rf.value.count(key)) return 0xffffffffu;
  for (const FieldValue& f : fields_of(*rf.reg.at(key), rf.value.at(key)))
    if (f.name == name) return f.value;
  return 0xffffffffu;
}

class Golden : public ::testing::TestWithParam<const char*> {};

TEST_P(Golden, LiborkWritesWhatThePublicStreamWritesSaveTheDeclaredDifferences) {
  std::string err;
  const GoldenFile g = read_golden(data_path(GetParam()), err);
  ASSERT_TRUE(err.empty()) << err;
  SCOPED_TRACE(g.name + " (" + g.source + ")");

  // 1. The file is what it says: every word decodes, under the name the file gives it, and
  //    the shape and addresses of the matmul line are the ones the words carry.
  std::vector<uint64_t> gw;
  for (const Entry& e : g.entries) {
    const Decoded d = decode(e.word);
    EXPECT_TRUE(d.error.empty()) << g.path << ":" << e.line << ": " << hex(e.word) << ": " << d.error;
    EXPECT_EQ(d.key, e.name) << g.path << ":" << e.line << ": " << hex(e.word);
    gw.push_back(e.word);
  }
  for (const std::string& p : check_trailer(gw)) ADD_FAILURE() << "golden: " << p;
  EXPECT_EQ(field(gw, "CNA.DATA_SIZE0", "DATAIN_HEIGHT"), g.m);
  EXPECT_EQ(field(gw, "CNA.DATA_SIZE1", "DATAIN_CHANNEL"), g.k);
  EXPECT_EQ(field(gw, "CNA.WEIGHT_SIZE2", "WEIGHT_KERNELS"), g.n);
  EXPECT_EQ(field(gw, "DPU.DATA_CUBE_CHANNEL", "CHANNEL"), g.n - 1);
  EXPECT_EQ(field(gw, "CNA.FEATURE_DATA_ADDR", "FEATURE_BASE_ADDR"), g.feature_iova);
  EXPECT_EQ(field(gw, "CNA.DCOMP_ADDR0", "DECOMPRESS_ADDR0"), g.weight_iova);
  EXPECT_EQ(field(gw, "DPU.DST_BASE_ADDR", "DST_BASE_ADDR"), g.output_iova);
  // OUT_PRECISION codes: MTX npu_hw.h (int32 4, fp32 5, fp16 2); int16 1 (the int4 capture).
  const uint32_t out_code = g.out == "int32" ? 4 : g.out == "fp32" ? 5 : g.out == "fp16" ? 2 : g.out == "int16" ? 1 : 99;
  EXPECT_EQ(field(gw, "DPU.DATA_FORMAT", "OUT_PRECISION"), out_code);

  // 2. libork's stream for the same shape and addresses, decoded the same way.
  const OrkStream os = ork_task_stream({g.dtype, g.m, g.k, g.n, g.out == "fp16", g.feature_iova,
                                        g.weight_iova, g.output_iova});
  ASSERT_TRUE(os.error.empty()) << os.error;
  for (const std::string& p : check_trailer(os.words)) ADD_FAILURE() << "libork: " << p;
  for (const std::string& p : load(os.words).errors) ADD_FAILURE() << "libork: " << p;

  // 3. Field by field; the differences are exactly the declared ones.
  size_t fields = 0;
  const std::vector<Difference> found = compare(gw, os.words, fields);
  EXPECT_EQ(load(os.words).value.size(), 104u) << "libork writes 104 registers a task (contract 3a)";
  EXPECT_GE(fields, 340u);  // 104 registers, their XML fields and "(other bits)"
  for (const Difference& d : found) {
    bool declared = false;
    for (const Difference& e : g.differences) declared |= e == d;
    EXPECT_TRUE(declared) << "undeclared difference: " << d.key << " golden " << hex(d.golden)
                          << " libork " << hex(d.ork);
  }
  for (const Difference& e : g.differences) {
    bool seen = false;
    for (const Difference& d : found) seen |= e == d;
    EXPECT_TRUE(seen) << "declared difference does not occur (update " << g.path << "): " << e.key
                      << " golden " << hex(e.golden) << " libork " << hex(e.ork);
  }
}

INSTANTIATE_TEST_SUITE_P(PublicStreams, Golden,
                         ::testing::Values("vendor_int8_4x32x32.golden", "vendor_fp16_4x32x16.golden",
                                           "mtx_int8_1x64x64.golden", "mtx_fp16_4x32x16.golden",
                                           "mtx_fp16_fp16_1x32x16.golden", "vendor_int4_task0_1x64x64.golden"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

// The decoder is not the library's: it must refuse what is inconsistent by its own facts.
TEST(IndependentDecoder, SplitsByThePublishedLayoutAndRefusesInconsistentWords) {
  const Word w = split(0x0201000000b11040ull);
  EXPECT_EQ(w.target, 0x0201);
  EXPECT_EQ(w.value, 0xb1u);
  EXPECT_EQ(w.reg, 0x1040);
  EXPECT_EQ(decode(0x0201000000b11040ull).key, "CNA.CBUF_CON0");
  EXPECT_EQ(decode(0x0801000000b11040ull).error, "register outside the CORE window");  // CORE target, CNA offset
  EXPECT_EQ(decode(0x0401000000001040ull).error, "unknown target");  // mtx512/rk3588-npu#3's block
  EXPECT_EQ(decode(0x0201000000001ffcull).error, "no CNA register at this offset");
  EXPECT_EQ(decode(0x00810000000d0008ull).key, "OP_ENABLE");
  const std::vector<FieldValue> f = fields_of(*find_reg("DPU.DATA_CUBE_CHANNEL"), 0x001f001f);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].value, 31u);  // CHANNEL 12:0
  EXPECT_EQ(f[1].value, 31u);  // ORIG_CHANNEL 28:16
  EXPECT_EQ(f[2].value, 0u);   // nothing else
  EXPECT_EQ(fields_of(*find_reg("DPU.DATA_CUBE_CHANNEL"), 0x80000000u)[2].value, 0x80000000u);
}

}  // namespace
}  // namespace golden
