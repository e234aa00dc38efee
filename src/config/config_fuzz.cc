// libFuzzer target: parse_gateway_config on arbitrary text must return a
// config or errors, never crash, hang or leak, whatever yaml-cpp throws.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/assert.h"
#include "config/gateway_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto result = rw::config::parse_gateway_config(text, "fuzz.yaml");
  if (result) {
    // A valid config always names its users and clients files.
    RW_ASSERT(!result->users_file.path.empty());
    RW_ASSERT(!result->clients_file.path.empty());
  } else {
    RW_ASSERT(!result.error().empty());
    for (const auto& error : result.error()) RW_ASSERT(!error.to_string().empty());
  }
  return 0;
}
