// The EAP TLS server context (tls_server_context.h). A configuration loader:
// it reads the certificate, key, CA and CRL files once, when built.
#include "eap/tls_server_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <filesystem>

#include "eap/tls_openssl.h"

namespace rw::eap {

namespace openssl {

std::string error_queue(std::string_view fallback) {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    if (!text.empty()) text += "; ";
    text += buffer;
  }
  return text.empty() ? std::string(fallback) : text;
}

}  // namespace openssl

std::string_view to_string(TlsVersion version) {
  switch (version) {
    case TlsVersion::k1_2:
      return "TLSv1.2";
    case TlsVersion::k1_3:
      return "TLSv1.3";
  }
  return "TLS";
}

std::string TlsContextError::to_string() const {
  std::string_view what;
  switch (kind) {
    case Kind::kCertificateChain:
      what = "cannot use the server certificate chain";
      break;
    case Kind::kPrivateKey:
      what = "cannot use the server private key";
      break;
    case Kind::kCaFile:
      what = "cannot use the CA file";
      break;
    case Kind::kCaPath:
      what = "cannot use the CA folder";
      break;
    case Kind::kCrlFile:
      what = "cannot use the CRL file";
      break;
    case Kind::kVersions:
      what = "TLS versions";
      break;
    case Kind::kOpenSsl:
      what = "OpenSSL";
      break;
  }
  std::string text = file.empty() ? std::string(what) : file + ": " + std::string(what);
  if (!reason.empty()) text += ": " + reason;
  return text;
}

namespace {

int protocol_version(TlsVersion version) {
  return version == TlsVersion::k1_2 ? TLS1_2_VERSION : TLS1_3_VERSION;
}

tl::unexpected<TlsContextError> context_error(TlsContextError::Kind kind, const std::string& file,
                                              std::string_view fallback) {
  return fail(TlsContextError{.kind = kind, .file = file, .reason = openssl::error_queue(fallback)});
}

// The CAs client certificates must chain to, and the names the server
// announces in its CertificateRequest (so that a supplicant holding several
// certificates picks one of these CAs').
Result<void, TlsContextError> load_trust(SSL_CTX* context, const TlsServerConfig& config) {
  using Kind = TlsContextError::Kind;
  if (config.ca_file.empty()) return context_error(Kind::kCaFile, "", "no CA file given");
  if (SSL_CTX_load_verify_file(context, config.ca_file.c_str()) != 1) {
    return context_error(Kind::kCaFile, config.ca_file, "no PEM certificate");
  }
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config.ca_file.c_str());
  if (names == nullptr) return context_error(Kind::kCaFile, config.ca_file, "no CA name");
  SSL_CTX_set_client_CA_list(context, names);  // Takes ownership.
  if (config.ca_path) {
    std::error_code code;
    if (!std::filesystem::is_directory(*config.ca_path, code)) {
      return fail(TlsContextError{.kind = Kind::kCaPath, .file = *config.ca_path, .reason = "not a folder"});
    }
    if (SSL_CTX_load_verify_dir(context, config.ca_path->c_str()) != 1) {
      return context_error(Kind::kCaPath, *config.ca_path, "cannot add the folder");
    }
  }
  if (config.crl_file) {
    X509_STORE* store = SSL_CTX_get_cert_store(context);
    X509_LOOKUP* lookup = X509_STORE_add_lookup(store, X509_LOOKUP_file());
    if (lookup == nullptr || X509_load_crl_file(lookup, config.crl_file->c_str(), X509_FILETYPE_PEM) <= 0) {
      return context_error(Kind::kCrlFile, *config.crl_file, "no PEM CRL");
    }
    // The CA's own CRL covers the client certificate; CHECK_ALL also asks
    // one of every intermediate's issuer, so a revoked intermediate fails.
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
  }
  return {};
}

}  // namespace

Result<TlsServerContext, TlsContextError> TlsServerContext::create(const TlsServerConfig& config) {
  using Kind = TlsContextError::Kind;
  ERR_clear_error();
  if (protocol_version(config.min_version) > protocol_version(config.max_version)) {
    return fail(TlsContextError{.kind = Kind::kVersions, .reason = "min_version is above max_version"});
  }
  std::shared_ptr<SSL_CTX> context(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!context) return context_error(Kind::kOpenSsl, "", "SSL_CTX_new failed");
  SSL_CTX* ctx = context.get();
  if (SSL_CTX_set_min_proto_version(ctx, protocol_version(config.min_version)) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, protocol_version(config.max_version)) != 1) {
    return context_error(Kind::kVersions, "", "cannot set the TLS versions");
  }
  // Resumption is not built (the class comment says why): no session cache,
  // no TLS 1.2 tickets, no TLS 1.3 tickets. No renegotiation, no compression.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE);

  if (SSL_CTX_use_certificate_chain_file(ctx, config.certificate_chain_file.c_str()) != 1) {
    return context_error(Kind::kCertificateChain, config.certificate_chain_file, "no PEM certificate");
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, config.private_key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return context_error(Kind::kPrivateKey, config.private_key_file, "no PEM private key");
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return context_error(Kind::kPrivateKey, config.private_key_file,
                         "the key does not match " + config.certificate_chain_file);
  }
  if (auto trust = load_trust(ctx, config); !trust) return fail(trust.error());

  // Without a required certificate none is asked for (PEAP, EAP-TTLS).
  SSL_CTX_set_verify(ctx,
                     config.require_client_certificate
                         ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT | SSL_VERIFY_CLIENT_ONCE
                         : SSL_VERIFY_NONE,
                     nullptr);
  SSL_CTX_set_verify_depth(ctx, config.verify_depth_max);
  return TlsServerContext(std::move(context));
}

}  // namespace rw::eap
