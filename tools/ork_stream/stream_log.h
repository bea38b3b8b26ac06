// ork_stream_bench's log of what each opened loader runs: compiled in, quiet unless
// ORK_DEBUG names `io` (or `all`), e.g. ORK_DEBUG=io,submit. lib/io itself does not log: the
// fallbacks are in the loader's stats and the tensor reader's info, which is where the tools,
// ork_run's report and the tests look.
#pragma once

#include <string_view>

namespace ork::io::tools {

bool io_log_enabled();
void io_log(std::string_view message);

}  // namespace ork::io::tools
