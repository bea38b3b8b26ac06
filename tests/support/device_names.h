// Shared by the tests parameterised over device names: the name as part of a test's name.
#pragma once

#include <string>

namespace ork::testing {

// "emu-rknpu" -> "emu_rknpu": gtest allows only letters, digits and '_' in a test's name.
inline std::string device_test_name(std::string device) {
  for (char& ch : device)
    if (ch == '-') ch = '_';
  return device;
}

}  // namespace ork::testing
