#include "test_servers.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
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

// The NAME=value assignments of a shell file such as STATE_DIR/env: `export ` before the name and single or
// double quotes around the value are removed; other lines are ignored. Empty when the file is missing.
std::map<std::string, std::string> read_env_file(const std::string& path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    line.erase(0, first);
    if (line.rfind("export ", 0) == 0) line.erase(0, 7);
    const auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string value = line.substr(eq + 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == ' ' || value.back() == '\t')) value.pop_back();
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    values[line.substr(0, eq)] = value;
  }
  return values;
}

}  // namespace

TestServer kafka_test_server() {
  return find_server("SLUICE_KAFKA_BOOTSTRAP", "SLUICE_KAFKA_STATE_DIR", "bootstrap");
}

TestServer postgres_test_server() { return find_server("SLUICE_PG_CONNINFO", "SLUICE_PG_STATE_DIR", "conninfo"); }

S3TestServer s3_test_server() {
  const std::string state_dir = env("SLUICE_S3_STATE_DIR");
  const auto file = state_dir.empty() ? std::map<std::string, std::string>() : read_env_file(state_dir + "/env");
  // The environment variable when set, else the state directory's env file, else `fallback`.
  auto value = [&file](const char* name, const char* fallback) {
    if (std::string v = env(name); !v.empty()) return v;
    if (auto it = file.find(name); it != file.end() && !it->second.empty()) return it->second;
    return std::string(fallback);
  };
  S3TestServer s3;
  s3.endpoint = value("SLUICE_S3_ENDPOINT", "");
  while (!s3.endpoint.empty() && s3.endpoint.back() == '/') s3.endpoint.pop_back();
  s3.access_key = value("SLUICE_S3_ACCESS_KEY", "");
  s3.secret_key = value("SLUICE_S3_SECRET_KEY", "");
  s3.region = value("SLUICE_S3_REGION", "us-east-1");
  s3.bucket = value("SLUICE_S3_BUCKET", "sluice-test");

  TestServer& server = s3.server;
  if (s3.endpoint.empty()) {
    if (state_dir.empty()) {
      server.reason =
          "neither SLUICE_S3_ENDPOINT nor SLUICE_S3_STATE_DIR is set: run the test through ctest (which starts the "
          "server) or set SLUICE_S3_ENDPOINT, SLUICE_S3_ACCESS_KEY and SLUICE_S3_SECRET_KEY";
    } else if (std::string reason = first_line(state_dir + "/unavailable"); !reason.empty()) {
      server.state = TestServer::State::kUnavailable;
      server.reason = reason;
    } else {
      server.reason = "no SLUICE_S3_ENDPOINT in " + state_dir +
                      "/env: the server fixture did not start (see its log in " + state_dir + ")";
    }
    return s3;
  }
  for (const auto& [name, field] : {std::pair{"SLUICE_S3_ACCESS_KEY", &s3.access_key},
                                    std::pair{"SLUICE_S3_SECRET_KEY", &s3.secret_key}}) {
    if (field->empty()) {
      server.reason = std::string("the S3 endpoint is ") + s3.endpoint + " but " + name + " is not set";
      return s3;
    }
  }
  server.state = TestServer::State::kAvailable;
  server.address = s3.endpoint;
  return s3;
}

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
