// PgSession: one libpqxx connection that reconnects, with backoff, when the connection breaks or the server is
// shutting down or starting (RetryOptions), so a PostgreSQL restart costs the sinks a pause instead of a task
// failure. Private to connectors/postgres.
//
// run(what, fn) runs fn(connection); when fn throws a retryable error the connection is dropped and, after the
// backoff, fn runs again on a new one. fn must therefore be safe to run again from its start: one statement in
// autocommit mode, or a whole explicit transaction whose outcome fn checks first (a lost COMMIT / PREPARE
// response leaves the outcome unknown to the client, so the sinks look it up on the server).
// Thread-safety: one thread uses a session; cancel() may be called from any thread.
#pragma once

#include <pqxx/pqxx>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "sluice/connectors/postgres/postgres_options.h"

namespace sluice::postgres {

// True for errors after which a new connection may succeed: broken connection, SQLSTATE class 08
// (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now.
bool is_retryable(const std::exception& e);

class PgSession {
 public:
  // application_name: shown in pg_stat_activity (the two-phase-commit sink fences zombie sessions by it).
  PgSession(PostgresConnectionOptions options, std::string application_name, std::string what);
  ~PgSession();
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;

  template <class Fn>
  auto run(const std::string& what, Fn&& fn) -> decltype(fn(std::declval<pqxx::connection&>())) {
    for (int32_t attempt = 0;; ++attempt) {
      try {
        return fn(connection());
      } catch (const std::exception& e) {
        if (!is_retryable(e) || stopping_.load() || attempt + 1 >= options_.retry.max_attempts) {
          throw std::runtime_error(what_ + ": " + what + " failed" +
                                   (attempt > 0 ? " (after " + std::to_string(attempt + 1) + " attempts)" : "") +
                                   ": " + e.what());
        }
        drop();
        ++retries_;
        std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms(options_.retry, attempt)));
      }
    }
  }
  // The open connection (connecting first when there is none). Throws pqxx::broken_connection.
  pqxx::connection& connection();
  // Closes the connection (the server rolls back an open transaction; prepared ones stay).
  void drop();
  // Cancels the statement running on the connection and makes run() stop retrying. Any thread.
  void cancel();
  int64_t retries() const { return retries_; }

 private:
  PostgresConnectionOptions options_;
  std::string conninfo_;  // with application_name
  std::string what_;
  std::mutex mu_;         // guards conn_ against cancel()
  std::unique_ptr<pqxx::connection> conn_;
  std::atomic<bool> stopping_{false};
  int64_t retries_ = 0;
};

// Runs one statement in autocommit mode.
pqxx::result exec(pqxx::connection& c, const std::string& sql);

}  // namespace sluice::postgres
