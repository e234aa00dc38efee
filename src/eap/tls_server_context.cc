// The EAP TLS server context (tls_server_context.h). A configuration loader:
// it reads the certificate, key, CA and CRL files once, when built.
#include "eap/tls_server_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <filesystem>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

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
    case Kind::kResumption:
      what = "resumption";
      break;
    case Kind::kOpenSsl:
      what = "OpenSSL";
      break;
  }
  std::string text = file.empty() ? std::string(what) : file + ": " + std::string(what);
  if (!reason.empty()) text += ": " + reason;
  return text;
}

std::string_view to_string(RevocationVerdict verdict) {
  switch (verdict) {
    case RevocationVerdict::kGood:
      return "good";
    case RevocationVerdict::kRevoked:
      return "revoked";
    case RevocationVerdict::kUnknown:
      return "unknown";
  }
  return "unknown";
}

namespace {

void free_chain(STACK_OF(X509) * chain) { sk_X509_pop_free(chain, X509_free); }
using OwnedChain = openssl::Owned<STACK_OF(X509), free_chain>;

// What the context's callbacks need besides the SSL_CTX: the revocation
// checker and the resumption cache. Owned by the SSL_CTX's ex data, freed
// with it, so a session outliving every TlsServerContext copy still finds it.
struct ContextExtras {
  std::shared_ptr<RevocationChecker> revocation;
  bool revocation_required = false;
  int verify_depth_max = 5;
  std::size_t sessions_max = 0;

  // Sessions by ID with the client's chain (without its leaf) as it came in
  // the full handshake, oldest first. OpenSSL's own cache is off: its
  // lookup cannot verify a session again before resuming it.
  struct Entry {
    openssl::Owned<SSL_SESSION, SSL_SESSION_free> session;
    OwnedChain chain;
  };
  std::mutex mutex;
  std::list<std::string> order;  // Guarded by mutex. Oldest first.
  std::unordered_map<std::string, std::pair<Entry, std::list<std::string>::iterator>>
      sessions;  // Guarded by mutex.
};

void free_extras(void* /*parent*/, void* pointer, CRYPTO_EX_DATA* /*data*/, int /*index*/, long /*argl*/,
                 void* /*argp*/) {
  delete static_cast<ContextExtras*>(pointer);
}

int extras_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, free_extras);
  return index;
}

ContextExtras* extras_of(const SSL_CTX* context) {
  return static_cast<ContextExtras*>(SSL_CTX_get_ex_data(context, extras_index()));
}

// The verify callback: OpenSSL's verdict stands; once the whole chain
// verified (the last call, at depth 0), the revocation checker is asked of
// the client's certificate. A revoked answer, or no usable one when it is
// required, fails the handshake with the matching alert.
int verify_with_revocation(int preverify_ok, X509_STORE_CTX* store_context) {
  if (preverify_ok != 1 || X509_STORE_CTX_get_error_depth(store_context) != 0) return preverify_ok;
  auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store_context, SSL_get_ex_data_X509_STORE_CTX_idx()));
  if (ssl == nullptr) return preverify_ok;
  ContextExtras* extras = extras_of(SSL_get_SSL_CTX(ssl));
  if (extras == nullptr || !extras->revocation) return preverify_ok;
  STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(store_context);
  X509* leaf = X509_STORE_CTX_get_current_cert(store_context);
  X509* issuer = chain != nullptr && sk_X509_num(chain) >= 2 ? sk_X509_value(chain, 1) : nullptr;
  RevocationVerdict verdict = RevocationVerdict::kUnknown;
  if (issuer != nullptr) {
    verdict = extras->revocation->check(RevocationQuery{
        .leaf = leaf, .issuer = issuer, .store = X509_STORE_CTX_get0_store(store_context), .chain = chain});
  }
  if (verdict == RevocationVerdict::kRevoked) {
    X509_STORE_CTX_set_error(store_context, X509_V_ERR_CERT_REVOKED);
    return 0;
  }
  if (verdict == RevocationVerdict::kUnknown && extras->revocation_required) {
    X509_STORE_CTX_set_error(store_context, X509_V_ERR_OCSP_VERIFY_FAILED);
    return 0;
  }
  return 1;
}

std::string id_of(const SSL_SESSION* session) {
  unsigned int length = 0;
  const unsigned char* id = SSL_SESSION_get_id(session, &length);
  return std::string(reinterpret_cast<const char*>(id), length);
}

// A full handshake made a resumable session (OpenSSL holds a reference
// for us when this returns 1).
int keep_session(SSL* ssl, SSL_SESSION* session) {
  ContextExtras* extras = extras_of(SSL_get_SSL_CTX(ssl));
  if (extras == nullptr || extras->sessions_max == 0 || SSL_SESSION_get0_peer(session) == nullptr) return 0;
  ContextExtras::Entry entry{.session = openssl::Owned<SSL_SESSION, SSL_SESSION_free>(session),
                             .chain = OwnedChain(nullptr)};
  if (STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl); chain != nullptr) {
    entry.chain.reset(X509_chain_up_ref(chain));
  }
  std::string id = id_of(session);
  const std::lock_guard lock(extras->mutex);
  if (auto found = extras->sessions.find(id); found != extras->sessions.end()) {
    extras->order.erase(found->second.second);
    extras->sessions.erase(found);
  }
  while (extras->sessions.size() >= extras->sessions_max) {
    extras->sessions.erase(extras->order.front());
    extras->order.pop_front();
  }
  extras->order.push_back(id);
  extras->sessions.emplace(std::move(id), std::make_pair(std::move(entry), std::prev(extras->order.end())));
  return 1;
}

void drop_session(SSL_CTX* context, SSL_SESSION* session) {
  ContextExtras* extras = extras_of(context);
  if (extras == nullptr) return;
  const std::lock_guard lock(extras->mutex);
  if (auto found = extras->sessions.find(id_of(session)); found != extras->sessions.end()) {
    // Called by OpenSSL with its reference still held: the entry's is ours.
    extras->order.erase(found->second.second);
    extras->sessions.erase(found);
  }
}

// The resumption lookup: the session, if it is still within its lifetime
// and its client chain verifies now (expiry, CRL, OCSP), else none and the
// peer does a full handshake.
SSL_SESSION* find_session(SSL* ssl, const unsigned char* id, int length, int* copy) {
  *copy = 0;
  SSL_CTX* context = SSL_get_SSL_CTX(ssl);
  ContextExtras* extras = extras_of(context);
  if (extras == nullptr || length <= 0) return nullptr;
  const std::string key(reinterpret_cast<const char*>(id), static_cast<std::size_t>(length));
  openssl::Owned<SSL_SESSION, SSL_SESSION_free> session;
  OwnedChain chain;
  {
    const std::lock_guard lock(extras->mutex);
    auto found = extras->sessions.find(key);
    if (found == extras->sessions.end()) return nullptr;
    SSL_SESSION_up_ref(found->second.first.session.get());
    session.reset(found->second.first.session.get());
    if (found->second.first.chain) chain.reset(X509_chain_up_ref(found->second.first.chain.get()));
  }
  X509* leaf = SSL_SESSION_get0_peer(session.get());
  openssl::Owned<X509_STORE_CTX, X509_STORE_CTX_free> verify(X509_STORE_CTX_new());
  bool verified = leaf != nullptr && verify &&
                  X509_STORE_CTX_init(verify.get(), SSL_CTX_get_cert_store(context), leaf, chain.get()) == 1;
  if (verified) {
    X509_STORE_CTX_set_ex_data(verify.get(), SSL_get_ex_data_X509_STORE_CTX_idx(), ssl);
    X509_STORE_CTX_set_purpose(verify.get(), X509_PURPOSE_SSL_CLIENT);
    X509_STORE_CTX_set_depth(verify.get(), extras->verify_depth_max);
    X509_STORE_CTX_set_verify_cb(verify.get(), verify_with_revocation);
    verified = X509_verify_cert(verify.get()) == 1;
  }
  ERR_clear_error();
  const long age =
      static_cast<long>(std::time(nullptr)) - static_cast<long>(SSL_SESSION_get_time(session.get()));
  if (!verified || age < 0 || age > SSL_SESSION_get_timeout(session.get())) {
    drop_session(context, session.get());
    return nullptr;
  }
  return session.release();  // Our reference goes to OpenSSL (copy = 0).
}

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
  // No renegotiation, no compression; never stateless tickets (TLS 1.2
  // tickets, and TLS 1.3's stateless ones): resumption, when configured,
  // goes through the context's own cache (the class comment says why).
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE);
  auto* extras = new ContextExtras{};
  if (SSL_CTX_set_ex_data(ctx, extras_index(), extras) != 1) {
    delete extras;
    return context_error(Kind::kOpenSsl, "", "SSL_CTX_set_ex_data failed");
  }
  extras->revocation = config.revocation;
  extras->revocation_required = config.revocation_required;
  extras->verify_depth_max = config.verify_depth_max;
  extras->sessions_max = config.resumption_sessions_max;
  if (config.resumption_sessions_max > 0) {
    if (!config.require_client_certificate) {
      return fail(TlsContextError{.kind = Kind::kResumption,
                                  .reason = "only EAP-TLS (a required client certificate) resumes"});
    }
    static constexpr unsigned char kSessionContext[] = "radiusward eap-tls";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_set_timeout(ctx, static_cast<long>(config.resumption_lifetime.to_ms() / 1000));
    SSL_CTX_sess_set_new_cb(ctx, keep_session);
    SSL_CTX_sess_set_remove_cb(ctx, drop_session);
    SSL_CTX_sess_set_get_cb(ctx, find_session);
    SSL_CTX_set_num_tickets(ctx, 1);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx, 0);
  }

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
                     verify_with_revocation);
  SSL_CTX_set_verify_depth(ctx, config.verify_depth_max);
  return TlsServerContext(std::move(context));
}

std::size_t TlsServerContext::resumable_sessions() const {
  ContextExtras* extras = extras_of(context_.get());
  if (extras == nullptr) return 0;
  const std::lock_guard lock(extras->mutex);
  return extras->sessions.size();
}

}  // namespace rw::eap
