// /config's files and route (config_in_force.h): SHA-256 with OpenSSL's EVP
// digest, read in chunks so that a large SQLite users database costs no memory.
#include "io/config_in_force.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "io/clock.h"

namespace rw::io {
namespace {

struct Sha256 {
  std::string hex;
  std::uint64_t size = 0;
};

std::optional<Sha256> sha256_of(const std::string& path, std::string& error) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    error = "no SHA-256 digest";
    return std::nullopt;
  }
  Sha256 out;
  unsigned char buffer[64 * 1024];
  for (;;) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    if (n > 0) {
      EVP_DigestUpdate(context.get(), buffer, n);
      out.size += n;
    }
    if (n < sizeof buffer) break;
  }
  if (std::ferror(file.get()) != 0) {
    error = "read error";
    return std::nullopt;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned int i = 0; i < length; ++i) {
    out.hex += kHex[digest[i] >> 4];
    out.hex += kHex[digest[i] & 0xf];
  }
  return out;
}

}  // namespace

std::vector<config::LoadedFile> digest_files(std::vector<config::LoadedFile> files) {
  for (config::LoadedFile& file : files) {
    std::string error;
    file.loaded_unix_ms = unix_now_ms();
    if (std::optional<Sha256> digest = sha256_of(file.path, error)) {
      file.sha256 = std::move(digest->hex);
      file.size = digest->size;
    } else {
      file.what += " (not read: " + error + ")";
    }
  }
  return files;
}

void add_config_route(AdminServer& server, const ConfigInForce& config) {
  server.route("GET", "/config", [&config](const AdminRequest&) {
    std::shared_ptr<const std::string> body = config.body();
    if (!body) return admin_error(503, "the configuration is not loaded yet");
    return AdminResponse{200, "application/json", *body};
  });
}

}  // namespace rw::io
