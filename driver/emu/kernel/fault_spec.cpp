// ORK_EMU_FAULTS: the text form of the fake kernel's fault rules (fault_spec.h).
#include "driver/emu/kernel/fault_spec.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

namespace ork::emu {
namespace {

struct Named {
  const char* name;
  int value;
};

constexpr Named kPoints[] = {
    {"ioctl", static_cast<int>(FaultPoint::ioctl)},   {"submit", static_cast<int>(FaultPoint::submit)},
    {"create", static_cast<int>(FaultPoint::create)}, {"map", static_cast<int>(FaultPoint::map)},
    {"sync", static_cast<int>(FaultPoint::sync)},     {"destroy", static_cast<int>(FaultPoint::destroy)},
    {"action", static_cast<int>(FaultPoint::action)}, {"mmap", static_cast<int>(FaultPoint::mmap)},
    {"job", static_cast<int>(FaultPoint::job)},       {"device", static_cast<int>(FaultPoint::device)},
    {"open", static_cast<int>(FaultPoint::open)},
};
constexpr Named kErrnos[] = {
    {"eintr", EINTR}, {"eagain", EAGAIN}, {"eio", EIO},       {"enomem", ENOMEM},
    {"enospc", ENOSPC}, {"enodev", ENODEV}, {"eperm", EPERM}, {"eacces", EACCES}, {"einval", EINVAL},
    {"ebusy", EBUSY},   {"etimedout", ETIMEDOUT}, {"efault", EFAULT},
};
constexpr Named kJobs[] = {{"wedge", static_cast<int>(JobFault::wedge)},
                           {"dma", static_cast<int>(JobFault::dma)},
                           {"stray", static_cast<int>(JobFault::stray)}};

template <size_t N>
const Named* find(const Named (&table)[N], std::string_view name) {
  for (const Named& n : table) {
    if (name == n.name) return &n;
  }
  return nullptr;
}

template <size_t N>
std::string names(const Named (&table)[N]) {
  std::string out;
  for (const Named& n : table) out += (out.empty() ? "" : " ") + std::string(n.name);
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A decimal in 1..1e9, the whole token.
bool parse_count(std::string_view s, int* out) {
  s = trim(s);
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < 1 || v > 1'000'000'000) return false;
  *out = v;
  return true;
}

Result<FaultRule> parse_rule(std::string_view text) {
  FaultRule rule;
  rule.text = std::string(trim(text));
  auto bad = [&](const std::string& why) {
    return make_error(-EINVAL, fmt::format("fault rule '{}': {}", rule.text, why));
  };
  std::string_view rest = trim(text);
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return bad("expected POINT:WHAT (e.g. submit:eio@3)");
  const std::string_view point = trim(rest.substr(0, colon));
  rest = rest.substr(colon + 1);
  const size_t at = rest.find('@');
  std::string_view what = trim(rest.substr(0, at));
  std::string_view where = at == std::string_view::npos ? std::string_view{} : rest.substr(at + 1);
  std::string_view times;
  std::string_view& tail = at == std::string_view::npos ? what : where;
  // The count suffix: the last 'x' that is followed only by digits, '*' or spaces.
  if (size_t x = tail.find_last_of('x'); x != std::string_view::npos) {
    const std::string_view after = tail.substr(x + 1);
    if (after.find_first_not_of("0123456789* \t") == std::string_view::npos && !trim(after).empty()) {
      times = trim(after);
      tail = trim(tail.substr(0, x));
    }
  }
  const Named* p = find(kPoints, point);
  if (!p) return bad(fmt::format("unknown point '{}' (points: {})", point, names(kPoints)));
  rule.point = static_cast<FaultPoint>(p->value);
  if (rule.point == FaultPoint::job) {
    const Named* j = find(kJobs, what);
    if (!j) return bad(fmt::format("unknown job fault '{}' (job faults: {})", what, names(kJobs)));
    rule.job = static_cast<JobFault>(j->value);
  } else if (rule.point == FaultPoint::device) {
    if (what != "gone") return bad(fmt::format("unknown device fault '{}' (device faults: gone)", what));
    rule.gone = true;
  } else {
    const Named* e = find(kErrnos, what);
    if (!e) return bad(fmt::format("unknown errno '{}' (errnos: {})", what, names(kErrnos)));
    rule.err = e->value;
  }
  if (at != std::string_view::npos) {
    int n = 0;
    if (!parse_count(where, &n)) return bad(fmt::format("'@{}': expected a whole number from 1 to 1000000000", trim(where)));
    rule.skip = n - 1;
  }
  if (!times.empty()) {
    if (times == "*") {
      rule.count = -1;
    } else if (!parse_count(times, &rule.count)) {
      return bad(fmt::format("'x{}': expected a whole number from 1 to 1000000000, or '*'", times));
    }
  }
  if (rule.gone && !times.empty()) return bad("device:gone lasts for ever; it takes no count");
  return rule;
}

}  // namespace

Result<std::vector<FaultRule>> parse_fault_spec(std::string_view spec) {
  std::vector<FaultRule> rules;
  if (trim(spec).empty()) return rules;
  size_t start = 0;
  for (;;) {
    const size_t comma = spec.find(',', start);
    const std::string_view part = spec.substr(start, comma == std::string_view::npos ? spec.npos : comma - start);
    auto rule = parse_rule(part);
    if (!rule) return rule.error();
    rules.push_back(std::move(*rule));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return rules;
}

Result<std::vector<FaultRule>> faults_from_env() {
  const char* env = std::getenv("ORK_EMU_FAULTS");
  auto rules = parse_fault_spec(env ? env : "");
  if (!rules) return make_error(-EINVAL, "ORK_EMU_FAULTS: " + rules.error().message);
  return rules;
}

}  // namespace ork::emu
