#include "pg_session.h"

namespace sluice::postgres {

bool is_retryable(const std::exception& e) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) return true;
  if (const auto* s = dynamic_cast<const pqxx::sql_error*>(&e)) {
    const std::string& st = s->sqlstate();
    return st.rfind("08", 0) == 0 || st == "57P01" || st == "57P02" || st == "57P03";
  }
  return false;
}

namespace {
std::string with_application_name(const std::string& conninfo, const std::string& name) {
  if (conninfo.rfind("postgres://", 0) == 0 || conninfo.rfind("postgresql://", 0) == 0) {
    return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") + "application_name=" + name;
  }
  return conninfo + " application_name='" + name + "'";
}
}  // namespace

PgSession::PgSession(PostgresConnectionOptions options, std::string application_name, std::string what)
    : options_(std::move(options)), conninfo_(with_application_name(options_.conninfo, application_name)),
      what_(std::move(what)) {}

PgSession::~PgSession() { drop(); }

pqxx::connection& PgSession::connection() {
  std::lock_guard lock(mu_);
  if (conn_ && conn_->is_open()) return *conn_;
  conn_.reset();
  conn_ = std::make_unique<pqxx::connection>(conninfo_);
  return *conn_;
}

void PgSession::drop() {
  std::unique_ptr<pqxx::connection> old;
  {
    std::lock_guard lock(mu_);
    old = std::move(conn_);
  }
  if (old) {
    try {
      old->disconnect();
    } catch (...) {  // closing a broken connection: nothing left to release
    }
  }
}

void PgSession::cancel() {
  stopping_ = true;
  std::lock_guard lock(mu_);
  if (conn_) {
    try {
      conn_->cancel_query();
    } catch (...) {  // best effort: the connection may be broken already
    }
  }
}

pqxx::result exec(pqxx::connection& c, const std::string& sql) {
  pqxx::nontransaction tx(c);
  return tx.exec(sql);
}

}  // namespace sluice::postgres
