// ExplainLog: selectors from the admin API, the ring of traces, their log
// lines and their JSON (docs/admin_api.md "/explain").
#include "gateway_shell/explain_log.h"

#include <algorithm>
#include <charconv>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "auth/mab.h"
#include "config/clients_file.h"
#include "io/admin_metrics.h"
#include "io/clock.h"
#include "io/socket_address.h"

namespace rw::gateway_shell {
namespace {

constexpr std::size_t kMaxSelectorText = 253;  // The longest User-Name or NAS name a selector takes.
constexpr std::size_t kMaxTracesPerAnswer = 1000;

// A text field of the body: absent is fine, anything but a short string is not.
Result<std::string, std::string> text_field(const nlohmann::json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::string();
  if (!it->is_string()) return fail(std::string("\"") + key + "\" must be a string");
  std::string value = it->get<std::string>();
  if (value.empty() || value.size() > kMaxSelectorText) {
    return fail(std::string("\"") + key + "\" must be 1 to 253 octets");
  }
  return value;
}

Result<double, std::string> number_field(const nlohmann::json& body, const char* key, double fallback,
                                         double low_exclusive, double high) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_number()) return fail(std::string("\"") + key + "\" must be a number");
  const double value = it->get<double>();
  if (!(value > low_exclusive && value <= high)) {
    return fail(std::string("\"") + key + "\" must be above " + std::to_string(low_exclusive) +
                " and at most " + std::to_string(high));
  }
  return value;
}

// `key`'s value in a query of numbers ("after=3&selector=2"); nothing when absent,
// an error when present and not a number.
Result<std::optional<std::uint64_t>, std::string> query_number(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) != key) continue;
    const std::string_view text = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
      return fail("'" + std::string(key) + "' must be a number");
    }
    return std::optional<std::uint64_t>(value);
  }
  return std::optional<std::uint64_t>();
}

double seconds_between(Instant from, Instant to) { return static_cast<double>((to - from).ns) / 1e9; }

nlohmann::ordered_json selector_json(const gateway::ExplainSelector& selector, Instant now) {
  nlohmann::ordered_json out{{"id", selector.id}};
  if (!selector.user.empty()) out["user"] = selector.user;
  if (!selector.nas.empty()) out["nas"] = selector.nas;
  if (!selector.mac.empty()) out["mac"] = selector.mac;
  out["fraction"] = selector.fraction;
  out["remaining_s"] = std::max(0.0, seconds_between(now, selector.until));
  return out;
}

}  // namespace

Result<gateway::ExplainSelector, std::string> ExplainLog::add(std::string_view text, Instant now) {
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return fail(std::string("the body must be a JSON object"));
  for (const auto& [key, value] : body.items()) {
    if (key != "user" && key != "nas" && key != "mac" && key != "fraction" && key != "seconds") {
      return fail("unknown key \"" + key + "\" (user, nas, mac, fraction, seconds)");
    }
  }
  gateway::ExplainSelector selector;
  auto user = text_field(body, "user");
  if (!user) return fail(user.error());
  auto nas = text_field(body, "nas");
  if (!nas) return fail(nas.error());
  auto mac = text_field(body, "mac");
  if (!mac) return fail(mac.error());
  auto fraction = number_field(body, "fraction", 1.0, 0.0, 1.0);
  if (!fraction) return fail(fraction.error());
  auto seconds =
      number_field(body, "seconds", gateway::kDefaultExplainSeconds, 0.0, gateway::kMaxExplainSeconds);
  if (!seconds) return fail(seconds.error());
  if (user->empty() && nas->empty() && mac->empty() && !body.contains("fraction")) {
    return fail(std::string("select by user, nas or mac, or give a fraction of all requests"));
  }
  selector.user = std::move(*user);
  selector.nas = std::move(*nas);
  if (!selector.nas.empty() && selector.nas.find('/') == std::string::npos) {
    if (auto address = config::parse_address_prefix(selector.nas, config::AddressFamily::kAny)) {
      selector.nas_address = gateway::Endpoint{.address = address->address, .is_v6 = address->is_v6};
    }
  }
  if (!mac->empty()) {
    const auto parsed = auth::parse_mac(*mac);
    if (!parsed) return fail("\"mac\" is not a MAC address: " + *mac);
    selector.mac = std::string(auth::view(auth::canonical_mac(*parsed)));
  }
  selector.fraction = *fraction;
  selector.until = now + Duration::milliseconds(static_cast<std::int64_t>(*seconds * 1000));

  std::lock_guard lock(mutex_);
  std::erase_if(selectors_, [&](const gateway::ExplainSelector& s) { return now >= s.until; });
  if (selectors_.size() >= gateway::kMaxExplainSelectors) {
    return fail("at most " + std::to_string(gateway::kMaxExplainSelectors) +
                " selectors at once; remove one (DELETE /explain?id=N)");
  }
  selector.id = next_selector_++;
  selectors_.push_back(selector);
  publish_locked();
  return selector;
}

bool ExplainLog::remove(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  const auto removed =
      std::erase_if(selectors_, [&](const gateway::ExplainSelector& s) { return s.id == id; });
  if (removed > 0) publish_locked();
  return removed > 0;
}

void ExplainLog::clear() {
  std::lock_guard lock(mutex_);
  selectors_.clear();
  publish_locked();
}

std::vector<gateway::ExplainSelector> ExplainLog::selectors(Instant now) {
  std::lock_guard lock(mutex_);
  if (std::erase_if(selectors_, [&](const gateway::ExplainSelector& s) { return now >= s.until; }) > 0) {
    publish_locked();
  }
  return selectors_;
}

void ExplainLog::publish_locked() {
  switch_.publish(selectors_.empty() ? nullptr
                                     : std::make_shared<const gateway::ExplainFilter>(
                                           gateway::ExplainFilter{.selectors = selectors_}));
}

std::vector<StoredTrace> ExplainLog::traces_after(std::uint64_t after, std::optional<std::uint64_t> selector,
                                                  std::size_t limit) const {
  std::vector<StoredTrace> out;
  std::lock_guard lock(mutex_);
  for (const StoredTrace& stored : ring_) {
    if (out.size() >= limit) break;
    if (stored.sequence <= after || (selector && stored.trace.selector != *selector)) continue;
    out.push_back(stored);
  }
  return out;
}

std::uint64_t ExplainLog::last_sequence() const {
  std::lock_guard lock(mutex_);
  return sequence_;
}

void ExplainLog::on_trace(gateway::ExplainTrace trace) {
  StoredTrace stored{.ended_unix_ms = io::unix_now_ms(), .trace = std::move(trace)};
  {
    std::lock_guard lock(mutex_);
    stored.sequence = ++sequence_;
    ring_.push_back(stored);
    while (ring_.size() > capacity_) ring_.pop_front();
  }
  const gateway::ExplainTrace& t = stored.trace;
  std::string steps;
  for (const std::string& step : t.steps) {
    if (!steps.empty()) steps += "; ";
    steps += step;
  }
  spdlog::info("explain #{} (selector {}): {} from {} client {} tenant {} user \"{}\": {} => {}",
               stored.sequence, t.selector, t.request, io::to_string(t.from),
               t.client.empty() ? "-" : t.client, t.tenant.empty() ? "-" : t.tenant, t.user, steps,
               t.outcome);
}

nlohmann::ordered_json trace_json(const StoredTrace& stored) {
  const gateway::ExplainTrace& t = stored.trace;
  return nlohmann::ordered_json{
      {"sequence", stored.sequence},   {"selector", t.selector}, {"unix_ms", stored.ended_unix_ms},
      {"from", io::to_string(t.from)}, {"client", t.client},     {"tenant", t.tenant},
      {"request", t.request},          {"user", t.user},         {"steps", t.steps},
      {"outcome", t.outcome}};
}

void add_explain_routes(io::AdminServer& server, ExplainLog& log) {
  server.route("GET", "/explain", [&log](const io::AdminRequest&) {
    const Instant now = io::monotonic_now();
    nlohmann::ordered_json selectors = nlohmann::ordered_json::array();
    for (const gateway::ExplainSelector& selector : log.selectors(now)) {
      selectors.push_back(selector_json(selector, now));
    }
    const nlohmann::ordered_json body{{"selectors", selectors}, {"last_sequence", log.last_sequence()}};
    return io::AdminResponse{200, "application/json", body.dump() + "\n"};
  });
  server.route("POST", "/explain", [&log](const io::AdminRequest& request) {
    const Instant now = io::monotonic_now();
    auto selector = log.add(request.body, now);
    if (!selector) return io::admin_error(400, selector.error());
    spdlog::info("explain: selector {} added: {}", selector->id, selector_json(*selector, now).dump());
    nlohmann::ordered_json body = selector_json(*selector, now);
    body["last_sequence"] = log.last_sequence();
    return io::AdminResponse{200, "application/json", body.dump() + "\n"};
  });
  server.route("DELETE", "/explain", [&log](const io::AdminRequest& request) {
    auto id = query_number(request.query, "id");
    if (!id) return io::admin_error(400, id.error());
    if (!*id) {
      log.clear();
      spdlog::info("explain: every selector removed");
    } else if (!log.remove(**id)) {
      return io::admin_error(404, "no selector " + std::to_string(**id));
    } else {
      spdlog::info("explain: selector {} removed", **id);
    }
    return io::AdminResponse{200, "application/json", "{}\n"};
  });
  server.route("GET", "/explain/traces", [&log](const io::AdminRequest& request) {
    auto after = query_number(request.query, "after");
    auto selector = query_number(request.query, "selector");
    auto limit = query_number(request.query, "limit");
    for (const auto* parsed : {&after, &selector, &limit}) {
      if (!*parsed) return io::admin_error(400, parsed->error());
    }
    const std::size_t most =
        std::min<std::uint64_t>(limit->value_or(kMaxTracesPerAnswer), kMaxTracesPerAnswer);
    std::string lines;
    for (const StoredTrace& stored : log.traces_after(after->value_or(0), *selector, most)) {
      lines += trace_json(stored).dump() + "\n";
    }
    return io::ndjson_response(std::move(lines));
  });
}

}  // namespace rw::gateway_shell
