// Tests of the export mapping: the SQL it makes runs on a real (in-memory)
// SQLite, and the rows must follow FreeRADIUS 3.2's default queries for
// Start, Interim-Update, Stop and Accounting-On/Off (queries.conf), keep
// every record in the log table, and apply unchanged to a database made by
// FreeRADIUS's own SQLite schema.sql. PostgreSQL runs the same mapping in
// src/io/sql_export_sink_test.cc.
#include "exporter/radacct.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
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
  // Exporting the same log index twice fails instead of duplicating.
  EXPECT_NE(db.try_exec(batch_sql(Dialect::kSqlite, std::span(batch).first(1), SqliteDatabase::dictionary())),
            SQLITE_OK);
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

}  // namespace
}  // namespace rw::exporter
