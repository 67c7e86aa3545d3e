// The S3-compatible server the storage benchmark writes to: one it starts with scripts/test-servers/s3-start
// (S3Proxy on loopback, test-infra/README.md) in a folder of its own and stops at the end, or a running one
// whose state folder (the `env` file s3-start wrote) it is given.
//
// Thread-safety: not shared between threads.
#pragma once

#include <string>

#include "sluice/config/configuration.h"
#include "sluice/core/status.h"

namespace sluice::bench {

struct S3Server {
  std::string endpoint;  // http://127.0.0.1:<port>
  std::string access_key;
  std::string secret_key;
  std::string region;
  std::string bucket;
  std::string state_dir;
  bool started_here = false;  // stop_s3_server stops it
  // Non-empty when s3-start could not fetch the server (no network): the reason. Nothing else is set.
  std::string unavailable;
};

// Runs `<scripts_dir>/s3-start state_dir` (about 1.5 s; output on stderr) and reads the server it started.
Result<S3Server> start_s3_server(const std::string& scripts_dir, const std::string& state_dir);
// Reads `state_dir/env` (or `state_dir/unavailable`) of a server started by s3-start. kNotFound naming the
// file when neither is there; kInvalidArgument when a variable is missing.
Result<S3Server> read_s3_server(const std::string& state_dir);
// Runs `<scripts_dir>/s3-stop` for a server started here; nothing for another one.
void stop_s3_server(const std::string& scripts_dir, const S3Server& server);

// The s3.* keys that reach `server` (path-style requests, its credentials and region).
Status set_s3_keys(const S3Server& server, Configuration* config);

}  // namespace sluice::bench
