// Tests of the export mapping: the SQL it makes runs on a real (in-memory)
// SQLite, and the rows must follow FreeRADIUS 3.2's default queries for
// Start, Interim-Update, Stop and Accounting-On/Off (queries.conf), keep
// every record in the log table, and apply unchanged to a database made by
// FreeRADIUS's own SQLite schema.sql. PostgreSQL runs the same mapping in
// src/member_shell/sql_export_sink_test.cc.
#include "exporter/radacct.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

#include "radius/packet.h"

namespace rw::exporter {
namespace {

using accounting::HeldRecord;
using accounting::Record;
namespace attr = radius::attr;
namespace status = accounting::status;

constexpr std::int64_t kT0 = 1'700'000'000;  // seconds

// Raw TLVs (RFC 2865 §5) of a record under construction.
class Attributes {
 public:
  Attributes& text(std::uint8_t type, std::string_view value) {
    bytes_.push_back(type);
    bytes_.push_back(static_cast<std::uint8_t>(value.size() + 2));
    bytes_.insert(bytes_.end(), value.begin(), value.end());
    return *this;
  }
  Attributes& u32(std::uint8_t type, std::uint32_t value) {
    const char raw[4] = {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
                         static_cast<char>(value >> 8), static_cast<char>(value)};
    return text(type, std::string_view(raw, 4));
  }
  Attributes& ip(std::uint8_t type, std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
    const char raw[4] = {static_cast<char>(a), static_cast<char>(b), static_cast<char>(c),
                         static_cast<char>(d)};
    return text(type, std::string_view(raw, 4));
  }
  [[nodiscard]] const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

// A record of `session` (its Acct-Session-Id) from NAS 10.0.0.<nas>.
Record record(std::uint32_t status_type, const std::string& session, std::int64_t event_s,
              Attributes extra = {}, std::uint8_t nas = 1) {
  Attributes a;
  a.u32(attr::kAcctStatusType, status_type).text(attr::kUserName, "bob").text(attr::kAcctSessionId, session);
  a.ip(attr::kNasIpAddress, 10, 0, 0, nas).u32(attr::kNasPort, 7);
  std::vector<std::uint8_t> bytes = a.bytes();
  bytes.insert(bytes.end(), extra.bytes().begin(), extra.bytes().end());
  Record r;
  r.status_type = status_type;
  r.client = "nas1";
  r.received_unix_ms = event_s * 1000;
  r.event_unix_ms = event_s * 1000;
  r.attributes = bytes;
  r.key = accounting::compute_record_key(Bytes(r.attributes), r.client);
  // A session key that differs per session id and NAS, as acct_unique's would.
  for (std::size_t i = 0; i < session.size() && i < 15; ++i)
    r.session.bytes[i] = static_cast<std::uint8_t>(session[i]);
  r.session.bytes[15] = nas;
  return r;
}

class SqliteDatabase {
 public:
  SqliteDatabase() { EXPECT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK); }
  ~SqliteDatabase() { sqlite3_close(db_); }

  void exec(const std::string& sql) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    ASSERT_EQ(rc, SQLITE_OK) << (error ? error : "") << "\n" << sql;
  }
  int try_exec(const std::string& sql) { return sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr); }
  void migrate() {
    exec(schema_table_sql(Dialect::kSqlite));
    for (const Migration& m : migrations(Dialect::kSqlite)) exec(m.sql);
  }
  // The first column of every row, as text ("NULL" for NULL), joined by '|'.
  std::string query(const std::string& sql) {
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db_);
    std::string out;
    while (sqlite3_step(statement) == SQLITE_ROW) {
      if (!out.empty()) out += "|";
      const unsigned char* text = sqlite3_column_text(statement, 0);
      out += text ? reinterpret_cast<const char*>(text) : "NULL";
    }
    sqlite3_finalize(statement);
    return out;
  }
  void apply(const Record& r) { exec(radacct_sql(Dialect::kSqlite, r, dictionary())); }
  // Every radacct row (`where` a condition on them), all columns but the
  // row id (whose order depends on insertion order), ordered by session.
  std::string dump_radacct(const std::string& where = "1") {
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(
        sqlite3_prepare_v2(db_, ("SELECT * FROM radacct WHERE " + where + " ORDER BY acctuniqueid").c_str(),
                           -1, &statement, nullptr),
        SQLITE_OK);
    std::string out;
    while (sqlite3_step(statement) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(statement); ++i) {
        if (std::string_view(sqlite3_column_name(statement, i)) == "radacctid") continue;
        const unsigned char* text = sqlite3_column_text(statement, i);
        out += sqlite3_column_name(statement, i);
        out += "=";
        out += text ? reinterpret_cast<const char*>(text) : "NULL";
        out += " ";
      }
      out += "\n";
    }
    sqlite3_finalize(statement);
    return out;
  }

  static const radius::Dictionary& dictionary() {
    static const auto d = radius::Dictionary::builtin();
    return *d;
  }

 private:
  sqlite3* db_ = nullptr;
};

std::string row(SqliteDatabase& db, const std::string& columns, const std::string& session) {
  return db.query("SELECT " + columns + " FROM radacct WHERE acctsessionid = '" + session + "'");
}

TEST(Radacct, StartInsertsAnOpenSessionRow) {
  SqliteDatabase db;
  db.migrate();
  db.apply(record(status::kStart, "s1", kT0, Attributes().text(attr::kCallingStationId, "00-11")));
  EXPECT_EQ(row(db,
                "username || ',' || nasipaddress || ',' || nasportid || ',' || acctstarttime || ',' || "
                "acctupdatetime || ',' || ifnull(acctstoptime, 'open') || ',' || acctsessiontime || ',' || "
                "callingstationid || ',' || acctinputoctets",
                "s1"),
            "bob,10.0.0.1,7,1700000000,1700000000,open,0,00-11,0");
}

TEST(Radacct, InterimUpdateSetsTimeCountersAndInterval) {
  SqliteDatabase db;
  db.migrate();
  db.apply(record(status::kStart, "s1", kT0));
  db.apply(record(status::kInterimUpdate, "s1", kT0 + 60,
                  Attributes()
                      .u32(attr::kAcctSessionTime, 60)
                      .u32(attr::kAcctInputOctets, 1000)
                      .u32(attr::kAcctInputGigawords, 1)
                      .u32(attr::kAcctOutputOctets, 5)
                      .ip(attr::kFramedIpAddress, 192, 0, 2, 9)));
  // RFC 2869 §5.1: input = 1 << 32 + 1000.
  EXPECT_EQ(
      row(db,
          "acctsessiontime || ',' || acctinterval || ',' || acctupdatetime || ',' || acctstarttime || ',' || "
          "acctinputoctets || ',' || acctoutputoctets || ',' || framedipaddress",
          "s1"),
      "60,60,1700000060,1700000000,4294968296,5,192.0.2.9");
}

TEST(Radacct, InterimWithoutStartInsertsTheSession) {
  SqliteDatabase db;
  db.migrate();
  db.apply(record(status::kInterimUpdate, "s1", kT0, Attributes().u32(attr::kAcctSessionTime, 30)));
  EXPECT_EQ(row(db, "acctstarttime || ',' || acctsessiontime || ',' || ifnull(acctstoptime, 'open')", "s1"),
            "1700000000,30,open");
}

TEST(Radacct, StopClosesTheRowWithItsTerminateCause) {
  SqliteDatabase db;
  db.migrate();
  db.apply(record(status::kStart, "s1", kT0));
  db.apply(record(status::kStop, "s1", kT0 + 90,
                  Attributes()
                      .u32(attr::kAcctSessionTime, 90)
                      .u32(attr::kAcctOutputOctets, 777)
                      .u32(attr::kAcctTerminateCause, 1)
                      .text(attr::kConnectInfo, "1Gb")));
  EXPECT_EQ(
      row(db,
          "acctstoptime || ',' || acctsessiontime || ',' || acctoutputoctets || ',' || acctterminatecause "
          "|| ',' || connectinfo_stop",
          "s1"),
      "1700000090,90,777,User-Request,1Gb");
  // An Interim-Update after the Stop leaves the closed row alone.
  db.apply(record(status::kInterimUpdate, "s1", kT0 + 120, Attributes().u32(attr::kAcctSessionTime, 120)));
  EXPECT_EQ(row(db, "acctsessiontime || ',' || acctstoptime", "s1"), "90,1700000090");
}

TEST(Radacct, StopWithoutStartInsertsAClosedRowStartedSessionTimeEarlier) {
  SqliteDatabase db;
  db.migrate();
  db.apply(record(status::kStop, "s1", kT0 + 100,
                  Attributes().u32(attr::kAcctSessionTime, 40).u32(attr::kAcctTerminateCause, 4)));
  EXPECT_EQ(
      row(db, "acctstarttime || ',' || acctstoptime || ',' || acctsessiontime || ',' || acctterminatecause",
          "s1"),
      "1700000060,1700000100,40,Idle-Timeout");
}

TEST(Radacct, AccountingOnAndOffCloseThatNasOpenSessions) {
  SqliteDatabase db;
  db.migrate();
  db.apply(record(status::kStart, "a", kT0, {}, 1));
  db.apply(record(status::kStart, "b", kT0 + 10, {}, 1));
  db.apply(record(status::kStart, "c", kT0, {}, 2));
  db.apply(record(status::kStart, "late", kT0 + 500, {}, 1));  // after the reboot: stays open
  db.apply(record(status::kAccountingOn, "on", kT0 + 100, {}, 1));
  EXPECT_EQ(
      db.query(
          "SELECT acctsessionid || ',' || ifnull(acctstoptime, 'open') || ',' || ifnull(acctsessiontime, '') "
          "|| ',' || acctterminatecause FROM radacct ORDER BY acctsessionid"),
      "a,1700000100,100,NAS-Reboot|b,1700000100,90,NAS-Reboot|c,open,0,|late,open,0,");
  db.apply(
      record(status::kAccountingOff, "off", kT0 + 600, Attributes().u32(attr::kAcctTerminateCause, 6), 2));
  EXPECT_EQ(row(db, "acctterminatecause || ',' || acctstoptime", "c"), "Admin-Reset,1700000600");
  EXPECT_EQ(row(db, "ifnull(acctstoptime, 'open')", "late"), "open");
}

TEST(Radacct, BatchLogsEveryRecordWithItsAttributesAsJson) {
  SqliteDatabase db;
  db.migrate();
  std::vector<HeldRecord> batch = {{5, record(status::kStart, "s1", kT0)},
                                   {6, record(status::kInterimUpdate, "s1", kT0 + 1)},
                                   {9, record(15, "s1", kT0 + 2)},              // Failed: log only
                                   {9, record(status::kStop, "s1", kT0 + 3)}};  // same entry
  db.exec(batch_sql(Dialect::kSqlite, batch, SqliteDatabase::dictionary()));
  EXPECT_EQ(
      db.query("SELECT log_index || ':' || status_type FROM radiusward_accounting_log ORDER BY log_index, "
               "entry_position"),
      "5:1|6:3|9:15|9:2");
  EXPECT_EQ(db.query("SELECT record_key FROM radiusward_accounting_log WHERE log_index = 5"),
            batch[0].record.key.hex());
  EXPECT_EQ(db.query("SELECT json_extract(attributes, '$.\"User-Name\"') || ',' || "
                     "json_extract(attributes, '$.\"Acct-Status-Type\"') FROM radiusward_accounting_log "
                     "WHERE log_index = 6"),
            "bob,Interim-Update");
  EXPECT_EQ(db.query("SELECT count(*) FROM radacct"), "1");
  // The same record again (its key already logged) adds no log row; the
  // same position with another record fails instead of duplicating.
  EXPECT_EQ(db.try_exec(batch_sql(Dialect::kSqlite, std::span(batch).first(1), SqliteDatabase::dictionary())),
            SQLITE_OK);
  EXPECT_EQ(db.query("SELECT count(*) FROM radiusward_accounting_log"), "4");
  std::vector<HeldRecord> other = {{5, record(status::kStart, "s2", kT0)}};
  EXPECT_NE(db.try_exec(batch_sql(Dialect::kSqlite, other, SqliteDatabase::dictionary())), SQLITE_OK);
}

// The fields of each COPY row of `rows` (tab-separated, newline-ended).
std::vector<std::vector<std::string>> copy_fields(const std::string& rows) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(rows);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    out.push_back(fields);
  }
  return out;
}

TEST(LogCopyRows, RowsAreTheLogInsertsValuesInCopyText) {
  std::vector<HeldRecord> batch = {{5, record(status::kStart, "s1", kT0)},
                                   {9, record(15, "s1", kT0 + 2)},
                                   {9, record(status::kStop, "s1", kT0 + 3)}};
  batch[1].record.received_unix_ms = kT0 * 1000 + 123;
  const std::optional<std::string> rows = log_copy_rows(batch, SqliteDatabase::dictionary());
  ASSERT_TRUE(rows.has_value());
  const auto fields = copy_fields(*rows);
  ASSERT_EQ(fields.size(), 3u);
  const Record& failed = batch[1].record;
  EXPECT_EQ(fields[1],
            (std::vector<std::string>{"9", "0", failed.key.hex(), "15", "nas1", "2023-11-14 22:13:20.123+00",
                                      "2023-11-14 22:13:22.000+00", failed.session.hex(),
                                      attributes_json(failed, SqliteDatabase::dictionary())}));
  EXPECT_EQ(fields[2][1], "1");  // its position in entry 9
  EXPECT_EQ(fields[0][0] + ":" + fields[0][1], "5:0");
}

TEST(LogCopyRows, KnownAndRepeatedKeysAddNoRow) {
  const Record start = record(status::kStart, "s1", kT0);
  const Record stop = record(status::kStop, "s1", kT0 + 3);
  std::vector<HeldRecord> batch = {{5, start}, {6, stop}, {7, start}};
  const auto fields = copy_fields(*log_copy_rows(batch, SqliteDatabase::dictionary(), {stop.key.hex()}));
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0][0], "5");
}

TEST(LogCopyRows, TextIsNormalisedAndEscapedForCopy) {
  Record r = record(status::kStart, "s1", kT0,
                    Attributes().text(attr::kNasIdentifier, std::string("a\tb\\c\0d\xff\n", 9)));
  r.client = std::string("n\ta\rs\n\\1\0\xc3", 10);
  const std::vector<HeldRecord> batch = {{5, r}};
  const std::string rows = *log_copy_rows(batch, SqliteDatabase::dictionary());
  // One line: every tab, newline and carriage return inside a value is escaped.
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 1);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\t'), 8);
  // NUL and the bytes of no well-formed sequence are U+FFFD; backslashes doubled.
  EXPECT_EQ(copy_fields(rows)[0][4], "n\\ta\\rs\\n\\\\1\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(rows.find('\0'), std::string::npos);
  // The attributes' JSON escapes the tab, backslash and newline itself
  // (\t \\ \n), and COPY doubles each of its backslashes.
  const std::string json = attributes_json(r, SqliteDatabase::dictionary());
  EXPECT_NE(json.find("\"a\\tb\\\\c\xef\xbf\xbd"
                      "d\xef\xbf\xbd\\n\""),
            std::string::npos)
      << json;
  std::string doubled;
  for (const char c : json) doubled += c == '\\' ? std::string("\\\\") : std::string(1, c);
  EXPECT_EQ(copy_fields(rows)[0][8], doubled);
}

TEST(LogCopyRows, TimesAreUtcInstantsAndOnlyYearsOneToNineThousandNineHundredNinetyNine) {
  std::vector<HeldRecord> batch = {{5, record(status::kStart, "s1", kT0)}};
  batch[0].record.received_unix_ms = -1;
  batch[0].record.event_unix_ms = -62'135'596'800'000;  // 0001-01-01
  auto fields = copy_fields(*log_copy_rows(batch, SqliteDatabase::dictionary()));
  EXPECT_EQ(fields[0][5], "1969-12-31 23:59:59.999+00");
  EXPECT_EQ(fields[0][6], "0001-01-01 00:00:00.000+00");
  batch[0].record.event_unix_ms = 253'402'300'799'999;  // 9999-12-31 23:59:59.999
  fields = copy_fields(*log_copy_rows(batch, SqliteDatabase::dictionary()));
  EXPECT_EQ(fields[0][6], "9999-12-31 23:59:59.999+00");
  batch[0].record.event_unix_ms = 253'402'300'800'000;  // year 10000: by INSERT instead
  EXPECT_FALSE(log_copy_rows(batch, SqliteDatabase::dictionary()).has_value());
  batch[0].record.event_unix_ms = -62'135'596'800'001;
  EXPECT_FALSE(log_copy_rows(batch, SqliteDatabase::dictionary()).has_value());
}

TEST(Radacct, TheLogInsertCanBeLeftToCopy) {
  const std::vector<HeldRecord> batch = {{5, record(status::kStart, "s1", kT0)}};
  const std::string sql =
      batch_sql(Dialect::kPostgres, batch, SqliteDatabase::dictionary(), {}, 0, LogRows::kByCopy);
  EXPECT_EQ(sql.find("radiusward_accounting_log"), std::string::npos) << sql;
  EXPECT_NE(sql.find("INSERT INTO radacct"), std::string::npos) << sql;
}

TEST(Radacct, AKnownKeyTouchesNeitherTheLogNorRadacct) {
  SqliteDatabase db;
  db.migrate();
  const Record start = record(status::kStart, "k1", kT0);
  const Record interim =
      record(status::kInterimUpdate, "k1", kT0 + 60, Attributes().u32(attr::kAcctSessionTime, 60));
  const Record later =
      record(status::kInterimUpdate, "k1", kT0 + 120, Attributes().u32(attr::kAcctSessionTime, 120));
  db.exec(batch_sql(Dialect::kSqlite, std::vector<HeldRecord>{{1, start}, {2, interim}, {3, later}},
                    SqliteDatabase::dictionary()));
  // `interim` again, in a later batch, and twice within one batch.
  db.exec(batch_sql(Dialect::kSqlite, std::vector<HeldRecord>{{7, interim}, {7, later}},
                    SqliteDatabase::dictionary(), KnownKeys{interim.key.hex(), later.key.hex()}));
  const Record other = record(status::kStart, "k2", kT0);
  db.exec(batch_sql(Dialect::kSqlite, std::vector<HeldRecord>{{8, other}, {9, other}},
                    SqliteDatabase::dictionary()));
  EXPECT_EQ(row(db, "acctsessiontime", "k1"), "120");
  EXPECT_EQ(
      db.query("SELECT log_index || ':' || entry_position FROM radiusward_accounting_log ORDER BY log_index"),
      "1:0|2:0|3:0|8:0");
}

std::size_t count_of(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Radacct, BatchGroupsRowsIntoOneStatementPerStatusType) {
  std::vector<HeldRecord> batch;
  for (int i = 0; i < 100; ++i)
    batch.push_back(
        {static_cast<std::uint64_t>(i + 1), record(status::kStart, "s" + std::to_string(i), kT0 + i)});
  for (int i = 0; i < 50; ++i)
    batch.push_back(
        {static_cast<std::uint64_t>(i + 101), record(status::kStop, "s" + std::to_string(i), kT0 + 200 + i)});
  const std::string sql = batch_sql(Dialect::kSqlite, batch, SqliteDatabase::dictionary());
  EXPECT_EQ(count_of(sql, "INSERT INTO radacct"), 2u);  // the sessions left open, then the Start+Stop folds
  SqliteDatabase db;
  db.migrate();
  db.exec(sql);
  EXPECT_EQ(db.query("SELECT count(*) FROM radacct WHERE acctstoptime IS NULL"), "50");
}

// The regrouped batch must leave radacct exactly as running every record's
// own statement in log order would: many records per session (the same
// session several times in one batch), Stops without Start, records after a
// Stop, Accounting-On/Off of either NAS in between, Failed records.
TEST(Radacct, BatchEndsInTheSameRowsAsOneStatementPerRecord) {
  std::mt19937 random(20261130);  // fixed: the test is deterministic
  const std::uint32_t kinds[] = {
      status::kStart, status::kStart,        status::kInterimUpdate, status::kInterimUpdate,
      status::kStop,  status::kAccountingOn, status::kAccountingOff, 15};
  std::vector<HeldRecord> records;
  for (int i = 0; i < 600; ++i) {
    std::uint32_t kind = kinds[random() % std::size(kinds)];
    if ((kind == status::kAccountingOn || kind == status::kAccountingOff) && random() % 4 != 0)
      kind = status::kInterimUpdate;  // rarer, so that sessions live long enough to matter
    Attributes extra;
    if (random() % 3 != 0) extra.u32(attr::kAcctSessionTime, static_cast<std::uint32_t>(random() % 500));
    extra.u32(attr::kAcctInputOctets, static_cast<std::uint32_t>(random()));
    if (random() % 2 == 0)
      extra.ip(attr::kFramedIpAddress, 192, 0, 2, static_cast<std::uint8_t>(random() % 200));
    if (random() % 4 == 0) extra.text(attr::kConnectInfo, "CONNECT " + std::to_string(random() % 100));
    if (kind == status::kStop && random() % 2 == 0) extra.u32(attr::kAcctTerminateCause, 1 + random() % 6);
    const std::uint8_t nas = static_cast<std::uint8_t>(1 + random() % 2);
    // Log indices rise; a few records share an entry (one index).
    const std::uint64_t index = records.empty() ? 1 : records.back().index + (random() % 3 == 0 ? 0 : 1);
    records.push_back({index, record(kind, "s" + std::to_string(random() % 12), kT0 + i, extra, nas)});
  }
  SqliteDatabase one_by_one;
  one_by_one.migrate();
  for (const HeldRecord& held : records) one_by_one.apply(held.record);
  for (std::size_t batch_size : {1u, 7u, 64u, 600u}) {
    SqliteDatabase batched;
    batched.migrate();
    // Batches of whole entries (batch_sql's precondition), about batch_size records.
    for (std::size_t first = 0, end = 0; first < records.size(); first = end) {
      end = std::min(first + batch_size, records.size());
      while (end < records.size() && records[end].index == records[end - 1].index) ++end;
      batched.exec(batch_sql(Dialect::kSqlite, std::span(records).subspan(first, end - first),
                             SqliteDatabase::dictionary()));
    }
    EXPECT_EQ(batched.dump_radacct(), one_by_one.dump_radacct()) << "batches of " << batch_size;
  }
  EXPECT_NE(one_by_one.query("SELECT count(*) FROM radacct WHERE acctinterval IS NOT NULL"), "0");
  EXPECT_NE(one_by_one.query("SELECT count(*) FROM radacct WHERE acctterminatecause = 'NAS-Reboot'"), "0");
}

// The records a fold meets (Fold in radacct.cc): 0 Start, 1 Interim-Update,
// 2 Stop, 3 Stop without Acct-Session-Time; counters, Framed-IP-Address,
// Connect-Info and terminate cause differ by record, so that a value taken
// from the wrong record shows.
Record fold_record(int kind, const std::string& session, std::int64_t event_s) {
  static constexpr std::uint32_t kTypes[] = {status::kStart, status::kInterimUpdate, status::kStop,
                                             status::kStop};
  const auto salt = static_cast<std::uint32_t>(event_s - kT0);
  Attributes extra;
  if (kind != 3) extra.u32(attr::kAcctSessionTime, salt * 3 + 1);
  extra.u32(attr::kAcctInputOctets, salt * 1000 + 7).u32(attr::kAcctOutputOctets, salt * 2000 + 9);
  extra.ip(attr::kFramedIpAddress, 192, 0, 2, static_cast<std::uint8_t>(salt));
  extra.text(attr::kConnectInfo, "CONNECT " + std::to_string(salt));
  if (kind >= 2) extra.u32(attr::kAcctTerminateCause, 1 + salt % 6);
  return record(kTypes[kind], session, event_s, extra);
}

// The row a session starts from before the batch: 0 none, 1 open (a Start),
// 2 open and updated since (Start, Interim-Update), 3 closed.
void start_from(SqliteDatabase& db, int state, const std::string& session) {
  if (state >= 1) db.apply(fold_record(0, session, kT0 + 10));
  if (state == 2) db.apply(fold_record(1, session, kT0 + 50));
  if (state == 3) db.apply(fold_record(2, session, kT0 + 60));
}

// Every sequence of up to four records of one session (Start, Interim-Update,
// Stop with and without Acct-Session-Time, in and out of order, repeated,
// with event times out of order too) on every starting state, exported in
// one batch (folded), leaves the row that one statement per record in log
// order leaves, column for column.
TEST(Fold, EverySequenceOfUpToFourRecordsOnEveryStartingStateEndsAsTheRecordsInOrder) {
  static constexpr std::int64_t kTimes[] = {kT0 + 100, kT0 + 130, kT0 + 115, kT0 + 160};
  SqliteDatabase folded;
  SqliteDatabase one_by_one;
  folded.migrate();
  one_by_one.migrate();
  std::uint64_t index = 0;
  int cases = 0;
  for (int length = 1; length <= 4; ++length) {
    for (int code = 0; code < 1 << (2 * length); ++code) {
      for (int state = 0; state < 4; ++state, ++cases) {
        const std::string session = "f" + std::to_string(cases);
        std::string kinds;
        std::vector<HeldRecord> batch;
        for (int j = 0; j < length; ++j) {
          const int kind = code >> (2 * j) & 3;
          kinds += std::to_string(kind);
          batch.push_back({++index, fold_record(kind, session, kTimes[j])});
        }
        start_from(folded, state, session);
        start_from(one_by_one, state, session);
        for (const HeldRecord& held : batch) one_by_one.apply(held.record);
        folded.exec(batch_sql(Dialect::kSqlite, batch, SqliteDatabase::dictionary()));
        const std::string where = "acctsessionid = '" + session + "'";
        ASSERT_EQ(folded.dump_radacct(where), one_by_one.dump_radacct(where))
            << "records " << kinds << " (0 Start, 1 Interim, 2 Stop, 3 Stop without time) from state "
            << state;
      }
    }
  }
  EXPECT_EQ(cases, 4 * (4 + 16 + 64 + 256));
}

TEST(Fold, AStartInterimAndStopOfOneSessionAreOneRadacctRow) {
  const std::vector<HeldRecord> batch = {{1, fold_record(0, "one", kT0 + 100)},
                                         {2, fold_record(1, "one", kT0 + 130)},
                                         {3, fold_record(2, "one", kT0 + 160)}};
  const std::string sql = batch_sql(Dialect::kSqlite, batch, SqliteDatabase::dictionary());
  EXPECT_EQ(count_of(sql, "INSERT INTO radacct"), 1u);
  EXPECT_EQ(count_of(sql, "'one'"), 1u);  // one row: the session id once
  const std::optional<RadacctCopy> copy = radacct_copy(batch, SqliteDatabase::dictionary());
  ASSERT_TRUE(copy);
  EXPECT_EQ(count_of(copy->rows, "\n"), 1u);
  EXPECT_EQ(count_of(copy->sql, "INSERT INTO radacct"), 1u);
  SqliteDatabase db;
  db.migrate();
  db.exec(sql);
  // The Interim-Update's interval, the Stop's counters and Connect-Info, the Start's.
  EXPECT_EQ(
      row(db, "acctinterval || ',' || acctinputoctets || ',' || connectinfo_start || ',' || connectinfo_stop",
          "one"),
      "30,160007,CONNECT 100,CONNECT 160");
}

TEST(Fold, RecordsAfterAStopAddNoRow) {
  const std::vector<HeldRecord> batch = {{1, fold_record(2, "late", kT0 + 100)},
                                         {2, fold_record(0, "late", kT0 + 130)},
                                         {3, fold_record(1, "late", kT0 + 160)}};
  const std::optional<RadacctCopy> copy = radacct_copy(batch, SqliteDatabase::dictionary());
  ASSERT_TRUE(copy);
  EXPECT_EQ(count_of(copy->rows, "\n"), 1u);
}

// An Interim-Update before its session's Start: the Interim-Update's
// interval on an open row needs its own time, which the Start replaces in
// the folded row, so the Start begins a second fold in the next statement.
TEST(Fold, AStartAfterAnInterimUpdateBeginsASecondFold) {
  const std::vector<HeldRecord> batch = {{1, fold_record(1, "ooo", kT0 + 100)},
                                         {2, fold_record(0, "ooo", kT0 + 130)},
                                         {3, fold_record(2, "ooo", kT0 + 160)}};
  const std::optional<RadacctCopy> copy = radacct_copy(batch, SqliteDatabase::dictionary());
  ASSERT_TRUE(copy);
  EXPECT_EQ(count_of(copy->rows, "\n"), 2u);
  EXPECT_EQ(count_of(copy->sql, "INSERT INTO radacct"), 2u);
}

// Sessions of one fold shape share a statement: a hundred sessions'
// Start, Interim-Update and Stop are one statement of a hundred rows.
TEST(Fold, SessionsOfOneShapeShareAStatement) {
  std::vector<HeldRecord> batch;
  for (int kind : {0, 1, 2})
    for (int i = 0; i < 100; ++i)
      batch.push_back({batch.size() + 1, fold_record(kind, "s" + std::to_string(i), kT0 + 100 + kind * 30)});
  const std::optional<RadacctCopy> copy = radacct_copy(batch, SqliteDatabase::dictionary());
  ASSERT_TRUE(copy);
  EXPECT_EQ(count_of(copy->rows, "\n"), 100u);
  EXPECT_EQ(count_of(copy->sql, "INSERT INTO radacct"), 1u);
}

TEST(Radacct, CursorStartsAtZeroAndMoves) {
  SqliteDatabase db;
  db.migrate();
  EXPECT_EQ(db.query(cursor_select_sql(Dialect::kSqlite, true)), "0");
  db.exec(cursor_update_sql(42));
  EXPECT_EQ(db.query(cursor_select_sql(Dialect::kSqlite, true)), "42");
}

TEST(Radacct, QuoteDoublesQuotesAndRepairsUtf8) {
  EXPECT_EQ(quote("o'brien"), "'o''brien'");
  EXPECT_EQ(quote("caf\xc3\xa9"), "'caf\xc3\xa9'");
  EXPECT_EQ(quote(std::string("a\0b", 3)),
            "'a\xef\xbf\xbd"
            "b'");
  EXPECT_EQ(quote("\xff\xc3"), "'\xef\xbf\xbd\xef\xbf\xbd'");
  EXPECT_EQ(quote("\xed\xa0\x80"), "'\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd'");  // a surrogate
}

TEST(Radacct, MigrationsApplyOverFreeradiusSqliteSchema) {
  const std::string path = "/etc/freeradius/3.0/mods-config/sql/main/sqlite/schema.sql";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << path << " absent (freeradius-config not installed)";
  std::stringstream text;
  text << in.rdbuf();
  SqliteDatabase db;
  db.exec(text.str());
  db.migrate();
  db.apply(record(status::kStart, "s1", kT0));
  db.apply(record(status::kStop, "s1", kT0 + 5, Attributes().u32(attr::kAcctTerminateCause, 1)));
  EXPECT_EQ(row(db, "acctstoptime || ',' || acctsessiontime || ',' || acctterminatecause", "s1"),
            "1700000005,5,User-Request");
  // FreeRADIUS's table (with its class column) is the one written.
  EXPECT_EQ(db.query("SELECT count(*) FROM pragma_table_info('radacct') WHERE name = 'class'"), "1");
}

TEST(Normalisation, AddressesOnlyWhenWellFormed) {
  Attributes a;
  a.ip(attr::kFramedIpAddress, 192, 0, 2, 1);
  a.text(attr::kNasIpv6Address, std::string("\x20\x01\x0d\xb8", 4));  // 4 of 16 octets
  a.text(attr::kFramedIpv6Prefix, std::string("\x00\x30\x20\x01\x0d\xb8\x00\x01", 8));
  a.text(123, std::string("\x00\x81", 2));  // Delegated-IPv6-Prefix, length 129
  const Record r = record(status::kStart, "a1", kT0, a);
  EXPECT_EQ(address_of(r, attr::kFramedIpAddress), std::optional<std::string>("192.0.2.1"));
  EXPECT_EQ(address_of(r, attr::kNasIpAddress), std::optional<std::string>("10.0.0.1"));
  EXPECT_FALSE(address_of(r, attr::kNasIpv6Address).has_value());
  EXPECT_EQ(address_of(r, attr::kFramedIpv6Prefix), std::optional<std::string>("2001:db8:1::/48"));
  EXPECT_FALSE(address_of(r, 123).has_value());
  EXPECT_FALSE(address_of(r, 168).has_value());  // absent
}

TEST(Normalisation, CountersAreClampedToBigint) {
  EXPECT_EQ(counter_of(0, 7), 7u);
  EXPECT_EQ(counter_of(1, 7), (1ull << 32) + 7);
  EXPECT_EQ(counter_of(0x7FFFFFFF, 0xFFFFFFFF), kCounterMax);
  EXPECT_EQ(counter_of(0x80000000, 0), kCounterMax);
  EXPECT_EQ(counter_of(0xFFFFFFFF, 0xFFFFFFFF), kCounterMax);
}

TEST(Normalisation, NoNulReachesTheLogTable) {
  Attributes a;
  a.text(attr::kCallingStationId, std::string("ab\0c", 4));
  const std::string json =
      attributes_json(record(status::kStart, "n1", kT0, a), *radius::Dictionary::builtin());
  EXPECT_EQ(json.find("\\u0000"), std::string::npos) << json;
  EXPECT_NE(json.find("ab\xef\xbf\xbd"
                      "c"),
            std::string::npos)
      << json;
  EXPECT_EQ(quote(std::string("x\0y", 3)), "'x\xef\xbf\xbdy'");
}

// What attributes_json wrote before it wrote JSON itself: the JSON library's
// object of the described attributes (a repeated name an array at its first
// place), dumped compactly with invalid UTF-8 replaced. The reference for
// text that is valid UTF-8 without NUL.
std::string library_json(const Record& r, const radius::Dictionary& dictionary) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (auto& [name, value] : accounting::describe(r, dictionary)) {
    auto it = object.find(name);
    if (it == object.end()) {
      object[name] = value;
    } else {
      if (!it->is_array()) *it = nlohmann::ordered_json::array({*it});
      it->push_back(value);
    }
  }
  return object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

TEST(AttributesJson, WritesWhatTheJsonLibraryWrote) {
  // Seeded records of text attributes drawn from pieces that need every
  // kind of escape (quotes, backslashes, control characters but NUL,
  // multi-byte characters, DEL), with repeated, enumerated, integer,
  // address, unknown and vendor attributes among them.
  static const std::vector<std::string> kPieces = {
      "a",  "Z",  "0",  " ",    "\"",   "\\",   "/",        "\b",           "\f",
      "\n", "\r", "\t", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
      "'",  "{",  "}",  "[",    "]",    ":",    ",",        "\\u0041"};
  static const std::uint8_t kTextTypes[] = {attr::kUserName, attr::kCallingStationId, attr::kAcctSessionId,
                                            attr::kClass};
  std::mt19937 random(20261205);
  const radius::Dictionary& dictionary = *radius::Dictionary::builtin();
  for (int round = 0; round < 2000; ++round) {
    Attributes a;
    const int count = static_cast<int>(random() % 12);
    for (int i = 0; i < count; ++i) {
      std::string value;
      const int pieces = static_cast<int>(random() % 8);
      for (int k = 0; k < pieces; ++k) value += kPieces[random() % kPieces.size()];
      value = value.substr(0, 250);
      switch (random() % 6) {
        case 0:
        case 1:
          a.text(kTextTypes[random() % std::size(kTextTypes)], value);
          break;
        case 2:
          a.u32(attr::kAcctStatusType, static_cast<std::uint32_t>(random() % 20));
          break;
        case 3:
          a.ip(attr::kFramedIpAddress, 10, 1, static_cast<std::uint8_t>(random()), 4);
          break;
        case 4:
          a.text(static_cast<std::uint8_t>(200 + random() % 40), value);  // unknown: hex
          break;
        default: {
          // Vendor-Specific: Cisco (9) AVPair, or a vendor no dictionary names.
          const std::uint32_t vendor = random() % 2 == 0 ? 9 : 65000;
          std::string vsa = {static_cast<char>(vendor >> 24), static_cast<char>(vendor >> 16),
                             static_cast<char>(vendor >> 8), static_cast<char>(vendor)};
          const std::string body = value.substr(0, 200);
          vsa += static_cast<char>(1);
          vsa += static_cast<char>(body.size() + 2);
          vsa += body;
          a.text(attr::kVendorSpecific, vsa);
        }
      }
    }
    const Record r = record(status::kInterimUpdate, "s" + std::to_string(round), kT0, a);
    ASSERT_EQ(attributes_json(r, dictionary), library_json(r, dictionary)) << "round " << round;
  }
}

TEST(AttributesJson, InvalidUtf8AndNulBecomeReplacementCharactersInValidJson) {
  Attributes a;
  a.text(attr::kUserName, std::string("a\xff"
                                      "b\xe2\x82"
                                      "\0c",
                                      7));
  const std::string json =
      attributes_json(record(status::kStart, "n1", kT0, a), *radius::Dictionary::builtin());
  // Each byte of no well-formed sequence, and the NUL, is one U+FFFD, as in
  // every other text the exporter writes (quote, COPY fields).
  EXPECT_NE(json.find("\"User-Name\":[\"bob\",\"a\xef\xbf\xbd"
                      "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                      "c\"]"),
            std::string::npos)
      << json;
  EXPECT_TRUE(nlohmann::json::accept(json)) << json;
}

TEST(AttributesJson, AThousandAttributesOfOneNameAreOneArrayInWireOrder) {
  // A NAS may send a packet of a thousand small attributes; each name is
  // still one key, its values in wire order.
  Attributes a;
  for (int i = 0; i < 1000; ++i)
    a.text(i % 2 == 0 ? attr::kClass : attr::kCallingStationId, std::to_string(i));
  const nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(
      attributes_json(record(status::kStart, "n1", kT0, a), *radius::Dictionary::builtin()));
  ASSERT_EQ(parsed["Class"].size(), 500u);
  ASSERT_EQ(parsed["Calling-Station-Id"].size(), 500u);
  EXPECT_EQ(parsed["Calling-Station-Id"][0], "1");
  EXPECT_EQ(parsed["Calling-Station-Id"][499], "999");
  EXPECT_EQ(parsed["Class"][1], "0x32");  // octets, as hex
  // The first attribute's name comes first, as in the packet.
  EXPECT_EQ(parsed.begin().key(), "Acct-Status-Type");
}

// What the timestamp text was before it was written digit by digit:
// gmtime_r and printf.
std::string gmtime_timestamp(std::int64_t unix_ms) {
  const std::int64_t ms = (unix_ms % 1000 + 1000) % 1000;  // the milliseconds after the floor second
  const auto time = static_cast<std::time_t>((unix_ms - ms) / 1000);
  std::tm utc{};
  EXPECT_NE(gmtime_r(&time, &utc), nullptr);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d.%03d+00", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms));
  return text;
}

TEST(CopyTimestamp, WritesWhatGmtimeGivesFromYearOneTo9999) {
  const std::int64_t first = -62'135'596'800'000;  // 0001-01-01 00:00:00.000
  const std::int64_t last = 253'402'300'799'999;   // 9999-12-31 23:59:59.999
  std::vector<std::int64_t> instants = {first,
                                        last,
                                        -1,
                                        0,
                                        1,
                                        999,
                                        1000,
                                        -999,
                                        -1000,
                                        -1001,
                                        951'782'400'000,     // 2000-02-29
                                        951'868'799'999,     // its last millisecond
                                        -2'203'891'200'000,  // 1900-03-01 (1900 no leap year)
                                        4'107'542'400'000,   // 2100-03-01
                                        1'700'000'000'123};
  std::mt19937_64 random(20261205);
  for (int i = 0; i < 200'000; ++i)
    instants.push_back(first +
                       static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(last - first + 1)));
  for (const std::int64_t ms : instants) {
    std::string out = "x";
    ASSERT_TRUE(append_copy_timestamp(out, ms)) << ms;
    ASSERT_EQ(out, "x" + gmtime_timestamp(ms)) << ms;
  }
  for (const std::int64_t ms : {first - 1, last + 1, INT64_MIN, INT64_MAX}) {
    std::string out = "x";
    EXPECT_FALSE(append_copy_timestamp(out, ms)) << ms;
    EXPECT_EQ(out, "x");
  }
}

}  // namespace
}  // namespace rw::exporter
