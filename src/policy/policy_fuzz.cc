// libFuzzer target: arbitrary bytes as a policy file. The reader must never
// crash, hang or throw; a policy it compiles must decide a request without
// fault, and every error it reports must have a position or none.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/assert.h"
#include "policy/policy_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto policy = rw::policy::parse_policy(text, "fuzz.yaml");
  if (!policy) {
    for (const rw::config::ConfigError& error : policy.error())
      RW_ASSERT(error.line >= 0 && error.column >= 0);
    return 0;
  }
  const rw::policy::Request request{.user_name = "alice",
                                    .client = "ap-1",
                                    .client_address = rw::policy::Address{.bytes = {10, 0, 0, 1}},
                                    .called_station_id = "00-11-22-33-44-55:corp",
                                    .calling_station_id = "aa:bb:cc:dd:ee:ff",
                                    .method = rw::policy::Method::kMab,
                                    .unix_ms = 1'796'207'400'000};
  const rw::policy::Decision decision = policy->decide(request);
  RW_ASSERT(!decision.rule_name().empty());
  (void)policy->mab_listing(*rw::auth::parse_mac("aa:bb:cc:dd:ee:ff"));
  return 0;
}
