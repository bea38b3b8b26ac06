// How every reader of lib/io (the layer loader, loader_open.cpp; the tensor reader,
// tensor_reader.cpp) turns what it wants into what runs, written once: the ORK_IO_NO_*
// switches (docs/io.md, the fallback table) applied, each override recorded as a fallback,
// and io_uring set up over the reader's slots or the pread engine taken in its place.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lib/io/engine.h"
#include "lib/io/stream_file.h"

namespace ork::io {

// The ORK_IO_NO_* switches: each forces one fallback when set to anything but "" or "0".
struct IoEnv {
  bool no_uring = false;     // ORK_IO_NO_URING: pread instead of io_uring
  bool no_direct = false;    // ORK_IO_NO_DIRECT: buffered reads instead of O_DIRECT
  bool no_register = false;  // ORK_IO_NO_REGISTER: plain reads instead of fixed buffers
};
IoEnv read_io_env();

// What a reader asks for, and after apply_io_env what it gets.
struct ReadModes {
  bool uring = true;             // io_uring (else the pread engine)
  bool direct = true;            // open with O_DIRECT
  bool register_buffers = true;  // the slots as io_uring fixed buffers
};

// `wanted` with the environment's overrides (none when !use_env); each override that
// changes something is appended to *fallbacks.
ReadModes apply_io_env(ReadModes wanted, bool use_env, std::vector<std::string>* fallbacks);

// The io_uring engine over `slots` when `uring`, falling back to the pread engine when
// io_uring is refused (why appended to *fallbacks); the pread engine when !uring.
// *registered: the slots are registered as fixed buffers.
std::unique_ptr<ReadEngine> make_read_engine(const StreamFile& file, std::span<const std::span<std::byte>> slots,
                                             bool uring, const UringOptions& options,
                                             std::vector<std::string>* fallbacks, bool* registered);

}  // namespace ork::io
