// Where the test servers started by scripts/test-servers/ are, for tests labelled `kafka` or `postgres`.
//
// ctest starts the servers as fixtures (test-infra/CMakeLists.txt) and gives each test that requires one the
// fixture's state directory in SLUICE_KAFKA_STATE_DIR / SLUICE_PG_STATE_DIR. A developer can instead point a
// test at a server of their own with SLUICE_KAFKA_BOOTSTRAP / SLUICE_PG_CONNINFO, which win.
#pragma once

#include <string>

namespace sluice::testing {

// Exit code of a test program whose server cannot be had (ctest SKIP_RETURN_CODE): the tests are skipped, not
// passed, and ctest prints them as "Skipped".
inline constexpr int kSkipReturnCode = 77;

struct TestServer {
  enum class State {
    kAvailable,    // address is set
    kUnavailable,  // the start script could not fetch the server (Maven Central unreachable): skip loudly
    kNotStarted,   // neither an address nor a started fixture: the test was run outside ctest; fail
  };
  State state = State::kNotStarted;
  std::string address;  // Kafka: "host:port" bootstrap list; PostgreSQL: a libpq connection string
  std::string reason;   // for kUnavailable / kNotStarted: what is missing, in words
};

// The Kafka broker: SLUICE_KAFKA_BOOTSTRAP, else $SLUICE_KAFKA_STATE_DIR/bootstrap (or .../unavailable).
TestServer kafka_test_server();

// The PostgreSQL server: SLUICE_PG_CONNINFO, else $SLUICE_PG_STATE_DIR/conninfo.
TestServer postgres_test_server();

// The body of main() for a GoogleTest program that needs `server`: runs the tests when it is available,
// returns kSkipReturnCode with a loud banner when it is unavailable, and fails (1) when it was not started.
int run_tests_with_server(const TestServer& server, const char* server_name, int argc, char** argv);

}  // namespace sluice::testing
