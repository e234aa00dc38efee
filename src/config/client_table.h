// Finds the NAS client a datagram came from: the client whose address prefix
// contains the source address, the longest prefix winning (FreeRADIUS's
// "smallest network" rule for overlapping client networks).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/result.h"
#include "config/clients_file.h"

namespace rw::config {

// An immutable lookup table over ClientDefs. Built once at start (or
// reload); find() is const, allocates nothing and may be called from any
// thread.
class ClientTable {
 public:
  ClientTable() = default;

  // Builds the table. Fails with the offending client's name when two
  // clients have the same address and prefix (load_clients_file already
  // refuses those with a file:line:col).
  [[nodiscard]] static Result<ClientTable, std::string> build(std::vector<ClientDef> clients);

  // Returns the client with the longest prefix containing `address`, or
  // nullptr. IPv4 uses address[0..3]. An IPv4-mapped IPv6 source
  // (::ffff:a.b.c.d, RFC 4291 §2.5.5.2), as a dual-stack socket reports an
  // IPv4 peer, is matched against the IPv4 clients first, then the IPv6
  // ones. One hash probe per distinct prefix length, whatever the number
  // of clients (docs/users_and_clients.md "Client lookup").
  [[nodiscard]] const ClientDef* find(const std::array<std::uint8_t, 16>& address, bool is_v6) const;

  [[nodiscard]] std::span<const ClientDef> clients() const { return clients_; }

 private:
  struct Entry {
    std::array<std::uint8_t, 16> key;  // Address with host bits cleared.
    std::uint32_t client;              // Index into clients_.
  };
  struct Group {
    std::uint8_t prefix_length;
    std::uint32_t begin;  // Entries [begin, end) sorted by key.
    std::uint32_t end;
  };
  // A masked address under one prefix length, and its client: one slot of
  // the open-addressing index (client kEmpty: a free slot).
  struct Slot {
    std::array<std::uint8_t, 16> key{};
    std::uint8_t prefix_length = 0;
    std::uint32_t client = kEmpty;
  };
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFF;
  struct Family {
    std::vector<Entry> entries;
    std::vector<Group> groups;  // Longest prefix first.
    // Every entry by (masked address, prefix length), linear probing in a
    // power-of-two table at most half full: the lookup probes it once per
    // group, one cache line in the common case, instead of a binary search
    // over the group's entries.
    std::vector<Slot> slots;
  };
  [[nodiscard]] static std::size_t hash(const std::array<std::uint8_t, 16>& key, std::uint8_t prefix_length);

  static void index(Family& family, const std::vector<ClientDef>& clients, bool is_v6);
  [[nodiscard]] const ClientDef* find_in(const Family& family,
                                         const std::array<std::uint8_t, 16>& address) const;

  std::vector<ClientDef> clients_;
  Family v4_;
  Family v6_;
};

}  // namespace rw::config
