// The logits comparison program (docs/llama-cpp.md "Whole models"): one GGUF model, the same
// prompt, evaluated through libllama twice in one process: first with ggml's CPU backend
// alone, then with the ORK backend loaded (the library named on the command line; ORK_DEVICE
// picks libork's device). The prompt runs as one batch (every position's logits: M = the
// prompt's length), then DECODE_STEPS single tokens (M = 1), each the CPU's greedy token, fed
// to both runs so that they see the same input. At every position it compares:
//  - the relative RMS error of ORK's logits against the CPU's, which must be within BOUND;
//  - the greedy (argmax) token, which must be equal wherever the CPU's top two logits are
//    further apart than twice the error bound in absolute terms (BOUND x the RMS of the CPU's
//    logits: either logit may move by that much, in opposite directions).
// BOUND = sqrt(5e-4) x sqrt(7 x layers + 1) by default, the error test-backend-ops' MUL_MAT
// bound implies for the model (docs/llama-cpp.md "Numerics" derives it).
//
// With --expect-compute-failure the ORK run must fail in llama_decode after the prompt ran (a
// device that disappears mid-run, ORK_EMU_FAULTS=device:gone@N), with no crash or hang; a
// second llama_decode must fail as cleanly.
//
// Usage: logits_compare MODEL ORK_LIBRARY [--bound B] [--expect-compute-failure]
// Exit 0 when every check holds, 1 with the failed checks named, 2 on bad usage or input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "llama.h"

namespace {

constexpr const char* kPrompt = "The quick brown fox jumps over the lazy dog. Once upon a time, in a small town,";
constexpr int kDecodeSteps = 4;
constexpr double kMulMatNmse = 5e-4;  // ggml-org/llama.cpp:tests/test-backend-ops.cpp test_mul_mat::max_nmse_err

struct Run {
  std::vector<std::vector<float>> logits;  // one row of n_vocab per position
  int failed_at = -1;                      // the position whose llama_decode failed, or -1
  int status = 0;                          // that llama_decode's result
  int second_status = 0;                   // a retry's result after the failure
};

void log_errors(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) std::fputs(text, stderr);
}

int argmax(const std::vector<float>& v) {
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

// The top logit minus the second.
double top_two_gap(const std::vector<float>& v) {
  float a = -INFINITY, b = -INFINITY;
  for (float x : v) {
    if (x > a) {
      b = a;
      a = x;
    } else if (x > b) {
      b = x;
    }
  }
  return static_cast<double>(a) - b;
}

double rms(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

double relative_rms_error(const std::vector<float>& ref, const std::vector<float>& got) {
  double d = 0, r = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double e = static_cast<double>(got[i]) - ref[i];
    d += e * e;
    r += static_cast<double>(ref[i]) * ref[i];
  }
  return std::sqrt(d / r);
}

std::vector<llama_token> tokenize(const llama_vocab* vocab) {
  std::vector<llama_token> t(256);
  const int n = llama_tokenize(vocab, kPrompt, static_cast<int32_t>(std::strlen(kPrompt)), t.data(),
                               static_cast<int32_t>(t.size()), true, false);
  t.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return t;
}

// Decodes `tokens` at positions from `pos` on, keeping the logits of each into `run`.
bool decode(llama_context* ctx, const std::vector<llama_token>& tokens, int pos, int n_vocab, Run& run) {
  llama_batch b = llama_batch_init(static_cast<int32_t>(tokens.size()), 0, 1);
  for (size_t i = 0; i < tokens.size(); ++i) {
    b.token[i] = tokens[i];
    b.pos[i] = pos + static_cast<int>(i);
    b.n_seq_id[i] = 1;
    b.seq_id[i][0] = 0;
    b.logits[i] = 1;
  }
  b.n_tokens = static_cast<int32_t>(tokens.size());
  run.status = llama_decode(ctx, b);
  if (run.status != 0) {
    run.failed_at = pos;
    run.second_status = llama_decode(ctx, b);
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) {
      const float* l = llama_get_logits_ith(ctx, static_cast<int32_t>(i));
      run.logits.emplace_back(l, l + n_vocab);
    }
  }
  llama_batch_free(b);
  return run.status == 0;
}

// The prompt, then kDecodeSteps tokens: `feed` (the CPU run's greedy tokens) when given,
// else this run's own greedy tokens, appended to `feed`.
bool evaluate(llama_model* model, std::vector<llama_token>& feed, bool own, Run& run) {
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = cp.n_batch = cp.n_ubatch = 128;
  cp.n_threads = cp.n_threads_batch = 2;
  cp.no_perf = true;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) {
    std::fprintf(stderr, "logits_compare: llama_init_from_model failed\n");
    return false;
  }
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  const std::vector<llama_token> prompt = tokenize(vocab);
  bool ok = !prompt.empty() && decode(ctx, prompt, 0, n_vocab, run);
  for (int s = 0; ok && s < kDecodeSteps; ++s) {
    if (own) feed.push_back(argmax(run.logits.back()));
    ok = decode(ctx, {feed[static_cast<size_t>(s)]}, static_cast<int>(prompt.size()) + s, n_vocab, run);
  }
  llama_free(ctx);
  return ok;
}

llama_model* load(const char* path) {
  llama_model_params mp = llama_model_default_params();
  llama_model* m = llama_model_load_from_file(path, mp);
  if (m == nullptr) std::fprintf(stderr, "logits_compare: %s did not load\n", path);
  return m;
}

// Every position's checks; returns the number that failed.
int compare(const Run& cpu, const Run& ork, double bound) {
  int failures = 0, required = 0, equal = 0;
  double worst = 0;
  std::printf("pos  rel.rms.err  cpu.top  ork.top  cpu.top2.gap  2 x error  token must agree\n");
  for (size_t p = 0; p < cpu.logits.size(); ++p) {
    const double e = relative_rms_error(cpu.logits[p], ork.logits[p]);
    const double gap = top_two_gap(cpu.logits[p]), margin = 2 * bound * rms(cpu.logits[p]);
    const int a = argmax(cpu.logits[p]), b = argmax(ork.logits[p]);
    const bool must = gap > margin;
    std::printf("%3zu  %11.6f  %7d  %7d  %12.5f  %9.5f  %s\n", p, e, a, b, gap, margin, must ? "yes" : "no");
    worst = std::max(worst, e);
    required += must;
    equal += a == b;
    if (!(e <= bound)) {
      std::printf("FAIL position %zu: relative RMS error %.6f over the bound %.6f\n", p, e, bound);
      ++failures;
    }
    if (must && a != b) {
      std::printf("FAIL position %zu: greedy token %d on ORK, %d on the CPU, whose top two are %.5f apart\n", p,
                  b, a, gap);
      ++failures;
    }
  }
  std::printf("logits_compare: %zu positions, largest relative RMS error %.6f (bound %.6f), greedy tokens "
              "equal at %d, %d of them required\n", cpu.logits.size(), worst, bound, equal, required);
  return failures;
}

struct Args {
  const char* model = nullptr;
  const char* library = nullptr;
  double bound = 0;  // 0: derived from the model's layer count
  bool expect_failure = false;
};

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--bound") == 0 && i + 1 < argc) {
      a.bound = std::atof(argv[++i]);
      if (!(a.bound > 0)) return false;
    } else if (std::strcmp(argv[i], "--expect-compute-failure") == 0) {
      a.expect_failure = true;
    } else if (a.model == nullptr) {
      a.model = argv[i];
    } else if (a.library == nullptr) {
      a.library = argv[i];
    } else {
      return false;
    }
  }
  return a.library != nullptr;
}

// The ORK run that must fail mid-run: the load and the prompt succeeded, a later decode
// failed and a retry too.
int check_failure(const Run& ork) {
  if (ork.failed_at < 0) {
    std::printf("FAIL the ORK run did not fail: no compute failure was injected\n");
    return 1;
  }
  if (ork.failed_at == 0) {
    std::printf("FAIL the ORK run failed in the prompt, not mid-run: inject the failure later\n");
    return 1;
  }
  std::printf("logits_compare: llama_decode failed at position %d with %d, again with %d\n", ork.failed_at,
              ork.status, ork.second_status);
  return ork.second_status != 0 ? 0 : 1;
}

// Registers the ORK backend (after the CPU run, so that the CPU run has no ACCEL device).
bool load_ork(const char* library) {
  ggml_backend_reg_t reg = ggml_backend_load(library);
  if (reg == nullptr || ggml_backend_reg_dev_count(reg) != 1) {
    std::fprintf(stderr, "logits_compare: %s registered no ORK device\n", library);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, args)) {
    std::fprintf(stderr, "usage: logits_compare MODEL ORK_LIBRARY [--bound B] [--expect-compute-failure]\n");
    return 2;
  }
  llama_log_set(log_errors, nullptr);
  llama_backend_init();
  llama_model* model = load(args.model);
  if (model == nullptr) return 2;
  const double bound = args.bound > 0 ? args.bound : std::sqrt(kMulMatNmse * (7.0 * llama_model_n_layer(model) + 1));
  std::vector<llama_token> feed;
  Run cpu, ork;
  const bool cpu_ok = evaluate(model, feed, true, cpu);
  llama_model_free(model);
  if (!cpu_ok || !load_ork(args.library) || (model = load(args.model)) == nullptr) return 2;
  const bool ork_ok = evaluate(model, feed, false, ork);
  llama_model_free(model);
  if (args.expect_failure) return check_failure(ork);
  if (!ork_ok) {
    std::printf("FAIL llama_decode on ORK returned %d at position %d\n", ork.status, ork.failed_at);
    return 1;
  }
  return compare(cpu, ork, bound) == 0 ? 0 : 1;
}
