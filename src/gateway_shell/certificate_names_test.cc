// certificate_names.h: which names of a certificate name a RadSec client entry.
#include "gateway_shell/certificate_names.h"

#include <gtest/gtest.h>
#include <openssl/x509v3.h>

#include <memory>

namespace rw::gateway_shell {
namespace {

using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;

// An unsigned certificate with these subject CNs and, when `san` is not
// empty, a subjectAltName extension as OpenSSL's config syntax writes it
// ("DNS:a,DNS:b,email:c"): the names are read, never verified, here.
Certificate make(std::initializer_list<const char*> common_names, const char* san) {
  Certificate certificate(X509_new(), &X509_free);
  X509_NAME* subject = X509_get_subject_name(certificate.get());
  X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("Org"), -1,
                             -1, 0);
  for (const char* name : common_names) {
    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(name), -1,
                               -1, 0);
  }
  if (san[0] != '\0') {
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, nullptr, certificate.get(), nullptr, nullptr, 0);
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, NID_subject_alt_name, san);
    EXPECT_NE(extension, nullptr);
    X509_add_ext(certificate.get(), extension, -1);
    X509_EXTENSION_free(extension);
  }
  return certificate;
}

TEST(CertificateNames, TheSubjectCnMatchesExactly) {
  const Certificate certificate = make({"proxy.example.org"}, "");
  const CertificateNames names = certificate_names(certificate.get());
  EXPECT_TRUE(names.dns_names.empty());
  EXPECT_TRUE(certificate_names_match(names, "proxy.example.org"));
  // A CN is compared byte for byte.
  EXPECT_FALSE(certificate_names_match(names, "Proxy.Example.org"));
  EXPECT_FALSE(certificate_names_match(names, "proxy.example"));
  EXPECT_FALSE(certificate_names_match(names, ""));
  EXPECT_EQ(describe_names(names), "CN=proxy.example.org");
}

TEST(CertificateNames, AnySanDnsNameMatchesIgnoringCase) {
  const Certificate certificate =
      make({"Proxy One"}, "email:ops@example.org,DNS:a.example.org,DNS:B.Example.org");
  const CertificateNames names = certificate_names(certificate.get());
  EXPECT_TRUE(certificate_names_match(names, "Proxy One"));
  EXPECT_TRUE(certificate_names_match(names, "a.example.org"));
  EXPECT_TRUE(certificate_names_match(names, "A.EXAMPLE.ORG"));
  EXPECT_TRUE(certificate_names_match(names, "b.example.org"));
  // Other SAN forms are not names of the entry.
  EXPECT_FALSE(certificate_names_match(names, "ops@example.org"));
  EXPECT_EQ(describe_names(names), "CN=Proxy One, DNS=a.example.org, DNS=B.Example.org");
}

TEST(CertificateNames, AMismatchIsRefused) {
  const Certificate certificate = make({"other.example.org"}, "DNS:other.example.org,DNS:*.example.org");
  const CertificateNames names = certificate_names(certificate.get());
  EXPECT_FALSE(certificate_names_match(names, "proxy.example.org"));
  // No wildcard matching: an entry names one peer.
  EXPECT_FALSE(certificate_names_match(names, "x.example.org"));
  EXPECT_TRUE(certificate_names_match(names, "*.example.org"));
}

TEST(CertificateNames, NoCnAndNoSanMatchNothing) {
  const Certificate certificate = make({}, "");
  const CertificateNames names = certificate_names(certificate.get());
  EXPECT_TRUE(names.common_names.empty());
  EXPECT_FALSE(certificate_names_match(names, "Org"));
  EXPECT_EQ(describe_names(names), "no CN and no DNS name");
}

TEST(CertificateNames, ControlCharactersAreNotLoggedAndNamesAreBounded) {
  const Certificate certificate = make({"a\nb"}, "");
  EXPECT_EQ(describe_names(certificate_names(certificate.get())), "CN=a?b");
  std::string many;
  for (std::size_t i = 0; i < kCertificateNamesMax + 5; ++i)
    many += (i == 0 ? "DNS:n" : ",DNS:n") + std::to_string(i);
  const Certificate crowded = make({"c"}, many.c_str());
  const CertificateNames names = certificate_names(crowded.get());
  EXPECT_EQ(names.dns_names.size(), kCertificateNamesMax);
  EXPECT_FALSE(certificate_names_match(names, "n" + std::to_string(kCertificateNamesMax)));
}

}  // namespace
}  // namespace rw::gateway_shell
