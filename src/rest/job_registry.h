// The per-user registry of running jobs: how `sluice list` and the other verbs find the REST endpoint of a job
// that another process runs (DESIGN.md section 6).
//
// Layout: one small JSON file per job, <runtime dir>/<job-id>.json, holding the job id, the pid of the process
// that runs it (with the process's start time, so a recycled pid is not mistaken for the job), the REST address
// and port, the job name and its start time. The runtime directory is $XDG_RUNTIME_DIR/sluice when
// XDG_RUNTIME_DIR is set to an absolute path, else /tmp/sluice-<uid>; it is created with mode 0700 and refused
// when another user owns it. A file is written to a temporary name and renamed, so a reader never sees half of
// one; the process removes its file when the job ends (ScopedJobRegistration). A process killed outright leaves
// its file behind: such a stale entry (its pid gone, or now another process) is ignored by list() and removed
// when list() is asked to clean.
//
// Thread-safety: JobRegistry holds no mutable state; concurrent calls (and concurrent processes) are safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/core/status.h"

namespace sluice::rest {

struct JobRegistration {
  JobId job_id;
  int64_t pid = 0;
  // The process's start time in clock ticks since boot (/proc/<pid>/stat field 22); 0 when unknown. Compared
  // with the live process of that pid to tell a recycled pid from the job's process.
  uint64_t pid_start_ticks = 0;
  std::string address = "127.0.0.1";  // where clients reach the REST endpoint
  int32_t port = 0;
  std::string name;
  int64_t start_time_ms = 0;  // wall clock, ms since the epoch
};

// The JSON of one registry file, and back (kCorruption naming `what` and the missing or bad field).
std::string encode_registration(const JobRegistration& registration);
Result<JobRegistration> decode_registration(std::string_view text, const std::string& what);

// $XDG_RUNTIME_DIR/sluice, or /tmp/sluice-<uid> when XDG_RUNTIME_DIR is unset, empty or relative.
std::string default_runtime_dir();

// This process's JobRegistration fields pid and pid_start_ticks.
int64_t current_pid();
uint64_t process_start_ticks(int64_t pid);  // 0 when the process does not exist or /proc is unreadable

// Whether the process that registered `r` still runs: its pid exists and, when both are known, started at the
// recorded time.
bool registered_process_alive(const JobRegistration& r);

// Which of `jobs` the user means by `prefix`: the one whose id equals it or, failing that, the only one whose id
// starts with it (case-insensitive). kNotFound when none matches, kInvalidArgument when the prefix is empty,
// not hex, or matches several (the message lists the candidates with their names).
Result<JobRegistration> resolve_job_prefix(const std::vector<JobRegistration>& jobs, std::string_view prefix);

class JobRegistry {
 public:
  using AliveProbe = std::function<bool(const JobRegistration&)>;

  // `dir`: the runtime directory (default_runtime_dir() in production). `alive`: decides whether an entry's
  // process still runs (registered_process_alive unless a test injects another).
  explicit JobRegistry(std::string dir, AliveProbe alive = registered_process_alive);

  const std::string& dir() const { return dir_; }

  // Creates the directory (mode 0700) when missing. kIoError when it cannot be created, is not a directory, or
  // belongs to another user; a directory of ours that others may read is tightened to 0700.
  Status ensure_dir() const;

  // Writes <dir>/<job-id>.json (creating the directory), replacing an entry of the same id.
  Status add(const JobRegistration& registration) const;
  // Removes the entry; ok when there is none.
  Status remove(const JobId& job_id) const;

  struct Listing {
    std::vector<JobRegistration> live;   // by start time, then id
    std::vector<JobRegistration> stale;  // entries of processes that are gone (removed when clean_stale)
    std::vector<std::string> unreadable; // "<file>: <why>" for files that are not registry entries
  };
  // Every entry of the directory (none when it does not exist). clean_stale: remove the stale entries' files.
  Result<Listing> list(bool clean_stale) const;

 private:
  std::string dir_;
  AliveProbe alive_;
};

// Registers a job on construction and removes the entry on destruction (or release()).
class ScopedJobRegistration {
 public:
  ScopedJobRegistration() = default;
  // Registers; status() tells whether it worked (the job runs either way).
  ScopedJobRegistration(const JobRegistry& registry, const JobRegistration& registration);
  ~ScopedJobRegistration() { release(); }
  ScopedJobRegistration(const ScopedJobRegistration&) = delete;
  ScopedJobRegistration& operator=(const ScopedJobRegistration&) = delete;

  const Status& status() const { return status_; }
  const std::string& file() const { return file_; }  // empty when not registered
  void release();

 private:
  std::string file_;
  Status status_;
};

}  // namespace sluice::rest
