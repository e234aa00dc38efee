// libFuzzer target: parse_member_config on arbitrary text must return a
// config or errors, never crash, hang or leak, whatever yaml-cpp throws.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/assert.h"
#include "config/member_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto result = rw::config::parse_member_config(text, "fuzz.yaml");
  if (result) {
    // A valid config lists itself with its own raft address.
    const rw::config::MemberAddress* own = result->find_member(result->id);
    RW_ASSERT(own != nullptr);
    RW_ASSERT(own->raft.text == result->raft_address.text);
    RW_ASSERT(!result->members.empty() && result->members.size() <= rw::config::kMembersMax);
  } else {
    RW_ASSERT(!result.error().empty());
    for (const auto& error : result.error()) RW_ASSERT(!error.to_string().empty());
  }
  return 0;
}
