// Fuzzes the clients.conf reader with arbitrary text: it must return a value
// or a file:line:col error, never crash or hang. Accepted files are loaded
// into a ClientTable and every client must be found at its own address.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/assert.h"
#include "config/client_table.h"
#include "config/clients_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = rw::config::parse_clients(text, "fuzz.conf");
  if (!parsed) {
    RW_ASSERT(!parsed.error().message.empty());
    return 0;
  }
  for (const auto& client : parsed->clients) RW_ASSERT(!client.secret.empty());
  auto table = rw::config::ClientTable::build(parsed->clients);
  RW_ASSERT(table.has_value());
  for (const auto& client : table->clients()) {
    const auto* found = table->find(client.address, client.is_v6);
    RW_ASSERT(found != nullptr);
    RW_ASSERT(found->prefix_length >= client.prefix_length);
  }
  return 0;
}
