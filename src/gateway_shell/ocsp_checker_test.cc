// ocsp_checker.h against a real responder: OpenSSL's `openssl ocsp`
// server on a free port, answering from an index of the test CA. Good and
// revoked certificates, the cache, a responder that is gone, one that
// never answers, and one that signs as another CA.
#include "gateway_shell/ocsp_checker.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "eap/tls_peer_for_test.h"
#include "io/csprng.h"
#include "io/file_descriptor.h"
#include "io/free_ports.h"

namespace rw::gateway_shell {
namespace {

using eap::testing::TlsTestPki;

using eap::testing::ocsp_index_line;
using eap::testing::OwnedX509;

OwnedX509 parse(const std::string& pem) { return eap::testing::parse_certificate(pem); }

// `openssl ocsp` serving the test CA's index on a free port until stopped.
class Responder {
 public:
  explicit Responder(bool as_other_ca = false) {
    const TlsTestPki& pki = TlsTestPki::get();
    OwnedX509 valid = parse(pki.valid.cert);
    OwnedX509 revoked = parse(pki.revoked.cert);
    const std::string index = pki.write(
        "ocsp_server_index.txt", ocsp_index_line('V', valid.get()) + ocsp_index_line('R', revoked.get()));
    auto ports = io::free_tcp_ports(1, std::nullopt);
    if (!ports) ADD_FAILURE() << ports.error().to_string();
    port_ = (*ports)[0];
    const std::string signer = as_other_ca ? pki.other_ca_key_pair_file : pki.ca_key_pair_file;
    const std::string port = std::to_string(port_);
    const std::string log = pki.dir + "/ocsp_server_" + port + ".log";
    pid_ = ::fork();
    if (pid_ == 0) {
      // Its words go to a file: "waiting for OCSP client connections" says
      // it listens. (A probe connection would stall it: it serves one
      // connection at a time and waits on an idle one.)
      const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(out, 1);
      ::dup2(out, 2);
      ::execlp("openssl", "openssl", "ocsp", "-index", index.c_str(), "-CA", pki.ca_file.c_str(), "-rsigner",
               signer.c_str(), "-rkey", signer.c_str(), "-port", port.c_str(), "-nmin", "10", "-ignore_err",
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 400; ++i) {
      std::ifstream in(log);
      const std::string said((std::istreambuf_iterator<char>(in)), {});
      if (said.find("waiting for OCSP client connections") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
  ~Responder() { stop(); }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  [[nodiscard]] io::HttpUrl url() const {
    return io::HttpUrl{.host = "127.0.0.1", .port = port_, .path = "/"};
  }

 private:
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

class OcspCheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const TlsTestPki& pki = TlsTestPki::get();
    std::ifstream in(pki.ca_file);
    ca_ = parse(std::string(std::istreambuf_iterator<char>(in), {}));
    valid_ = parse(pki.valid.cert);
    revoked_ = parse(pki.revoked.cert);
    expired_ = parse(pki.expired.cert);
    store_ = X509_STORE_new();
    X509_STORE_add_cert(store_, ca_.get());
  }
  void TearDown() override { X509_STORE_free(store_); }

  eap::RevocationVerdict check(OcspChecker& checker, X509* leaf) {
    return checker.check(
        eap::RevocationQuery{.leaf = leaf, .issuer = ca_.get(), .store = store_, .chain = nullptr});
  }

  io::ThreadLocalCsprng random_;
  OwnedX509 ca_, valid_, revoked_, expired_;
  X509_STORE* store_ = nullptr;
};

TEST_F(OcspCheckerTest, GoodAndRevokedAnswersAreCachedUntilNextUpdate) {
  Responder responder;
  OcspChecker checker(OcspOptions{.responder = responder.url()}, random_);
  EXPECT_EQ(check(checker, valid_.get()), eap::RevocationVerdict::kGood) << checker.last_failure();
  EXPECT_EQ(check(checker, revoked_.get()), eap::RevocationVerdict::kRevoked) << checker.last_failure();
  EXPECT_EQ(checker.stats().queries, 2u);
  // The responder gone, the answers stand until their nextUpdate.
  responder.stop();
  EXPECT_EQ(check(checker, valid_.get()), eap::RevocationVerdict::kGood);
  EXPECT_EQ(check(checker, revoked_.get()), eap::RevocationVerdict::kRevoked);
  const OcspStats stats = checker.stats();
  EXPECT_EQ(stats.queries, 2u);
  EXPECT_EQ(stats.cache_hits, 2u);
  EXPECT_EQ(stats.good, 1u);
  EXPECT_EQ(stats.revoked, 1u);
  EXPECT_EQ(stats.failures, 0u);
}

TEST_F(OcspCheckerTest, ACertificateOutsideTheIndexIsUnknown) {
  Responder responder;
  OcspChecker checker(OcspOptions{.responder = responder.url()}, random_);
  EXPECT_EQ(check(checker, expired_.get()), eap::RevocationVerdict::kUnknown);
  EXPECT_EQ(checker.stats().unknown, 1u);
  EXPECT_EQ(checker.stats().failures, 0u);
}

TEST_F(OcspCheckerTest, AResponderThatIsGoneGivesUnknownAndSaysWhy) {
  auto ports = io::free_tcp_ports(1, std::nullopt);
  ASSERT_TRUE(ports.has_value());
  OcspChecker checker(OcspOptions{.responder = io::HttpUrl{.host = "127.0.0.1", .port = (*ports)[0]}},
                      random_);
  EXPECT_EQ(check(checker, valid_.get()), eap::RevocationVerdict::kUnknown);
  EXPECT_EQ(checker.stats().failures, 1u);
  EXPECT_NE(checker.last_failure().find("connect 127.0.0.1:"), std::string::npos) << checker.last_failure();
  // Not cached: the next check asks again.
  EXPECT_EQ(check(checker, valid_.get()), eap::RevocationVerdict::kUnknown);
  EXPECT_EQ(checker.stats().queries, 2u);
}

TEST_F(OcspCheckerTest, AResponderThatNeverAnswersTimesOut) {
  // A listening socket nobody accepts on: the connection completes in the
  // kernel's backlog, the request is sent, no answer ever comes.
  io::FileDescriptor listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  socklen_t length = sizeof address;
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length);
  OcspChecker checker(
      OcspOptions{.responder = io::HttpUrl{.host = "127.0.0.1", .port = ntohs(address.sin_port)},
                  .timeout = Duration::milliseconds(300)},
      random_);
  EXPECT_EQ(check(checker, valid_.get()), eap::RevocationVerdict::kUnknown);
  EXPECT_NE(checker.last_failure().find("Connection timed out"), std::string::npos) << checker.last_failure();
}

TEST_F(OcspCheckerTest, AnAnswerSignedByAnotherCaIsNotBelieved) {
  Responder responder(/*as_other_ca=*/true);
  OcspChecker checker(OcspOptions{.responder = responder.url()}, random_);
  EXPECT_EQ(check(checker, revoked_.get()), eap::RevocationVerdict::kUnknown);
  EXPECT_NE(checker.last_failure().find("bad_signature"), std::string::npos) << checker.last_failure();
}

TEST_F(OcspCheckerTest, WithoutAResponderACertificateNamingNoneIsUnknown) {
  OcspChecker checker(OcspOptions{}, random_);
  EXPECT_EQ(check(checker, valid_.get()), eap::RevocationVerdict::kUnknown);
  EXPECT_NE(checker.last_failure().find("names no http:// one"), std::string::npos);
  EXPECT_EQ(checker.stats().queries, 0u);
}

TEST(HttpUrl, PartsAndRefusals) {
  auto url = io::parse_http_url("http://ocsp.example.org:8080/a/b");
  ASSERT_TRUE(url.has_value());
  EXPECT_EQ(url->host, "ocsp.example.org");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->path, "/a/b");
  url = io::parse_http_url("http://[::1]");
  ASSERT_TRUE(url.has_value());
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 80);
  EXPECT_EQ(url->path, "/");
  for (const char* bad : {"https://a/", "ftp://a", "http://", "http://a:0/", "http://a:65536/", "http://a:x/",
                          "http://[::1/", "http://u@a/", "http://a/b c"}) {
    EXPECT_FALSE(io::parse_http_url(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace rw::gateway_shell
