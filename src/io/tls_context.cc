// The cluster's TLS contexts and non-blocking streams (tls_context.h). Every
// OpenSSL failure is turned into a TlsError carrying OpenSSL's reasons, so
// that an operator sees which file is wrong and why.
#include "io/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <pthread.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>

namespace rw::io {
namespace {

TlsError failure(std::string file, std::string_view fallback) {
  return TlsError{.file = std::move(file), .reason = openssl_reasons(fallback)};
}

Result<void, TlsError> load_crl(X509_STORE* store, const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return fail(TlsError{.file = path, .reason = "cannot open the CRL file"});
  X509_CRL* crl = PEM_read_X509_CRL(file, nullptr, nullptr, nullptr);
  std::fclose(file);
  if (crl == nullptr) return fail(failure(path, "no PEM CRL in the file"));
  const int added = X509_STORE_add_crl(store, crl);
  X509_CRL_free(crl);
  if (added != 1) return fail(failure(path, "the CRL cannot be used"));
  return {};
}

}  // namespace

std::string openssl_reasons(std::string_view fallback) {
  std::string reasons;
  while (const unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    if (!reasons.empty()) reasons += "; ";
    reasons += text;
  }
  return reasons.empty() ? std::string(fallback) : reasons;
}

std::string TlsError::to_string() const { return file.empty() ? reason : file + ": " + reason; }

Result<TlsContext, TlsError> make_tls_context(const TlsFiles& files, TlsRole role, TlsVersions versions) {
  ERR_clear_error();
  TlsContext context(SSL_CTX_new(role == TlsRole::kServer ? TLS_server_method() : TLS_client_method()),
                     SSL_CTX_free);
  if (!context) return fail(failure("", "SSL_CTX_new failed"));
  SSL_CTX* ctx = context.get();
  // TLS 1.3 only inside the cluster: no older suite or renegotiation to
  // reason about. RadSec peers may speak 1.2, without renegotiation.
  const int min_version = versions == TlsVersions::k13 ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (SSL_CTX_set_min_proto_version(ctx, min_version) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1) {
    return fail(failure("", "cannot restrict the context's TLS versions"));
  }
  if (versions == TlsVersions::k12And13) SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_load_verify_locations(ctx, files.ca.c_str(), nullptr) != 1) {
    return fail(failure(files.ca, "cannot load the CA certificate"));
  }
  // The cluster CA is the only trust anchor: the system's CAs are not loaded.
  if (SSL_CTX_use_certificate_chain_file(ctx, files.cert.c_str()) != 1) {
    return fail(failure(files.cert, "cannot load the certificate"));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    return fail(failure(files.key, "cannot load the private key"));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return fail(failure(files.key, "the private key does not match " + files.cert));
  }
  if (files.crl) {
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    if (auto loaded = load_crl(store, *files.crl); !loaded) return fail(loaded.error());
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
  }
  const int verify =
      role == TlsRole::kServer ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_PEER;
  SSL_CTX_set_verify(ctx, verify, nullptr);
  // Connections are long-lived; tickets would only add bytes and state.
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return context;
}

std::optional<std::string> peer_common_name(const SSL* ssl) {
  if (ssl == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) return std::nullopt;
  X509_NAME* subject = X509_get_subject_name(cert);
  const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index < 0) return std::nullopt;
  // A second CN would make the identity ambiguous.
  if (X509_NAME_get_index_by_NID(subject, NID_commonName, index) >= 0) return std::nullopt;
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
  unsigned char* utf8 = nullptr;
  const int length = ASN1_STRING_to_UTF8(&utf8, data);
  if (length < 0) return std::nullopt;
  std::string name(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(length));
  OPENSSL_free(utf8);
  if (name.find('\0') != std::string::npos) return std::nullopt;
  return name;
}

std::string member_common_name(std::uint64_t member_id) { return "member-" + std::to_string(member_id); }

std::string gateway_common_name(std::string_view gateway_name) {
  return "gateway-" + std::string(gateway_name);
}

std::optional<std::uint64_t> member_id_of(std::string_view common_name) {
  constexpr std::string_view kPrefix = "member-";
  if (!common_name.starts_with(kPrefix)) return std::nullopt;
  const std::string_view digits = common_name.substr(kPrefix.size());
  // Canonical decimal only: "member-01" is not member 1.
  if (digits.empty() || (digits.size() > 1 && digits.front() == '0')) return std::nullopt;
  std::uint64_t id = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (error != std::errc() || end != digits.data() + digits.size() || id == 0) return std::nullopt;
  return id;
}

bool valid_gateway_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

bool is_gateway_common_name(std::string_view common_name) {
  constexpr std::string_view kPrefix = "gateway-";
  return common_name.starts_with(kPrefix) && valid_gateway_name(common_name.substr(kPrefix.size()));
}

Result<std::unique_ptr<TlsStream>, TlsError> TlsStream::attach(const TlsContext& context, int fd,
                                                               TlsRole role) {
  ERR_clear_error();
  std::unique_ptr<TlsStream> stream(new TlsStream());
  stream->ssl_ = SSL_new(context.get());
  if (stream->ssl_ == nullptr) return fail(failure("", "SSL_new failed"));
  if (SSL_set_fd(stream->ssl_, fd) != 1) return fail(failure("", "SSL_set_fd failed"));
  if (role == TlsRole::kServer) {
    SSL_set_accept_state(stream->ssl_);
  } else {
    SSL_set_connect_state(stream->ssl_);
  }
  return stream;
}

TlsStream::~TlsStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

TlsStream::Status TlsStream::status_of(int result, const char* what) {
  const int code = SSL_get_error(ssl_, result);
  switch (code) {
    case SSL_ERROR_WANT_READ:
      return Status::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return Status::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      return Status::kClosed;
    default:
      break;
  }
  std::string reason = openssl_reasons(code == SSL_ERROR_SYSCALL ? "the connection broke" : "TLS failure");
  const long verify = SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK)
    reason += std::string(" (peer certificate: ") + X509_verify_cert_error_string(verify) + ")";
  error_ = std::string(what) + ": " + reason;
  return Status::kFailed;
}

namespace {

// OpenSSL writes with write(2) (handshakes and reads may write too): a peer
// that went away must give EPIPE, never kill the process with SIGPIPE. The
// first OpenSSL call of a thread blocks SIGPIPE for that thread for good, as
// the raft loop's threads do (src/consensus/node.cc): a SIGPIPE that write
// raises then stays pending on the thread, and no code in this project
// waits for it. One system call per thread, none per write.
void block_sigpipe_in_this_thread() {
  thread_local const bool blocked = [] {
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    return pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr) == 0;
  }();
  (void)blocked;
}

}  // namespace

TlsStream::Status TlsStream::handshake() {
  block_sigpipe_in_this_thread();
  if (handshake_done_) return Status::kDone;
  ERR_clear_error();
  const int result = SSL_do_handshake(ssl_);
  if (result == 1) {
    handshake_done_ = true;
    return Status::kDone;
  }
  return status_of(result, "handshake");
}

TlsStream::Io TlsStream::read(MutableBytes space) {
  if (space.empty()) return Io{Status::kDone, 0};
  block_sigpipe_in_this_thread();
  ERR_clear_error();
  std::size_t got = 0;
  if (SSL_read_ex(ssl_, space.data(), space.size(), &got) == 1) return Io{Status::kDone, got};
  return Io{status_of(0, "read"), 0};
}

TlsStream::Io TlsStream::write(Bytes data) {
  if (data.empty()) return Io{Status::kDone, 0};
  block_sigpipe_in_this_thread();
  ERR_clear_error();
  std::size_t put = 0;
  if (SSL_write_ex(ssl_, data.data(), data.size(), &put) == 1) return Io{Status::kDone, put};
  return Io{status_of(0, "write"), 0};
}

bool TlsStream::has_pending() const { return SSL_pending(ssl_) > 0; }

void TlsStream::close_notify() {
  if (!handshake_done_) return;
  block_sigpipe_in_this_thread();
  ERR_clear_error();
  (void)SSL_shutdown(ssl_);
  ERR_clear_error();
}

TlsStream::Io receive_some(TlsStream* tls, int fd, MutableBytes space) {
  if (tls != nullptr) return tls->read(space);
  const ssize_t got = ::recv(fd, space.data(), space.size(), MSG_DONTWAIT);
  if (got > 0) return {TlsStream::Status::kDone, static_cast<std::size_t>(got)};
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return {TlsStream::Status::kWantRead, 0};
  return {got == 0 ? TlsStream::Status::kClosed : TlsStream::Status::kFailed, 0};
}

TlsStream::Io send_some(TlsStream* tls, int fd, Bytes data) {
  if (tls != nullptr) return tls->write(data);
  const ssize_t put = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (put >= 0) return {TlsStream::Status::kDone, static_cast<std::size_t>(put)};
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {TlsStream::Status::kWantWrite, 0};
  return {TlsStream::Status::kFailed, 0};
}

}  // namespace rw::io
