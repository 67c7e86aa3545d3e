#include "test_servers.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sluice::testing {
namespace {

// The first line of `path`, without its newline; empty when the file is missing.
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

TestServer find_server(const char* address_var, const char* state_var, const char* address_file) {
  TestServer server;
  if (std::string address = env(address_var); !address.empty()) {
    server.state = TestServer::State::kAvailable;
    server.address = address;
    return server;
  }
  const std::string state_dir = env(state_var);
  if (state_dir.empty()) {
    server.reason = std::string("neither ") + address_var + " nor " + state_var +
                    " is set: run the test through ctest (which starts the server) or set " + address_var;
    return server;
  }
  if (std::string address = first_line(state_dir + "/" + address_file); !address.empty()) {
    server.state = TestServer::State::kAvailable;
    server.address = address;
    return server;
  }
  if (std::string reason = first_line(state_dir + "/unavailable"); !reason.empty()) {
    server.state = TestServer::State::kUnavailable;
    server.reason = reason;
    return server;
  }
  server.reason = "no " + state_dir + "/" + address_file + ": the server fixture did not start (see its log in " +
                  state_dir + ")";
  return server;
}

}  // namespace

TestServer kafka_test_server() {
  return find_server("SLUICE_KAFKA_BOOTSTRAP", "SLUICE_KAFKA_STATE_DIR", "bootstrap");
}

TestServer postgres_test_server() { return find_server("SLUICE_PG_CONNINFO", "SLUICE_PG_STATE_DIR", "conninfo"); }

int run_tests_with_server(const TestServer& server, const char* server_name, int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  switch (server.state) {
    case TestServer::State::kAvailable:
      std::printf("%s test server: %s\n", server_name, server.address.c_str());
      return RUN_ALL_TESTS();
    case TestServer::State::kUnavailable:
      std::fprintf(stderr,
                   "################################################################\n"
                   "SKIPPED: every test of this program needs the %s test server, which is unavailable:\n"
                   "  %s\n"
                   "################################################################\n",
                   server_name, server.reason.c_str());
      return kSkipReturnCode;
    case TestServer::State::kNotStarted:
      break;
  }
  std::fprintf(stderr, "FAILED: no %s test server: %s\n", server_name, server.reason.c_str());
  return 1;
}

}  // namespace sluice::testing
