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
[[nodiscard]] const std::vector<Migration>& migrations(Dialect dialect);

// Reads the cursor. With `lock_row`, inside the batch's transaction: on
// PostgreSQL the row is locked (FOR UPDATE), so that two exporters
// serialise and the second sees the first's cursor; SQLite's BEGIN
// IMMEDIATE already serialises writers.
[[nodiscard]] std::string cursor_select_sql(Dialect dialect, bool lock_row);
// Moves the cursor to `exported_through`.
[[nodiscard]] std::string cursor_update_sql(std::uint64_t exported_through);

// The statements that export `records` (log order, all above the cursor,
// whole entries: every record of a log index or none):
// one multi-row insert into the log table, then radacct's statements as
// multi-row inserts per status type (a session's records in log order,
// Accounting-On/Off where they stand), with the effect of running each
// record's radacct_sql in log order. No transaction control, no cursor:
// the sink wraps them. Empty input gives empty text.
[[nodiscard]] std::string batch_sql(Dialect dialect, std::span<const accounting::HeldRecord> records,
                                    const radius::Dictionary& dictionary);

// The radacct statement of one record (empty for a status type that
// radacct ignores, such as Failed). Exposed for tests.
[[nodiscard]] std::string radacct_sql(Dialect dialect, const accounting::Record& record,
                                      const radius::Dictionary& dictionary);

// All attributes as a JSON object {"Name": "value"} (a name seen twice
// becomes an array of its values, in wire order), for the log table.
[[nodiscard]] std::string attributes_json(const accounting::Record& record,
                                          const radius::Dictionary& dictionary);

// `text` as an SQL string literal: quotes doubled, and made valid UTF-8
// without NUL (each offending byte becomes U+FFFD), since PostgreSQL
// refuses both in text columns.
[[nodiscard]] std::string quote(std::string_view text);

}  // namespace rw::exporter
