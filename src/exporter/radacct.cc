// The export mapping: see radacct.h. Each radacct statement mirrors the
// FreeRADIUS 3.2 default query of its Acct-Status-Type, folded into one
// statement where FreeRADIUS runs an UPDATE and falls back to an INSERT when
// no row matched (rlm_sql's "next query on zero rows"): INSERT ... ON
// CONFLICT (acctuniqueid) DO UPDATE ... WHERE acctstoptime IS NULL has the
// same effect on every starting state (no row, open row, closed row).
#include "exporter/radacct.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <array>
#include <charconv>
#include <map>
#include <optional>

#include "base/assert.h"
#include "base/utf8.h"
#include "radius/dictionary.h"
#include "radius/packet.h"

namespace rw::exporter {
namespace {

namespace attr = radius::attr;

// Unix milliseconds as whole seconds and the milliseconds after them, by
// floor division: -1 ms is second -1 and 999 ms (1969-12-31 23:59:59.999).
struct SecondsAndMs {
  std::int64_t seconds;
  std::int64_t ms;
};
SecondsAndMs split_unix_ms(std::int64_t unix_ms) {
  const std::int64_t ms = unix_ms % 1000;
  return ms < 0 ? SecondsAndMs{unix_ms / 1000 - 1, ms + 1000} : SecondsAndMs{unix_ms / 1000, ms};
}

// A PostgreSQL timestamptz expression for `unix_ms` (-1 ms is -0.001 s, as
// append_copy_timestamp).
std::string postgres_timestamp(std::int64_t unix_ms) {
  const auto [seconds, ms] = split_unix_ms(unix_ms);
  return fmt::format("to_timestamp({} + {:03}e-3)", seconds, ms);
}

// RFC 6911 §3.1 and RFC 4818 §3: not in packet.h's list of names.
inline constexpr std::uint8_t kFramedIpv6Address = 168;
inline constexpr std::uint8_t kDelegatedIpv6Prefix = 123;

// FreeRADIUS's radacct, column for column (its schema.sql for each
// dialect), created only when absent.
constexpr std::string_view kPostgresRadacct = R"(
CREATE TABLE IF NOT EXISTS radacct (
  RadAcctId bigserial PRIMARY KEY,
  AcctSessionId text NOT NULL,
  AcctUniqueId text NOT NULL UNIQUE,
  UserName text,
  Realm text,
  NASIPAddress inet NOT NULL,
  NASPortId text,
  NASPortType text,
  AcctStartTime timestamp with time zone,
  AcctUpdateTime timestamp with time zone,
  AcctStopTime timestamp with time zone,
  AcctInterval bigint,
  AcctSessionTime bigint,
  AcctAuthentic text,
  ConnectInfo_start text,
  ConnectInfo_stop text,
  AcctInputOctets bigint,
  AcctOutputOctets bigint,
  CalledStationId text,
  CallingStationId text,
  AcctTerminateCause text,
  ServiceType text,
  FramedProtocol text,
  FramedIPAddress inet,
  FramedIPv6Address inet,
  FramedIPv6Prefix inet,
  FramedInterfaceId text,
  DelegatedIPv6Prefix inet,
  Class text
);
CREATE INDEX IF NOT EXISTS radacct_active_session_idx ON radacct (AcctUniqueId) WHERE AcctStopTime IS NULL;
CREATE INDEX IF NOT EXISTS radacct_bulk_close ON radacct (NASIPAddress, AcctStartTime) WHERE AcctStopTime IS NULL;
CREATE INDEX IF NOT EXISTS radacct_start_user_idx ON radacct (AcctStartTime, UserName);
CREATE TABLE radiusward_accounting_log (
  log_index bigint NOT NULL,
  entry_position integer NOT NULL,
  record_key text NOT NULL UNIQUE,
  status_type bigint NOT NULL,
  client text NOT NULL,
  received_time timestamp with time zone NOT NULL,
  event_time timestamp with time zone NOT NULL,
  acctuniqueid text NOT NULL,
  attributes jsonb NOT NULL,
  PRIMARY KEY (log_index, entry_position)
);
CREATE INDEX radiusward_accounting_log_session ON radiusward_accounting_log (acctuniqueid);
CREATE TABLE radiusward_export_cursor (
  id integer PRIMARY KEY CHECK (id = 1),
  exported_through bigint NOT NULL
);
INSERT INTO radiusward_export_cursor VALUES (1, 0);
)";

constexpr std::string_view kSqliteRadacct = R"(
CREATE TABLE IF NOT EXISTS radacct (
  radacctid INTEGER PRIMARY KEY AUTOINCREMENT,
  acctsessionid varchar(64) NOT NULL default '',
  acctuniqueid varchar(32) NOT NULL default '',
  username varchar(64) NOT NULL default '',
  realm varchar(64) default '',
  nasipaddress varchar(15) NOT NULL default '',
  nasportid varchar(32) default NULL,
  nasporttype varchar(32) default NULL,
  acctstarttime datetime NULL default NULL,
  acctupdatetime datetime NULL default NULL,
  acctstoptime datetime NULL default NULL,
  acctinterval int(12) default NULL,
  acctsessiontime int(12) default NULL,
  acctauthentic varchar(32) default NULL,
  connectinfo_start varchar(128) default NULL,
  connectinfo_stop varchar(128) default NULL,
  acctinputoctets bigint(20) default NULL,
  acctoutputoctets bigint(20) default NULL,
  calledstationid varchar(50) NOT NULL default '',
  callingstationid varchar(50) NOT NULL default '',
  acctterminatecause varchar(32) NOT NULL default '',
  servicetype varchar(32) default NULL,
  framedprotocol varchar(32) default NULL,
  framedipaddress varchar(15) NOT NULL default '',
  framedipv6address varchar(45) NOT NULL default '',
  framedipv6prefix varchar(45) NOT NULL default '',
  framedinterfaceid varchar(44) NOT NULL default '',
  delegatedipv6prefix varchar(45) NOT NULL default '',
  class varchar(64) default NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS acctuniqueid ON radacct(acctuniqueid);
CREATE INDEX IF NOT EXISTS username ON radacct(username);
CREATE INDEX IF NOT EXISTS acctstarttime ON radacct(acctstarttime);
CREATE INDEX IF NOT EXISTS acctstoptime ON radacct(acctstoptime);
CREATE INDEX IF NOT EXISTS nasipaddress ON radacct(nasipaddress);
CREATE TABLE radiusward_accounting_log (
  log_index INTEGER NOT NULL,
  entry_position INTEGER NOT NULL,
  record_key text NOT NULL UNIQUE,
  status_type INTEGER NOT NULL,
  client text NOT NULL,
  received_time INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  acctuniqueid text NOT NULL,
  attributes text NOT NULL,
  PRIMARY KEY (log_index, entry_position)
);
CREATE INDEX radiusward_accounting_log_session ON radiusward_accounting_log (acctuniqueid);
CREATE TABLE radiusward_export_cursor (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  exported_through INTEGER NOT NULL
);
INSERT INTO radiusward_export_cursor VALUES (1, 0);
)";

// Migration 2: the quarantine (docs/accounting.md "Export to SQL", Quarantine). Every
// value in it is normalised text, so that the row of a refused record is
// never refused itself; `attributes_hex` keeps the raw TLVs.
constexpr std::string_view kPostgresQuarantine = R"(
CREATE TABLE radiusward_quarantine (
  log_index bigint NOT NULL,
  entry_position integer NOT NULL,
  record_key text NOT NULL,
  status_type bigint NOT NULL,
  client text NOT NULL,
  attributes text NOT NULL,
  attributes_hex text NOT NULL,
  error text NOT NULL,
  quarantined_at timestamp with time zone NOT NULL DEFAULT now(),
  PRIMARY KEY (log_index, entry_position)
);
)";

constexpr std::string_view kSqliteQuarantine = R"(
CREATE TABLE radiusward_quarantine (
  log_index INTEGER NOT NULL,
  entry_position INTEGER NOT NULL,
  record_key text NOT NULL,
  status_type INTEGER NOT NULL,
  client text NOT NULL,
  attributes text NOT NULL,
  attributes_hex text NOT NULL,
  error text NOT NULL,
  quarantined_at INTEGER NOT NULL DEFAULT (CAST(strftime('%s', 'now') AS INTEGER)),
  PRIMARY KEY (log_index, entry_position)
);
)";

// The first attribute of `type` as the text FreeRADIUS's xlat gives it
// (enumerated values by name), or nothing when absent.
std::optional<std::string> text_of(const accounting::Record& record, std::uint8_t type,
                                   const radius::Dictionary& dictionary) {
  auto value = record.find(type);
  if (!value) return std::nullopt;
  if (const radius::AttributeDef* def = dictionary.find(0, type)) return radius::format_value(*def, *value);
  return std::string(value->begin(), value->end());
}

std::uint64_t u32_of(const accounting::Record& record, std::uint8_t type) {
  auto value = record.find(type);
  if (!value || value->size() != 4) return 0;
  return std::uint64_t{(*value)[0]} << 24 | std::uint64_t{(*value)[1]} << 16 |
         std::uint64_t{(*value)[2]} << 8 | (*value)[3];
}

// One value of a radacct row before it is written, so that the same row
// can be rendered as an SQL literal (batch_sql) or as a COPY field
// (radacct_copy). Absent is NULL, or '' on SQLite where its schema says
// NOT NULL DEFAULT '' (`sqlite_empty`).
struct Field {
  enum class Kind : std::uint8_t { kText, kInet, kTime, kInteger };
  Kind kind = Kind::kText;
  std::optional<std::string> text{};     // kText, kInet
  std::optional<std::int64_t> number{};  // kTime (Unix seconds), kInteger
  bool sqlite_empty = false;
  std::string_view postgres_absent{};  // Written instead of NULL on PostgreSQL, when set.
};

Field text_field(std::optional<std::string> text, bool sqlite_empty = true) {
  return Field{.kind = Field::Kind::kText, .text = std::move(text), .sqlite_empty = sqlite_empty};
}
Field inet_field(std::optional<std::string> text) {
  return Field{.kind = Field::Kind::kInet, .text = std::move(text), .sqlite_empty = true};
}
Field time_field(std::optional<std::int64_t> seconds) {
  return Field{.kind = Field::Kind::kTime, .number = seconds};
}
// NASIPAddress is NOT NULL inet: a record without a (well-formed) NAS
// address (the NAS sent only NAS-Identifier) gets the unspecified address on
// PostgreSQL, where FreeRADIUS's query would fail; the log table keeps the
// whole record.
Field nas_field(std::optional<std::string> address) {
  Field nas = inet_field(std::move(address));
  nas.postgres_absent = "0.0.0.0";
  return nas;
}
Field integer_field(std::optional<std::int64_t> value) {
  return Field{.kind = Field::Kind::kInteger, .number = value};
}

// The values one record gives radacct's columns.
struct Columns {
  std::string session_id;                  // Acct-Session-Id ('' when absent)
  std::string unique_id;                   // Acct-Unique-Session-Id (the session key)
  std::string user_name;                   // SQL-User-Name (User-Name)
  std::optional<std::string> nas_address;  // NAS-IPv6-Address, else NAS-IP-Address
  std::optional<std::string> nas_port_id;  // NAS-Port-Id, else NAS-Port
  std::string nas_port_type;
  std::int64_t event_epoch = 0;               // event time in Unix seconds
  std::optional<std::uint64_t> session_time;  // Acct-Session-Time
  std::string authentic;
  std::string connect_info;
  std::uint64_t input_octets = 0;  // RFC 2869 §5.1: gigawords << 32 + octets
  std::uint64_t output_octets = 0;
  std::string called;
  std::string calling;
  std::string terminate_cause;
  std::string service_type;
  std::string framed_protocol;
  std::optional<std::string> framed_ip;
  std::optional<std::string> framed_ipv6;
  std::optional<std::string> framed_ipv6_prefix;
  std::optional<std::string> framed_interface_id;
  std::optional<std::string> delegated_prefix;
};

Columns columns_of(const accounting::Record& record, const radius::Dictionary& dictionary) {
  auto text = [&](std::uint8_t type) { return text_of(record, type, dictionary).value_or(""); };
  // A malformed address is written as absent (the log table keeps its bytes
  // as hex): '0x..'::inet would make PostgreSQL refuse the whole batch.
  auto nonempty = [&](std::uint8_t type) -> std::optional<std::string> {
    auto value = text_of(record, type, dictionary);
    if (value && value->empty()) return std::nullopt;
    return value;
  };
  Columns c;
  c.session_id = text(attr::kAcctSessionId);
  c.unique_id = record.session.hex();
  c.user_name = text(attr::kUserName);
  c.nas_address = address_of(record, attr::kNasIpv6Address);
  if (!c.nas_address) c.nas_address = address_of(record, attr::kNasIpAddress);
  c.nas_port_id = nonempty(attr::kNasPortId);
  if (!record.find(attr::kNasPortId)) c.nas_port_id = nonempty(attr::kNasPort);
  c.nas_port_type = text(attr::kNasPortType);
  c.event_epoch = record.event_unix_ms / 1000;
  if (record.find(attr::kAcctSessionTime)) c.session_time = u32_of(record, attr::kAcctSessionTime);
  c.authentic = text(attr::kAcctAuthentic);
  c.connect_info = text(attr::kConnectInfo);
  auto counter = [&](std::uint8_t gigawords, std::uint8_t octets) {
    return counter_of(static_cast<std::uint32_t>(u32_of(record, gigawords)),
                      static_cast<std::uint32_t>(u32_of(record, octets)));
  };
  c.input_octets = counter(attr::kAcctInputGigawords, attr::kAcctInputOctets);
  c.output_octets = counter(attr::kAcctOutputGigawords, attr::kAcctOutputOctets);
  c.called = text(attr::kCalledStationId);
  c.calling = text(attr::kCallingStationId);
  c.terminate_cause = text(attr::kAcctTerminateCause);
  c.service_type = text(attr::kServiceType);
  c.framed_protocol = text(attr::kFramedProtocol);
  c.framed_ip = address_of(record, attr::kFramedIpAddress);
  c.framed_ipv6 = address_of(record, kFramedIpv6Address);
  c.framed_ipv6_prefix = address_of(record, attr::kFramedIpv6Prefix);
  c.framed_interface_id = nonempty(attr::kFramedInterfaceId);
  c.delegated_prefix = address_of(record, kDelegatedIpv6Prefix);
  return c;
}

// A value as SQL text in `dialect`: PostgreSQL's NULLIF('%{X}', '')::inet,
// to_timestamp(N); SQLite's '' for its NOT NULL DEFAULT '' columns and
// Unix seconds for times, as FreeRADIUS's SQLite queries store them.
std::string sql_of(Dialect dialect, const Field& field) {
  const bool pg = dialect == Dialect::kPostgres;
  switch (field.kind) {
    case Field::Kind::kText:
    case Field::Kind::kInet:
      if (!field.text && pg && !field.postgres_absent.empty())
        return quote(field.postgres_absent) + (field.kind == Field::Kind::kInet ? "::inet" : "");
      if (!field.text) return pg || !field.sqlite_empty ? "NULL" : "''";
      return quote(*field.text) + (pg && field.kind == Field::Kind::kInet ? "::inet" : "");
    case Field::Kind::kTime:
      if (!field.number) return "NULL";
      return pg ? "to_timestamp(" + std::to_string(*field.number) + ")" : std::to_string(*field.number);
    case Field::Kind::kInteger:
      return field.number ? std::to_string(*field.number) : "NULL";
  }
  return "NULL";
}

// Seconds since the epoch of a timestamp column, per dialect.
std::string epoch_of(Dialect dialect, std::string_view column) {
  if (dialect == Dialect::kPostgres) return "EXTRACT(EPOCH FROM " + std::string(column) + ")::bigint";
  return "CAST(" + std::string(column) + " AS INTEGER)";
}

constexpr std::string_view kColumnList =
    "AcctSessionId, AcctUniqueId, UserName, Realm, NASIPAddress, NASPortId, NASPortType, AcctStartTime, "
    "AcctUpdateTime, AcctStopTime, AcctInterval, AcctSessionTime, AcctAuthentic, ConnectInfo_start, "
    "ConnectInfo_stop, "
    "AcctInputOctets, AcctOutputOctets, CalledStationId, CallingStationId, AcctTerminateCause, ServiceType, "
    "FramedProtocol, FramedIPAddress, FramedIPv6Address, FramedIPv6Prefix, FramedInterfaceId, "
    "DelegatedIPv6Prefix";

// FreeRADIUS's insert of a session first seen in a record with these
// start/stop times, session time, counters and terminate cause, one value
// per column of kColumnList. The conflict clauses below read every
// per-record value back from this row through EXCLUDED, so that rows of one
// status type share one statement (batch_sql).
// AcctInterval is NULL in a record's own row (queries.conf's inserts leave
// it out); a fold of several records (radacct_steps) carries the interval
// its later Interim-Update computed.
using Row = std::array<Field, 27>;

// Positions in a Row of the columns a record's update sets (kColumnList).
enum Column : std::size_t {
  kStartTime = 7,
  kUpdateTime = 8,
  kStopTime = 9,
  kInterval = 10,
  kSessionTime = 11,
  kConnectInfoStart = 13,
  kConnectInfoStop = 14,
  kInputOctets = 15,
  kOutputOctets = 16,
  kTerminateCause = 19,
  kFramedFirst = 22,  // FramedIPAddress … DelegatedIPv6Prefix, kFramedUpdates' five
  kFramedEnd = 27,
};

// Takes the texts of `c` (a row is built once per record: copying its
// twenty strings showed in the exporter's profile).
Row row_fields(Columns&& c, std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
               std::optional<std::int64_t> session_time, std::int64_t input, std::int64_t output,
               std::optional<std::string> terminate_cause) {
  return Row{text_field(std::move(c.session_id)),
             text_field(std::move(c.unique_id)),
             text_field(std::move(c.user_name)),
             text_field(std::nullopt),  // Realm
             nas_field(std::move(c.nas_address)),
             text_field(std::move(c.nas_port_id), false),
             text_field(std::move(c.nas_port_type)),
             time_field(start),
             time_field(c.event_epoch),
             time_field(stop),
             integer_field(std::nullopt),  // AcctInterval
             integer_field(session_time),
             text_field(std::move(c.authentic)),
             text_field(std::move(c.connect_info)),
             text_field(std::nullopt, false),  // ConnectInfo_stop
             integer_field(input),
             integer_field(output),
             text_field(std::move(c.called)),
             text_field(std::move(c.calling)),
             text_field(std::move(terminate_cause)),
             text_field(std::move(c.service_type)),
             text_field(std::move(c.framed_protocol)),
             inet_field(std::move(c.framed_ip)),
             inet_field(std::move(c.framed_ipv6)),
             inet_field(std::move(c.framed_ipv6_prefix)),
             text_field(std::move(c.framed_interface_id)),
             inet_field(std::move(c.delegated_prefix))};
}

std::string row_tuple(Dialect dialect, const Row& row) {
  std::string out = "(";
  for (std::size_t i = 0; i < row.size(); ++i) out += (i > 0 ? ", " : "") + sql_of(dialect, row[i]);
  return out + ")";
}

std::string insert_head() { return "INSERT INTO radacct (" + std::string(kColumnList) + ") VALUES "; }

constexpr std::string_view kFramedUpdates =
    "FramedIPAddress = EXCLUDED.FramedIPAddress, FramedIPv6Address = EXCLUDED.FramedIPv6Address, "
    "FramedIPv6Prefix = EXCLUDED.FramedIPv6Prefix, FramedInterfaceId = EXCLUDED.FramedInterfaceId, "
    "DelegatedIPv6Prefix = EXCLUDED.DelegatedIPv6Prefix";

// What a record of `status_type` does to an existing row of its session
// (queries.conf's UPDATE), with the record's values taken from its row
// (row_tuple: AcctUpdateTime and, for Stop, AcctStopTime are the event
// time; ConnectInfo_start carries Connect-Info). A closed row stays.
std::string conflict_clause(Dialect dialect, std::uint32_t status_type) {
  const std::string head = " ON CONFLICT (AcctUniqueId) DO UPDATE SET ";
  const std::string tail = " WHERE radacct.AcctStopTime IS NULL";
  switch (status_type) {
    case accounting::status::kStart:
      // queries.conf start: on an open row of the same session refresh its
      // start and update times and Connect-Info.
      return head +
             "AcctStartTime = EXCLUDED.AcctStartTime, AcctUpdateTime = EXCLUDED.AcctUpdateTime, "
             "ConnectInfo_start = EXCLUDED.ConnectInfo_start" +
             tail;
    case accounting::status::kInterimUpdate:
      // queries.conf interim-update: the open row's time, counters and
      // addresses; AcctInterval = seconds since its last update.
      return head + std::string(kFramedUpdates) +
             ", AcctSessionTime = EXCLUDED.AcctSessionTime, AcctInterval = " +
             epoch_of(dialect, "EXCLUDED.AcctUpdateTime") + " - " +
             epoch_of(dialect, "COALESCE(radacct.AcctUpdateTime, radacct.AcctStartTime)") +
             ", AcctUpdateTime = EXCLUDED.AcctUpdateTime, AcctInputOctets = EXCLUDED.AcctInputOctets, "
             "AcctOutputOctets = EXCLUDED.AcctOutputOctets" +
             tail;
    default:
      // queries.conf stop: close the open row with counters and terminate
      // cause; without Acct-Session-Time, the time since its start.
      return head +
             "AcctStopTime = EXCLUDED.AcctStopTime, AcctUpdateTime = EXCLUDED.AcctUpdateTime, "
             "AcctSessionTime = COALESCE(EXCLUDED.AcctSessionTime, " +
             epoch_of(dialect, "EXCLUDED.AcctStopTime") + " - " + epoch_of(dialect, "radacct.AcctStartTime") +
             "), AcctInputOctets = EXCLUDED.AcctInputOctets, AcctOutputOctets = EXCLUDED.AcctOutputOctets, "
             "AcctTerminateCause = EXCLUDED.AcctTerminateCause, " +
             std::string(kFramedUpdates) + ", ConnectInfo_stop = EXCLUDED.ConnectInfo_start" + tail;
  }
}

// The radacct row of a Start, Interim-Update or Stop record; nullopt for
// the other status types.
std::optional<Row> row_of(const accounting::Record& record, const radius::Dictionary& dictionary) {
  const std::uint32_t type = record.status_type;
  if (type != accounting::status::kStart && type != accounting::status::kInterimUpdate &&
      type != accounting::status::kStop) {
    return std::nullopt;
  }
  Columns c = columns_of(record, dictionary);
  const auto session_time = c.session_time ? std::optional<std::int64_t>(*c.session_time) : std::nullopt;
  const auto input = static_cast<std::int64_t>(c.input_octets);
  const auto output = static_cast<std::int64_t>(c.output_octets);
  const std::int64_t event = c.event_epoch;
  if (type == accounting::status::kStart)
    return row_fields(std::move(c), event, std::nullopt, 0, 0, 0, std::nullopt);
  // A session whose Start never arrived is inserted by its Interim-Update,
  // or by its Stop, closed, started Acct-Session-Time earlier.
  if (type == accounting::status::kInterimUpdate)
    return row_fields(std::move(c), event, std::nullopt, session_time, input, output, std::nullopt);
  const std::int64_t started = event - static_cast<std::int64_t>(c.session_time.value_or(0));
  std::string cause = std::move(c.terminate_cause);
  return row_fields(std::move(c), started, event, session_time, input, output, std::move(cause));
}

// Accounting-On/Off (queries.conf accounting-on/off): the NAS restarted,
// so close its sessions that started at or before the event (RFC 2866
// §5.1).
std::string nas_restart_sql(Dialect dialect, const accounting::Record& record,
                            const radius::Dictionary& dictionary) {
  const Columns c = columns_of(record, dictionary);
  const std::string cause = text_of(record, attr::kAcctTerminateCause, dictionary).value_or("NAS-Reboot");
  const std::string event = sql_of(dialect, time_field(c.event_epoch));
  return "UPDATE radacct SET AcctStopTime = " + event + ", AcctUpdateTime = " + event +
         ", AcctSessionTime = " + std::to_string(c.event_epoch) + " - " + epoch_of(dialect, "AcctStartTime") +
         ", AcctTerminateCause = " + quote(cause) +
         " WHERE AcctStopTime IS NULL AND NASIPAddress = " + sql_of(dialect, nas_field(c.nas_address)) +
         " AND AcctStartTime <= " + event + ";\n";
}

bool is_nas_restart(std::uint32_t status_type) {
  return status_type == accounting::status::kAccountingOn ||
         status_type == accounting::status::kAccountingOff;
}

// The normalisation every text written to SQL gets (docs/accounting.md
// "Export to SQL", What reaches SQL): each well-formed UTF-8 sequence of
// `text` in order, U+FFFD in place of each NUL and each byte of no such
// sequence. The longest runs of bytes that `plain` passes (single-byte
// characters the caller writes as they are) are appended to `out` at once;
// `emit` gets every other sequence.
template <typename Plain, typename Emit>
void each_normalised(std::string_view text, std::string& out, Plain plain, Emit emit) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = at;
    while (end < text.size() && plain(static_cast<unsigned char>(text[end]))) ++end;
    out.append(text.substr(at, end - at));
    if (end == text.size()) return;
    const std::size_t length = utf8_sequence(text, end);
    emit(length == 0 ? kReplacement : text.substr(end, length));
    at = end + (length == 0 ? 1 : length);
  }
}

void append_hex(std::string& out, std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (const std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0x0F];
  }
}

std::string hex_of(std::span<const std::uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  append_hex(out, bytes);
  return out;
}

}  // namespace

std::optional<std::string> address_of(const accounting::Record& record, std::uint8_t type) {
  auto value = record.find(type);
  if (!value) return std::nullopt;
  std::array<std::uint8_t, 16> bytes{};
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (type == attr::kNasIpAddress || type == attr::kFramedIpAddress) {
    if (value->size() != 4) return std::nullopt;
    std::copy(value->begin(), value->end(), bytes.begin());
    if (inet_ntop(AF_INET, bytes.data(), text.data(), text.size()) == nullptr) return std::nullopt;
    return std::string(text.data());
  }
  if (type == attr::kNasIpv6Address || type == kFramedIpv6Address) {
    if (value->size() != 16) return std::nullopt;
    std::copy(value->begin(), value->end(), bytes.begin());
    if (inet_ntop(AF_INET6, bytes.data(), text.data(), text.size()) == nullptr) return std::nullopt;
    return std::string(text.data());
  }
  if (type == attr::kFramedIpv6Prefix || type == kDelegatedIpv6Prefix) {
    // RFC 3162 §2.3: reserved (0), prefix length (0..128), then at least
    // the prefix's octets (at most 16).
    const std::size_t size = value->size();
    if (size < 2 || size > 18 || (*value)[0] != 0 || (*value)[1] > 128) return std::nullopt;
    const unsigned length = (*value)[1];
    if ((length + 7) / 8 > size - 2) return std::nullopt;
    std::copy(value->begin() + 2, value->end(), bytes.begin());
    if (inet_ntop(AF_INET6, bytes.data(), text.data(), text.size()) == nullptr) return std::nullopt;
    return std::string(text.data()) + "/" + std::to_string(length);
  }
  return std::nullopt;
}

std::uint64_t counter_of(std::uint32_t gigawords, std::uint32_t octets) {
  const std::uint64_t value = std::uint64_t{gigawords} << 32 | octets;
  return std::min(value, kCounterMax);
}

std::string quote(std::string_view text) {
  std::string out = "'";
  out.reserve(text.size() + 2);
  const auto plain = [](unsigned char c) { return c >= 0x20 && c < 0x80 && c != '\''; };
  each_normalised(text, out, plain, [&out](std::string_view sequence) {
    if (sequence == "'") out += '\'';
    out.append(sequence);
  });
  out += '\'';
  return out;
}

std::string schema_table_sql(Dialect dialect) {
  (void)dialect;
  return std::string("CREATE TABLE IF NOT EXISTS ") + std::string(kSchemaTable) +
         " (version integer PRIMARY KEY, applied_at text NOT NULL)";
}

const std::vector<Migration>& migrations(Dialect dialect) {
  static const std::vector<Migration> postgres = {{1, std::string(kPostgresRadacct)},
                                                  {2, std::string(kPostgresQuarantine)}};
  static const std::vector<Migration> sqlite = {{1, std::string(kSqliteRadacct)},
                                                {2, std::string(kSqliteQuarantine)}};
  return dialect == Dialect::kPostgres ? postgres : sqlite;
}

std::string cursor_select_sql(Dialect dialect, bool lock_row) {
  std::string sql = "SELECT exported_through FROM " + std::string(kCursorTable) + " WHERE id = 1";
  if (lock_row && dialect == Dialect::kPostgres) sql += " FOR UPDATE";
  return sql;
}

std::string cursor_update_sql(std::uint64_t exported_through) {
  return "UPDATE " + std::string(kCursorTable) +
         " SET exported_through = " + std::to_string(exported_through) + " WHERE id = 1";
}

namespace {

// `text` as a JSON string (RFC 8259 §7), normalised first as quote() does
// (each NUL and each byte outside a well-formed UTF-8 sequence becomes
// U+FFFD): the quotation mark, the reverse solidus and the control
// characters escaped (\b \f \n \r \t, the others as \u00xx), every other
// character as it is. The text the JSON library wrote for valid UTF-8
// (AttributesJson.WritesWhatTheJsonLibraryWrote).
void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  const auto plain = [](unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; };
  each_normalised(text, out, plain, [&out](std::string_view sequence) {
    if (sequence.size() != 1) {
      out.append(sequence);
      return;
    }
    const auto c = static_cast<unsigned char>(sequence[0]);
    switch (c) {
      case '"':
        out += "\\\"";
        return;
      case '\\':
        out += "\\\\";
        return;
      case '\b':
        out += "\\b";
        return;
      case '\f':
        out += "\\f";
        return;
      case '\n':
        out += "\\n";
        return;
      case '\r':
        out += "\\r";
        return;
      case '\t':
        out += "\\t";
        return;
      default:
        break;
    }
    if (c < 0x20) {
      static constexpr char kDigits[] = "0123456789abcdef";
      out += "\\u00";
      out += kDigits[c >> 4];
      out += kDigits[c & 0x0F];
      return;
    }
    out += static_cast<char>(c);
  });
  out += '"';
}

}  // namespace

void append_attributes_json(std::string& out, const accounting::Record& record,
                            const radius::Dictionary& dictionary) {
  const std::vector<std::pair<std::string, std::string>> described = accounting::describe(record, dictionary);
  const std::size_t n = described.size();
  // Equal names side by side, each run in wire order (a stable sort), so
  // that a name's values chain from its first appearance: O(n log n) for a
  // packet of a thousand small attributes.
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&described](std::uint32_t a, std::uint32_t b) {
    return described[a].first < described[b].first;
  });
  std::vector<std::uint32_t> next(n, static_cast<std::uint32_t>(n));
  std::vector<bool> repeat(n, false);
  for (std::size_t k = 1; k < n; ++k) {
    if (described[order[k]].first != described[order[k - 1]].first) continue;
    next[order[k - 1]] = order[k];
    repeat[order[k]] = true;
  }
  out += '{';
  bool first = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (repeat[i]) continue;
    if (!first) out += ',';
    first = false;
    append_json_string(out, described[i].first);
    out += ':';
    if (next[i] == n) {
      append_json_string(out, described[i].second);
      continue;
    }
    out += '[';
    for (std::size_t j = i; j < n; j = next[j]) {
      if (j != i) out += ',';
      append_json_string(out, described[j].second);
    }
    out += ']';
  }
  out += '}';
}

std::string attributes_json(const accounting::Record& record, const radius::Dictionary& dictionary) {
  std::string out;
  append_attributes_json(out, record, dictionary);
  return out;
}

std::string radacct_sql(Dialect dialect, const accounting::Record& record,
                        const radius::Dictionary& dictionary) {
  if (is_nas_restart(record.status_type)) return nas_restart_sql(dialect, record, dictionary);
  auto row = row_of(record, dictionary);
  if (!row) return {};  // Failed and vendor status types: the log table only.
  return insert_head() + row_tuple(dialect, *row) + conflict_clause(dialect, record.status_type) + ";\n";
}

std::string known_keys_sql(std::span<const accounting::HeldRecord> records) {
  std::string sql = "SELECT record_key FROM " + std::string(kLogTable) + " WHERE record_key IN (";
  for (std::size_t i = 0; i < records.size(); ++i)
    sql += (i > 0 ? ", '" : "'") + records[i].record.key.hex() + "'";
  return sql + (records.empty() ? "NULL)" : ")");
}

std::string prune_log_sql(Dialect dialect, std::int64_t before_unix_ms, std::size_t rows_max) {
  const std::string table(kLogTable);
  const std::string window = "SELECT log_index, entry_position, received_time FROM " + table +
                             " ORDER BY log_index, entry_position LIMIT " + std::to_string(rows_max);
  const std::string rows = "DELETE FROM " + table +
                           " WHERE (log_index, entry_position) IN (SELECT log_index, entry_position FROM (" +
                           window + ") w WHERE received_time < ";
  // SQLite's received_time holds whole Unix seconds (as batch_sql writes
  // them): a row in the cut's own second stays.
  if (dialect == Dialect::kSqlite) return rows + std::to_string(before_unix_ms / 1000) + ")";
  return "WITH gone AS (" + rows + postgres_timestamp(before_unix_ms) +
         ") RETURNING 1) SELECT count(*) FROM gone";
}

std::vector<std::size_t> entry_positions(std::span<const accounting::HeldRecord> records,
                                         std::size_t first_position) {
  std::vector<std::size_t> out(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    out[i] = i == 0 ? first_position : records[i - 1].index == records[i].index ? out[i - 1] + 1 : 0;
  }
  return out;
}

std::string quarantine_sql(Dialect dialect, const accounting::HeldRecord& held, std::size_t position,
                           const radius::Dictionary& dictionary, std::string_view error) {
  (void)dialect;
  const accounting::Record& r = held.record;
  return "INSERT INTO " + std::string(kQuarantineTable) +
         " (log_index, entry_position, record_key, status_type, client, attributes, attributes_hex, error) "
         "VALUES (" +
         std::to_string(held.index) + ", " + std::to_string(position) + ", '" + r.key.hex() + "', " +
         std::to_string(r.status_type) + ", " + quote(r.client) + ", " +
         quote(attributes_json(r, dictionary)) + ", '" + hex_of(r.attributes) + "', " + quote(error) + ")";
}

namespace {

// `text` as a field of COPY's text format, normalised as quote() does (each
// NUL and each byte outside a well-formed UTF-8 sequence becomes U+FFFD),
// with COPY's escapes for backslash, tab, newline and carriage return.
void append_copy_field(std::string& out, std::string_view text) {
  const auto plain = [](unsigned char c) { return c >= 0x20 && c < 0x80 && c != '\\'; };
  each_normalised(text, out, plain, [&out](std::string_view sequence) {
    if (sequence == "\\" || sequence == "\t" || sequence == "\n" || sequence == "\r") {
      out += '\\';
      out += sequence == "\t" ? 't' : sequence == "\n" ? 'n' : sequence == "\r" ? 'r' : '\\';
    } else {
      out.append(sequence);
    }
  });
}

template <typename Integer>
void append_decimal(std::string& out, Integer value) {
  char digits[24];
  const auto [end, error] = std::to_chars(std::begin(digits), std::end(digits), value);
  RW_ASSERT(error == std::errc());  // 24 characters hold every 64-bit integer and its sign.
  out.append(digits, end);
}

// `value` (0 or more) in exactly `width` decimal digits, zeros in front.
void append_digits(std::string& out, std::int64_t value, int width) {
  char digits[20];
  int at = width;
  while (at > 0) {
    digits[--at] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  out.append(digits, static_cast<std::size_t>(width));
}

}  // namespace

bool append_copy_timestamp(std::string& out, std::int64_t unix_ms) {
  const auto [seconds, ms] = split_unix_ms(unix_ms);
  // Years 1 to 9999 (Unix seconds of 0001-01-01 and 10000-01-01).
  if (seconds < -62'135'596'800 || seconds >= 253'402'300'800) return false;
  std::int64_t days = seconds / 86'400;
  std::int64_t second_of_day = seconds % 86'400;
  if (second_of_day < 0) {
    second_of_day += 86'400;
    --days;
  }
  // The proleptic Gregorian date of a day count from 1970-01-01, by the
  // civil-from-days method of Howard Hinnant's "chrono-Compatible Low-Level
  // Date Algorithms": count from 0000-03-01 in eras of 400 years (146,097
  // days), so that the leap day ends each year of the count.
  const std::int64_t z = days + 719'468;
  const std::int64_t era = (z >= 0 ? z : z - 146'096) / 146'097;
  const std::int64_t day_of_era = z - era * 146'097;
  const std::int64_t year_of_era =
      (day_of_era - day_of_era / 1'460 + day_of_era / 36'524 - day_of_era / 146'096) / 365;
  const std::int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const std::int64_t month_from_march = (5 * day_of_year + 2) / 153;
  const std::int64_t day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
  const std::int64_t month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
  const std::int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  append_digits(out, year, 4);
  out += '-';
  append_digits(out, month, 2);
  out += '-';
  append_digits(out, day, 2);
  out += ' ';
  append_digits(out, second_of_day / 3'600, 2);
  out += ':';
  append_digits(out, second_of_day / 60 % 60, 2);
  out += ':';
  append_digits(out, second_of_day % 60, 2);
  out += '.';
  append_digits(out, ms, 3);
  out += "+00";
  return true;
}

namespace {

// A Field as a COPY text value (\\N for NULL); false for a time COPY's
// timestamp text cannot carry (append_copy_timestamp).
bool append_copy_value(std::string& out, const Field& field) {
  switch (field.kind) {
    case Field::Kind::kText:
    case Field::Kind::kInet:
      if (field.text) {
        append_copy_field(out, *field.text);
      } else if (!field.postgres_absent.empty()) {
        append_copy_field(out, field.postgres_absent);
      } else {
        out += "\\N";
      }
      return true;
    case Field::Kind::kTime:
      if (!field.number) {
        out += "\\N";
        return true;
      }
      // Whole seconds: a value no int64 millisecond count holds is out of range anyway.
      if (*field.number > INT64_MAX / 1000 || *field.number < INT64_MIN / 1000) return false;
      return append_copy_timestamp(out, *field.number * 1000);
    case Field::Kind::kInteger:
      if (!field.number) {
        out += "\\N";
      } else {
        append_decimal(out, *field.number);
      }
      return true;
  }
  return false;
}

// Which records of a batch add nothing: a key in `known` or earlier in the
// batch (docs/accounting.md "Export to SQL", Re-sent records). The log gets
// no row for them and radacct no statement. Found by a stable sort of the
// batch's indices by key (no set node or hex text per record): equal keys
// end side by side in batch order, and all but the first of a run repeat.
std::vector<bool> repeated_keys(std::span<const accounting::HeldRecord> records, const KnownKeys& known) {
  std::vector<std::uint32_t> order(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&records](std::uint32_t a, std::uint32_t b) {
    return records[a].record.key < records[b].record.key;
  });
  std::vector<bool> repeated(records.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const accounting::RecordKey& key = records[order[k]].record.key;
    repeated[order[k]] =
        (k > 0 && records[order[k - 1]].record.key == key) || (!known.empty() && known.contains(key.hex()));
  }
  return repeated;
}

// One session's records of a stretch of a batch (below), folded into ONE
// radacct write whose effect is that of running the records' own
// statements (radacct_sql) in log order, on every starting state of the
// row (docs/accounting.md "Export to SQL", Statements):
//
// - no row: the first record's row, then each later record's update
//   applied here, client-side (`row`); it goes in as the INSERT's row.
// - an open row: the updates of all the records, each column set to the
//   value of the last record that sets it (the conflict clause,
//   fold_clause). Every value a record of the fold sets is `row`'s value
//   of that column (EXCLUDED), except where the first record reads the
//   existing row — Interim-Update's AcctInterval (since the row's last
//   update) and Stop's AcctSessionTime without Acct-Session-Time (since the
//   row's start) — which stay in SQL (`radacct.` columns).
// - a closed row: untouched (WHERE radacct.AcctStopTime IS NULL).
//
// A Stop closes the row whatever it was, so the session's later records in
// the stretch are no-ops and are left out. One case cannot fold: a fold
// begun by an Interim-Update whose AcctInterval would need the first
// record's time once a Start has replaced AcctStartTime; a Start there
// begins a second fold (records out of order), written in the next wave.
struct FoldShape {
  // Which columns the records set on an open row and how; rows of one
  // shape share a statement.
  enum class Interval : std::uint8_t { kUntouched, kFirstRecord, kFolded };
  enum class SessionTime : std::uint8_t { kUntouched, kFolded, kSinceRowStart };
  enum class Stop : std::uint8_t { kNone, kFirstRecord, kFolded };
  bool starts = false;  // a Start: AcctStartTime, ConnectInfo_start
  bool usage = false;   // an Interim-Update or Stop: counters, Framed addresses
  Interval interval = Interval::kUntouched;
  SessionTime session_time = SessionTime::kUntouched;
  Stop stop = Stop::kNone;

  [[nodiscard]] std::uint32_t key() const {
    return static_cast<std::uint32_t>(starts) | static_cast<std::uint32_t>(usage) << 1 |
           static_cast<std::uint32_t>(interval) << 2 | static_cast<std::uint32_t>(session_time) << 4 |
           static_cast<std::uint32_t>(stop) << 6;
  }
};

// What a fold of `shape` does to an open row (queries.conf's UPDATEs of its
// records, composed); a closed row stays.
std::string fold_clause(Dialect dialect, const FoldShape& shape) {
  std::string set = "AcctUpdateTime = EXCLUDED.AcctUpdateTime";
  if (shape.starts)
    set += ", AcctStartTime = EXCLUDED.AcctStartTime, ConnectInfo_start = EXCLUDED.ConnectInfo_start";
  if (shape.usage) {
    set += ", " + std::string(kFramedUpdates) +
           ", AcctInputOctets = EXCLUDED.AcctInputOctets, AcctOutputOctets = EXCLUDED.AcctOutputOctets";
  }
  if (shape.interval == FoldShape::Interval::kFolded) set += ", AcctInterval = EXCLUDED.AcctInterval";
  // The first record is the only Interim-Update and no Start follows it, so
  // the row's AcctStartTime is that record's event time.
  if (shape.interval == FoldShape::Interval::kFirstRecord) {
    set += ", AcctInterval = " + epoch_of(dialect, "EXCLUDED.AcctStartTime") + " - " +
           epoch_of(dialect, "COALESCE(radacct.AcctUpdateTime, radacct.AcctStartTime)");
  }
  if (shape.session_time == FoldShape::SessionTime::kFolded)
    set += ", AcctSessionTime = EXCLUDED.AcctSessionTime";
  if (shape.session_time == FoldShape::SessionTime::kSinceRowStart) {
    set += ", AcctSessionTime = " + epoch_of(dialect, "EXCLUDED.AcctStopTime") + " - " +
           epoch_of(dialect, "radacct.AcctStartTime");
  }
  if (shape.stop != FoldShape::Stop::kNone) {
    // A Stop's Connect-Info is its row's ConnectInfo_start; a folded row
    // keeps the Start's there and carries the Stop's in ConnectInfo_stop.
    set +=
        ", AcctStopTime = EXCLUDED.AcctStopTime, AcctTerminateCause = EXCLUDED.AcctTerminateCause, "
        "ConnectInfo_stop = EXCLUDED.";
    set += shape.stop == FoldShape::Stop::kFirstRecord ? "ConnectInfo_start" : "ConnectInfo_stop";
  }
  return " ON CONFLICT (AcctUniqueId) DO UPDATE SET " + set + " WHERE radacct.AcctStopTime IS NULL";
}

std::optional<std::int64_t> seconds_between(const Field& later, const Field& earlier) {
  if (!later.number || !earlier.number) return std::nullopt;
  return *later.number - *earlier.number;
}

struct Fold {
  Row row;
  FoldShape shape;
  bool interim_first = false;  // a Start cannot join it (FoldShape's comment)
};

// The fold of one record: its own row and statement.
Fold fold_of(std::uint32_t status_type, Row row) {
  Fold fold{std::move(row), {}, status_type == accounting::status::kInterimUpdate};
  FoldShape& shape = fold.shape;
  if (status_type == accounting::status::kStart) {
    shape.starts = true;
    return fold;
  }
  shape.usage = true;
  if (status_type == accounting::status::kInterimUpdate) {
    shape.interval = FoldShape::Interval::kFirstRecord;
    shape.session_time = FoldShape::SessionTime::kFolded;
    return fold;
  }
  shape.session_time = fold.row[kSessionTime].number ? FoldShape::SessionTime::kFolded
                                                     : FoldShape::SessionTime::kSinceRowStart;
  shape.stop = FoldShape::Stop::kFirstRecord;
  return fold;
}

// Adds a later record (`status_type`, its own row `next`) to `fold`: its
// update (conflict_clause) applied to the fold's row here, where every
// value it reads from the row is known.
void fold_in(Fold& fold, std::uint32_t status_type, const Row& next) {
  Row& row = fold.row;
  FoldShape& shape = fold.shape;
  const auto take = [&](std::size_t column) { row[column] = next[column]; };
  const auto take_usage = [&] {
    take(kInputOctets);
    take(kOutputOctets);
    for (std::size_t column = kFramedFirst; column < kFramedEnd; ++column) take(column);
    shape.usage = true;
  };
  if (status_type == accounting::status::kStart) {
    take(kStartTime);
    take(kUpdateTime);
    take(kConnectInfoStart);
    shape.starts = true;
  } else if (status_type == accounting::status::kInterimUpdate) {
    row[kInterval] = integer_field(seconds_between(next[kUpdateTime], row[kUpdateTime]));
    take(kUpdateTime);
    take(kSessionTime);
    take_usage();
    shape.interval = FoldShape::Interval::kFolded;
    shape.session_time = FoldShape::SessionTime::kFolded;
  } else {
    take(kStopTime);
    take(kUpdateTime);
    take(kTerminateCause);
    take_usage();
    row[kConnectInfoStop] = next[kConnectInfoStart];
    // Without Acct-Session-Time, the time since the row's start: known
    // here; on an open row known only if a Start of the fold set it.
    const bool sent = next[kSessionTime].number.has_value();
    row[kSessionTime] =
        sent ? next[kSessionTime] : integer_field(seconds_between(next[kStopTime], row[kStartTime]));
    shape.session_time =
        sent || shape.starts ? FoldShape::SessionTime::kFolded : FoldShape::SessionTime::kSinceRowStart;
    shape.stop = FoldShape::Stop::kFolded;
  }
}

// radacct's part of a batch, in the order it must run: one multi-row
// statement per fold shape and "wave" instead of one statement per record
// (PostgreSQL spends most of a single-row statement on parsing, planning
// and the round of its ten indexes, not on the row), and one row per
// session instead of one per record (Fold: each write of a row updates
// all ten indexes, since an update of an indexed column is never a HOT
// update). Statements on different sessions commute, so the records of a
// stretch between two Accounting-On/Off records are regrouped: a session's
// records of the stretch fold into one row, in wave 0 (in wave n, the rare
// n-th fold of a session whose records came out of order), so that no
// statement touches a row twice (which ON CONFLICT DO UPDATE refuses). An
// On/Off record closes rows by NAS, so it ends the stretch and runs in its
// place (`restart`).
// A step's rows point into its plan's folds.
struct RadacctStep {
  const accounting::Record* restart = nullptr;  // Accounting-On/Off: its UPDATE
  FoldShape shape{};                            // else the rows' fold shape
  std::vector<const Row*> rows{};
};

struct RadacctPlan {
  // Every fold of the batch, in order of their first record; reserved for
  // one per record, so that a row is built in place once and never moved
  // (a row is 27 fields: moving each through the stretches' groups showed
  // in the exporter's profile).
  std::vector<Fold> folds;
  std::vector<RadacctStep> steps;
};

RadacctPlan radacct_steps(std::span<const accounting::HeldRecord> records, const std::vector<bool>& repeated,
                          const radius::Dictionary& dictionary) {
  struct Session {
    std::size_t fold = 0;  // its latest fold in `plan.folds`
    std::size_t wave = 0;
    bool stopped = false;
  };
  RadacctPlan plan;
  plan.folds.reserve(records.size());
  std::vector<std::size_t> waves;  // of each fold
  waves.reserve(records.size());
  std::size_t stretch = 0;                             // the first fold of this stretch
  std::map<accounting::SessionKey, Session> sessions;  // session key -> its folds in this stretch
  const auto flush = [&] {
    std::map<std::pair<std::size_t, std::uint32_t>, RadacctStep> groups;  // (wave, shape)
    for (std::size_t f = stretch; f < plan.folds.size(); ++f) {
      const Fold& fold = plan.folds[f];
      RadacctStep& step = groups[{waves[f], fold.shape.key()}];
      step.shape = fold.shape;
      step.rows.push_back(&fold.row);
    }
    for (auto& [key, step] : groups) plan.steps.push_back(std::move(step));
    stretch = plan.folds.size();
    sessions.clear();
  };
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (repeated[i]) continue;  // radacct has seen this record already
    const accounting::Record& r = records[i].record;
    if (is_nas_restart(r.status_type)) {
      flush();
      plan.steps.push_back(RadacctStep{&r});
      continue;
    }
    std::optional<Row> row = row_of(r, dictionary);
    if (!row) continue;
    auto [it, first] = sessions.try_emplace(r.session);
    Session& session = it->second;
    if (session.stopped) continue;  // the row is closed: this record changes nothing
    if (first || (plan.folds[session.fold].interim_first && r.status_type == accounting::status::kStart)) {
      session.wave = first ? 0 : session.wave + 1;
      session.fold = plan.folds.size();
      RW_ASSERT(plan.folds.size() < plan.folds.capacity());  // the rows never move
      plan.folds.push_back(fold_of(r.status_type, std::move(*row)));
      waves.push_back(session.wave);
    } else {
      fold_in(plan.folds[session.fold], r.status_type, *row);
    }
    session.stopped = r.status_type == accounting::status::kStop;
  }
  flush();
  return plan;
}

}  // namespace

std::optional<std::string> log_copy_rows(std::span<const accounting::HeldRecord> records,
                                         const radius::Dictionary& dictionary, const KnownKeys& known) {
  const std::vector<std::size_t> positions = entry_positions(records);
  const std::vector<bool> repeated = repeated_keys(records, known);
  std::string out;
  std::string json;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const accounting::Record& r = records[i].record;
    if (repeated[i]) continue;
    append_decimal(out, records[i].index);
    out += '\t';
    append_decimal(out, positions[i]);
    out += '\t';
    append_hex(out, r.key.bytes);
    out += '\t';
    append_decimal(out, r.status_type);
    out += '\t';
    append_copy_field(out, r.client);
    out += '\t';
    if (!append_copy_timestamp(out, r.received_unix_ms)) return std::nullopt;
    out += '\t';
    if (!append_copy_timestamp(out, r.event_unix_ms)) return std::nullopt;
    out += '\t';
    append_hex(out, r.session.bytes);
    out += '\t';
    // The JSON text is valid UTF-8 without NUL and escapes every control
    // character: of COPY's special characters only the backslash is left.
    json.clear();
    append_attributes_json(json, r, dictionary);
    for (std::size_t at = 0; at < json.size();) {
      const std::size_t slash = std::min(json.find('\\', at), json.size());
      out.append(json, at, slash - at);
      if (slash == json.size()) break;
      out += "\\\\";
      at = slash + 1;
    }
    out += '\n';
  }
  return out;
}

std::string batch_sql(Dialect dialect, std::span<const accounting::HeldRecord> records,
                      const radius::Dictionary& dictionary, const KnownKeys& known,
                      std::size_t first_position, LogRows log_rows) {
  if (records.empty()) return {};
  const bool pg = dialect == Dialect::kPostgres;
  auto timestamp_of = [pg](std::int64_t unix_ms) {
    return pg ? postgres_timestamp(unix_ms) : std::to_string(unix_ms / 1000);
  };
  // One multi-row insert for the log (unless its rows go by COPY). An entry
  // packs several records under one log index, so a record is (log index,
  // position in its entry); the batch splits an entry only when the sink
  // isolates a refused record (first_position). The primary key makes a
  // second export of the same record fail the whole transaction instead of
  // duplicating it (a defence behind the cursor check). A key already
  // logged (a record re-sent after the de-duplication window) adds nothing:
  // the first row stays.
  const bool log_insert = log_rows == LogRows::kInsert;
  std::string sql = log_insert ? "INSERT INTO " + std::string(kLogTable) +
                                     " (log_index, entry_position, record_key, status_type, client, "
                                     "received_time, event_time, acctuniqueid, attributes) VALUES "
                               : std::string();
  const std::vector<std::size_t> positions = entry_positions(records, first_position);
  const std::vector<bool> repeated = repeated_keys(records, known);
  for (std::size_t i = 0; log_insert && i < records.size(); ++i) {
    const accounting::Record& r = records[i].record;
    if (i > 0) sql += ",\n";
    sql += "(" + std::to_string(records[i].index) + ", " + std::to_string(positions[i]) + ", '" +
           r.key.hex() + "', " + std::to_string(r.status_type) + ", " + quote(r.client) + ", " +
           timestamp_of(r.received_unix_ms) + ", " + timestamp_of(r.event_unix_ms) + ", '" + r.session.hex() +
           "', " + quote(attributes_json(r, dictionary)) + (pg ? "::jsonb" : "") + ")";
  }
  if (log_insert) sql += " ON CONFLICT (record_key) DO NOTHING;\n";
  const RadacctPlan plan = radacct_steps(records, repeated, dictionary);
  for (const RadacctStep& step : plan.steps) {
    if (step.restart != nullptr) {
      sql += nas_restart_sql(dialect, *step.restart, dictionary);
      continue;
    }
    sql += insert_head();
    for (std::size_t i = 0; i < step.rows.size(); ++i)
      sql += (i > 0 ? ",\n" : "") + row_tuple(dialect, *step.rows[i]);
    sql += fold_clause(dialect, step.shape) + ";\n";
  }
  return sql;
}

std::optional<RadacctCopy> radacct_copy(std::span<const accounting::HeldRecord> records,
                                        const radius::Dictionary& dictionary, const KnownKeys& known) {
  const std::vector<bool> repeated = repeated_keys(records, known);
  RadacctCopy out;
  int group = 0;
  const RadacctPlan plan = radacct_steps(records, repeated, dictionary);
  for (const RadacctStep& step : plan.steps) {
    if (step.restart != nullptr) {
      out.sql += nas_restart_sql(Dialect::kPostgres, *step.restart, dictionary);
      continue;
    }
    ++group;
    for (const Row* row : step.rows) {
      out.rows += std::to_string(group);
      for (const Field& field : *row) {
        out.rows += '\t';
        if (!append_copy_value(out.rows, field)) return std::nullopt;
      }
      out.rows += '\n';
    }
    out.sql += "INSERT INTO radacct (" + std::string(kColumnList) + ") SELECT " + std::string(kColumnList) +
               " FROM " + std::string(kRadacctStage) + " WHERE grp = " + std::to_string(group) +
               fold_clause(Dialect::kPostgres, step.shape) + ";\n";
  }
  return out;
}

std::string radacct_stage_sql() {
  return "CREATE TEMP TABLE IF NOT EXISTS " + std::string(kRadacctStage) +
         " (grp integer NOT NULL, AcctSessionId text, AcctUniqueId text, UserName text, Realm text, "
         "NASIPAddress inet, NASPortId text, NASPortType text, AcctStartTime timestamp with time zone, "
         "AcctUpdateTime timestamp with time zone, AcctStopTime timestamp with time zone, AcctInterval "
         "bigint, "
         "AcctSessionTime bigint, "
         "AcctAuthentic text, ConnectInfo_start text, ConnectInfo_stop text, AcctInputOctets bigint, "
         "AcctOutputOctets bigint, CalledStationId text, CallingStationId text, AcctTerminateCause text, "
         "ServiceType text, FramedProtocol text, FramedIPAddress inet, FramedIPv6Address inet, "
         "FramedIPv6Prefix inet, FramedInterfaceId text, DelegatedIPv6Prefix inet) ON COMMIT DELETE ROWS";
}

}  // namespace rw::exporter
