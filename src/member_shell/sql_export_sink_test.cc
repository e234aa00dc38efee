// Tests of the export sinks on real databases: a PostgreSQL 15 started by
// io::PostgresServerForTest and SQLite files in a temporary folder. Each batch
// and its cursor commit together or not at all; a second export of the same
// records (a restarted exporter, a new leader) is a no-op; an outage is a
// retryable error and the next call reconnects; and the PostgreSQL sink
// writes unchanged into a database made by FreeRADIUS's own schema.sql.
#include "member_shell/sql_export_sink.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <memory>

#include "accounting/accounting_request_for_test.h"
#include "io/postgres_server_for_test.h"

namespace rw::member_shell {
namespace {

using accounting::HeldRecord;
using accounting::testing::record_of;
using accounting::testing::RequestSpec;
namespace status = accounting::status;

// One server for the whole binary: initdb costs seconds.
io::PostgresServerForTest& postgres() {
  static io::PostgresServerForTest server;
  return server;
}

std::shared_ptr<const radius::Dictionary> dictionary() { return radius::Dictionary::builtin(); }

// A fresh database named `name` on the shared server.
std::string new_database(const std::string& name) {
  EXPECT_EQ(postgres().psql({"-c", "DROP DATABASE IF EXISTS " + name}), 0);
  EXPECT_EQ(postgres().psql({"-c", "CREATE DATABASE " + name}), 0);
  return postgres().conninfo(name);
}

// First column of every row of `sql`, joined by '|'.
std::string pg_query(const std::string& conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  PGresult* result = PQexec(conn, sql.c_str());
  std::string out;
  if (PQresultStatus(result) != PGRES_TUPLES_OK) out = std::string("error: ") + PQerrorMessage(conn);
  for (int row = 0; row < PQntuples(result); ++row) {
    if (row > 0) out += "|";
    out += PQgetisnull(result, row, 0) ? "NULL" : PQgetvalue(result, row, 0);
  }
  PQclear(result);
  PQfinish(conn);
  return out;
}

std::string sqlite_query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* statement = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) out = sqlite3_errmsg(db);
  while (statement && sqlite3_step(statement) == SQLITE_ROW) {
    if (!out.empty()) out += "|";
    const unsigned char* text = sqlite3_column_text(statement, 0);
    out += text ? reinterpret_cast<const char*>(text) : "NULL";
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return out;
}

// Log indices 10, 11, 12: a session's Start, Interim-Update and Stop.
std::vector<HeldRecord> session_records(const std::string& session = "s1") {
  RequestSpec start;
  start.status_type = status::kStart;
  start.session_id = session;
  start.event_timestamp = 1'700'000'000;
  RequestSpec interim = start;
  interim.status_type = status::kInterimUpdate;
  interim.event_timestamp = 1'700'000'060;
  interim.session_time_s = 60;
  interim.input_octets = 100;
  RequestSpec stop = interim;
  stop.status_type = status::kStop;
  stop.event_timestamp = 1'700'000'090;
  stop.session_time_s = 90;
  stop.input_octets = 150;
  return {{10, record_of(start)}, {11, record_of(interim)}, {12, record_of(stop)}};
}

// The same tests on both databases: `query` reads the sink's database.
struct Database {
  std::function<std::unique_ptr<ExportSink>()> make_sink;
  std::function<std::string(const std::string&)> query;
};

class SinkTest : public ::testing::TestWithParam<exporter::Dialect> {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string safe;
    for (char c : name)
      safe += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
    if (GetParam() == exporter::Dialect::kPostgres) {
      const std::string conninfo = new_database("t_" + safe);
      db_.make_sink = [conninfo] { return make_postgres_sink(conninfo, dictionary()); };
      db_.query = [conninfo](const std::string& sql) { return pg_query(conninfo, sql); };
    } else {
      dir_ =
          std::filesystem::temp_directory_path() / ("rw-sqlite-" + safe + "-" + std::to_string(::getpid()));
      std::filesystem::remove_all(dir_);
      std::filesystem::create_directories(dir_);
      const std::string path = (dir_ / "radacct.sqlite").string();
      db_.make_sink = [path] { return make_sqlite_sink(path, dictionary()); };
      db_.query = [path](const std::string& sql) { return sqlite_query(path, sql); };
    }
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string count(const std::string& table) { return db_.query("SELECT count(*) FROM " + table); }
  std::string cursor() { return db_.query("SELECT exported_through FROM radiusward_export_cursor"); }

  Database db_;
  std::filesystem::path dir_;
};

TEST_P(SinkTest, MigratesOnceAndStartsTheCursorAtZero) {
  auto sink = db_.make_sink();
  ASSERT_TRUE(sink->open()) << sink->open().error().to_string();
  auto again = db_.make_sink();
  ASSERT_TRUE(again->open());
  EXPECT_EQ(db_.query("SELECT version FROM radiusward_schema_version"), "1");
  auto through = sink->exported_through();
  ASSERT_TRUE(through);
  EXPECT_EQ(*through, 0u);
}

TEST_P(SinkTest, WritesABatchWithItsCursor) {
  auto sink = db_.make_sink();
  auto written = sink->write(session_records());
  ASSERT_TRUE(written) << written.error().to_string();
  EXPECT_EQ(written->exported_through, 12u);
  EXPECT_EQ(written->records_written, 3u);
  EXPECT_EQ(cursor(), "12");
  EXPECT_EQ(count("radiusward_accounting_log"), "3");
  EXPECT_EQ(
      db_.query("SELECT acctsessiontime || ',' || acctinputoctets || ',' || CAST(acctstoptime IS NOT NULL AS "
                "INTEGER) FROM radacct"),
      "90,150,1");
}

TEST_P(SinkTest, ReExportAfterARestartIsANoOp) {
  auto records = session_records();
  ASSERT_TRUE(db_.make_sink()->write(std::span(records).first(2)));
  // A new exporter (restart, new leader) that still holds 10..12 in its
  // ledger because the cursor entry never committed: only 12 is new.
  auto restarted = db_.make_sink();
  auto through = restarted->exported_through();
  ASSERT_TRUE(through);
  EXPECT_EQ(*through, 11u);
  auto written = restarted->write(records);
  ASSERT_TRUE(written);
  EXPECT_EQ(written->records_written, 1u);
  auto again = restarted->write(records);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->records_written, 0u);
  EXPECT_EQ(again->exported_through, 12u);
  EXPECT_EQ(count("radiusward_accounting_log"), "3");
  EXPECT_EQ(count("radacct"), "1");
}

TEST_P(SinkTest, AFailedBatchLeavesNothingAndTheCursorBehind) {
  auto sink = db_.make_sink();
  auto records = session_records();
  ASSERT_TRUE(sink->write(std::span(records).first(1)));
  // Someone else wrote log index 12: the batch 11..12 fails on it as a
  // whole, so neither 11's row nor the cursor move survive.
  db_.query("INSERT INTO radiusward_accounting_log VALUES (12, 0, 'x', 2, 'c', " +
            std::string(GetParam() == exporter::Dialect::kPostgres ? "now(), now(), 'u', '{}')"
                                                                   : "0, 0, 'u', '{}')") +
            " RETURNING log_index");
  auto failed = sink->write(std::span(records).subspan(1));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().kind, SinkError::Kind::kRejected);
  EXPECT_EQ(cursor(), "10");
  EXPECT_EQ(db_.query("SELECT log_index FROM radiusward_accounting_log ORDER BY log_index"), "10|12");
  EXPECT_EQ(db_.query("SELECT acctsessiontime FROM radacct"), "0");  // the Start only
}

INSTANTIATE_TEST_SUITE_P(Databases, SinkTest,
                         ::testing::Values(exporter::Dialect::kPostgres, exporter::Dialect::kSqlite),
                         [](const auto& param_info) {
                           return param_info.param == exporter::Dialect::kPostgres ? "Postgres" : "Sqlite";
                         });

TEST(PostgresSink, AnOutageIsRetryableAndTheNextCallReconnects) {
  const std::string conninfo = new_database("t_outage");
  auto sink = make_postgres_sink(conninfo, dictionary());
  auto records = session_records();
  ASSERT_TRUE(sink->write(std::span(records).first(1)));
  postgres().stop();
  auto down = sink->write(std::span(records).subspan(1));
  postgres().start();
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().kind, SinkError::Kind::kUnavailable) << down.error().to_string();
  auto up = sink->write(std::span(records).subspan(1));
  ASSERT_TRUE(up) << up.error().to_string();
  EXPECT_EQ(up->exported_through, 12u);
  EXPECT_EQ(pg_query(conninfo, "SELECT count(*) FROM radiusward_accounting_log"), "3");
}

TEST(PostgresSink, ExportsIntoADatabaseMadeByFreeradiusSchema) {
  const std::string schema = "/etc/freeradius/3.0/mods-config/sql/main/postgresql/schema.sql";
  ASSERT_TRUE(std::filesystem::exists(schema)) << schema << ": run scripts/install-deps";
  const std::string conninfo = new_database("t_freeradius");
  ASSERT_EQ(postgres().psql({"-f", schema}, "t_freeradius"), 0);
  auto sink = make_postgres_sink(conninfo, dictionary());
  auto records = session_records("fr1");
  auto written = sink->write(records);
  ASSERT_TRUE(written) << written.error().to_string();
  EXPECT_EQ(pg_query(conninfo,
                     "SELECT acctsessionid || ',' || username || ',' || host(nasipaddress) || ',' || "
                     "acctsessiontime || ',' || acctinputoctets || ',' || "
                     "extract(epoch from acctstoptime)::bigint FROM radacct"),
            "fr1,bob,10.0.0.1,90,150,1700000090");
  // FreeRADIUS's own table, not a copy: its Class column and radpostauth exist.
  EXPECT_EQ(pg_query(conninfo,
                     "SELECT count(*) FROM information_schema.columns WHERE table_name = 'radacct' AND "
                     "column_name = 'class'"),
            "1");
  EXPECT_EQ(pg_query(conninfo, "SELECT count(*) FROM radpostauth"), "0");
}

}  // namespace
}  // namespace rw::member_shell
