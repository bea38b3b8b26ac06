// driver/common/int4.h: the one int4 order (element i in byte i/2, the low nibble first,
// two's complement), read by element, by byte and written back.
#include "driver/common/int4.h"

#include <gtest/gtest.h>

#include <vector>

namespace ork::int4 {
namespace {

TEST(Int4, NibbleOrder) {
  std::vector<uint8_t> bytes = {0x21, 0xf8};
  EXPECT_EQ(value_at(bytes.data(), 0), 1);
  EXPECT_EQ(value_at(bytes.data(), 1), 2);
  EXPECT_EQ(value_at(bytes.data(), 2), -8);
  EXPECT_EQ(value_at(bytes.data(), 3), -1);
  EXPECT_EQ(code_at(bytes.data(), 3), 15);
  EXPECT_EQ(low_value(bytes[1]), -8);
  EXPECT_EQ(high_value(bytes[1]), -1);
  put(bytes.data(), 1, -3);
  put(bytes.data(), 2, 7);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0xd1, 0xf7}));
}

// Every byte: the byte-wise decode agrees with the element-wise one, and put() rebuilds it.
TEST(Int4, ByteAndElementAgree) {
  for (int b = 0; b < 256; ++b) {
    const uint8_t byte = static_cast<uint8_t>(b);
    EXPECT_EQ(low_value(byte), value_at(&byte, 0)) << b;
    EXPECT_EQ(high_value(byte), value_at(&byte, 1)) << b;
    uint8_t back = 0;
    put(&back, 0, low_value(byte));
    put(&back, 1, high_value(byte));
    EXPECT_EQ(back, byte) << b;
  }
}

}  // namespace
}  // namespace ork::int4
