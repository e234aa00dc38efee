// mkdir(2) and fsync(2) of the folders above the data folder.
#include "consensus/data_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

namespace rw::consensus {
namespace {

std::string system_error(std::string_view call, const std::filesystem::path& path) {
  return fmt::format("{} {}: {}", call, path.string(), std::strerror(errno));
}

Result<void, std::string> sync_folder(const std::filesystem::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail(system_error("open", folder));
  const int rv = ::fsync(fd);
  const std::string error = rv != 0 ? system_error("fsync", folder) : std::string();
  ::close(fd);
  if (rv != 0) return fail(error);
  return {};
}

}  // namespace

Result<void, std::string> create_data_folder(const std::string& folder) {
  std::error_code error;
  std::filesystem::path path = std::filesystem::absolute(folder, error).lexically_normal();
  if (!error && !path.has_filename()) path = path.parent_path();  // "a/b/"
  // The missing folders, deepest first; the root always exists.
  std::vector<std::filesystem::path> missing;
  while (!error && !std::filesystem::exists(path, error) && !error) {
    missing.push_back(path);
    path = path.parent_path();
  }
  if (error) return fail(fmt::format("cannot create data folder {}: {}", folder, error.message()));
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    // 0777 less the umask, as std::filesystem::create_directories did.
    if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) return fail(system_error("mkdir", *it));
    if (auto synced = sync_folder(it->parent_path()); !synced) return synced;
  }
  return {};
}

}  // namespace rw::consensus
