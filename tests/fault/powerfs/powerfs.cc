// radiusward-powerfs: a FUSE file system for the power-loss fault tests
// (docs/RELIABILITY.md, "Power loss and slow disks"). It passes through to a
// backing folder but keeps apart everything a power cut may lose, and drops
// it when told that the power went off, as LazyFS models a power cut:
//
//  - File data and size changes (write, truncate, fallocate) stay in memory,
//    per file, until an fsync or fdatasync of that file, or a write through
//    a descriptor opened with O_DSYNC/O_SYNC (or RWF_DSYNC), which POSIX
//    defines as a write followed by fdatasync: all of the file's pending
//    changes then reach the backing folder, in order.
//  - Namespace changes (create, mkdir, unlink, rmdir, rename) reach the
//    backing folder at once, with an undo record; a record is dropped (made
//    durable) only when every folder it touched has been fsynced. A file
//    created and fsynced in a folder that was never fsynced vanishes.
//  - "off" freezes the file system (every operation but the control file
//    fails with EIO, as a dead disk does), drops all pending file changes,
//    and undoes pending namespace changes newest first. "off torn" first
//    persists a part of each file's last pending write: whole 512-byte
//    sectors, fewer than the write had. "on" lets operations through again.
//  - "fsync_delay_ms N": every fsync, fdatasync and O_DSYNC write takes N ms
//    more (a slow disk), settable while mounted.
//
// The control file is /.powerfs at the mount's root: write a command to it;
// read it for counters. Usage: radiusward-powerfs STATE_DIR MOUNTPOINT
// [fuse options]; STATE_DIR/root is the backing folder (the durable
// contents), STATE_DIR/trash holds removed entries until their removal is
// durable. Runs in the foreground.

#define FUSE_USE_VERSION 35
#include <fuse3/fuse.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr const char* kControl = "/.powerfs";
constexpr off_t kSector = 512;

// A pending change of one file, replayed in order over the backing file.
struct Change {
  bool resize = false;  // else a write
  off_t offset = 0;     // write: where; resize: the new size
  std::string data;     // write only
};

struct PendingFile {
  int fd = -1;  // our own descriptor on the backing inode
  off_t size = 0;
  std::vector<Change> changes;
};

// An undoable namespace change. Folders are relative paths ("/" the root).
struct NamespaceChange {
  enum Kind { kCreated, kRemoved, kRenamed } kind;
  std::string path;   // created, removed, or rename's source
  std::string to;     // rename's target
  std::string trash;  // removed entry, or the target a rename replaced
  std::set<std::string> unsynced_folders;
};

struct Handle {
  int fd;
  ino_t ino;
};

struct State {
  std::string root;   // backing folder
  std::string trash;  // removed entries, same file system as root
  std::mutex mutex;
  std::map<ino_t, PendingFile> pending;
  std::vector<NamespaceChange> namespace_changes;
  bool off = false;
  std::atomic<int> fsync_delay_ms{0};
  unsigned long long generation = 0;  // bumped by every power cut
  unsigned long long trash_counter = 0;
  // Counters, readable from the control file.
  unsigned long long fsyncs = 0, dir_fsyncs = 0, dsync_writes = 0, power_cuts = 0, torn_writes = 0,
                     dropped_writes = 0, dropped_bytes = 0, undone = 0, undo_failures = 0;
  std::string control_reply;
};

State state;

std::string backing(const char* path) { return state.root + path; }

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

ino_t inode_of(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

// Writes all of `data` at `offset`.
int pwrite_all(int fd, const char* data, size_t size, off_t offset) {
  while (size > 0) {
    const ssize_t n = pwrite(fd, data, size, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    data += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return 0;
}

int apply(int fd, const Change& change) {
  if (change.resize) return ftruncate(fd, change.offset) == 0 ? 0 : -errno;
  return pwrite_all(fd, change.data.data(), change.data.size(), change.offset);
}

// The pending state of `fd`'s inode, created on first use. Caller holds the mutex.
PendingFile& pending_for(int fd) {
  const ino_t ino = inode_of(fd);
  auto [it, created] = state.pending.try_emplace(ino);
  if (created) {
    it->second.fd = dup(fd);
    struct stat st {};
    fstat(fd, &st);
    it->second.size = st.st_size;
  }
  return it->second;
}

// Makes every pending change of `ino` durable. Caller holds the mutex.
int make_durable(ino_t ino) {
  auto it = state.pending.find(ino);
  if (it == state.pending.end()) return 0;
  int rv = 0;
  for (const Change& change : it->second.changes) {
    if ((rv = apply(it->second.fd, change)) != 0) break;
  }
  close(it->second.fd);
  state.pending.erase(it);
  return rv;
}

void sleep_fsync_delay() {
  const int delay_ms = state.fsync_delay_ms.load();
  if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
}

// An fsync of a file or folder: waits the slow disk's delay without the lock
// (other operations go on meanwhile), then runs `durable` under it, unless the
// power went off while it waited: then it fails, and a torn cut may have kept
// part of the write. The backing folder is not fsynced to the host's disk: it
// stands for the durable medium, and the host keeps its power.
template <class Durable>
int after_fsync_delay(Durable durable) {
  unsigned long long generation;
  {
    std::lock_guard lock(state.mutex);
    if (state.off) return -EIO;
    generation = state.generation;
  }
  sleep_fsync_delay();
  std::lock_guard lock(state.mutex);
  if (state.off || state.generation != generation) return -EIO;
  return durable();
}

int sync_file(int fd) {
  return after_fsync_delay([fd] {
    ++state.fsyncs;
    return make_durable(inode_of(fd));
  });
}

void remove_tree(const std::string& path) {
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

std::string new_trash_path() { return state.trash + "/" + std::to_string(++state.trash_counter); }

void undo_rename(const std::string& from, const std::string& to) {
  if (rename(from.c_str(), to.c_str()) != 0) {
    ++state.undo_failures;
    std::fprintf(stderr, "powerfs: undo rename %s -> %s: %s\n", from.c_str(), to.c_str(), strerror(errno));
  }
}

// The power cut. Caller holds the mutex.
void power_off(bool torn) {
  state.off = true;
  ++state.generation;
  ++state.power_cuts;
  for (auto& [ino, file] : state.pending) {
    if (torn) {
      // The last write, persisted in part: whole sectors, fewer than it had.
      auto last =
          std::find_if(file.changes.rbegin(), file.changes.rend(), [](const Change& c) { return !c.resize; });
      if (last != file.changes.rend() && last->data.size() > 1) {
        const off_t sectors = static_cast<off_t>(last->data.size() - 1) / kSector;
        const size_t kept = static_cast<size_t>(std::max<off_t>(sectors / 2, sectors > 0 ? 1 : 0) * kSector);
        const size_t keep = kept > 0 ? kept : last->data.size() / 2;
        if (pwrite_all(file.fd, last->data.data(), keep, last->offset) == 0) ++state.torn_writes;
      }
    }
    for (const Change& change : file.changes) {
      if (!change.resize) {
        ++state.dropped_writes;
        state.dropped_bytes += change.data.size();
      }
    }
    close(file.fd);
  }
  state.pending.clear();
  for (auto it = state.namespace_changes.rbegin(); it != state.namespace_changes.rend(); ++it) {
    ++state.undone;
    switch (it->kind) {
      case NamespaceChange::kCreated:
        undo_rename(backing(it->path.c_str()), new_trash_path());
        break;
      case NamespaceChange::kRemoved:
        undo_rename(it->trash, backing(it->path.c_str()));
        break;
      case NamespaceChange::kRenamed:
        undo_rename(backing(it->to.c_str()), backing(it->path.c_str()));
        if (!it->trash.empty()) undo_rename(it->trash, backing(it->to.c_str()));
        break;
    }
  }
  state.namespace_changes.clear();
  remove_tree(state.trash);
  mkdir(state.trash.c_str(), 0700);
}

// fsync of folder `path`: every namespace change it touched is durable there.
void folder_synced(const std::string& path) {
  ++state.dir_fsyncs;
  auto& changes = state.namespace_changes;
  for (auto& change : changes) change.unsynced_folders.erase(path);
  auto durable = std::stable_partition(changes.begin(), changes.end(),
                                       [](const NamespaceChange& c) { return !c.unsynced_folders.empty(); });
  for (auto it = durable; it != changes.end(); ++it) {
    if (!it->trash.empty()) remove_tree(it->trash);
  }
  changes.erase(durable, changes.end());
}

std::string counters() {
  std::ostringstream out;
  out << "state " << (state.off ? "off" : "on") << "\nfsync_delay_ms " << state.fsync_delay_ms.load()
      << "\npending_files " << state.pending.size() << "\npending_namespace_changes "
      << state.namespace_changes.size() << "\nfsyncs " << state.fsyncs << "\ndir_fsyncs " << state.dir_fsyncs
      << "\ndsync_writes " << state.dsync_writes << "\npower_cuts " << state.power_cuts << "\ntorn_writes "
      << state.torn_writes << "\ndropped_writes " << state.dropped_writes << "\ndropped_bytes "
      << state.dropped_bytes << "\nundone " << state.undone << "\nundo_failures " << state.undo_failures
      << "\n";
  return out.str();
}

int control(const std::string& text) {
  std::istringstream in(text);
  std::string command, argument;
  in >> command >> argument;
  std::lock_guard lock(state.mutex);
  if (command == "off") {
    power_off(argument == "torn");
  } else if (command == "on") {
    state.off = false;
  } else if (command == "fsync_delay_ms") {
    state.fsync_delay_ms = std::stoi(argument);
  } else {
    return -EINVAL;
  }
  return 0;
}

bool is_control(const char* path) { return path != nullptr && std::strcmp(path, kControl) == 0; }

// Open control files carry this handle: with nullpath_ok, reads and writes
// come without a path.
constexpr uint64_t kControlHandle = ~uint64_t{0};
bool is_control(const fuse_file_info* fi) { return fi != nullptr && fi->fh == kControlHandle; }

// Every operation but the control file's fails while the power is off.
#define POWERFS_REQUIRE_ON()            \
  do {                                  \
    std::lock_guard guard(state.mutex); \
    if (state.off) return -EIO;         \
  } while (false)

// --- FUSE operations ---------------------------------------------------------

void* fs_init(fuse_conn_info*, fuse_config* config) {
  // No kernel caching of data, attributes or names: after a power cut the
  // next read or lookup sees what survived.
  config->direct_io = 1;
  config->entry_timeout = 0;
  config->attr_timeout = 0;
  config->negative_timeout = 0;
  config->use_ino = 1;
  config->hard_remove = 1;
  config->nullpath_ok = 1;
  return nullptr;
}

int fs_getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  if (is_control(path) || is_control(fi)) {
    *st = {};
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    st->st_size = 4096;
    return 0;
  }
  POWERFS_REQUIRE_ON();
  const int rv = fi != nullptr ? fstat(static_cast<int>(fi->fh), st) : lstat(backing(path).c_str(), st);
  if (rv != 0) return -errno;
  std::lock_guard lock(state.mutex);
  if (auto it = state.pending.find(st->st_ino); it != state.pending.end()) {
    st->st_size = it->second.size;
    st->st_blocks = (it->second.size + 511) / 512;
  }
  return 0;
}

int fs_readdir(const char*, void* buffer, fuse_fill_dir_t fill, off_t, fuse_file_info* fi,
               fuse_readdir_flags) {
  POWERFS_REQUIRE_ON();
  DIR* dir = opendir(backing(reinterpret_cast<const std::string*>(fi->fh)->c_str()).c_str());
  if (dir == nullptr) return -errno;
  while (dirent* entry = readdir(dir))
    fill(buffer, entry->d_name, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  closedir(dir);
  return 0;
}

int open_backing(const char* path, int flags, mode_t mode, fuse_file_info* fi) {
  // Our descriptor reads and writes whatever the caller asked: O_TRUNC
  // arrives as a truncate, and sync flags are honoured per write.
  const int ours = (flags & (O_CREAT | O_EXCL | O_DIRECTORY)) | O_RDWR | O_CLOEXEC;
  int fd = open(backing(path).c_str(), ours, mode);
  if (fd < 0 && errno == EISDIR) fd = open(backing(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  return 0;
}

int fs_open(const char* path, fuse_file_info* fi) {
  if (is_control(path)) {
    fi->fh = kControlHandle;
    fi->direct_io = 1;
    return 0;
  }
  POWERFS_REQUIRE_ON();
  if (const int rv = open_backing(path, fi->flags & ~(O_CREAT | O_EXCL), 0, fi); rv != 0) return rv;
  if (fi->flags & O_TRUNC) {
    std::lock_guard lock(state.mutex);
    PendingFile& file = pending_for(static_cast<int>(fi->fh));
    file.changes.push_back({true, 0, {}});
    file.size = 0;
  }
  return 0;
}

int fs_create(const char* path, mode_t mode, fuse_file_info* fi) {
  POWERFS_REQUIRE_ON();
  struct stat st {};
  const bool existed = lstat(backing(path).c_str(), &st) == 0;
  if (const int rv = open_backing(path, fi->flags | O_CREAT, mode, fi); rv != 0) return rv;
  if (!existed) {
    std::lock_guard lock(state.mutex);
    state.namespace_changes.push_back({NamespaceChange::kCreated, path, {}, {}, {parent_of(path)}});
  } else if (fi->flags & O_TRUNC) {
    std::lock_guard lock(state.mutex);
    PendingFile& file = pending_for(static_cast<int>(fi->fh));
    file.changes.push_back({true, 0, {}});
    file.size = 0;
  }
  return 0;
}

int fs_read(const char*, char* buffer, size_t size, off_t offset, fuse_file_info* fi) {
  if (is_control(fi)) {
    std::string text;
    {
      std::lock_guard lock(state.mutex);
      text = counters();
    }
    if (offset >= static_cast<off_t>(text.size())) return 0;
    const size_t n = std::min(size, text.size() - static_cast<size_t>(offset));
    std::memcpy(buffer, text.data() + offset, n);
    return static_cast<int>(n);
  }
  std::lock_guard lock(state.mutex);
  if (state.off) return -EIO;
  const int fd = static_cast<int>(fi->fh);
  ssize_t got = 0;
  while (static_cast<size_t>(got) < size) {
    const ssize_t n = pread(fd, buffer + got, size - static_cast<size_t>(got), offset + got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) break;
    got += n;
  }
  auto it = state.pending.find(inode_of(fd));
  if (it == state.pending.end()) return static_cast<int>(got);
  // Replay the pending changes over what the backing file holds.
  std::memset(buffer + got, 0, size - static_cast<size_t>(got));
  const off_t end = offset + static_cast<off_t>(size);
  for (const Change& change : it->second.changes) {
    if (change.resize) {
      if (change.offset < end) {
        const off_t from = std::max(change.offset, offset);
        std::memset(buffer + (from - offset), 0, static_cast<size_t>(end - from));
      }
      continue;
    }
    const off_t from = std::max(change.offset, offset);
    const off_t to = std::min(change.offset + static_cast<off_t>(change.data.size()), end);
    if (from < to) {
      std::memcpy(buffer + (from - offset), change.data.data() + (from - change.offset),
                  static_cast<size_t>(to - from));
    }
  }
  const off_t logical = it->second.size;
  return static_cast<int>(std::clamp<off_t>(logical - offset, 0, static_cast<off_t>(size)));
}

int fs_write(const char*, const char* data, size_t size, off_t offset, fuse_file_info* fi) {
  if (is_control(fi)) {
    const int rv = control(std::string(data, size));
    return rv != 0 ? rv : static_cast<int>(size);
  }
  const int fd = static_cast<int>(fi->fh);
  {
    std::lock_guard lock(state.mutex);
    if (state.off) return -EIO;
    PendingFile& file = pending_for(fd);
    file.changes.push_back({false, offset, std::string(data, size)});
    file.size = std::max(file.size, offset + static_cast<off_t>(size));
    if (!(fi->flags & (O_DSYNC | O_SYNC))) return static_cast<int>(size);
    ++state.dsync_writes;
  }
  const int rv = sync_file(fd);
  return rv != 0 ? rv : static_cast<int>(size);
}

int fs_truncate(const char* path, off_t size, fuse_file_info* fi) {
  if (is_control(path) || is_control(fi)) return 0;  // `echo off > .powerfs` truncates first
  POWERFS_REQUIRE_ON();
  int fd = fi != nullptr ? static_cast<int>(fi->fh) : open(backing(path).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return -errno;
  {
    std::lock_guard lock(state.mutex);
    PendingFile& file = pending_for(fd);
    file.changes.push_back({true, size, {}});
    file.size = size;
  }
  if (fi == nullptr) close(fd);
  return 0;
}

int fs_fallocate(const char* path, int mode, off_t offset, off_t length, fuse_file_info* fi) {
  (void)path;
  if (mode & ~FALLOC_FL_KEEP_SIZE) return -EOPNOTSUPP;
  std::lock_guard lock(state.mutex);
  if (state.off) return -EIO;
  // Reserve the space for real (so a full backing disk fails here), but the
  // new size is a pending change like any other.
  if (fallocate(static_cast<int>(fi->fh), FALLOC_FL_KEEP_SIZE, offset, length) != 0) return -errno;
  if (mode & FALLOC_FL_KEEP_SIZE) return 0;
  PendingFile& file = pending_for(static_cast<int>(fi->fh));
  if (offset + length > file.size) {
    file.size = offset + length;
    file.changes.push_back({true, file.size, {}});
  }
  return 0;
}

int fs_fsync(const char*, int, fuse_file_info* fi) {
  if (is_control(fi)) return 0;
  return sync_file(static_cast<int>(fi->fh));
}

int fs_fsyncdir(const char*, int, fuse_file_info* fi) {
  const std::string folder = *reinterpret_cast<const std::string*>(fi->fh);
  return after_fsync_delay([&folder] {
    folder_synced(folder);
    return 0;
  });
}

int fs_release(const char*, fuse_file_info* fi) {
  if (is_control(fi)) return 0;
  close(static_cast<int>(fi->fh));
  return 0;
}

int fs_mkdir(const char* path, mode_t mode) {
  POWERFS_REQUIRE_ON();
  if (mkdir(backing(path).c_str(), mode) != 0) return -errno;
  std::lock_guard lock(state.mutex);
  state.namespace_changes.push_back({NamespaceChange::kCreated, path, {}, {}, {parent_of(path)}});
  return 0;
}

// unlink and rmdir move the entry to the trash, from where a power cut
// brings it back.
int remove_entry(const char* path, bool folder) {
  std::lock_guard lock(state.mutex);
  if (state.off) return -EIO;
  struct stat st {};
  if (lstat(backing(path).c_str(), &st) != 0) return -errno;
  if (folder != S_ISDIR(st.st_mode)) return folder ? -ENOTDIR : -EISDIR;
  std::error_code error;
  if (folder && !std::filesystem::is_empty(backing(path), error)) return error ? -EIO : -ENOTEMPTY;
  const std::string trash = new_trash_path();
  if (rename(backing(path).c_str(), trash.c_str()) != 0) return -errno;
  state.namespace_changes.push_back({NamespaceChange::kRemoved, path, {}, trash, {parent_of(path)}});
  return 0;
}

int fs_unlink(const char* path) { return remove_entry(path, false); }
int fs_rmdir(const char* path) { return remove_entry(path, true); }

int fs_rename(const char* from, const char* to, unsigned int flags) {
  if (flags & ~RENAME_NOREPLACE) return -EINVAL;
  std::lock_guard lock(state.mutex);
  if (state.off) return -EIO;
  struct stat st {};
  if (lstat(backing(from).c_str(), &st) != 0) return -errno;
  std::string replaced;
  if (lstat(backing(to).c_str(), &st) == 0) {
    if (flags & RENAME_NOREPLACE) return -EEXIST;
    replaced = new_trash_path();
    if (rename(backing(to).c_str(), replaced.c_str()) != 0) return -errno;
  }
  if (rename(backing(from).c_str(), backing(to).c_str()) != 0) {
    const int error = errno;
    if (!replaced.empty()) rename(replaced.c_str(), backing(to).c_str());
    return -error;
  }
  state.namespace_changes.push_back(
      {NamespaceChange::kRenamed, from, to, replaced, {parent_of(from), parent_of(to)}});
  return 0;
}

int fs_chmod(const char* path, mode_t mode, fuse_file_info* fi) {
  POWERFS_REQUIRE_ON();
  const int rv = fi != nullptr ? fchmod(static_cast<int>(fi->fh), mode) : chmod(backing(path).c_str(), mode);
  return rv == 0 ? 0 : -errno;
}

int fs_utimens(const char* path, const timespec times[2], fuse_file_info* fi) {
  POWERFS_REQUIRE_ON();
  const int rv = fi != nullptr ? futimens(static_cast<int>(fi->fh), times)
                               : utimensat(AT_FDCWD, backing(path).c_str(), times, AT_SYMLINK_NOFOLLOW);
  return rv == 0 ? 0 : -errno;
}

int fs_statfs(const char*, struct statvfs* st) { return statvfs(state.root.c_str(), st) == 0 ? 0 : -errno; }

int fs_opendir(const char* path, fuse_file_info* fi) {
  POWERFS_REQUIRE_ON();
  struct stat st {};
  if (lstat(backing(path).c_str(), &st) != 0) return -errno;
  if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
  // fsyncdir comes without a path (nullpath_ok): the handle remembers it.
  fi->fh = reinterpret_cast<uint64_t>(new std::string(path));
  return 0;
}

int fs_releasedir(const char*, fuse_file_info* fi) {
  delete reinterpret_cast<std::string*>(fi->fh);
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s STATE_DIR MOUNTPOINT [fuse options]\n", argv[0]);
    return 2;
  }
  const std::string dir = std::filesystem::absolute(argv[1]).string();
  state.root = dir + "/root";
  state.trash = dir + "/trash";
  std::filesystem::create_directories(state.root);
  remove_tree(state.trash);
  std::filesystem::create_directories(state.trash);

  fuse_operations ops{};
  ops.init = fs_init;
  ops.getattr = fs_getattr;
  ops.readdir = fs_readdir;
  ops.opendir = fs_opendir;
  ops.releasedir = fs_releasedir;
  ops.open = fs_open;
  ops.create = fs_create;
  ops.read = fs_read;
  ops.write = fs_write;
  ops.truncate = fs_truncate;
  ops.fallocate = fs_fallocate;
  ops.fsync = fs_fsync;
  ops.fsyncdir = fs_fsyncdir;
  ops.release = fs_release;
  ops.mkdir = fs_mkdir;
  ops.unlink = fs_unlink;
  ops.rmdir = fs_rmdir;
  ops.rename = fs_rename;
  ops.chmod = fs_chmod;
  ops.utimens = fs_utimens;
  ops.statfs = fs_statfs;

  std::vector<char*> args{argv[0], argv[2], const_cast<char*>("-f")};
  for (int i = 3; i < argc; ++i) args.push_back(argv[i]);
  return fuse_main(static_cast<int>(args.size()), args.data(), &ops, nullptr);
}
