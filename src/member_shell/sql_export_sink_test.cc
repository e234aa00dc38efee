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

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <set>

#include "accounting/accounting_request_for_test.h"
#include "exporter/radacct.h"
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
  EXPECT_EQ(db_.query("SELECT version FROM radiusward_schema_version ORDER BY version"), "1|2");
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
  // A constraint: a record's problem as far as the sink can tell (the
  // exporter would isolate it and quarantine it rather than stop).
  EXPECT_EQ(failed.error().kind, SinkError::Kind::kRecordRefused);
  EXPECT_EQ(cursor(), "10");
  EXPECT_EQ(db_.query("SELECT log_index FROM radiusward_accounting_log ORDER BY log_index"), "10|12");
  EXPECT_EQ(db_.query("SELECT acctsessiontime FROM radacct"), "0");  // the Start only
}

// Appends a raw TLV (RFC 2865 §5) to a record's attributes.
void append(accounting::Record& record, std::uint8_t type, const std::string& value) {
  record.attributes.push_back(type);
  record.attributes.push_back(static_cast<std::uint8_t>(value.size() + 2));
  record.attributes.insert(record.attributes.end(), value.begin(), value.end());
}

TEST_P(SinkTest, NormalisesValuesTheDatabaseWouldRefuse) {
  // What one NAS can send that stopped the export before: a NUL in a
  // string (jsonb refuses \u0000), malformed addresses ('0x..'::inet) and
  // Gigawords >= 2^31 (bigint overflow).
  RequestSpec spec;
  spec.status_type = status::kInterimUpdate;
  spec.user_name = std::string("bo\0b", 4);
  spec.session_id = "nul1";
  spec.nas_ip.reset();
  spec.event_timestamp = 1'700'000'000;
  spec.input_octets = 5;
  accounting::Record record = record_of(spec);
  append(record, radius::attr::kNasIpAddress, std::string("\x0a\x00\x00\x01\x02", 5));
  append(record, radius::attr::kFramedIpAddress, std::string("\x0a\x00\x00", 3));
  append(record, radius::attr::kAcctInputGigawords, std::string("\xff\xff\xff\xff", 4));
  append(record, radius::attr::kAcctOutputGigawords, std::string("\x80\x00\x00\x00", 4));
  auto sink = db_.make_sink();
  auto written = sink->write(std::vector<HeldRecord>{{40, record}});
  ASSERT_TRUE(written) << written.error().to_string();
  EXPECT_EQ(written->exported_through, 40u);
  EXPECT_EQ(db_.query("SELECT username FROM radacct"),
            "bo\xef\xbf\xbd"
            "b");  // NUL -> U+FFFD
  EXPECT_EQ(db_.query("SELECT acctinputoctets || ',' || acctoutputoctets FROM radacct"),
            "9223372036854775807,9223372036854775807");
  const bool pg = GetParam() == exporter::Dialect::kPostgres;
  EXPECT_EQ(
      db_.query(
          pg ? "SELECT host(nasipaddress) || ',' || coalesce(host(framedipaddress), 'NULL') FROM radacct"
             : "SELECT nasipaddress || ',' || framedipaddress FROM radacct"),
      pg ? "0.0.0.0,NULL" : ",");
  // The log table keeps the malformed bytes, as hex, and the name.
  const std::string attributes = db_.query("SELECT attributes FROM radiusward_accounting_log");
  EXPECT_NE(attributes.find("0x0a00000102"), std::string::npos) << attributes;
  EXPECT_NE(attributes.find("0x0a0000"), std::string::npos) << attributes;
  EXPECT_NE(attributes.find("bo\xef\xbf\xbd"
                            "b"),
            std::string::npos)
      << attributes;
}

TEST_P(SinkTest, QuarantinesARecordTheDatabaseRefusesAndExportsTheRest) {
  // A refusal normalisation cannot prevent: the test adds a rule to
  // radacct (a CHECK constraint on PostgreSQL; SQLite's ALTER TABLE cannot
  // add one, so a trigger that RAISEs ABORT, a constraint error there too).
  auto sink = db_.make_sink();
  ASSERT_TRUE(sink->open());
  const bool pg = GetParam() == exporter::Dialect::kPostgres;
  db_.query(pg ? "ALTER TABLE radacct ADD CONSTRAINT no_mallory CHECK (username <> 'mallory')"
               : "CREATE TRIGGER no_mallory BEFORE INSERT ON radacct WHEN NEW.username = 'mallory' "
                 "BEGIN SELECT RAISE(ABORT, 'no_mallory refused'); END");
  RequestSpec a;
  a.session_id = "q1";
  RequestSpec bad = a;
  bad.session_id = "q2";
  bad.user_name = "mallory";
  RequestSpec c = a;
  c.session_id = "q3";
  // One log entry (index 20) of three records, the middle one refused.
  std::vector<HeldRecord> entry{{20, record_of(a)}, {20, record_of(bad)}, {20, record_of(c)}};
  auto refused = sink->write(entry);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, SinkError::Kind::kRecordRefused) << refused.error().to_string();
  EXPECT_EQ(cursor(), "0");
  auto written = sink->write_isolating(entry);
  ASSERT_TRUE(written) << written.error().to_string();
  EXPECT_EQ(written->exported_through, 20u);
  ASSERT_EQ(written->quarantined.size(), 1u);
  EXPECT_EQ(written->quarantined[0].index, 20u);
  EXPECT_EQ(written->quarantined[0].position, 1u);
  EXPECT_NE(written->quarantined[0].error.find("no_mallory"), std::string::npos)
      << written->quarantined[0].error;
  EXPECT_EQ(cursor(), "20");
  EXPECT_EQ(db_.query("SELECT acctsessionid FROM radacct ORDER BY acctsessionid"), "q1|q3");
  EXPECT_EQ(db_.query("SELECT entry_position FROM radiusward_accounting_log ORDER BY entry_position"), "0|2");
  EXPECT_EQ(db_.query("SELECT log_index || ',' || entry_position || ',' || record_key || ',' || client FROM "
                      "radiusward_quarantine"),
            "20,1," + record_of(bad).key.hex() + ",nas1");
  const std::string kept = db_.query("SELECT attributes || ' ' || error FROM radiusward_quarantine");
  EXPECT_NE(kept.find("mallory"), std::string::npos) << kept;
  EXPECT_NE(kept.find("no_mallory"), std::string::npos) << kept;
}

TEST_P(SinkTest, ARecordResentAfterTheWindowIsLoggedOnceAndNotAppliedTwice) {
  // Start, then two Interim-Updates; the first Interim-Update comes back
  // (same key) in a later batch after the ledger forgot its key. Applied
  // again it would set the counters back to 100.
  RequestSpec start;
  start.session_id = "re1";
  start.event_timestamp = 1'700'000'000;
  RequestSpec first = start;
  first.status_type = status::kInterimUpdate;
  first.event_timestamp = 1'700'000'060;
  first.session_time_s = 60;
  first.input_octets = 100;
  RequestSpec second = first;
  second.event_timestamp = 1'700'000'120;
  second.session_time_s = 120;
  second.input_octets = 200;
  RequestSpec other = start;
  other.session_id = "re2";
  auto sink = db_.make_sink();
  ASSERT_TRUE(sink->write(
      std::vector<HeldRecord>{{10, record_of(start)}, {11, record_of(first)}, {12, record_of(second)}}));
  auto again = sink->write(std::vector<HeldRecord>{{30, record_of(first)}, {31, record_of(other)}});
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->exported_through, 31u);
  EXPECT_EQ(again->records_known, 1u);
  EXPECT_EQ(
      db_.query("SELECT acctsessiontime || ',' || acctinputoctets FROM radacct WHERE acctsessionid = 're1'"),
      "120,200");
  EXPECT_EQ(db_.query("SELECT count(*) FROM radiusward_accounting_log WHERE record_key = '" +
                      record_of(first).key.hex() + "'"),
            "1");
  EXPECT_EQ(db_.query("SELECT log_index FROM radiusward_accounting_log ORDER BY log_index"), "10|11|12|31");
  EXPECT_EQ(count("radacct"), "2");
  // The same through the isolating path.
  auto isolated = sink->write_isolating(std::vector<HeldRecord>{{40, record_of(second)}});
  ASSERT_TRUE(isolated) << isolated.error().to_string();
  EXPECT_EQ(isolated->records_known, 1u);
  EXPECT_EQ(cursor(), "40");
  EXPECT_EQ(count("radiusward_accounting_log"), "4");
}

// docs/accounting.md "Keeping the log table bounded": a round deletes, of
// the first rows_max log rows in log order, those received before the cut;
// a row stamped later (a gateway's clock ahead) is passed over, not waited
// on; radacct and the cursor stay; a record re-sent after its row is gone
// is logged again (nothing recognises it any more).
TEST_P(SinkTest, LogRetentionDeletesOldRowsInLogOrderAndNothingElse) {
  const std::int64_t cut = 1'700'000'100'000;
  const std::vector<std::pair<std::uint64_t, std::int64_t>> received = {
      {10, cut - 50'000}, {11, cut + 10'000'000}, {12, cut - 40'000},
      {13, cut - 30'000}, {14, cut + 1},          {15, cut - 1}};
  std::vector<HeldRecord> records;
  for (const auto& [index, at] : received) {
    RequestSpec start;
    start.session_id = "keep" + std::to_string(index);
    start.event_timestamp = 1'700'000'000;
    records.push_back({index, record_of(start, at)});
  }
  auto sink = db_.make_sink();
  ASSERT_TRUE(sink->write(records));
  const auto prune = [&] {
    auto deleted = sink->prune_log(cut, 3);
    EXPECT_TRUE(deleted) << deleted.error().to_string();
    return deleted ? *deleted : 0;
  };
  const auto logged = [&] {
    return db_.query("SELECT log_index FROM radiusward_accounting_log ORDER BY log_index");
  };
  EXPECT_EQ(prune(), 2u);  // of 10, 11, 12
  EXPECT_EQ(logged(), "11|13|14|15");
  EXPECT_EQ(prune(), 1u);  // of 11, 13, 14
  EXPECT_EQ(prune(), 1u);  // of 11, 14, 15
  EXPECT_EQ(prune(), 0u);
  EXPECT_EQ(logged(), "11|14");
  EXPECT_EQ(count("radacct"), "6");
  EXPECT_EQ(cursor(), "15");
  auto again = sink->write(std::vector<HeldRecord>{{20, records[0].record}});
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->records_known, 0u);
  EXPECT_EQ(logged(), "11|14|20");
  EXPECT_EQ(count("radacct"), "6");
}

TEST_P(SinkTest, ACursorBelowTheFloorWritesNothing) {
  auto sink = db_.make_sink();
  ASSERT_TRUE(sink->write(session_records()));
  // The database goes back in time (a restored backup): the cluster's
  // cursor (12) is above the database's now.
  db_.query("UPDATE radiusward_export_cursor SET exported_through = 5 RETURNING 1");
  RequestSpec later;
  later.session_id = "after";
  auto behind = sink->write(std::vector<HeldRecord>{{13, record_of(later)}}, 12);
  ASSERT_FALSE(behind);
  EXPECT_EQ(behind.error().kind, SinkError::Kind::kCursorBehind) << behind.error().to_string();
  EXPECT_EQ(cursor(), "5");
  EXPECT_EQ(count("radiusward_accounting_log"), "3");
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

TEST(PostgresSink, ALockHeldOnTheCursorRowFailsFastAndTheRetrySucceeds) {
  // An old leader, partitioned in the middle of a batch, holds the cursor
  // row: lock_timeout makes the new leader's write fail (retryable) instead
  // of waiting for the old one's TCP connection to die.
  const std::string conninfo = new_database("t_lock");
  config::MemberConfig::PostgresTimeouts timeouts;
  timeouts.lock_timeout_ms = 300;
  auto sink = make_postgres_sink(conninfo, dictionary(), timeouts);
  ASSERT_TRUE(sink->open());
  PGconn* old_leader = PQconnectdb(conninfo.c_str());
  ASSERT_EQ(PQstatus(old_leader), CONNECTION_OK);
  PQclear(PQexec(old_leader, "BEGIN"));
  PGresult* locked = PQexec(old_leader, "SELECT exported_through FROM radiusward_export_cursor FOR UPDATE");
  ASSERT_EQ(PQresultStatus(locked), PGRES_TUPLES_OK);
  PQclear(locked);
  auto records = session_records();
  const auto started = std::chrono::steady_clock::now();
  auto blocked = sink->write(records);
  const auto waited = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(blocked);
  EXPECT_EQ(blocked.error().kind, SinkError::Kind::kUnavailable) << blocked.error().to_string();
  EXPECT_NE(blocked.error().message.find("lock timeout"), std::string::npos) << blocked.error().message;
  EXPECT_LT(waited, std::chrono::seconds(3));
  PQfinish(old_leader);  // the old leader's session ends: its lock goes
  auto written = sink->write(records);
  ASSERT_TRUE(written) << written.error().to_string();
  EXPECT_EQ(written->exported_through, 12u);
  EXPECT_EQ(pg_query(conninfo, "SELECT count(*) FROM radiusward_accounting_log"), "3");
}

// Records whose every text a NAS controls holds what COPY's text format
// escapes or the exporter replaces (tab, newline, carriage return,
// backslash, quotes, NUL, bytes of no UTF-8 sequence), from a client named
// so too, received at times before 1970 and with milliseconds: the log
// table's rows must not depend on whether they went by COPY or by INSERT.
std::vector<HeldRecord> hostile_records() {
  static constexpr char kText[] = "t\tn\nr\rb\\q'd\"z\0x\xff\xc3 \xc3\xa9";
  const std::string text(kText, sizeof kText - 1);
  const std::int64_t received[] = {1'700'000'000'123, -1, -1'500, 86'400'001, 1'700'000'000'000, -999};
  const std::uint32_t kinds[] = {status::kStart, status::kInterimUpdate, status::kStop};
  std::vector<HeldRecord> records;
  for (std::size_t i = 0; i < std::size(received); ++i) {
    RequestSpec spec;
    spec.status_type = kinds[i % 3];
    spec.session_id = "c" + std::to_string(i / 3);
    spec.user_name = text + std::to_string(i);
    spec.nas_identifier = text;
    spec.session_time_s = static_cast<std::uint32_t>(i * 10);
    records.push_back({20 + i / 2, record_of(spec, received[i], text + "nas")});
  }
  return records;
}

// Every column of the log table, and of radacct but its serial id, row by row.
std::string log_and_radacct(const std::string& conninfo) {
  return pg_query(conninfo,
                  "SELECT concat_ws(',', log_index, entry_position, record_key, status_type, client, "
                  "received_time, event_time, acctuniqueid, attributes::text) FROM radiusward_accounting_log "
                  "ORDER BY log_index, entry_position") +
         "\n" +
         pg_query(conninfo,
                  "SELECT concat_ws(',', acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, "
                  "acctupdatetime, acctstoptime, acctsessiontime, acctinputoctets, acctterminatecause, "
                  "calledstationid, callingstationid) FROM radacct ORDER BY acctuniqueid");
}

TEST(PostgresSink, TheLogTableIsTheSameByCopyAsByInsert) {
  const std::vector<HeldRecord> records = hostile_records();
  const std::string by_copy = new_database("t_by_copy");
  auto written = make_postgres_sink(by_copy, dictionary())->write(records);
  ASSERT_TRUE(written) << written.error().to_string();
  // The same batch by the INSERT the sink used before COPY, on a database
  // the sink migrated.
  const std::string by_insert = new_database("t_by_insert");
  ASSERT_TRUE(make_postgres_sink(by_insert, dictionary())->exported_through());
  PGconn* conn = PQconnectdb(by_insert.c_str());
  PGresult* result = PQexec(
      conn,
      ("BEGIN;\n" + exporter::batch_sql(exporter::Dialect::kPostgres, records, *dictionary()) + "COMMIT")
          .c_str());
  EXPECT_EQ(PQresultStatus(result), PGRES_COMMAND_OK) << PQerrorMessage(conn);
  PQclear(result);
  PQfinish(conn);
  const std::string rows = log_and_radacct(by_copy);
  EXPECT_EQ(pg_query(by_copy, "SELECT count(*) FROM radiusward_accounting_log"), "6");
  EXPECT_EQ(rows.find("error"), std::string::npos) << rows;
  EXPECT_EQ(rows, log_and_radacct(by_insert));
  // The instants themselves: -1 ms is the last millisecond of 1969.
  EXPECT_EQ(pg_query(by_copy,
                     "SELECT received_time = to_timestamp(-0.001) FROM radiusward_accounting_log "
                     "WHERE log_index = 20 AND entry_position = 1"),
            "t");
}

// radacct as the rows FreeRADIUS's queries would leave, whatever the batches:
// 600 seeded records of 12 sessions on two NASes (Start, Interim-Update,
// Stop, Accounting-On/Off, Failed, some records sent twice) exported by the
// sink in batches of 7, 64 and 600 records — by COPY, staged and grouped —
// end in the rows of one radacct_sql statement per record in log order.
TEST(PostgresSink, RadacctByCopyEndsInTheRowsOfOneStatementPerRecord) {
  std::mt19937 random(20261202);  // fixed: the test is deterministic
  const std::uint32_t kinds[] = {
      status::kStart, status::kStart,        status::kInterimUpdate, status::kInterimUpdate,
      status::kStop,  status::kAccountingOn, status::kAccountingOff, 15};
  std::vector<HeldRecord> records;
  for (int i = 0; i < 600; ++i) {
    const std::uint64_t index = records.empty() ? 1 : records.back().index + (random() % 3 == 0 ? 0 : 1);
    if (i > 0 && random() % 20 == 0) {  // a record sent again: its key repeats
      records.push_back({index, records[random() % records.size()].record});
      continue;
    }
    std::uint32_t kind = kinds[random() % std::size(kinds)];
    if ((kind == status::kAccountingOn || kind == status::kAccountingOff) && random() % 4 != 0)
      kind = status::kInterimUpdate;
    RequestSpec spec;
    spec.status_type = kind;
    spec.session_id = "s" + std::to_string(random() % 12);
    spec.nas_ip = std::array<std::uint8_t, 4>{10, 0, 0, static_cast<std::uint8_t>(1 + random() % 2)};
    spec.event_timestamp = static_cast<std::uint32_t>(1'700'000'000 + i);
    if (random() % 3 != 0) spec.session_time_s = static_cast<std::uint32_t>(random() % 500);
    spec.input_octets = static_cast<std::uint32_t>(random());
    if (random() % 2 == 0)
      spec.framed_ip = std::array<std::uint8_t, 4>{192, 0, 2, static_cast<std::uint8_t>(random() % 200)};
    spec.identifier = static_cast<std::uint8_t>(i);
    records.push_back({index, record_of(spec)});
  }
  const std::string dump =
      "SELECT concat_ws(',', acctsessionid, acctuniqueid, username, realm, nasipaddress, nasportid, "
      "nasporttype, acctstarttime, acctupdatetime, acctstoptime, acctinterval, acctsessiontime, "
      "acctauthentic, connectinfo_start, connectinfo_stop, acctinputoctets, acctoutputoctets, "
      "calledstationid, callingstationid, acctterminatecause, servicetype, framedprotocol, "
      "framedipaddress) FROM radacct ORDER BY acctuniqueid";
  // One statement per record, the first of each key only.
  const std::string one_by_one = new_database("t_one_by_one");
  ASSERT_TRUE(make_postgres_sink(one_by_one, dictionary())->exported_through());
  PGconn* conn = PQconnectdb(one_by_one.c_str());
  std::set<std::string> seen;
  for (const HeldRecord& held : records) {
    if (!seen.insert(held.record.key.hex()).second) continue;
    const std::string sql = exporter::radacct_sql(exporter::Dialect::kPostgres, held.record, *dictionary());
    if (sql.empty()) continue;
    PGresult* result = PQexec(conn, sql.c_str());
    EXPECT_EQ(PQresultStatus(result), PGRES_COMMAND_OK) << PQerrorMessage(conn);
    PQclear(result);
  }
  PQfinish(conn);
  const std::string expected = pg_query(one_by_one, dump);
  for (std::size_t batch_size : {7u, 64u, 600u}) {
    const std::string batched = new_database("t_batched_" + std::to_string(batch_size));
    auto sink = make_postgres_sink(batched, dictionary());
    for (std::size_t first = 0, end = 0; first < records.size(); first = end) {
      end = std::min(first + batch_size, records.size());
      while (end < records.size() && records[end].index == records[end - 1].index) ++end;
      auto written = sink->write(std::span(records).subspan(first, end - first));
      ASSERT_TRUE(written) << written.error().to_string();
    }
    EXPECT_EQ(pg_query(batched, dump), expected) << "batches of " << batch_size;
    EXPECT_EQ(pg_query(batched, "SELECT count(*) FROM radiusward_accounting_log"),
              std::to_string(seen.size()));
  }
  EXPECT_NE(pg_query(one_by_one, "SELECT count(*) FROM radacct WHERE acctinterval IS NOT NULL"), "0");
  EXPECT_NE(pg_query(one_by_one, "SELECT count(*) FROM radacct WHERE acctterminatecause = 'NAS-Reboot'"),
            "0");
}

// A database the test reads and writes beside the sink: the rows a
// session starts from, the reference statements, and radacct's dump.
class DirectDatabase {
 public:
  DirectDatabase(exporter::Dialect dialect, const std::string& target) : dialect_(dialect) {
    if (dialect == exporter::Dialect::kPostgres) {
      pg_ = PQconnectdb(target.c_str());
    } else {
      EXPECT_EQ(sqlite3_open(target.c_str(), &sqlite_), SQLITE_OK);
      sqlite3_busy_timeout(sqlite_, 5000);
    }
  }
  ~DirectDatabase() {
    if (pg_ != nullptr) PQfinish(pg_);
    if (sqlite_ != nullptr) sqlite3_close(sqlite_);
  }
  DirectDatabase(const DirectDatabase&) = delete;
  DirectDatabase& operator=(const DirectDatabase&) = delete;

  void apply(const accounting::Record& record) {
    const std::string sql = exporter::radacct_sql(dialect_, record, *dictionary());
    if (sql.empty()) return;
    if (pg_ != nullptr) {
      PGresult* result = PQexec(pg_, sql.c_str());
      EXPECT_EQ(PQresultStatus(result), PGRES_COMMAND_OK) << PQerrorMessage(pg_) << sql;
      PQclear(result);
    } else {
      char* error = nullptr;
      EXPECT_EQ(sqlite3_exec(sqlite_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
          << (error ? error : "") << sql;
      sqlite3_free(error);
    }
  }
  // Every column of radacct but its serial id, NULL told from '', one line
  // per row of the sessions whose id starts with `prefix`.
  std::string dump(const std::string& prefix) {
    static constexpr const char* kColumns[] = {"acctsessionid",
                                               "acctuniqueid",
                                               "username",
                                               "realm",
                                               "nasipaddress",
                                               "nasportid",
                                               "nasporttype",
                                               "acctstarttime",
                                               "acctupdatetime",
                                               "acctstoptime",
                                               "acctinterval",
                                               "acctsessiontime",
                                               "acctauthentic",
                                               "connectinfo_start",
                                               "connectinfo_stop",
                                               "acctinputoctets",
                                               "acctoutputoctets",
                                               "calledstationid",
                                               "callingstationid",
                                               "acctterminatecause",
                                               "servicetype",
                                               "framedprotocol",
                                               "framedipaddress",
                                               "framedipv6address",
                                               "framedipv6prefix",
                                               "framedinterfaceid",
                                               "delegatedipv6prefix",
                                               "class"};
    std::string select;
    for (const char* column : kColumns) {
      if (pg_ != nullptr) {
        select += std::string(select.empty() ? "" : ", ") + column;
      } else {
        select += std::string(select.empty() ? "" : " || ',' || ") + "quote(" + column + ")";
      }
    }
    if (pg_ != nullptr) select = "ROW(" + select + ")::text";
    const std::string sql =
        "SELECT " + select + " FROM radacct WHERE acctsessionid LIKE '" + prefix + "%' ORDER BY acctuniqueid";
    std::string out;
    if (pg_ != nullptr) {
      PGresult* result = PQexec(pg_, sql.c_str());
      EXPECT_EQ(PQresultStatus(result), PGRES_TUPLES_OK) << PQerrorMessage(pg_);
      for (int row = 0; row < PQntuples(result); ++row) out += std::string(PQgetvalue(result, row, 0)) + "\n";
      PQclear(result);
      return out;
    }
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(sqlite_, sql.c_str(), -1, &statement, nullptr), SQLITE_OK)
        << sqlite3_errmsg(sqlite_);
    while (statement != nullptr && sqlite3_step(statement) == SQLITE_ROW)
      out += std::string(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0))) + "\n";
    sqlite3_finalize(statement);
    return out;
  }

 private:
  exporter::Dialect dialect_;
  PGconn* pg_ = nullptr;
  sqlite3* sqlite_ = nullptr;
};

std::string u32_bytes(std::uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16), static_cast<char>(value >> 8),
          static_cast<char>(value)};
}

// One random batch of the fold's differential test: a few sessions of one
// NAS of its own, each from a starting row (none, open, closed) that
// `start` writes, then records of them in and out of order.
// Acct-Status-Type Failed (RFC 2866 §5.1): the log table's, not radacct's.
constexpr std::uint32_t kFailed = 15;

struct FoldTrial {
  std::vector<accounting::Record> start;  // applied before the batch, one statement each
  std::vector<HeldRecord> batch;
  std::string description;  // what to print when the trial fails
};

FoldTrial fold_trial(std::mt19937& random, int trial, std::uint64_t& index) {
  const auto uniform = [&random](std::uint32_t n) { return static_cast<std::uint32_t>(random() % n); };
  const std::array<std::uint8_t, 4> nas = {10, static_cast<std::uint8_t>(trial / 250),
                                           static_cast<std::uint8_t>(trial % 250), 1};
  const std::uint32_t t0 = 1'700'000'000 + static_cast<std::uint32_t>(trial) * 10'000;
  std::uint8_t identifier = 0;
  // A record of `type` of session `k` at t0 + `at`; `session_time`
  // absent on a Stop without Acct-Session-Time.
  const auto make = [&](std::uint32_t type, int k, std::uint32_t at, bool session_time) {
    RequestSpec spec;
    spec.identifier = ++identifier;
    spec.status_type = type;
    spec.session_id = "t" + std::to_string(trial) + "s" + std::to_string(k);
    spec.nas_ip = nas;
    spec.event_timestamp = t0 + at;
    if (session_time) spec.session_time_s = uniform(2000);
    if (uniform(4) != 0) spec.input_octets = uniform(1'000'000);
    if (uniform(2) == 0)
      spec.framed_ip = std::array<std::uint8_t, 4>{192, 0, 2, static_cast<std::uint8_t>(uniform(250))};
    accounting::Record record = record_of(spec);
    if (uniform(2) == 0)
      append(record, radius::attr::kConnectInfo, "CONNECT " + std::to_string(uniform(100)));
    if (type == status::kStop && uniform(2) == 0)
      append(record, radius::attr::kAcctTerminateCause, u32_bytes(1 + uniform(6)));
    return record;
  };
  FoldTrial out;
  const int sessions = 1 + static_cast<int>(uniform(3));
  for (int k = 0; k < sessions; ++k) {
    const std::uint32_t state = uniform(4);  // 0 none, 1 open, 2 open and updated, 3 closed
    out.description += "session " + std::to_string(k) + " from state " + std::to_string(state) + "; ";
    if (state >= 1) out.start.push_back(make(status::kStart, k, 100 + uniform(100), true));
    if (state == 2) out.start.push_back(make(status::kInterimUpdate, k, 300 + uniform(100), true));
    if (state == 3) out.start.push_back(make(status::kStop, k, 300 + uniform(100), uniform(2) == 0));
  }
  const int records = 1 + static_cast<int>(uniform(10));
  for (int i = 0; i < records; ++i) {
    const std::uint32_t roll = uniform(24);
    const int k = static_cast<int>(uniform(static_cast<std::uint32_t>(sessions)));
    const std::uint32_t at =
        1000 + static_cast<std::uint32_t>(i) * 60 + uniform(200);  // times out of order too
    std::string kind;
    accounting::Record record;
    if (roll == 0 && !out.batch.empty()) {
      record = out.batch[uniform(static_cast<std::uint32_t>(out.batch.size()))].record;  // sent again
      kind = "repeat";
    } else if (roll == 1) {
      record = make(uniform(2) == 0 ? status::kAccountingOn : status::kAccountingOff, k, at, false);
      kind = "on/off";
    } else if (roll == 2) {
      record = make(kFailed, k, at, true);
      kind = "failed";
    } else {
      static constexpr std::uint32_t kTypes[] = {status::kStart, status::kInterimUpdate, status::kStop};
      const std::uint32_t type = kTypes[roll % 3];
      const bool session_time = type != status::kStop || uniform(3) != 0;
      record = make(type, k, at, session_time);
      kind = type == status::kStart           ? "start"
             : type == status::kInterimUpdate ? "interim"
             : session_time                   ? "stop"
                                              : "stop-no-time";
    }
    if (out.batch.empty() || uniform(3) != 0) ++index;  // a few records share a log entry
    out.batch.push_back({index, std::move(record)});
    out.description += kind + " s" + std::to_string(k) + " @" + std::to_string(at) + ", ";
  }
  return out;
}

// The fold (docs/accounting.md "Export to SQL", Statements) against the
// real databases: random batches of a few sessions — Start, Interim-Update
// and Stop in and out of order, records sent again, Stops with and without
// Acct-Session-Time, missing Starts, Accounting-On/Off and Failed between
// them — from every starting state of a session's row (none, open, open
// and updated since, closed), exported by the sink in one batch, leave
// radacct as one radacct_sql statement per record in log order does
// (FreeRADIUS's queries, record by record), column for column but the
// serial id. The seed and the failing trial are printed.
TEST_P(SinkTest, AFoldedBatchEndsAsItsRecordsOneByOne) {
  constexpr std::uint32_t kSeed = 20261203;
  constexpr int kTrials = 300;
  std::mt19937 random(kSeed);
  std::string reference_target;
  std::string folded_target;
  if (GetParam() == exporter::Dialect::kPostgres) {
    reference_target = new_database("t_fold_reference");
    ASSERT_TRUE(make_postgres_sink(reference_target, dictionary())->exported_through());
    folded_target = db_.query("SELECT current_database()");
    folded_target = postgres().conninfo(folded_target);
  } else {
    reference_target = (dir_ / "reference.sqlite").string();
    ASSERT_TRUE(make_sqlite_sink(reference_target, dictionary())->exported_through());
    folded_target = (dir_ / "radacct.sqlite").string();
  }
  auto sink = db_.make_sink();
  ASSERT_TRUE(sink->exported_through());
  DirectDatabase reference(GetParam(), reference_target);
  DirectDatabase folded(GetParam(), folded_target);
  std::uint64_t index = 0;
  int multi_record_batches = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const FoldTrial t = fold_trial(random, trial, index);
    for (const accounting::Record& record : t.start) {
      reference.apply(record);
      folded.apply(record);
    }
    std::set<std::string> seen;
    for (const HeldRecord& held : t.batch)
      if (seen.insert(held.record.key.hex()).second) reference.apply(held.record);
    auto written = sink->write(t.batch);
    ASSERT_TRUE(written) << written.error().to_string() << "\nseed " << kSeed << " trial " << trial << ": "
                         << t.description;
    const std::string prefix = "t" + std::to_string(trial) + "s";
    const std::string expected = reference.dump(prefix);
    ASSERT_EQ(folded.dump(prefix), expected)
        << "seed " << kSeed << " trial " << trial << ": " << t.description;
    multi_record_batches += t.batch.size() > 1 ? 1 : 0;
  }
  EXPECT_GT(multi_record_batches, kTrials / 2);
}

// A role that may not make temporary tables (hardened databases revoke
// TEMPORARY) still exports: radacct by INSERT, the same rows.
TEST(PostgresSink, ARoleWithoutTemporaryTablesWritesRadacctByInsert) {
  EXPECT_EQ(postgres().psql({"-c", "DROP DATABASE IF EXISTS t_no_temp"}), 0);
  EXPECT_EQ(postgres().psql({"-c", "DROP ROLE IF EXISTS rw_no_temp"}), 0);
  ASSERT_EQ(postgres().psql({"-c", "CREATE ROLE rw_no_temp LOGIN"}), 0);
  ASSERT_EQ(postgres().psql({"-c", "CREATE DATABASE t_no_temp OWNER rw_no_temp"}), 0);
  ASSERT_EQ(postgres().psql({"-c",
                             "REVOKE ALL ON DATABASE t_no_temp FROM PUBLIC; "
                             "REVOKE TEMPORARY ON DATABASE t_no_temp FROM rw_no_temp"}),
            0);
  const std::string conninfo = postgres().conninfo("t_no_temp") + " user=rw_no_temp";
  ASSERT_EQ(pg_query(conninfo, "SELECT has_database_privilege('t_no_temp', 'TEMPORARY')"), "f");
  auto written = make_postgres_sink(conninfo, dictionary())->write(session_records("nt"));
  ASSERT_TRUE(written) << written.error().to_string();
  EXPECT_EQ(pg_query(conninfo,
                     "SELECT acctsessionid || ',' || acctsessiontime || ',' || acctinputoctets || ',' || "
                     "extract(epoch from acctstoptime)::bigint FROM radacct"),
            "nt,90,150,1700000090");
  EXPECT_EQ(pg_query(conninfo, "SELECT count(*) FROM radiusward_accounting_log"), "3");
}

TEST(PostgresSink, ATimeCopyCannotCarryGoesByInsert) {
  std::vector<HeldRecord> records = session_records("far");
  records[1].record.received_unix_ms = 400'000'000'000'000;  // the year 14645
  const std::string conninfo = new_database("t_far_time");
  auto written = make_postgres_sink(conninfo, dictionary())->write(records);
  ASSERT_TRUE(written) << written.error().to_string();
  EXPECT_EQ(pg_query(conninfo,
                     "SELECT extract(year FROM received_time)::int FROM radiusward_accounting_log "
                     "ORDER BY log_index"),
            "2023|14645|2023");
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
