// PostgresServerForTest: a real PostgreSQL 15 for tests, started with
// Debian's initdb and pg_ctl in a temporary folder on a free loopback port,
// stopped cleanly (pg_ctl stop -m fast) and removed on destruction. No mocks:
// sink and interop tests talk libpq to this server.
//
// Header-only and self-contained (POSIX and the standard library only), so
// that any *_test.cc in any folder can use it without a link dependency.
// initdb refuses to run as root: when the test runs as root the binaries run
// as the `postgres` user (runuser) on a folder chowned to that user.
// Authentication is `trust` on 127.0.0.1 only; the superuser is `postgres`
// and the database `postgres`.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rw::io {

class PostgresServerForTest {
 public:
  // Debian's PostgreSQL 15 binaries; RW_PG_BINDIR overrides the folder.
  static std::string bin_dir() {
    const char* env = std::getenv("RW_PG_BINDIR");
    return env != nullptr ? std::string(env) : std::string("/usr/lib/postgresql/15/bin");
  }

  // True when initdb and pg_ctl exist, so a test can say why it cannot run.
  static bool available() {
    return std::filesystem::exists(bin_dir() + "/initdb") && std::filesystem::exists(bin_dir() + "/pg_ctl");
  }

  // Creates the cluster and starts the server; throws std::runtime_error
  // with the server log when it cannot (a test fixture failing loudly).
  // `settings` are more `-c name=value` options, after the small defaults
  // that tests use (a benchmark gives the bench's, scripts/bench_sql.py).
  explicit PostgresServerForTest(std::string settings = {}) : settings_(std::move(settings)) {
    char pattern[] = "/tmp/rw-postgres-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    as_postgres_ = ::geteuid() == 0;
    if (as_postgres_) {
      const passwd* pw = ::getpwnam("postgres");
      if (pw == nullptr) throw std::runtime_error("no postgres user to run initdb as");
      uid_ = pw->pw_uid;
      gid_ = pw->pw_gid;
      if (::chown(dir_.c_str(), uid_, gid_) != 0) throw std::runtime_error("chown failed");
    }
    const int rc = run({bin_dir() + "/initdb", "-D", data_dir(), "-U", "postgres", "-A", "trust", "-E",
                        "UTF8", "--locale=C", "--no-instructions"},
                       dir_ + "/initdb.log");
    if (rc != 0) fail("initdb failed");
    start();
  }

  ~PostgresServerForTest() {
    if (running_) stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  PostgresServerForTest(const PostgresServerForTest&) = delete;
  PostgresServerForTest& operator=(const PostgresServerForTest&) = delete;

  // Starts (or restarts after stop()) the server on a free port, or on the
  // previous port after a stop so that clients' conninfo stays valid. Waits
  // until it accepts connections.
  void start() {
    for (int attempt = 0; attempt < 5 && !running_; ++attempt) {
      if (port_ == 0 || attempt > 0) port_ = free_port();
      const std::string options = "-p " + std::to_string(port_) + " -c listen_addresses=127.0.0.1" +
                                  " -c unix_socket_directories=" + dir_ +
                                  " -c shared_buffers=16MB -c max_connections=40" +
                                  (settings_.empty() ? "" : " " + settings_);
      const int rc = run({bin_dir() + "/pg_ctl", "-D", data_dir(), "-l", dir_ + "/server.log", "-o", options,
                          "-w", "-t", "60", "start"},
                         dir_ + "/pg_ctl.log");
      running_ = rc == 0;
    }
    if (!running_) fail("pg_ctl start failed");
  }

  // Stops the server (fast shutdown: clients are disconnected, the data is
  // kept), for tests of a database outage.
  void stop() {
    run({bin_dir() + "/pg_ctl", "-D", data_dir(), "-m", "fast", "-w", "-t", "60", "stop"},
        dir_ + "/pg_ctl.log");
    running_ = false;
  }

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] const std::string& dir() const { return dir_; }
  [[nodiscard]] bool running() const { return running_; }

  // A libpq connection string for database `database`.
  [[nodiscard]] std::string conninfo(const std::string& database = "postgres") const {
    return "host=127.0.0.1 port=" + std::to_string(port_) + " user=postgres dbname=" + database +
           " connect_timeout=5";
  }

  // Runs `psql` with `arguments` against `database` (for loading SQL files
  // such as FreeRADIUS's schema.sql); returns its exit status.
  int psql(const std::vector<std::string>& arguments, const std::string& database = "postgres") const {
    std::vector<std::string> argv = {
        bin_dir() + "/psql",   "-X", "-q",       "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p",
        std::to_string(port_), "-U", "postgres", "-d", database};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    return run(argv, dir_ + "/psql.log", false);
  }

 private:
  std::string data_dir() const { return dir_ + "/data"; }

  // Runs argv (as `postgres` when the test is root and `as_postgres`),
  // output appended to `log_path`; returns the exit status or -1.
  int run(const std::vector<std::string>& argv, const std::string& log_path, bool as_postgres = true) const {
    const pid_t pid = ::fork();
    if (pid < 0) return -1;
    if (pid == 0) {
      const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0666);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
      }
      if (as_postgres_ && as_postgres) {
        // Drop to the postgres user in the child only (initdb refuses root).
        if (::setgid(gid_) != 0 || ::setuid(uid_) != 0) ::_exit(126);
      }
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  static std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof address;
    std::uint16_t port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      port = ntohs(address.sin_port);
    }
    ::close(fd);
    if (port == 0) throw std::runtime_error("no free port");
    return port;
  }

  [[noreturn]] void fail(const std::string& what) const {
    std::string message = what + " in " + dir_ + ":";
    for (const char* name : {"/initdb.log", "/pg_ctl.log", "/server.log"}) {
      std::ifstream in(dir_ + name);
      message += "\n" + std::string(std::istreambuf_iterator<char>(in), {});
    }
    throw std::runtime_error(message);
  }

  std::string settings_;
  std::string dir_;
  bool as_postgres_ = false;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::uint16_t port_ = 0;
  bool running_ = false;
};

}  // namespace rw::io
