// The names a peer certificate carries, and whether one of them is the name
// a RadSec client entry expects (`certificate_name`, docs/security.md
// "RadSec"): its subject CN, exactly, or one of its subjectAltName DNS
// names, ignoring ASCII case (DNS names are case-insensitive, RFC 4343).
// No wildcard matching: a client entry names one peer.
#pragma once

#include <openssl/x509.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rw::gateway_shell {

// Names kept per certificate; a certificate with more has the rest ignored
// (docs/limits.md "RadSec").
inline constexpr std::size_t kCertificateNamesMax = 32;

struct CertificateNames {
  std::vector<std::string> common_names{};  // Every subject CN, UTF-8, in order.
  std::vector<std::string> dns_names{};     // subjectAltName dNSName entries, in order.
};

// The names of `certificate` (not null), bounded by kCertificateNamesMax.
[[nodiscard]] CertificateNames certificate_names(X509* certificate);

// Whether `expected` is one of the CNs (byte for byte) or one of the DNS
// names (ASCII case ignored).
[[nodiscard]] bool certificate_names_match(const CertificateNames& names, std::string_view expected);

// "CN=a, DNS=b, DNS=c" or "no CN and no DNS name", for logs; bounded.
[[nodiscard]] std::string describe_names(const CertificateNames& names);

}  // namespace rw::gateway_shell
