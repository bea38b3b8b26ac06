// Sizes derived from a tool's input checked against the machine before anything is
// allocated or written: the memory Linux says is available (/proc/meminfo MemAvailable) and
// the free space of a file system (statvfs). Each check returns "" when the size fits, else a
// message naming the flag, the size and the bound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ork::tools {

// MemAvailable in bytes, or the address space RLIMIT_AS (ulimit -v) still leaves this
// process when that is less; nullopt when neither can be read.
std::optional<uint64_t> available_memory();
// Bytes an unprivileged writer may still use on the file system holding `path` (or its
// directory when the file does not exist yet); nullopt when statvfs fails.
std::optional<uint64_t> free_disk(const std::string& path);

// A memory budget taken from the machine when the user gives none: half of MemAvailable
// (`available`), rounded down to a MiB — the other half left for what a budget does not
// cover (activations, the emulated NPU's copies, the page cache the reads go through) — or
// kFallbackBudgetBytes when MemAvailable cannot be read.
inline constexpr uint64_t kFallbackBudgetBytes = uint64_t{512} << 20;
uint64_t default_memory_budget(std::optional<uint64_t> available);

// "" when `path` can be written as an output: a new path or a regular file whose directory
// takes the temporary file it is written to (created and removed again; the output itself
// is never opened), else "--trace /x/y.json: cannot create a file in its directory: ...":
// an output checked before a long run rather than after it.
std::string check_writable(const std::string& flag, const std::string& path);

// "--slots 100000 needs 195.3 GiB of memory; 14.2 GiB is available" (or "" when it fits).
// `what` names the flag(s) and value(s), e.g. "--slots 100000".
std::string check_memory(const std::string& what, uint64_t bytes);
std::string check_disk(const std::string& what, const std::string& path, uint64_t bytes);

// "" unless `output` is the same file (device and inode, not name) as one of `inputs`:
// then "--out a.npy is the input --a: refusing to overwrite an input"; or unless `output` is
// neither a new path nor a regular file (driver/common/safe_file.h check_output_path): then
// "--out /dev/full: a character device, not a regular file: refusing to write it".
struct NamedPath {
  std::string flag, path;
};
std::string check_not_an_input(const NamedPath& output, const std::vector<NamedPath>& inputs);

// Reads the whole of `path` ("-": stdin) into `out`, at most `limit` bytes: a directory, a
// device that never ends (/dev/zero) or a file larger than the limit is refused without
// reading more than limit + 1 bytes. `what` names the flag or argument in the message.
// Returns "" or the message.
std::string read_file_bounded(const std::string& what, const std::string& path, uint64_t limit,
                              std::string* out);

// 1536 -> "1.50 KiB"
std::string human_bytes(uint64_t bytes);

}  // namespace ork::tools
