// The export mapping (docs/design.md invariant 3): accounting records -> SQL, pure.
// Writes FreeRADIUS 3.2's `radacct` with the column set and semantics its
// default PostgreSQL queries (mods-config/sql/main/postgresql/queries.conf)
// give it, an append-only log of every record, and a one-row export cursor;
// plus radiusward's own versioned schema migrations. The same text serves
// PostgreSQL and SQLite (3.24+ for ON CONFLICT), differing only where the
// two dialects do (timestamps, inet). Semantics in docs/accounting.md
// "Export to SQL"; the sinks that run this SQL live in src/member_shell/sql_export_sink.h.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/ledger.h"
#include "radius/dictionary.h"

namespace rw::exporter {

enum class Dialect : std::uint8_t { kPostgres, kSqlite };

// radiusward's own tables (FreeRADIUS's radacct is shared with its tools).
inline constexpr std::string_view kLogTable = "radiusward_accounting_log";
inline constexpr std::string_view kCursorTable = "radiusward_export_cursor";
inline constexpr std::string_view kSchemaTable = "radiusward_schema_version";
// Records the database refused even after normalisation, with its error
// (docs/accounting.md "Export to SQL", Quarantine).
inline constexpr std::string_view kQuarantineTable = "radiusward_quarantine";

// radacct's counters are `bigint`: Gigawords x 2^32 + Octets is clamped to
// this (a NAS sending Gigawords >= 2^31 would overflow it).
inline constexpr std::uint64_t kCounterMax = 9'223'372'036'854'775'807ull;

// Record keys (hex) already in the log table: a record re-sent after the
// de-duplication window forgot its key. The log insert skips them and
// radacct is not touched for them (docs/accounting.md "Export to SQL", Re-sent records).
using KnownKeys = std::set<std::string>;

// One schema step: applied once, in version order, each in its own
// transaction together with the row recording its version.
struct Migration {
  int version = 0;
  std::string sql;  // one or more statements separated by ';'
};

// Creates the schema-version table if absent (idempotent, run first).
[[nodiscard]] std::string schema_table_sql(Dialect dialect);
// Every migration, ascending. Version 1 creates radacct exactly as
// FreeRADIUS's schema.sql does, but only if absent (so a database made by
// FreeRADIUS works unchanged), the log table and the cursor row (at 0).
// Version 2 creates the quarantine table.
[[nodiscard]] const std::vector<Migration>& migrations(Dialect dialect);

// Reads the cursor. With `lock_row`, inside the batch's transaction: on
// PostgreSQL the row is locked (FOR UPDATE), so that two exporters
// serialise and the second sees the first's cursor; SQLite's BEGIN
// IMMEDIATE already serialises writers.
[[nodiscard]] std::string cursor_select_sql(Dialect dialect, bool lock_row);
// Moves the cursor to `exported_through`.
[[nodiscard]] std::string cursor_update_sql(std::uint64_t exported_through);

// The query listing which of `records`' keys the log table already holds
// (one text column, record_key); run inside the batch's transaction.
[[nodiscard]] std::string known_keys_sql(std::span<const accounting::HeldRecord> records);

// Log retention (docs/accounting.md "Keeping the log table bounded"): the
// statement that deletes, of the first `rows_max` log rows in log order (the
// primary key, so the scan is bounded whatever the table holds), those
// received before `before_unix_ms`. On PostgreSQL it returns one row, the
// count deleted; on SQLite it returns nothing (read changes()). A row whose
// receive time lies ahead of the others (a gateway's clock) is left and
// passed over: the next round's window starts after the rows deleted.
[[nodiscard]] std::string prune_log_sql(Dialect dialect, std::int64_t before_unix_ms, std::size_t rows_max);

// Each record's position in its log entry (records of one index are
// consecutive; `first_position` is the first record's).
[[nodiscard]] std::vector<std::size_t> entry_positions(std::span<const accounting::HeldRecord> records,
                                                       std::size_t first_position = 0);

// The statements that export `records` (log order, all above the cursor,
// whole entries: every record of a log index or none, unless
// `first_position` says where in its entry the first record stands):
// one multi-row insert into the log table, then radacct's statements as
// multi-row inserts, each session's records between two Accounting-On/Off
// folded into one row (one write per session, Accounting-On/Off where
// they stand), with the effect of running each record's radacct_sql in
// log order on every starting state of the row (docs/accounting.md
// "Export to SQL", Statements). No transaction control, no cursor:
// the sink wraps them. Empty input gives empty text. A record whose key is
// in `known` or earlier in the batch adds no log row (ON CONFLICT
// (record_key) DO NOTHING) and no radacct statement.
//
// LogRows::kByCopy leaves the log insert out: the PostgreSQL sink sends
// those rows by COPY (log_copy_rows), which costs the server a third of the
// INSERT (docs/accounting.md "Export throughput").
enum class LogRows : std::uint8_t { kInsert, kByCopy };
[[nodiscard]] std::string batch_sql(Dialect dialect, std::span<const accounting::HeldRecord> records,
                                    const radius::Dictionary& dictionary, const KnownKeys& known = {},
                                    std::size_t first_position = 0, LogRows log_rows = LogRows::kInsert);

// PostgreSQL's COPY of the log table's rows (docs/accounting.md "Export to
// SQL", Statements): the statement, then the rows of `records` in COPY's
// text format — the rows batch_sql's log insert would add, with the same
// values and normalisation: none for a key in `known` or earlier in the
// batch. No value when a receive or event time falls outside the years
// 1-9999, which COPY's timestamp text cannot carry as to_timestamp does:
// the caller then uses batch_sql with LogRows::kInsert.
inline constexpr std::string_view kLogCopySql =
    "COPY radiusward_accounting_log (log_index, entry_position, record_key, status_type, client, "
    "received_time, event_time, acctuniqueid, attributes) FROM STDIN";
// radacct's statements of a batch by COPY: `rows` go into the temporary
// table kRadacctStage (radacct_stage_sql, made once per connection; its rows
// go at commit) by COPY, numbered by statement group, then `sql` runs the
// statements batch_sql would, each an INSERT … SELECT of its group with the
// same conflict clause, and Accounting-On/Off's UPDATEs where they stand.
// The same rows and values as batch_sql's radacct part; PostgreSQL only. No
// value when a time falls outside the years 1-9999 (log_copy_rows).
inline constexpr std::string_view kRadacctStage = "rw_radacct_stage";
struct RadacctCopy {
  std::string rows;
  std::string sql;
};
[[nodiscard]] std::optional<RadacctCopy> radacct_copy(std::span<const accounting::HeldRecord> records,
                                                      const radius::Dictionary& dictionary,
                                                      const KnownKeys& known = {});
[[nodiscard]] std::string radacct_stage_sql();
inline constexpr std::string_view kRadacctStageCopySql =
    "COPY rw_radacct_stage (grp, AcctSessionId, AcctUniqueId, UserName, Realm, NASIPAddress, NASPortId, "
    "NASPortType, AcctStartTime, AcctUpdateTime, AcctStopTime, AcctInterval, AcctSessionTime, AcctAuthentic, "
    "ConnectInfo_start, ConnectInfo_stop, AcctInputOctets, AcctOutputOctets, CalledStationId, "
    "CallingStationId, AcctTerminateCause, ServiceType, FramedProtocol, FramedIPAddress, FramedIPv6Address, "
    "FramedIPv6Prefix, FramedInterfaceId, DelegatedIPv6Prefix) FROM STDIN";

[[nodiscard]] std::optional<std::string> log_copy_rows(std::span<const accounting::HeldRecord> records,
                                                       const radius::Dictionary& dictionary,
                                                       const KnownKeys& known = {});

// The quarantine row of a record the database refused with `error`.
[[nodiscard]] std::string quarantine_sql(Dialect dialect, const accounting::HeldRecord& held,
                                         std::size_t position, const radius::Dictionary& dictionary,
                                         std::string_view error);

// Normalisation (docs/accounting.md "Export to SQL", What reaches SQL), exposed for tests.
// An address attribute (NAS-IP-Address, Framed-IP-Address: 4 octets;
// NAS-IPv6-Address, Framed-IPv6-Address: 16; Framed-IPv6-Prefix,
// Delegated-IPv6-Prefix: RFC 3162 §2.3 layout) as text, or nothing when
// absent or malformed.
[[nodiscard]] std::optional<std::string> address_of(const accounting::Record& record, std::uint8_t type);
// Gigawords x 2^32 + Octets (RFC 2869 §5.1), clamped to kCounterMax.
[[nodiscard]] std::uint64_t counter_of(std::uint32_t gigawords, std::uint32_t octets);

// The radacct statement of one record (empty for a status type that
// radacct ignores, such as Failed). Exposed for tests.
[[nodiscard]] std::string radacct_sql(Dialect dialect, const accounting::Record& record,
                                      const radius::Dictionary& dictionary);

// All attributes as a JSON object {"Name": "value"} (a name seen twice
// becomes an array of its values, in wire order), for the log table.
[[nodiscard]] std::string attributes_json(const accounting::Record& record,
                                          const radius::Dictionary& dictionary);
// The same, appended to `out` (the log rows' COPY builds one per record).
void append_attributes_json(std::string& out, const accounting::Record& record,
                            const radius::Dictionary& dictionary);

// Unix milliseconds as timestamptz text in UTC ("2023-11-14 22:13:20.123+00",
// the instant to_timestamp(ms / 1000.0) gives), appended to `out`; false,
// and nothing appended, outside the years 1 to 9999. Exposed for tests.
[[nodiscard]] bool append_copy_timestamp(std::string& out, std::int64_t unix_ms);

// `text` as an SQL string literal: quotes doubled, and made valid UTF-8
// without NUL (each offending byte becomes U+FFFD), since PostgreSQL
// refuses both in text columns.
[[nodiscard]] std::string quote(std::string_view text);

}  // namespace rw::exporter
