// read(2)/write(2)/fsync(2)/rename(2) for small text files.
#include "io/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "io/file_descriptor.h"

namespace rw::io {

Result<std::string, SystemError> read_text_file(const std::string& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return fail(last_system_error("open " + path));
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fail(last_system_error("read " + path));
    if (got == 0) return text;
    text.append(buffer, static_cast<std::size_t>(got));
  }
}

Result<void, SystemError> replace_text_file(const std::string& path, const std::string& text, unsigned mode) {
  const std::string temporary = path + ".tmp";
  {
    FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd.valid()) return fail(last_system_error("open " + temporary));
    // Created 0600 so that no one reads it before fchmod; the umask does not apply to fchmod.
    if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0)
      return fail(last_system_error("fchmod " + temporary));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t written = ::write(fd.get(), text.data() + done, text.size() - done);
      if (written < 0 && errno == EINTR) continue;
      if (written < 0) return fail(last_system_error("write " + temporary));
      done += static_cast<std::size_t>(written);
    }
    if (::fsync(fd.get()) != 0) return fail(last_system_error("fsync " + temporary));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) return fail(last_system_error("rename " + path));
  return {};
}

}  // namespace rw::io
