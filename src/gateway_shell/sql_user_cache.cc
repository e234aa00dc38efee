// The SQL user cache and its connection pool; see sql_user_cache.h.
#include "gateway_shell/sql_user_cache.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>

namespace rw::gateway_shell {

SqlUserCache::SqlUserCache(SqlUserCacheOptions options, Connect connect,
                           std::shared_ptr<const radius::Dictionary> dictionary,
                           std::function<Instant()> clock, std::function<void(const std::string&)> on_error)
    : options_(options),
      connect_(std::move(connect)),
      dictionary_(std::move(dictionary)),
      clock_(std::move(clock)),
      on_error_(std::move(on_error)) {
  for (std::size_t i = 0; i < std::max<std::size_t>(options_.connections, 1); ++i) {
    pool_.emplace_back([this](std::stop_token stop) { run(stop); });
  }
}

SqlUserCache::~SqlUserCache() {
  for (std::jthread& thread : pool_) thread.request_stop();
  queued_.notify_all();
  pool_.clear();  // Joins.
}

gateway::UserStore::Lookup SqlUserCache::find(std::string_view user_name) {
  const Instant now = clock_();
  std::lock_guard lock(mutex_);
  auto it = entries_.find(user_name);
  if (it != entries_.end() && it->second.user && now < it->second.expires) {
    ++stats_.hits;
    return {Status::kFound, it->second.user};
  }
  return {};
}

bool SqlUserCache::fetch(std::string_view user_name, gateway::Ticket ticket) {
  const Instant now = clock_();
  std::shared_ptr<const auth::SqlUser> ready;
  AnswerSink sink;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(user_name);
    if (it != entries_.end() && it->second.user && now < it->second.expires) {
      // Filled since the worker's find(): answer at once, through the sink.
      ready = it->second.user;
      sink = answer_sink_;
    } else {
      ++stats_.misses;
      if (stats_.waiting >= options_.waiting_max) {
        ++stats_.unavailable;
        return false;
      }
      if (it == entries_.end() || !it->second.fetching) {
        // A miss, or an expired entry: fetch (once, whoever asks first).
        if (queue_.size() >= options_.queue_max) {
          ++stats_.unavailable;
          return false;
        }
        if (it == entries_.end()) {
          if (entries_.size() >= options_.entries_max) evict_one_locked(now);
          it = entries_.emplace(std::string(user_name), Entry{}).first;
        }
        // An expired entry is not served while it is refreshed: revocations
        // take effect within `ttl`.
        it->second.user.reset();
        it->second.fetching = true;
        queue_.emplace_back(user_name);
        queued_.notify_one();
      }
      it->second.waiters.push_back(ticket);
      ++stats_.waiting;
      return true;
    }
  }
  if (sink) sink(gateway::Answer{.ticket = ticket, .kind = gateway::AnswerKind::kUserLookup, .user = ready});
  return true;
}

void SqlUserCache::set_answer_sink(AnswerSink sink) {
  std::lock_guard lock(mutex_);
  answer_sink_ = std::move(sink);
}

SqlUserCacheStats SqlUserCache::stats() const {
  std::lock_guard lock(mutex_);
  SqlUserCacheStats out = stats_;
  out.entries = entries_.size();
  return out;
}

// Makes room for one entry: an expired one if the first few have expired,
// else any that is not being fetched. Bounded work per insertion.
void SqlUserCache::evict_one_locked(Instant now) {
  constexpr int kScan = 8;
  auto victim = entries_.end();
  int scanned = 0;
  for (auto it = entries_.begin(); it != entries_.end() && scanned < kScan; ++it, ++scanned) {
    if (it->second.fetching) continue;
    if (victim == entries_.end()) victim = it;
    if (it->second.expires <= now) {
      victim = it;
      break;
    }
  }
  // All scanned are being fetched: one goes; its waiters time out and are
  // dropped (the NAS retransmits).
  if (victim == entries_.end()) victim = entries_.begin();
  stats_.waiting -= victim->second.waiters.size();
  entries_.erase(victim);
}

void SqlUserCache::run(std::stop_token stop) {
  pthread_setname_np(pthread_self(), "rw-sql-users");
  std::unique_ptr<SqlUserSource> source;
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    if (!queued_.wait(lock, stop, [&] { return !queue_.empty(); })) break;
    std::string name = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();

    std::string error;
    std::shared_ptr<const auth::SqlUser> user;
    if (!source) {
      auto opened = connect_();
      if (opened) {
        source = std::move(*opened);
      } else {
        error = opened.error();
      }
    }
    if (source) {
      auto rows = source->fetch(name);
      if (!rows) {
        error = rows.error();
        source.reset();  // A fresh connection for the next fetch.
      } else {
        auto compiled = auth::compile_sql_user(name, *rows, dictionary_);
        if (compiled) {
          user = std::move(*compiled);
        } else {
          // Rows that do not compile would grant nothing sound: the user is
          // treated as unknown (rejected) and the operator hears why.
          error = "user " + name + ": " + compiled.error();
          user = std::make_shared<const auth::SqlUser>();
        }
      }
    }
    if (!error.empty() && on_error_) on_error_(error);
    const Instant now = clock_();

    lock.lock();
    ++stats_.fetches;
    if (!user) {
      ++stats_.fetch_errors;
      ++stats_.unavailable;
    }
    std::vector<gateway::Ticket> waiters;
    auto it = entries_.find(name);
    if (it != entries_.end()) {
      waiters.swap(it->second.waiters);
      stats_.waiting -= waiters.size();
      if (user) {
        it->second.expires = now + (user->known ? options_.ttl : options_.negative_ttl);
        it->second.user = user;
        it->second.fetching = false;
      } else {
        // Not cached: the next retransmission fetches again.
        entries_.erase(it);
      }
    }
    const AnswerSink sink = answer_sink_;
    lock.unlock();
    // Every request parked on this user hears the answer; none means the
    // database could not answer and the request is dropped, never rejected.
    if (sink) {
      for (const gateway::Ticket ticket : waiters) {
        sink(gateway::Answer{.ticket = ticket, .kind = gateway::AnswerKind::kUserLookup, .user = user});
      }
    }
    lock.lock();
    if (!source && !error.empty()) {
      // Do not spin on a database that is down: wait before the next connect.
      queued_.wait_for(lock, stop, std::chrono::nanoseconds(options_.reconnect_backoff.ns),
                       [] { return false; });
    }
  }
}

}  // namespace rw::gateway_shell
