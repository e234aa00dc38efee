// Benchmarks of the accounting state machine (docs/accounting.md
// "Performance"): make_record on the gateway, validate and apply of a
// 64-record entry on the raft loop, and snapshot/restore with a backlog of
// 100,000 unexported records and with the ledger filled to its default
// bounds (docs/consensus.md trap 8: the snapshot is built on the loop
// thread, so its time is a pause of the loop).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accounting/accounting_request_for_test.h"
#include "accounting/ledger.h"

namespace rw::accounting {
namespace {

using testing::RequestSpec;

// A typical Interim-Update of a Wi-Fi session: about 120 octets of attributes.
RequestSpec interim_of(std::uint64_t n) {
  RequestSpec spec;
  spec.identifier = static_cast<std::uint8_t>(n);
  spec.status_type = status::kInterimUpdate;
  spec.user_name = "user" + std::to_string(n % 50'000) + "@example.net";
  spec.session_id = "5F3A" + std::to_string(n % 50'000) + "-0000" + std::to_string(n / 50'000);
  spec.nas_identifier = "ap-" + std::to_string(n % 200);
  spec.session_time_s = static_cast<std::uint32_t>(n);
  spec.input_octets = static_cast<std::uint32_t>(n * 1500);
  spec.delay_s = 0;
  return spec;
}

std::vector<Record> records(std::uint64_t first, std::size_t count) {
  std::vector<Record> out;
  out.reserve(count);
  for (std::uint64_t n = first; n < first + count; ++n) {
    out.push_back(testing::record_of(interim_of(n), 1'700'000'000'000 + static_cast<std::int64_t>(n)));
  }
  return out;
}

void BM_MakeRecord(benchmark::State& state) {
  const testing::AccountingRequest request(interim_of(1));
  const radius::Packet packet = request.packet();
  for (auto _ : state) {
    auto record = make_record(packet, "nas1", 1'700'000'000'000, testing::default_recipe());
    benchmark::DoNotOptimize(record);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MakeRecord);

void BM_ValidateEntry64(benchmark::State& state) {
  const std::vector<std::uint8_t> entry = encode_records_entry(records(0, 64));
  for (auto _ : state) benchmark::DoNotOptimize(validate_entry(entry));
  state.SetItemsProcessed(state.iterations() * 64);
  state.counters["entry_bytes"] = static_cast<double>(entry.size());
}
BENCHMARK(BM_ValidateEntry64);

// Apply of distinct 64-record entries into a ledger that keeps growing, as
// on a member whose exporter lags; the ledger restarts every 1,000 entries.
void BM_ApplyEntry64(benchmark::State& state) {
  constexpr std::size_t kEntries = 1000;
  std::vector<std::vector<std::uint8_t>> entries;
  entries.reserve(kEntries);
  for (std::size_t i = 0; i < kEntries; ++i) entries.push_back(encode_records_entry(records(i * 64, 64)));
  Ledger ledger;
  std::uint64_t index = 0;
  for (auto _ : state) {
    if (index == kEntries) {
      state.PauseTiming();
      ledger = Ledger();
      index = 0;
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(ledger.apply(index + 1, entries[index]));
    ++index;
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_ApplyEntry64);

// Apply of a 64-record entry that is all duplicates (a re-submission).
void BM_ApplyDuplicateEntry64(benchmark::State& state) {
  const std::vector<std::uint8_t> entry = encode_records_entry(records(0, 64));
  Ledger ledger;
  std::uint64_t index = 1;
  (void)ledger.apply(index, entry);
  for (auto _ : state) benchmark::DoNotOptimize(ledger.apply(++index, entry));
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_ApplyDuplicateEntry64);

// A ledger holding `backlog` unexported records (and the sessions they open).
const Ledger& backlog_ledger(std::size_t backlog) {
  static Ledger ledger = [backlog] {
    Ledger built;
    std::uint64_t index = 0;
    for (std::size_t first = 0; first < backlog; first += 64) {
      (void)built.apply(++index, encode_records_entry(records(first, 64)));
    }
    return built;
  }();
  return ledger;
}

// Times snapshot_into() of `ledger` into one buffer kept across iterations,
// as the member's FsmAdapter does (docs/consensus.md trap 8), and reports
// what it holds.
void measure_snapshot(benchmark::State& state, const Ledger& ledger) {
  std::size_t size = 0;
  std::vector<std::uint8_t> buffer;
  for (auto _ : state) {
    buffer.clear();
    ledger.snapshot_into(buffer);
    size = buffer.size();
    benchmark::DoNotOptimize(buffer.data());
  }
  state.counters["snapshot_bytes"] = static_cast<double>(size);
  state.counters["records"] = static_cast<double>(ledger.records().size());
  state.counters["held_bytes"] = static_cast<double>(ledger.held_bytes());
  state.counters["window"] = static_cast<double>(ledger.window_keys());
  state.counters["sessions"] = static_cast<double>(ledger.sessions().size());
  state.counters["sessions_bytes"] = static_cast<double>(ledger.sessions_bytes());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

void BM_Snapshot100k(benchmark::State& state) { measure_snapshot(state, backlog_ledger(100'032)); }
BENCHMARK(BM_Snapshot100k)->Unit(benchmark::kMillisecond);

// A ledger filled to the default LedgerLimits: held_records_max unexported
// records, the window at exported_keys_max keys, and the session table at
// sessions_max (or sessions_bytes_max) with long names, as a large ISP's
// NASes write them. Each record opens its own session.

const Ledger& ledger_at_bounds() {
  static const Ledger ledger = [] {
    const LedgerLimits limits;
    Ledger built(limits);
    // Every record opens a session: enough records to fill the held bound
    // and the window, and the session table to its count or byte bound.
    const std::size_t total =
        std::max(std::min(limits.sessions_max, limits.sessions_bytes_max / encoded_size(Session{}) + 1),
                 limits.held_records_max + limits.exported_keys_max);
    const std::int64_t t = 1'700'000'000'000;
    std::uint64_t index = 0;
    std::vector<Record> batch;
    for (std::uint64_t n = 0; n < total; ++n) {
      batch.push_back(testing::record_of(testing::broadband_start(n), t));
      if (batch.size() == 64 || n + 1 == total) {
        (void)built.apply(++index, encode_records_entry(batch, t));
        batch.clear();
      }
      // At a held bound, export the oldest entry, as an exporter that keeps
      // the backlog at the bound would.
      if (batch.empty() && !built.accepting()) {
        (void)built.apply(++index, encode_export_cursor_entry(built.records().front().index, t));
      }
    }
    return built;
  }();
  return ledger;
}

void BM_SnapshotAtDefaultBounds(benchmark::State& state) { measure_snapshot(state, ledger_at_bounds()); }
BENCHMARK(BM_SnapshotAtDefaultBounds)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Restore100k(benchmark::State& state) {
  const std::vector<std::uint8_t> bytes = backlog_ledger(100'032).snapshot();
  for (auto _ : state) {
    auto restored = Ledger::restore(bytes);
    benchmark::DoNotOptimize(restored);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_Restore100k)->Unit(benchmark::kMillisecond);

// ---- Cost against the session table's size (issue 15, "cost grows linearly")
//
// Apply of 64-record entries of Interim-Updates to sessions spread over a
// table of N live sessions, each entry followed by the export cursor moving
// past it (as on a member whose exporter keeps up): the per-record cost
// should not grow with N, and the memory only linearly.

// Resident memory of this process, KiB (/proc/self/statm, 4 KiB pages).
double resident_kib() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long size = 0;
  unsigned long resident = 0;
  const int read = std::fscanf(statm, "%lu %lu", &size, &resident);
  std::fclose(statm);
  return read == 2 ? static_cast<double>(resident) * 4 : 0;
}

struct LiveSessions {
  Ledger ledger;
  std::uint64_t index = 0;
  double resident_kib_growth = 0;  // while the table was filled
  // The churn benchmark's place: sessions [next_stop, next_start) are the
  // ones it has not stopped yet. Google Benchmark calls a benchmark function
  // more than once, so the place outlives each call.
  std::uint64_t next_stop = 0;
  std::uint64_t next_start = 0;
};

// A ledger with `count` live sessions (broadband Starts, exported), built
// once per count. The session bounds are raised so that every one is
// tracked.
LiveSessions& ledger_with_sessions(std::size_t count) {
  static std::map<std::size_t, std::unique_ptr<LiveSessions>> built;
  auto& slot = built[count];
  if (slot) return *slot;
  LedgerLimits limits;
  limits.sessions_max = count + 1;
  limits.sessions_bytes_max = std::size_t{4} << 30;
  const double before = resident_kib();
  slot = std::make_unique<LiveSessions>(LiveSessions{Ledger(limits)});
  LiveSessions& live = *slot;
  const std::int64_t t = 1'700'000'000'000;
  std::vector<Record> batch;
  for (std::uint64_t n = 0; n < count; ++n) {
    batch.push_back(testing::record_of(testing::broadband_start(n), t));
    if (batch.size() == 64 || n + 1 == count) {
      (void)live.ledger.apply(++live.index, encode_records_entry(batch, t));
      (void)live.ledger.apply(live.index + 1, encode_export_cursor_entry(live.index, t));
      ++live.index;
      batch.clear();
    }
  }
  live.resident_kib_growth = resident_kib() - before;
  live.next_start = count;
  return live;
}

// Times the apply of 64-record entries in turn, each followed by the export
// cursor moving past it (as on a member whose exporter keeps up), and makes
// them again, untimed, after each pass. Returns how many entries of the
// last pass were applied.
template <typename MakeEntries>
std::size_t apply_in_turn(benchmark::State& state, LiveSessions& live,
                          const std::vector<std::vector<std::uint8_t>>& entries,
                          const MakeEntries& make_entries) {
  make_entries();
  std::size_t next = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(live.ledger.apply(++live.index, entries[next]));
    (void)live.ledger.apply(live.index + 1, encode_export_cursor_entry(live.index, 1'700'000'000'000));
    ++live.index;
    if (++next == entries.size()) {
      state.PauseTiming();
      make_entries();
      next = 0;
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations() * 64);
  state.counters["sessions"] = static_cast<double>(live.ledger.sessions().size());
  return next;
}

void BM_ApplyInterimsWithLiveSessions(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  LiveSessions& live = ledger_with_sessions(count);
  // 200 entries of Interim-Updates of sessions spread over the table (a
  // stride coprime with the count visits all of it), made again with later
  // session times after each pass so that no record repeats an earlier one.
  constexpr std::size_t kEntries = 200;
  std::vector<std::vector<std::uint8_t>> entries(kEntries);
  std::uint64_t n = 0;
  std::uint64_t update = 0;
  const auto make_entries = [&] {
    for (auto& entry : entries) {
      std::vector<Record> batch;
      for (int r = 0; r < 64; ++r) {
        n = (n + 7919) % count;
        testing::RequestSpec spec = testing::broadband_start(n);
        spec.status_type = status::kInterimUpdate;
        spec.session_time_s = static_cast<std::uint32_t>(++update);
        spec.input_octets = static_cast<std::uint32_t>(update * 1500);
        batch.push_back(testing::record_of(spec, 1'700'000'000'000));
      }
      entry = encode_records_entry(batch, 1'700'000'000'000);
    }
  };
  (void)apply_in_turn(state, live, entries, make_entries);
  state.counters["sessions_bytes"] = static_cast<double>(live.ledger.sessions_bytes());
  state.counters["resident_kib_growth"] = live.resident_kib_growth;
}
BENCHMARK(BM_ApplyInterimsWithLiveSessions)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

// The churn of a table that stays at N live sessions: 64-record entries of
// 32 Stops of the oldest sessions and 32 Starts of new ones, each entry
// exported. Opening and closing touch every derived index (per NAS, per
// user, expiry), so this is where an index whose cost grows with the table
// shows (docs/accounting.md "Cost against the session table").
void BM_ApplyStartsAndStopsWithLiveSessions(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  LiveSessions& live = ledger_with_sessions(count);
  constexpr std::size_t kEntries = 200;
  std::vector<std::vector<std::uint8_t>> entries(kEntries);
  const auto make_entries = [&] {
    for (auto& entry : entries) {
      std::vector<Record> batch;
      for (int r = 0; r < 32; ++r) {
        testing::RequestSpec stop = testing::broadband_start(live.next_stop++);
        stop.status_type = status::kStop;
        stop.session_time_s = 3600;
        batch.push_back(testing::record_of(stop, 1'700'000'000'000));
        batch.push_back(testing::record_of(testing::broadband_start(live.next_start++), 1'700'000'000'000));
      }
      entry = encode_records_entry(batch, 1'700'000'000'000);
    }
  };
  const std::size_t applied = apply_in_turn(state, live, entries, make_entries);
  // Give back the places of the entries made but not applied.
  live.next_stop -= 32 * (kEntries - applied);
  live.next_start -= 32 * (kEntries - applied);
}
BENCHMARK(BM_ApplyStartsAndStopsWithLiveSessions)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

}  // namespace
}  // namespace rw::accounting
