// The claim of a two-phase-commit sink's transaction-id prefix: a session-level advisory lock on the sink's
// database, held by a connection of the job's own (PostgreSQL: "Advisory Locks"). The server drops it when that
// session ends, which a killed process's closed socket does at once.
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "pg_session.h"
#include "sluice/connectors/postgres/postgres_two_phase_commit_sink.h"
#include "stable_hash.h"

namespace sluice::postgres {
namespace {

class HeldPrefixLock final : public HeldClaim {
 public:
  HeldPrefixLock(std::unique_ptr<PgSession> session, int64_t key) : session_(std::move(session)), key_(key) {}
  // Unlocked explicitly before the session closes: the server ends a closed session's backend, and so frees its
  // locks, only a moment after the client left, and the next job must find the prefix free once this one ended.
  // Once, without retrying: a new connection would be another session, and a lost one holds no lock.
  ~HeldPrefixLock() override {
    try {
      exec(session_->connection(), "SELECT pg_advisory_unlock(" + std::to_string(key_) + ")");
    } catch (const std::exception&) {
      // The session is gone, and its lock with it.
    }
  }

 private:
  std::unique_ptr<PgSession> session_;  // the lock lives at most as long as its session
  int64_t key_;
};

// The holder as pg_stat_activity shows its session (application_name is at most 63 bytes, so the job id and pid).
std::string holder_of(pqxx::connection& c, int64_t key) {
  const auto k = static_cast<uint64_t>(key);
  const pqxx::result r = exec(
      c, "SELECT a.application_name, coalesce(host(a.client_addr), 'a local socket'), a.backend_start "
         "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
         "AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
         "AND l.classid = " + std::to_string(k >> 32) + " AND l.objid = " +
         std::to_string(k & 0xffffffffu) + " LIMIT 1");
  if (r.empty()) return "another session (it ended while we asked)";
  return "'" + r[0][0].as<std::string>() + "' (a session from " + r[0][1].as<std::string>() + ", since " +
         r[0][2].as<std::string>() + ")";
}

}  // namespace

ExclusiveClaim transaction_prefix_claim(const PostgresConnectionOptions& connection, const std::string& prefix) {
  ExclusiveClaim claim;
  claim.what = "PostgreSQL transaction prefix '" + prefix + "'";
  claim.take = [connection, prefix, what = claim.what](const ClaimingJob& job) -> Result<std::unique_ptr<HeldClaim>> {
    // pg_stat_activity shows this name to the job refused because of the lock.
    const std::string app = "sluice job " + job.job_id + " pid " + std::to_string(::getpid());
    auto session = std::make_unique<PgSession>(connection, app, "PostgreSQL two-phase-commit sink (" + what + ")");
    const auto key = static_cast<int64_t>(stable_hash("sluice transaction prefix " + prefix));
    try {
      const bool locked = session->run("taking the lock of the transaction prefix", [&](pqxx::connection& c) {
        return exec(c, "SELECT pg_try_advisory_lock(" + std::to_string(key) + ")")[0][0].as<bool>();
      });
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
    return std::unique_ptr<HeldClaim>(std::make_unique<HeldPrefixLock>(std::move(session), key));
  };
  return claim;
}

}  // namespace sluice::postgres
