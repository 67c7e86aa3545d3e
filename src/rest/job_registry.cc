#include "rest/job_registry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <signal.h>
#include <sstream>

#include <nlohmann/json.hpp>

namespace sluice::rest {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSuffix = ".json";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Writes `text` to `path` through a temporary file in the same directory and a rename (readers never see a
// partial file). The file is created 0600: the registry is per user.
Status write_atomically(const std::string& path, const std::string& text) {
  const fs::path target(path);
  const std::string tmp = (target.parent_path() / ("." + target.filename().string() + ".tmp-" +
                                                   std::to_string(current_pid()))).string();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::io_error("cannot create '" + tmp + "': " + std::strerror(errno));
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::io_error("cannot write '" + tmp + "': " + why);
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::io_error("cannot write '" + path + "': " + why);
  }
  return Status::ok();
}

}  // namespace

std::string encode_registration(const JobRegistration& r) {
  nlohmann::json j = {{"job_id", r.job_id.to_hex()},
                      {"pid", r.pid},
                      {"pid_start_ticks", r.pid_start_ticks},
                      {"address", r.address},
                      {"port", r.port},
                      {"name", r.name},
                      {"start_time_ms", r.start_time_ms}};
  return j.dump() + "\n";
}

Result<JobRegistration> decode_registration(std::string_view text, const std::string& what) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::corruption(what + ": not a JSON object");
  auto field = [&](const char* key, nlohmann::json::value_t type) -> Status {
    auto it = j.find(key);
    const bool number_ok = type == nlohmann::json::value_t::number_integer && it != j.end() &&
                           (it->is_number_integer() || it->is_number_unsigned());
    if (it == j.end() || (!number_ok && it->type() != type)) {
      return Status::corruption(what + ": field '" + key + "' is missing or not a " +
                                (type == nlohmann::json::value_t::string ? "string" : "whole number"));
    }
    return Status::ok();
  };
  using T = nlohmann::json::value_t;
  for (auto [key, type] : {std::pair{"job_id", T::string}, std::pair{"pid", T::number_integer},
                           std::pair{"address", T::string}, std::pair{"port", T::number_integer},
                           std::pair{"name", T::string}, std::pair{"start_time_ms", T::number_integer}}) {
    SLUICE_RETURN_IF_ERROR(field(key, type));
  }
  JobRegistration r;
  if (!JobId::parse(j["job_id"].get<std::string>(), &r.job_id)) {
    return Status::corruption(what + ": job_id '" + j["job_id"].get<std::string>() + "' is not 32 hex digits");
  }
  r.pid = j["pid"].get<int64_t>();
  if (auto it = j.find("pid_start_ticks"); it != j.end() && it->is_number_unsigned()) {
    r.pid_start_ticks = it->get<uint64_t>();
  }
  r.address = j["address"].get<std::string>();
  const int64_t port = j["port"].get<int64_t>();
  if (r.pid <= 0 || port <= 0 || port > 65535) {
    return Status::corruption(what + ": pid " + std::to_string(r.pid) + " or port " + std::to_string(port) +
                              " out of range");
  }
  r.port = static_cast<int32_t>(port);
  r.name = j["name"].get<std::string>();
  r.start_time_ms = j["start_time_ms"].get<int64_t>();
  return r;
}

std::string default_runtime_dir() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && xdg[0] == '/') return (fs::path(xdg) / "sluice").string();
  return "/tmp/sluice-" + std::to_string(::getuid());
}

int64_t current_pid() { return static_cast<int64_t>(::getpid()); }

uint64_t process_start_ticks(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return 0;
  // Field 2 (the command name) is in parentheses and may hold spaces: count fields after its last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return 0;
  }
  return std::strtoull(field.c_str(), nullptr, 10);
}

bool registered_process_alive(const JobRegistration& r) {
  if (r.pid <= 0) return false;
  if (::kill(static_cast<pid_t>(r.pid), 0) != 0 && errno != EPERM) return false;
  if (r.pid_start_ticks == 0) return true;
  const uint64_t now = process_start_ticks(r.pid);
  return now == 0 || now == r.pid_start_ticks;  // unreadable /proc: trust the pid
}

Result<JobRegistration> resolve_job_prefix(const std::vector<JobRegistration>& jobs, std::string_view prefix) {
  if (prefix.empty()) return Status::invalid_argument("empty job id: give a job id or a unique prefix of one");
  const std::string wanted = lower(prefix);
  if (!std::all_of(wanted.begin(), wanted.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
    return Status::invalid_argument("'" + std::string(prefix) + "' is not a job id: job ids are 32 hex digits " +
                                    "(a unique prefix of one is enough)");
  }
  std::vector<const JobRegistration*> matches;
  for (const JobRegistration& j : jobs) {
    const std::string id = j.job_id.to_hex();
    if (id == wanted) return j;
    if (id.compare(0, wanted.size(), wanted) == 0) matches.push_back(&j);
  }
  if (matches.size() == 1) return *matches.front();
  auto describe = [](const JobRegistration& j) {
    return j.job_id.to_hex() + " (" + j.name + ", pid " + std::to_string(j.pid) + ")";
  };
  if (matches.empty()) {
    std::string msg = "no running job with an id starting with '" + std::string(prefix) + "'";
    if (jobs.empty()) return Status::not_found(msg + "; no job is running");
    msg += "; running jobs:";
    for (const JobRegistration& j : jobs) msg += "\n  " + describe(j);
    return Status::not_found(msg);
  }
  std::string msg = "job id prefix '" + std::string(prefix) + "' is ambiguous; it matches " +
                    std::to_string(matches.size()) + " jobs:";
  for (const JobRegistration* j : matches) msg += "\n  " + describe(*j);
  return Status::invalid_argument(msg);
}

JobRegistry::JobRegistry(std::string dir, AliveProbe alive) : dir_(std::move(dir)), alive_(std::move(alive)) {}

Status JobRegistry::ensure_dir() const {
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    // The parent may be missing too (e.g. an XDG_RUNTIME_DIR path not created yet): create the chain.
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return Status::io_error("cannot create the job registry directory '" + dir_ + "': " + ec.message());
    ::chmod(dir_.c_str(), 0700);
  }
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0) {
    return Status::io_error("cannot read the job registry directory '" + dir_ + "': " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::io_error("the job registry path '" + dir_ + "' exists but is not a directory");
  }
  if (st.st_uid != ::getuid()) {
    return Status::io_error("the job registry directory '" + dir_ + "' belongs to user " +
                            std::to_string(st.st_uid) + ", not to this user (" + std::to_string(::getuid()) +
                            "): refusing to use it");
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir_.c_str(), 0700) != 0) {
    return Status::io_error("cannot restrict the job registry directory '" + dir_ + "' to mode 0700: " +
                            std::strerror(errno));
  }
  return Status::ok();
}

Status JobRegistry::add(const JobRegistration& r) const {
  SLUICE_RETURN_IF_ERROR(ensure_dir());
  return write_atomically((fs::path(dir_) / (r.job_id.to_hex() + std::string(kSuffix))).string(),
                          encode_registration(r));
}

Status JobRegistry::remove(const JobId& job_id) const {
  const std::string path = (fs::path(dir_) / (job_id.to_hex() + std::string(kSuffix))).string();
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::io_error("cannot remove '" + path + "': " + std::strerror(errno));
  }
  return Status::ok();
}

Result<JobRegistry::Listing> JobRegistry::list(bool clean_stale) const {
  Listing out;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    // Temporary files of a writer start with '.'; anything else without the suffix is not ours.
    if (name.empty() || name[0] == '.' || name.size() <= kSuffix.size() ||
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
      continue;
    }
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
      // Removed by its process between listing and reading: not an error.
      if (!fs::exists(e.path())) continue;
      out.unreadable.push_back(name + ": cannot read it");
      continue;
    }
    auto r = decode_registration(text.str(), e.path().string());
    if (!r.is_ok()) {
      out.unreadable.push_back(r.status().message());
      continue;
    }
    if (alive_(*r)) {
      out.live.push_back(std::move(r).value());
    } else {
      if (clean_stale) fs::remove(e.path(), ec);
      out.stale.push_back(std::move(r).value());
    }
  }
  if (ec) return Status::io_error("cannot list the job registry directory '" + dir_ + "': " + ec.message());
  auto by_start = [](const JobRegistration& a, const JobRegistration& b) {
    return a.start_time_ms != b.start_time_ms ? a.start_time_ms < b.start_time_ms : a.job_id < b.job_id;
  };
  std::sort(out.live.begin(), out.live.end(), by_start);
  std::sort(out.stale.begin(), out.stale.end(), by_start);
  return out;
}

ScopedJobRegistration::ScopedJobRegistration(const JobRegistry& registry, const JobRegistration& registration) {
  status_ = registry.add(registration);
  if (status_.is_ok()) file_ = (fs::path(registry.dir()) / (registration.job_id.to_hex() + std::string(kSuffix))).string();
}

void ScopedJobRegistration::release() {
  if (file_.empty()) return;
  ::unlink(file_.c_str());
  file_.clear();
}

}  // namespace sluice::rest
