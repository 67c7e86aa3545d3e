// Where the test servers started by scripts/test-servers/ are, for tests labelled `kafka`, `postgres` or `s3`.
//
// ctest starts the servers as fixtures (test-infra/CMakeLists.txt) and gives each test that requires one the
// fixture's state directory in SLUICE_KAFKA_STATE_DIR / SLUICE_PG_STATE_DIR / SLUICE_S3_STATE_DIR. A developer can
// instead point a test at a server of their own with SLUICE_KAFKA_BOOTSTRAP / SLUICE_PG_CONNINFO /
// SLUICE_S3_ENDPOINT (and its companions, see s3_test_server()), which win.
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
  std::string address;  // Kafka: "host:port" bootstrap list; PostgreSQL: a libpq connection string; S3: the endpoint
  std::string reason;   // for kUnavailable / kNotStarted: what is missing, in words
};

// The Kafka broker: SLUICE_KAFKA_BOOTSTRAP, else $SLUICE_KAFKA_STATE_DIR/bootstrap (or .../unavailable).
TestServer kafka_test_server();

// The PostgreSQL server: SLUICE_PG_CONNINFO, else $SLUICE_PG_STATE_DIR/conninfo.
TestServer postgres_test_server();

// The S3-compatible server (S3Proxy over a local folder, scripts/test-servers/s3-start): where it is and whom it
// accepts. Requests are signed with AWS Signature V4 (service "s3", path-style URLs: <endpoint>/<bucket>/<key>) and
// must carry an x-amz-content-sha256 header (S3Proxy answers 500 without one; "UNSIGNED-PAYLOAD" is accepted).
struct S3TestServer {
  TestServer server;       // server.address == endpoint when available
  std::string endpoint;    // "http://127.0.0.1:<port>", no trailing slash
  std::string access_key;  // the access key id of the test identity
  std::string secret_key;  // its secret access key
  std::string region;      // "us-east-1"
  std::string bucket;      // "sluice-test", created by the fixture (empty at its start, shared by all s3 tests:
                           // a test writes under keys of its own, e.g. a prefix with its name)
};

// The S3 test server. Each field comes from its environment variable when set and not empty (they win):
// SLUICE_S3_ENDPOINT, SLUICE_S3_ACCESS_KEY, SLUICE_S3_SECRET_KEY, SLUICE_S3_REGION, SLUICE_S3_BUCKET; else from the
// same names in $SLUICE_S3_STATE_DIR/env (written by s3-start: lines `export NAME=value`, or `NAME=value`, values
// optionally quoted); region and bucket default to us-east-1 and sluice-test. Without an endpoint the state is
// kUnavailable when $SLUICE_S3_STATE_DIR/unavailable exists (Maven Central unreachable), else kNotStarted; with an
// endpoint but no access or secret key it is kNotStarted, the reason naming the missing variable.
S3TestServer s3_test_server();

// The body of main() for a GoogleTest program that needs `server`: runs the tests when it is available,
// returns kSkipReturnCode with a loud banner when it is unavailable, and fails (1) when it was not started.
int run_tests_with_server(const TestServer& server, const char* server_name, int argc, char** argv);

}  // namespace sluice::testing
