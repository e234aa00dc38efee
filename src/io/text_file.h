// Whole small text files (generated configs): read at once, replaced
// atomically so that a reader never sees half a file.
#pragma once

#include <string>

#include "base/result.h"
#include "io/system_error.h"

namespace rw::io {

// The whole content of `path`.
[[nodiscard]] Result<std::string, SystemError> read_text_file(const std::string& path);

// Replaces `path` with `text`: written to `path`.tmp, fsync'd, then renamed
// over `path`, so a crash leaves the old file or the new one, never a mix.
// The file gets `mode` whatever the umask: generated configs name secrets
// (shared secrets, database passwords, key files), so none is world-readable
// by default; private keys use 0600.
[[nodiscard]] Result<void, SystemError> replace_text_file(const std::string& path, const std::string& text,
                                                          unsigned mode = 0640);

}  // namespace rw::io
