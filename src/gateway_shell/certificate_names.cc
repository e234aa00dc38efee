// See certificate_names.h.
#include "gateway_shell/certificate_names.h"

#include <openssl/crypto.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>

#include "eap/tls_session.h"

namespace rw::gateway_shell {
namespace {

// What a log line shows of one name.
constexpr std::size_t kLoggedNameMax = 64;

bool equals_ignoring_ascii_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

CertificateNames certificate_names(X509* certificate) {
  CertificateNames names;
  const X509_NAME* subject = X509_get_subject_name(certificate);
  for (int i = -1; (i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) >= 0 &&
                   names.common_names.size() < kCertificateNamesMax;) {
    // A name OpenSSL cannot convert is kept empty: it never equals a
    // configured name, which is never empty.
    names.common_names.push_back(eap::utf8_of(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i))));
  }
  auto* general =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  if (general == nullptr) return names;
  for (int i = 0; i < sk_GENERAL_NAME_num(general) && names.dns_names.size() < kCertificateNamesMax; ++i) {
    const GENERAL_NAME* entry = sk_GENERAL_NAME_value(general, i);
    if (entry->type == GEN_DNS) names.dns_names.push_back(eap::utf8_of(entry->d.dNSName));
  }
  GENERAL_NAMES_free(general);
  return names;
}

bool certificate_names_match(const CertificateNames& names, std::string_view expected) {
  if (expected.empty()) return false;
  if (std::find(names.common_names.begin(), names.common_names.end(), expected) != names.common_names.end())
    return true;
  return std::any_of(names.dns_names.begin(), names.dns_names.end(),
                     [&](const std::string& name) { return equals_ignoring_ascii_case(name, expected); });
}

std::string describe_names(const CertificateNames& names) {
  std::string out;
  const auto append = [&](std::string_view kind, const std::string& name) {
    if (!out.empty()) out += ", ";
    out += kind;
    out += '=';
    // A hostile certificate must not write lines of its own into the log.
    for (const char c : std::string_view(name).substr(0, kLoggedNameMax))
      out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  };
  for (const std::string& name : names.common_names) append("CN", name);
  for (const std::string& name : names.dns_names) append("DNS", name);
  return out.empty() ? "no CN and no DNS name" : out;
}

}  // namespace rw::gateway_shell
