// Fuzzes the users-file reader with arbitrary text: it must return a value
// or a file:line:col error, never crash or hang. Accepted files are run
// through the policy with a request made of the file's own check values, so
// comparisons and regexes see plausible inputs.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "auth/users_policy.h"
#include "base/assert.h"
#include "config/users_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto dictionary = rw::radius::Dictionary::builtin();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = rw::config::UsersFile::parse(text, "fuzz.users", dictionary);
  if (!parsed) {
    RW_ASSERT(!parsed.error().message.empty());
    return 0;
  }
  std::vector<rw::auth::RequestAttribute> request;
  for (const auto& entry : parsed->entries()) {
    for (const auto& item : entry.check) {
      if (request.size() < 64 && !item.regex) request.push_back({item.def, item.bytes()});
    }
  }
  rw::auth::RequestAttributeList view(request);
  rw::auth::UsersDecision decision;
  for (const auto& entry : parsed->entries()) {
    auto done = rw::auth::evaluate_users(*parsed, entry.name, view, decision);
    if (done) RW_ASSERT(decision.reply().size() <= rw::auth::UsersDecision::kReplyMax);
    if (&entry - parsed->entries().data() >= 16) break;
  }
  return 0;
}
