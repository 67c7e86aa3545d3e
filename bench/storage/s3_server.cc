#include "s3_server.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace sluice::bench {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `export NAME=value` lines, values possibly quoted with ' or ".
std::map<std::string, std::string> parse_env(std::istream& in) {
  std::map<std::string, std::string> vars;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) == 0) line = line.substr(7);
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    vars[line.substr(0, eq)] = value;
  }
  return vars;
}

}  // namespace

Result<S3Server> read_s3_server(const std::string& state_dir) {
  S3Server s;
  s.state_dir = state_dir;
  if (std::ifstream u(state_dir + "/unavailable"); u) {
    std::stringstream reason;
    reason << u.rdbuf();
    s.unavailable = reason.str().empty() ? "unavailable" : reason.str();
    return s;
  }
  std::ifstream in(state_dir + "/env");
  if (!in) return Status::not_found("no S3 server in '" + state_dir + "': '" + state_dir + "/env' is missing");
  const auto vars = parse_env(in);
  const std::pair<const char*, std::string*> fields[] = {{"SLUICE_S3_ENDPOINT", &s.endpoint},
                                                          {"SLUICE_S3_ACCESS_KEY", &s.access_key},
                                                          {"SLUICE_S3_SECRET_KEY", &s.secret_key},
                                                          {"SLUICE_S3_REGION", &s.region},
                                                          {"SLUICE_S3_BUCKET", &s.bucket}};
  for (const auto& [name, field] : fields) {
    auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) {
      return Status::invalid_argument("'" + state_dir + "/env' does not set " + name);
    }
    *field = it->second;
  }
  return s;
}

Result<S3Server> start_s3_server(const std::string& scripts_dir, const std::string& state_dir) {
  // s3-start's progress goes to stderr: stdout is the benchmark's JSON.
  const std::string cmd = shell_quote(scripts_dir + "/s3-start") + " " + shell_quote(state_dir) + " 1>&2";
  const int rc = std::system(cmd.c_str());
  if (rc != 0) return Status::io_error("'" + cmd + "' failed (exit status " + std::to_string(rc) + ")");
  SLUICE_ASSIGN_OR_RETURN(S3Server s, read_s3_server(state_dir));
  s.started_here = s.unavailable.empty();
  return s;
}

void stop_s3_server(const std::string& scripts_dir, const S3Server& server) {
  if (!server.started_here) return;
  const std::string cmd = shell_quote(scripts_dir + "/s3-stop") + " " + shell_quote(server.state_dir) + " 1>&2";
  (void)std::system(cmd.c_str());
}

Status set_s3_keys(const S3Server& server, Configuration* config) {
  const std::pair<const char*, std::string> keys[] = {{"s3.endpoint", server.endpoint},
                                                      {"s3.access-key", server.access_key},
                                                      {"s3.secret-key", server.secret_key},
                                                      {"s3.region", server.region},
                                                      {"s3.path.style.access", "true"}};
  for (const auto& [key, value] : keys) SLUICE_RETURN_IF_ERROR(config->set_string(key, value));
  return Status::ok();
}

}  // namespace sluice::bench
