// The longest-prefix client lookup; see client_table.h.
#include "config/client_table.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace rw::config {

namespace {

std::array<std::uint8_t, 16> masked(const std::array<std::uint8_t, 16>& address, unsigned prefix_length) {
  std::array<std::uint8_t, 16> out{};
  unsigned full = prefix_length / 8;
  std::copy_n(address.begin(), full, out.begin());
  if (unsigned rest = prefix_length % 8; rest != 0) {
    out[full] = static_cast<std::uint8_t>(address[full] & (0xFFu << (8 - rest)));
  }
  return out;
}

// RFC 4291 §2.5.5.2: ::ffff:0:0/96 carries an IPv4 address.
bool is_v4_mapped(const std::array<std::uint8_t, 16>& address) {
  for (int i = 0; i < 10; ++i) {
    if (address[i] != 0) return false;
  }
  return address[10] == 0xFF && address[11] == 0xFF;
}

}  // namespace

Result<ClientTable, std::string> ClientTable::build(std::vector<ClientDef> clients) {
  ClientTable table;
  table.clients_ = std::move(clients);
  index(table.v4_, table.clients_, false);
  index(table.v6_, table.clients_, true);
  for (const Family* family : {&table.v4_, &table.v6_}) {
    for (const Group& group : family->groups) {
      for (std::uint32_t i = group.begin + 1; i < group.end; ++i) {
        if (family->entries[i].key == family->entries[i - 1].key) {
          return fail(fmt::format("clients {} and {} have the same address and prefix",
                                  table.clients_[family->entries[i - 1].client].name,
                                  table.clients_[family->entries[i].client].name));
        }
      }
    }
  }
  return table;
}

void ClientTable::index(Family& family, const std::vector<ClientDef>& clients, bool is_v6) {
  for (std::uint32_t i = 0; i < clients.size(); ++i) {
    const ClientDef& client = clients[i];
    if (client.is_v6 != is_v6) continue;
    family.entries.push_back(Entry{masked(client.address, client.prefix_length), i});
  }
  auto prefix_of = [&](const Entry& entry) { return clients[entry.client].prefix_length; };
  std::sort(family.entries.begin(), family.entries.end(), [&](const Entry& a, const Entry& b) {
    if (prefix_of(a) != prefix_of(b)) return prefix_of(a) > prefix_of(b);
    return a.key < b.key;
  });
  std::size_t size = 16;
  while (size < 2 * family.entries.size()) size *= 2;
  family.slots.assign(size, Slot{});
  for (const Entry& entry : family.entries) {
    // Duplicates are refused by build() after indexing; the first one wins here.
    for (std::size_t at = hash(entry.key, prefix_of(entry)) & (size - 1);; at = (at + 1) & (size - 1)) {
      Slot& slot = family.slots[at];
      if (slot.client == kEmpty) {
        slot = Slot{entry.key, prefix_of(entry), entry.client};
        break;
      }
      if (slot.key == entry.key && slot.prefix_length == prefix_of(entry)) break;
    }
  }
  for (std::uint32_t i = 0; i < family.entries.size(); ++i) {
    std::uint8_t length = prefix_of(family.entries[i]);
    if (family.groups.empty() || family.groups.back().prefix_length != length) {
      family.groups.push_back(Group{length, i, i});
    }
    family.groups.back().end = i + 1;
  }
}

// The two halves of the masked address and the prefix length, mixed (a
// multiply-xorshift finaliser). The keys are the operator's clients; a
// NAS's address only probes, so it cannot lengthen a chain.
std::size_t ClientTable::hash(const std::array<std::uint8_t, 16>& key, std::uint8_t prefix_length) {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  std::memcpy(&high, key.data(), 8);
  std::memcpy(&low, key.data() + 8, 8);
  std::uint64_t h = (high ^ (low * 0x9E3779B97F4A7C15ULL) ^ prefix_length) * 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBULL;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

const ClientDef* ClientTable::find_in(const Family& family,
                                      const std::array<std::uint8_t, 16>& address) const {
  for (const Group& group : family.groups) {
    const std::array<std::uint8_t, 16> key = masked(address, group.prefix_length);
    const std::size_t mask = family.slots.size() - 1;
    for (std::size_t at = hash(key, group.prefix_length) & mask;; at = (at + 1) & mask) {
      const Slot& slot = family.slots[at];
      if (slot.client == kEmpty) break;
      if (slot.key == key && slot.prefix_length == group.prefix_length) return &clients_[slot.client];
    }
  }
  return nullptr;
}

const ClientDef* ClientTable::find(const std::array<std::uint8_t, 16>& address, bool is_v6) const {
  if (!is_v6) {
    std::array<std::uint8_t, 16> v4{};
    std::copy_n(address.begin(), 4, v4.begin());
    return find_in(v4_, v4);
  }
  if (is_v4_mapped(address)) {
    std::array<std::uint8_t, 16> v4{};
    std::copy_n(address.begin() + 12, 4, v4.begin());
    if (const ClientDef* client = find_in(v4_, v4)) return client;
  }
  return find_in(v6_, address);
}

}  // namespace rw::config
