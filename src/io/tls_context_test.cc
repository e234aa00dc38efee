// tls_context.h and tls_certificates.h: the cluster's naming rule, contexts
// from real certificate files (errors name the file), and certificates that
// OpenSSL verifies against the CA and the CRL.
#include "io/tls_context.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <vector>

#include "io/text_file.h"
#include "io/tls_certificates.h"

namespace rw::io {
namespace {

TEST(ClusterNames, FollowTheIdentityRule) {
  EXPECT_EQ(member_common_name(7), "member-7");
  EXPECT_EQ(gateway_common_name("gw1"), "gateway-gw1");
  EXPECT_EQ(member_id_of("member-12"), std::optional<std::uint64_t>(12));
  for (const char* bad :
       {"member-", "member-0", "member-01", "member-1x", "Member-1", "gateway-1", "member--1"}) {
    EXPECT_FALSE(member_id_of(bad).has_value()) << bad;
  }
  EXPECT_TRUE(is_gateway_common_name("gateway-gw-1"));
  EXPECT_FALSE(is_gateway_common_name("gateway-"));
  EXPECT_FALSE(is_gateway_common_name("gateway-GW"));
  EXPECT_FALSE(is_gateway_common_name("member-1"));
  EXPECT_FALSE(valid_gateway_name(std::string(65, 'a')));
}

class TlsFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rw_tls_context_XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(TlsFilesTest, CertificatesVerifyAgainstTheCaAndRevocationTakes) {
  auto written = write_cluster_certificates(
      ClusterCertificatesRequest{.dir = dir_, .members = {1}, .gateways = {"a", "b"}, .revoke = {}});
  ASSERT_TRUE(written.has_value()) << written.error().to_string();
  EXPECT_EQ(std::filesystem::status(dir_ + "/member-1.key").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  // A second run keeps what exists, so the CA stays the same.
  const std::string ca = *read_text_file(dir_ + "/ca.pem");
  auto revoked = write_cluster_certificates(ClusterCertificatesRequest{.dir = dir_, .revoke = {"gateway-b"}});
  ASSERT_TRUE(revoked.has_value()) << revoked.error().to_string();
  EXPECT_EQ(*read_text_file(dir_ + "/ca.pem"), ca);

  auto verify = [&](const std::string& name) {
    X509_STORE* store = X509_STORE_new();
    X509_STORE_load_file(store, (dir_ + "/ca.pem").c_str());
    X509_STORE_load_file(store, (dir_ + "/crl.pem").c_str());
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
    FILE* file = std::fopen((dir_ + "/" + name + ".pem").c_str(), "rb");
    X509* cert = PEM_read_X509(file, nullptr, nullptr, nullptr);
    std::fclose(file);
    X509_STORE_CTX* context = X509_STORE_CTX_new();
    X509_STORE_CTX_init(context, store, cert, nullptr);
    const int ok = X509_verify_cert(context);
    const int error = X509_STORE_CTX_get_error(context);
    X509_STORE_CTX_free(context);
    X509_free(cert);
    X509_STORE_free(store);
    return ok == 1 ? X509_V_OK : error;
  };
  EXPECT_EQ(verify("member-1"), X509_V_OK);
  EXPECT_EQ(verify("gateway-a"), X509_V_OK);
  EXPECT_EQ(verify("gateway-b"), X509_V_ERR_CERT_REVOKED);
}

TEST_F(TlsFilesTest, ContextErrorsNameTheFile) {
  ASSERT_TRUE(
      write_cluster_certificates(ClusterCertificatesRequest{.dir = dir_, .members = {1, 2}}).has_value());
  TlsFiles files = cluster_tls_files(dir_, "member-1");
  EXPECT_TRUE(make_tls_context(files, TlsRole::kServer).has_value());
  EXPECT_TRUE(make_tls_context(files, TlsRole::kClient).has_value());

  TlsFiles mismatched = files;
  mismatched.key = dir_ + "/member-2.key";
  auto wrong_key = make_tls_context(mismatched, TlsRole::kServer);
  ASSERT_FALSE(wrong_key.has_value());
  EXPECT_EQ(wrong_key.error().file, mismatched.key);

  TlsFiles missing = files;
  missing.ca = dir_ + "/absent.pem";
  auto no_ca = make_tls_context(missing, TlsRole::kClient);
  ASSERT_FALSE(no_ca.has_value());
  EXPECT_EQ(no_ca.error().file, missing.ca);
  EXPECT_FALSE(no_ca.error().reason.empty());

  TlsFiles bad_crl = files;
  bad_crl.crl = files.cert;  // A certificate is not a CRL.
  auto crl = make_tls_context(bad_crl, TlsRole::kServer);
  ASSERT_FALSE(crl.has_value());
  EXPECT_EQ(crl.error().file, files.cert);
}

// A peer that went away gives a failed write, not death by SIGPIPE: OpenSSL
// writes with write(2), and this process keeps SIGPIPE's default action.
TEST_F(TlsFilesTest, WritingToAPeerThatClosedFailsWithoutSigpipe) {
  ASSERT_TRUE(
      write_cluster_certificates(ClusterCertificatesRequest{.dir = dir_, .members = {1}, .gateways = {"a"}})
          .has_value());
  auto server_context = make_tls_context(cluster_tls_files(dir_, "member-1"), TlsRole::kServer);
  auto client_context = make_tls_context(cluster_tls_files(dir_, "gateway-a"), TlsRole::kClient);
  ASSERT_TRUE(server_context.has_value() && client_context.has_value());
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  auto server = TlsStream::attach(*server_context, fds[0], TlsRole::kServer);
  auto client = TlsStream::attach(*client_context, fds[1], TlsRole::kClient);
  ASSERT_TRUE(server.has_value() && client.has_value());
  // Both ends in turn until each finished its handshake.
  for (int turn = 0; turn < 100 && !((*server)->handshake_done() && (*client)->handshake_done()); ++turn) {
    ASSERT_NE((*client)->handshake(), TlsStream::Status::kFailed) << (*client)->error();
    ASSERT_NE((*server)->handshake(), TlsStream::Status::kFailed) << (*server)->error();
  }
  ASSERT_TRUE((*client)->handshake_done());
  server->reset();
  ::close(fds[0]);
  const std::vector<std::uint8_t> data(4096, 0x5a);
  TlsStream::Status status = TlsStream::Status::kDone;
  for (int i = 0; i < 100 && status == TlsStream::Status::kDone; ++i) status = (*client)->write(data).status;
  EXPECT_EQ(status, TlsStream::Status::kFailed);
  client->reset();
  ::close(fds[1]);
}

// Drives both ends of a socketpair until both handshakes are done or one
// fails; returns whether both finished.
bool handshake_pair(TlsStream& server, TlsStream& client) {
  for (int turn = 0; turn < 100; ++turn) {
    if (server.handshake_done() && client.handshake_done()) return true;
    if (client.handshake() == TlsStream::Status::kFailed) return false;
    if (server.handshake() == TlsStream::Status::kFailed) return false;
  }
  return false;
}

// RadSec peers may speak TLS 1.2 (TlsVersions::k12And13); the cluster's
// contexts (k13) refuse it. close_notify ends a session in order.
TEST_F(TlsFilesTest, TlsTwelveOnlyWhereAskedForAndCloseNotifyEndsInOrder) {
  ASSERT_TRUE(
      write_cluster_certificates(ClusterCertificatesRequest{.dir = dir_, .gateways = {"server", "peer"}})
          .has_value());
  auto peer =
      make_tls_context(cluster_tls_files(dir_, "gateway-peer"), TlsRole::kClient, TlsVersions::k12And13);
  ASSERT_TRUE(peer.has_value());
  ASSERT_EQ(SSL_CTX_set_max_proto_version(peer->get(), TLS1_2_VERSION), 1);
  for (const TlsVersions versions : {TlsVersions::k13, TlsVersions::k12And13}) {
    auto server_context =
        make_tls_context(cluster_tls_files(dir_, "gateway-server"), TlsRole::kServer, versions);
    ASSERT_TRUE(server_context.has_value());
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    auto server = TlsStream::attach(*server_context, fds[0], TlsRole::kServer);
    auto client = TlsStream::attach(*peer, fds[1], TlsRole::kClient);
    ASSERT_TRUE(server.has_value() && client.has_value());
    const bool done = handshake_pair(**server, **client);
    EXPECT_EQ(done, versions == TlsVersions::k12And13);
    if (done) {
      EXPECT_STREQ(SSL_get_version((*server)->ssl()), "TLSv1.2");
      (*server)->close_notify();
      std::array<std::uint8_t, 16> space{};
      EXPECT_EQ((*client)->read(space).status, TlsStream::Status::kClosed);
    }
    server->reset();
    client->reset();
    ::close(fds[0]);
    ::close(fds[1]);
  }
}

}  // namespace
}  // namespace rw::io
