// How many records a second the PostgreSQL export sink writes, alone: no
// cluster, no load generator, one connection to a real PostgreSQL 15
// (io::PostgresServerForTest) holding FreeRADIUS 3.2's own schema.sql with
// its indexes, batches of export.batch_records_max (2,000) in 64-record log
// entries, as the exporter writes them under lag (docs/accounting.md "Export
// throughput"). Wall time: the work is PostgreSQL's as much as this
// process's. The session mix is what `radiusward bench run --scenario acct`
// sends: each session's Start, then its Interim-Update, then its Stop, with
// sessions overlapping so that a batch holds all three kinds. How far apart
// a session's records lie (the `overlap` argument) sets how many of them
// one batch holds, hence what the exporter's fold (docs/accounting.md
// "Export to SQL", Statements) saves: 3,000 apart, a batch of 2,000 holds
// one record per session and folds nothing; 300 apart, most sessions'
// three records are in one batch.
#include <benchmark/benchmark.h>

#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include "accounting/accounting_request_for_test.h"
#include "exporter/radacct.h"
#include "io/postgres_server_for_test.h"
#include "io/proc_stat.h"
#include "member_shell/sql_export_sink.h"

namespace rw::member_shell {
namespace {

using accounting::HeldRecord;
using accounting::testing::RequestSpec;
namespace status = accounting::status;

constexpr std::size_t kEntry = 64;
// Records between a session's Start and its Stop, about: record n is the
// Start, Interim-Update or Stop of session n / 3 shifted by a third of it,
// so that one batch mixes kinds.
constexpr std::int64_t kApart = 3000;    // one record per session in a batch of 2,000
constexpr std::int64_t kTogether = 300;  // most sessions whole in a batch of 2,000
constexpr const char* kFreeradiusSchema = "/etc/freeradius/3.0/mods-config/sql/main/postgresql/schema.sql";

// With the settings of `make bench`'s PostgreSQL, not the small ones of the
// tests: scripts/run-bench passes scripts/bench_sql.py's SERVER_OPTIONS in
// RW_BENCH_PG_SETTINGS; the literal below is what they were when this was
// written, for a run of this binary alone (docs/benchmarking.md
// "PostgreSQL").
io::PostgresServerForTest& postgres() {
  static io::PostgresServerForTest server([] {
    const char* settings = std::getenv("RW_BENCH_PG_SETTINGS");
    return std::string(settings != nullptr
                           ? settings
                           : "-c shared_buffers=128MB -c max_connections=100 -c max_wal_size=2GB");
  }());
  return server;
}

// CPU seconds (user and system) spent so far by the PostgreSQL server:
// the postmaster and its children (the backend serving the sink, the WAL
// writer, the checkpointer), from /proc. On the bench's shared core this,
// not the wall time, is what the database takes from the cluster.
double server_cpu_seconds() {
  std::ifstream pid_file(postgres().dir() + "/data/postmaster.pid");
  int postmaster = 0;
  if (!(pid_file >> postmaster)) return 0;
  std::uint64_t ticks = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    const std::optional<io::ProcStat> stat = io::read_proc_stat(pid);
    if (stat && (pid == postmaster || stat->parent_pid == postmaster)) ticks += stat->cpu_ticks;
  }
  return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double process_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// Record n of the stream (n counts from 0): kinds rotate Start, Interim,
// Stop; session of record n is (n / 3 - kind * overlap / 3) so that a
// session's three records lie `overlap` records apart.
HeldRecord record(std::uint64_t n, std::uint64_t index, std::uint64_t overlap) {
  const std::uint64_t kind = n % 3;
  const std::uint64_t session = n / 3 >= kind * overlap / 3 ? n / 3 - kind * overlap / 3 : n / 3 + 1'000'000;
  RequestSpec spec;
  spec.identifier = static_cast<std::uint8_t>(n);
  spec.status_type = kind == 0 ? status::kStart : kind == 1 ? status::kInterimUpdate : status::kStop;
  spec.user_name = "user" + std::to_string(session % 50'000) + "@example.net";
  spec.session_id = "5F3A" + std::to_string(session);
  spec.nas_identifier = "ap-" + std::to_string(session % 200);
  spec.calling_station_id = "02-00-00-00-" + std::to_string(10 + session % 80) + "-01";
  spec.framed_ip = std::array<std::uint8_t, 4>{10, 1, static_cast<std::uint8_t>(session >> 8),
                                               static_cast<std::uint8_t>(session)};
  spec.event_timestamp = static_cast<std::uint32_t>(1'700'000'000 + session + kind * 60);
  if (kind > 0) {
    spec.session_time_s = static_cast<std::uint32_t>(kind * 60);
    spec.input_octets = static_cast<std::uint32_t>(kind * 150'000);
  }
  return HeldRecord{index,
                    accounting::testing::record_of(spec, 1'700'000'000'000 + static_cast<std::int64_t>(n))};
}

// The log-table layouts measured beside the one radiusward creates
// (docs/accounting.md "Export throughput").
enum Layout : std::int64_t {
  kShipped = 0,             // as radiusward creates it
  kJsonLog = 1,             // the log table's attributes as json, not jsonb
  kNoSessionIndex = 2,      // without the log table's index on acctuniqueid
  kJsonNoSessionIndex = 3,  // both
};
constexpr const char* kLayoutNames[] = {"shipped", "log attributes json", "log without session index",
                                        "log json without session index"};

// A fresh database holding FreeRADIUS's schema.sql (when installed),
// migrated by the sink, its log table changed to `layout`; its conninfo.
std::string fresh_database(const std::string& name, Layout layout) {
  postgres().psql({"-c", "DROP DATABASE IF EXISTS " + name});
  postgres().psql({"-c", "CREATE DATABASE " + name});
  if (std::filesystem::exists(kFreeradiusSchema)) postgres().psql({"-f", kFreeradiusSchema}, name);
  const std::string conninfo = postgres().conninfo(name);
  if (auto migrated = make_postgres_sink(conninfo, radius::Dictionary::builtin())->exported_through();
      !migrated)
    return {};
  if (layout == kJsonLog || layout == kJsonNoSessionIndex)
    postgres().psql({"-c", "ALTER TABLE radiusward_accounting_log ALTER attributes TYPE json"}, name);
  if (layout == kNoSessionIndex || layout == kJsonNoSessionIndex)
    postgres().psql({"-c", "DROP INDEX radiusward_accounting_log_session"}, name);
  return conninfo;
}

// The next batch of `size` records: whole log entries, as the exporter
// offers them. Returns its records per session.
double next_batch(std::vector<HeldRecord>& batch, std::size_t size, std::uint64_t& n, std::uint64_t& index,
                  std::uint64_t overlap) {
  batch.clear();
  std::set<std::string> sessions;
  for (std::size_t i = 0; i < size; ++i, ++n) {
    if (i % kEntry == 0) ++index;
    batch.push_back(record(n, index, overlap));
    sessions.insert(batch.back().record.session.hex());
  }
  return static_cast<double>(size) / static_cast<double>(sessions.size());
}

// The sink as the exporter runs it: `layout`, records per batch
// (export.batch_records_max), records between a session's first and last
// (kApart, kTogether), and records written through the sink before the
// timed batches (`prefill`: the tables an exporter finds after minutes of
// load, not empty ones).
void sink_write(benchmark::State& state, Layout layout, std::size_t batch_records, std::uint64_t overlap,
                std::uint64_t prefill) {
  double per_session = 0;
  const std::string conninfo = fresh_database("sink_bench", layout);
  if (conninfo.empty()) {
    state.SkipWithError("the sink could not migrate the database");
    return;
  }
  std::unique_ptr<ExportSink> sink = make_postgres_sink(conninfo, radius::Dictionary::builtin());
  std::uint64_t n = 0;
  std::uint64_t index = 0;
  std::uint64_t through = 0;
  std::vector<HeldRecord> batch;
  const auto prefill_began = std::chrono::steady_clock::now();
  while (n < prefill) {
    next_batch(batch, batch_records, n, index, overlap);
    auto written = sink->write(batch, through);
    if (!written) {
      state.SkipWithError(written.error().message.c_str());
      return;
    }
    through = written->exported_through;
  }
  if (prefill > 0) {
    // The prefill's own rate: minutes of writing, checkpoints and
    // autovacuum included, where the timed batches see seconds.
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - prefill_began).count();
    state.counters["prefill_per_s"] = static_cast<double>(n) / seconds;
  }
  double sink_cpu = 0;
  const double server_cpu_before = server_cpu_seconds();
  for (auto _ : state) {
    state.PauseTiming();
    per_session += next_batch(batch, batch_records, n, index, overlap);
    state.ResumeTiming();
    const double cpu_before = process_cpu_seconds();
    auto written = sink->write(batch, through);
    sink_cpu += process_cpu_seconds() - cpu_before;
    if (!written) {
      state.SkipWithError(written.error().message.c_str());
      break;
    }
    through = written->exported_through;
  }
  // CPU per record, this process's (the sink) and the database's.
  const double records = static_cast<double>(state.iterations() * batch_records);
  state.counters["sink_cpu_us"] = sink_cpu * 1e6 / records;
  state.counters["server_cpu_us"] = (server_cpu_seconds() - server_cpu_before) * 1e6 / records;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch_records));
  state.counters["records_per_session"] = per_session / static_cast<double>(state.iterations());
  state.SetLabel(std::string(kLayoutNames[layout]) + (std::filesystem::exists(kFreeradiusSchema)
                                                          ? ", FreeRADIUS schema.sql"
                                                          : ", radiusward's radacct"));
}

void BM_PostgresSinkWrite(benchmark::State& state) {
  sink_write(state, static_cast<Layout>(state.range(0)), static_cast<std::size_t>(state.range(1)),
             static_cast<std::uint64_t>(state.range(2)), 0);
}
BENCHMARK(BM_PostgresSinkWrite)
    ->ArgsProduct({{kShipped, kJsonLog, kNoSessionIndex, kJsonNoSessionIndex}, {2000}, {kApart}})
    ->Args({kShipped, 64, kApart})
    ->Args({kShipped, 500, kApart})
    ->Args({kShipped, 8000, kApart})
    ->Args({kShipped, 2000, kTogether})
    ->ArgNames({"layout", "batch", "overlap"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(5.0);

// The shipped sink after `prefill` records: what a long run's exporter
// writes into, against the empty tables of BM_PostgresSinkWrite.
void BM_PostgresSinkWriteAfter(benchmark::State& state) {
  sink_write(state, kShipped, 2000, kApart, static_cast<std::uint64_t>(state.range(0)));
}
// A fixed count of timed batches: Google Benchmark would otherwise call the
// function again with more iterations, and fill the database again each time.
BENCHMARK(BM_PostgresSinkWriteAfter)
    ->Arg(1'000'000)
    ->Arg(3'000'000)
    ->ArgName("prefill")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(40);

// How the log rows reach the table in BM_PostgresBatchParts.
enum LogPath : std::int64_t {
  kInsert = 0,       // one multi-row INSERT ... ON CONFLICT (record_key) DO NOTHING (before COPY)
  kPlainInsert = 1,  // the same without ON CONFLICT
  kCopy = 2,         // COPY, radacct's statements by multi-row INSERT
  kCopyBoth = 3,     // COPY, and radacct's rows by COPY into its stage table, as the sink sends them
};
constexpr const char* kLogPathNames[] = {"log by INSERT ON CONFLICT", "log by plain INSERT", "log by COPY",
                                         "log and radacct rows by COPY"};

// Where a batch's time goes: the statements the sink runs (exporter::
// batch_sql, exporter::log_copy_rows), built here and run one part at a
// time over libpq in one transaction, each part timed: building the text
// (this process), the log rows, radacct's statements, the commit (its
// fsync). Counters in ms per batch of 2,000; the timed region is the whole.
void BM_PostgresBatchParts(benchmark::State& state) {
  constexpr std::size_t kRecords = 2000;
  const auto path = static_cast<LogPath>(state.range(0));
  const auto overlap = static_cast<std::uint64_t>(state.range(1));
  const std::string conninfo = fresh_database("sink_parts", kShipped);
  if (conninfo.empty()) {
    state.SkipWithError("the sink could not migrate the database");
    return;
  }
  PGconn* conn = PQconnectdb(conninfo.c_str());
  PQclear(PQexec(conn, exporter::radacct_stage_sql().c_str()));
  const auto ok_result = [conn](PGresult* result) {
    const ExecStatusType status = PQresultStatus(result);
    PQclear(result);
    return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
  };
  const auto run = [&](const std::string& sql) { return ok_result(PQexec(conn, sql.c_str())); };
  const auto copy = [&](std::string_view statement, const std::string& rows) {
    PGresult* started = PQexec(conn, std::string(statement).c_str());
    const bool copying = PQresultStatus(started) == PGRES_COPY_IN;
    PQclear(started);
    if (!copying || PQputCopyData(conn, rows.data(), static_cast<int>(rows.size())) != 1 ||
        PQputCopyEnd(conn, nullptr) != 1)
      return false;
    bool ok = true;
    for (PGresult* result; (result = PQgetResult(conn)) != nullptr;) ok = ok_result(result) && ok;
    return ok;
  };
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point from) {
    return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
  };
  const radius::Dictionary& dictionary = *radius::Dictionary::builtin();
  double build_ms = 0, log_ms = 0, radacct_ms = 0, commit_ms = 0, per_session = 0, radacct_rows_total = 0;
  std::uint64_t n = 0;
  std::uint64_t index = 0;
  std::vector<HeldRecord> batch;
  for (auto _ : state) {
    state.PauseTiming();
    per_session += next_batch(batch, kRecords, n, index, overlap);
    state.ResumeTiming();
    auto began = Clock::now();
    std::string log;
    std::string radacct;
    std::string radacct_rows;
    if (path == kCopyBoth) {
      log = *exporter::log_copy_rows(batch, dictionary);
      exporter::RadacctCopy staged = *exporter::radacct_copy(batch, dictionary);
      radacct_rows = std::move(staged.rows);
      radacct_rows_total += static_cast<double>(std::count(radacct_rows.begin(), radacct_rows.end(), '\n'));
      radacct = std::move(staged.sql);
    } else if (path == kCopy) {
      log = *exporter::log_copy_rows(batch, dictionary);
      radacct = exporter::batch_sql(exporter::Dialect::kPostgres, batch, dictionary, {}, 0,
                                    exporter::LogRows::kByCopy);
    } else {
      radacct = exporter::batch_sql(exporter::Dialect::kPostgres, batch, dictionary);
      constexpr std::string_view kClause = " ON CONFLICT (record_key) DO NOTHING;\n";
      const std::size_t log_end = radacct.find(kClause);
      log = radacct.substr(0, log_end) + (path == kInsert ? std::string(kClause) : ";\n");
      radacct.erase(0, log_end + kClause.size());
    }
    build_ms += ms_since(began);
    began = Clock::now();
    bool ok = run("BEGIN") && (path >= kCopy ? copy(exporter::kLogCopySql, log) : run(log));
    log_ms += ms_since(began);
    began = Clock::now();
    if (path == kCopyBoth) ok = ok && copy(exporter::kRadacctStageCopySql, radacct_rows);
    ok = ok && run(radacct);
    radacct_ms += ms_since(began);
    began = Clock::now();
    ok = ok && run("COMMIT");
    commit_ms += ms_since(began);
    if (!ok) {
      state.SkipWithError(PQerrorMessage(conn));
      break;
    }
  }
  PQfinish(conn);
  const double batches = static_cast<double>(state.iterations());
  state.counters["build_ms"] = build_ms / batches;
  state.counters["log_ms"] = log_ms / batches;
  state.counters["radacct_ms"] = radacct_ms / batches;
  state.counters["commit_ms"] = commit_ms / batches;
  state.counters["records_per_session"] = per_session / batches;
  if (path == kCopyBoth) state.counters["radacct_rows"] = radacct_rows_total / batches;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRecords));
  state.SetLabel(kLogPathNames[path]);
}
BENCHMARK(BM_PostgresBatchParts)
    ->ArgsProduct({{kInsert, kPlainInsert, kCopy, kCopyBoth}, {kApart}})
    ->Args({kCopyBoth, kTogether})
    ->ArgNames({"log", "overlap"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(5.0);

}  // namespace
}  // namespace rw::member_shell
