// The claim of a two-phase-commit sink's transaction-id prefix: a session-level advisory lock on the sink's
// database, held by a connection of the job's own (PostgreSQL: "Advisory Locks"). The server drops it when that
// session ends, which a killed process's closed socket does at once; a session that ends while the job runs is
// noticed and the lock taken again (HeldPrefixLock).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "pg_session.h"
#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"
#include "stable_hash.h"

namespace sluice::postgres {
namespace {

// The lock as pg_locks shows it: a 64-bit advisory key is split into classid (high half) and objid (low half).
std::string lock_row_condition(int64_t key) {
  const auto k = static_cast<uint64_t>(key);
  return "l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = " + std::to_string(k >> 32) +
         " AND l.objid = " + std::to_string(k & 0xffffffffu);
}

// The holder as pg_stat_activity shows its session (application_name is at most 63 bytes, so the job id and pid).
std::string holder_of(pqxx::connection& c, int64_t key) {
  const pqxx::result r = exec(
      c, "SELECT a.application_name, coalesce(host(a.client_addr), 'a local socket'), a.backend_start "
         "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE " + lock_row_condition(key) +
         " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) LIMIT 1");
  if (r.empty()) return "another session (it ended while we asked)";
  return "'" + r[0][0].as<std::string>() + "' (a session from " + r[0][1].as<std::string>() + ", since " +
         r[0][2].as<std::string>() + ")";
}

bool try_lock(pqxx::connection& c, int64_t key) {
  return exec(c, "SELECT pg_try_advisory_lock(" + std::to_string(key) + ")")[0][0].as<bool>();
}

// Whether this session still holds the lock (a session that ended throws instead).
bool still_locked(pqxx::connection& c, int64_t key) {
  return !exec(c, "SELECT 1 FROM pg_locks l WHERE l.pid = pg_backend_pid() AND " + lock_row_condition(key)).empty();
}

// Holds the lock and checks it every `check_interval_ms` on a thread of its own. The check keeps the session
// busy (so idle_session_timeout never ends it) and notices a session that ended anyway (pg_terminate_backend, a
// server restart, a network cut): the lock went with it, so the claim says so in the log and takes the lock again
// on a new session, or names the session that took it meanwhile (that job may roll back this one's prepared
// transactions). A lost claim does not fail the job: its transactions stay its own until another job uses the
// prefix, as with a Kafka prefix whose group member timed out.
class HeldPrefixLock final : public HeldClaim {
 public:
  HeldPrefixLock(std::unique_ptr<PgSession> session, int64_t key, std::string what, int64_t check_interval_ms)
      : session_(std::move(session)), key_(key), what_(std::move(what)), interval_(check_interval_ms) {
    watcher_ = std::thread([this] { watch(); });
  }
  // Unlocked explicitly before the session closes: the server ends a closed session's backend, and so frees its
  // locks, only a moment after the client left, and the next job must find the prefix free once this one ended.
  // Once, without retrying: a new connection would be another session, and a lost one holds no lock.
  ~HeldPrefixLock() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    watcher_.join();
    if (!held_) return;
    try {
      exec(session_->connection(), "SELECT pg_advisory_unlock(" + std::to_string(key_) + ")");
    } catch (const std::exception&) {
      // The session is gone, and its lock with it.
    }
  }
  HeldPrefixLock(const HeldPrefixLock&) = delete;
  HeldPrefixLock& operator=(const HeldPrefixLock&) = delete;

 private:
  void watch() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, interval_, [this] { return stopping_; })) {
      lock.unlock();
      check();
      lock.lock();
    }
  }

  void check() {
    std::string why = "the server no longer lists its lock";
    try {
      if (held_ && still_locked(session_->connection(), key_)) return;
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (held_) {
      held_ = false;
      spdlog::error("postgres sink: the job lost its claim of {}: its session ended ({}); taking it again on a new "
                    "session",
                    what_, why);
    }
    session_->drop();
    try {
      pqxx::connection& c = session_->connection();
      if (try_lock(c, key_)) {
        held_ = true;
        holder_.clear();
        spdlog::warn("postgres sink: the job holds its claim of {} again", what_);
        return;
      }
      if (std::string holder = holder_of(c, key_); holder != holder_) {
        holder_ = std::move(holder);
        spdlog::error("postgres sink: {} is now held by {}: that job may roll back this one's prepared transactions; "
                      "this job takes the prefix again once it is free",
                      what_, holder_);
      }
    } catch (const std::exception& e) {
      spdlog::warn("postgres sink: cannot take the claim of {} again yet: {}", what_, e.what());
    }
  }

  std::unique_ptr<PgSession> session_;  // the lock lives at most as long as its session
  int64_t key_;
  std::string what_;
  std::chrono::milliseconds interval_;
  bool held_ = true;    // used by the watcher thread, then by the destructor once it joined
  std::string holder_;  // the other session last named in the log (watcher thread)
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread watcher_;
};

}  // namespace

ExclusiveClaim transaction_prefix_claim(const PostgresConnectionOptions& connection, const std::string& prefix,
                                        int64_t check_interval_ms) {
  ExclusiveClaim claim;
  claim.what = "PostgreSQL transaction prefix '" + prefix + "'";
  claim.take = [connection, prefix, check_interval_ms,
                what = claim.what](const ClaimingJob& job) -> Result<std::unique_ptr<HeldClaim>> {
    // pg_stat_activity shows this name to the job refused because of the lock.
    const std::string app = "sluice job " + job.job_id + " pid " + std::to_string(::getpid());
    auto session = std::make_unique<PgSession>(connection, app, "PostgreSQL two-phase-commit sink (" + what + ")");
    const auto key = static_cast<int64_t>(stable_hash("sluice transaction prefix " + prefix));
    try {
      const bool locked = session->run("taking the lock of the transaction prefix",
                                       [&](pqxx::connection& c) { return try_lock(c, key); });
      if (!locked) {
        const std::string holder =
            session->run("asking who holds the transaction prefix", [&](pqxx::connection& c) { return holder_of(c, key); });
        return Status::failed_precondition(what + " is in use by " + holder +
                                           ": two running jobs sharing a prefix would roll back each other's prepared "
                                           "transactions; give each its own transaction_id_prefix (or job name and "
                                           "sink uid)");
      }
    } catch (const std::exception& e) {
      return Status::io_error("cannot check that " + what + " is free: " + e.what());
    }
    return std::unique_ptr<HeldClaim>(
        std::make_unique<HeldPrefixLock>(std::move(session), key, what, check_interval_ms));
  };
  return claim;
}

}  // namespace sluice::postgres
