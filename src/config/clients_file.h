// Reads FreeRADIUS 3.2 `clients.conf` files: the NAS clients allowed to send
// RADIUS packets, with their shared secrets (RFC 2865 §3), and the RadSec
// clients file (RFC 6614), which may also group them in `clients NAME { ... }`
// sections. The accepted keys and every difference from FreeRADIUS are in
// docs/users_and_clients.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "config/freeradius_lexer.h"

namespace rw::config {

// `require_message_authenticator` and `limit_proxy_state` take yes, no or
// auto (FreeRADIUS 3.2.5+, the BlastRADIUS mitigations of CVE-2024-3596).
// `auto` means: start as `no`, and switch to `yes` for this client once it
// has sent a valid Message-Authenticator in an Access-Request without
// EAP-Message. The gateway keeps that learned state; the file only says
// which policy applies.
enum class ClientCheck : std::uint8_t { kNo, kYes, kAuto };
std::string_view to_string(ClientCheck check);

// The transports a client may use (`proto`): udp by default.
enum class ClientProtocol : std::uint8_t { kUdp, kTcp, kTls, kAny };
std::string_view to_string(ClientProtocol protocol);

// One `client NAME { ... }` section.
struct ClientDef {
  std::string name;
  // IPv4 in the first 4 bytes (as gateway::Endpoint); host bits are zero.
  std::array<std::uint8_t, 16> address{};
  bool is_v6 = false;
  std::uint8_t prefix_length = 32;  // 32 (IPv4) or 128 (IPv6) for one host.
  std::string secret;               // Any bytes, never empty.
  std::string shortname;            // Defaults to `name`.
  std::string nas_type;             // Defaults to "other".
  // radiusward requires Message-Authenticator unless told otherwise, which
  // defeats BlastRADIUS (CVE-2024-3596) for every client; FreeRADIUS 3.2
  // defaults to `no` for compatibility with old NAS.
  ClientCheck require_message_authenticator = ClientCheck::kYes;
  // Drop Access-Requests that carry Proxy-State but no Message-Authenticator
  // (only consulted when Message-Authenticator is not required).
  ClientCheck limit_proxy_state = ClientCheck::kYes;
  ClientProtocol proto = ClientProtocol::kUdp;
  // `response_window`, when set: how long a proxied request may wait.
  std::optional<std::uint32_t> response_window_ms;
  // Where Disconnect- and CoA-Requests for this NAS go (RFC 5176 §3):
  // `coa_server` when it is an address (FreeRADIUS gives it the name of a
  // home_server section instead; such a name is ignored with a warning), and
  // `coa_port`. Without coa_server: the client's address when it is one host,
  // else the session's NAS-IP-Address (docs/users_and_clients.md).
  std::optional<std::array<std::uint8_t, 16>> coa_address;  // IPv4 in the first 4 bytes
  bool coa_is_v6 = false;
  std::uint16_t coa_port = 3799;
  // `virtual_server`: accepted and kept for messages, but radiusward has a
  // single policy, so it selects nothing (a warning says so).
  std::string virtual_server;
  // RadSec only, `certificate_name`: after the TLS handshake, the peer
  // certificate's subject CN or one of its subjectAltName DNS names must
  // equal it, else the connection is closed (docs/security.md "RadSec").
  // Empty: not set, the source address alone names the entry.
  std::string certificate_name;
  // Where the section starts, for messages.
  std::string file;
  int line = 0;
  // The tenant whose clients file this entry came from, as an index into
  // the gateway state's tenants (0: `default`); set by the loader of the
  // gateway state, never by the clients file (docs/design.md "Tenants").
  std::uint16_t tenant = 0;

  [[nodiscard]] Bytes secret_bytes() const { return as_bytes(secret); }
};

struct ClientsLimits {
  std::size_t clients_max = 65536;
  IncludeLimits include;
  // What require_message_authenticator is for a client that does not set
  // it: the gateway config's `require_message_authenticator` (yes by default).
  ClientCheck require_message_authenticator_default = ClientCheck::kYes;
  // Reading the RadSec clients file (RFC 6614, docs/users_and_clients.md
  // "RadSec clients"): `client` sections may also sit inside `clients NAME
  // { ... }` sections; a client whose proto is not tls, tcp or * is not a
  // RadSec client and is skipped with a warning; the secret is `radsec`
  // (RFC 6614 §2.3: none written means `radsec`, another is an error at its
  // position); require_message_authenticator and limit_proxy_state default
  // to no, since TLS protects every packet's integrity (docs/security.md
  // "RadSec").
  bool radsec = false;
  // With radsec: every RadSec client must set certificate_name (the gateway
  // config's `radsec.require_certificate_name`).
  bool require_certificate_name = false;
};

// The longest certificate_name: a DNS name's 253 octets (RFC 1035 §2.3.4).
inline constexpr std::size_t kCertificateNameMax = 253;

// The shared secret of every RadSec client (RFC 6614 §2.3).
inline constexpr std::string_view kRadSecSecret = "radsec";

// The result of reading a clients file: the clients in file order, and
// warnings about accepted-but-ignored settings ("file:line:col: message").
struct ClientsFile {
  std::vector<ClientDef> clients;
  std::vector<SourceError> warnings;
};

// Reads `path` and what it `$INCLUDE`s (files, or folders in name order).
// Errors: unknown keys, bad values, a missing secret or address, duplicate
// addresses, include problems; each with file:line:col.
[[nodiscard]] Result<ClientsFile, SourceError> load_clients_file(const std::string& path,
                                                                 const ClientsLimits& limits = {});

// Parses text from memory (tests, fuzzing); `$INCLUDE` is an error.
[[nodiscard]] Result<ClientsFile, SourceError> parse_clients(std::string_view text,
                                                             std::string_view file_name,
                                                             const ClientsLimits& limits = {});

// An address with an optional prefix length, as written in clients.conf:
// "10.0.0.1", "10.0.0.0/8", "2001:db8::/32", "*" (any, IPv4 unless
// `family_v6`). Exposed for the YAML config and tests.
struct AddressPrefix {
  std::array<std::uint8_t, 16> address{};
  bool is_v6 = false;
  std::uint8_t prefix_length = 0;
  bool had_host_bits = false;  // Bits past the prefix were set and cleared.
};
enum class AddressFamily : std::uint8_t { kAny, kV4, kV6 };
[[nodiscard]] Result<AddressPrefix, std::string> parse_address_prefix(std::string_view text,
                                                                      AddressFamily family);

}  // namespace rw::config
