#include "rest/job_registry.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sluice::rest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

JobRegistration job(uint64_t hi, uint64_t lo, const std::string& name, int64_t start_ms = 1000) {
  JobRegistration r;
  r.job_id = JobId(hi, lo);
  r.pid = current_pid();
  r.pid_start_ticks = process_start_ticks(r.pid);
  r.port = 40000;
  r.name = name;
  r.start_time_ms = start_ms;
  return r;
}

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / ("registry-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

TEST(JobRegistration, EncodesAndDecodes) {
  JobRegistration r = job(0xabcdef0123456789ULL, 0x42, "demo", 1234567);
  r.address = "127.0.0.2";
  auto back = decode_registration(encode_registration(r), "entry");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->job_id, r.job_id);
  EXPECT_EQ(back->pid, r.pid);
  EXPECT_EQ(back->pid_start_ticks, r.pid_start_ticks);
  EXPECT_EQ(back->address, "127.0.0.2");
  EXPECT_EQ(back->port, 40000);
  EXPECT_EQ(back->name, "demo");
  EXPECT_EQ(back->start_time_ms, 1234567);
}

TEST(JobRegistration, DecodeNamesWhatIsWrong) {
  EXPECT_THAT(decode_registration("not json", "f.json").status().message(), HasSubstr("f.json: not a JSON object"));
  EXPECT_THAT(decode_registration(R"({"job_id":"00","pid":1,"address":"a","port":1,"name":"n","start_time_ms":0})", "f")
                  .status().message(),
              HasSubstr("not 32 hex digits"));
  EXPECT_THAT(decode_registration(R"({"job_id":"x","address":"a","port":1,"name":"n","start_time_ms":0})", "f")
                  .status().message(),
              HasSubstr("field 'pid'"));
  const std::string id(32, 'a');
  EXPECT_THAT(decode_registration(R"({"job_id":")" + id + R"(","pid":1,"address":"a","port":70000,"name":"n","start_time_ms":0})", "f")
                  .status().message(),
              HasSubstr("out of range"));
}

TEST(ResolveJobPrefix, ExactIdUniquePrefixAndCase) {
  std::vector<JobRegistration> jobs = {job(0xabc0000000000000ULL, 1, "a"), job(0xabd0000000000000ULL, 2, "b")};
  auto exact = resolve_job_prefix(jobs, jobs[0].job_id.to_hex());
  ASSERT_TRUE(exact.is_ok());
  EXPECT_EQ(exact->name, "a");
  auto prefix = resolve_job_prefix(jobs, "abd");
  ASSERT_TRUE(prefix.is_ok());
  EXPECT_EQ(prefix->name, "b");
  auto upper = resolve_job_prefix(jobs, "ABC");
  ASSERT_TRUE(upper.is_ok());
  EXPECT_EQ(upper->name, "a");
}

TEST(ResolveJobPrefix, AnExactIdWinsOverLongerIdsItPrefixes) {
  // Ids have a fixed length, so an exact id never prefixes another; still, the exact match is taken first.
  std::vector<JobRegistration> jobs = {job(1, 1, "one"), job(1, 2, "two")};
  auto r = resolve_job_prefix(jobs, jobs[1].job_id.to_hex());
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->name, "two");
}

TEST(ResolveJobPrefix, AmbiguousListsTheCandidates) {
  std::vector<JobRegistration> jobs = {job(0xabc0000000000000ULL, 1, "first"), job(0xabd0000000000000ULL, 2, "second"),
                                       job(0x1230000000000000ULL, 3, "other")};
  auto r = resolve_job_prefix(jobs, "ab");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("ambiguous"));
  EXPECT_THAT(r.status().message(), HasSubstr(jobs[0].job_id.to_hex() + " (first"));
  EXPECT_THAT(r.status().message(), HasSubstr(jobs[1].job_id.to_hex() + " (second"));
  EXPECT_THAT(r.status().message(), ::testing::Not(HasSubstr("other")));
}

TEST(ResolveJobPrefix, UnknownEmptyAndNonHex) {
  std::vector<JobRegistration> jobs = {job(0xabc0000000000000ULL, 1, "first")};
  auto unknown = resolve_job_prefix(jobs, "ff");
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), HasSubstr("running jobs:\n  " + jobs[0].job_id.to_hex()));
  EXPECT_THAT(resolve_job_prefix({}, "ff").status().message(), HasSubstr("no job is running"));
  EXPECT_EQ(resolve_job_prefix(jobs, "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(resolve_job_prefix(jobs, "demo").status().message(), HasSubstr("not a job id"));
}

TEST(RuntimeDir, XdgRuntimeDirOrTmp) {
  const char* old = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_RUNTIME_DIR", "/run/user/77", 1);
  EXPECT_EQ(default_runtime_dir(), "/run/user/77/sluice");
  ::setenv("XDG_RUNTIME_DIR", "relative", 1);
  EXPECT_EQ(default_runtime_dir(), "/tmp/sluice-" + std::to_string(::getuid()));
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(default_runtime_dir(), "/tmp/sluice-" + std::to_string(::getuid()));
  if (old != nullptr) ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
}

TEST(JobRegistry, CreatesAPrivateDirectoryAndTightensALooseOne) {
  fs::path dir = fresh_dir("mode") / "nested";
  JobRegistry registry(dir.string());
  ASSERT_TRUE(registry.ensure_dir().is_ok());
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ::chmod(dir.c_str(), 0755);
  ASSERT_TRUE(registry.ensure_dir().is_ok());
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(JobRegistry, RefusesAFileInPlaceOfTheDirectory) {
  fs::path dir = fresh_dir("file");
  fs::create_directories(dir);
  std::ofstream(dir / "sluice") << "x";
  Status s = JobRegistry((dir / "sluice").string()).ensure_dir();
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_THAT(s.message(), HasSubstr("not a directory"));
}

TEST(JobRegistry, AddListRemove) {
  fs::path dir = fresh_dir("add");
  JobRegistry registry(dir.string());
  auto empty = registry.list(true);  // the directory does not exist yet
  ASSERT_TRUE(empty.is_ok());
  EXPECT_TRUE(empty->live.empty());

  JobRegistration a = job(1, 1, "later", 2000), b = job(2, 2, "earlier", 1000);
  ASSERT_TRUE(registry.add(a).is_ok());
  ASSERT_TRUE(registry.add(b).is_ok());
  EXPECT_TRUE(fs::exists(dir / (a.job_id.to_hex() + ".json")));
  auto listing = registry.list(false);
  ASSERT_TRUE(listing.is_ok());
  ASSERT_EQ(listing->live.size(), 2u);
  EXPECT_EQ(listing->live[0].name, "earlier");  // by start time
  EXPECT_EQ(listing->live[1].name, "later");
  EXPECT_TRUE(listing->stale.empty());

  ASSERT_TRUE(registry.remove(a.job_id).is_ok());
  ASSERT_TRUE(registry.remove(a.job_id).is_ok());  // already gone: fine
  listing = registry.list(false);
  ASSERT_EQ(listing->live.size(), 1u);
  EXPECT_EQ(listing->live[0].name, "earlier");
}

TEST(JobRegistry, StaleEntriesAreIgnoredAndCleanedOnRequest) {
  fs::path dir = fresh_dir("stale");
  // The probe says: processes with pid 1000 are gone.
  JobRegistry registry(dir.string(), [](const JobRegistration& r) { return r.pid != 1000; });
  JobRegistration live = job(1, 1, "live"), dead = job(2, 2, "dead");
  dead.pid = 1000;
  ASSERT_TRUE(registry.add(live).is_ok());
  ASSERT_TRUE(registry.add(dead).is_ok());
  const fs::path dead_file = dir / (dead.job_id.to_hex() + ".json");

  auto listing = registry.list(false);
  ASSERT_TRUE(listing.is_ok());
  ASSERT_EQ(listing->live.size(), 1u);
  EXPECT_EQ(listing->live[0].name, "live");
  ASSERT_EQ(listing->stale.size(), 1u);
  EXPECT_TRUE(fs::exists(dead_file));  // not cleaned without clean_stale

  listing = registry.list(true);
  ASSERT_EQ(listing->stale.size(), 1u);
  EXPECT_FALSE(fs::exists(dead_file));
  listing = registry.list(true);
  EXPECT_TRUE(listing->stale.empty());
  EXPECT_EQ(listing->live.size(), 1u);
}

TEST(JobRegistry, IgnoresTemporaryFilesAndReportsUnreadableOnes) {
  fs::path dir = fresh_dir("junk");
  JobRegistry registry(dir.string());
  ASSERT_TRUE(registry.ensure_dir().is_ok());
  std::ofstream(dir / ".0123.json.tmp-5") << "{";
  std::ofstream(dir / "notes.txt") << "x";
  std::ofstream(dir / "broken.json") << "{";
  auto listing = registry.list(true);
  ASSERT_TRUE(listing.is_ok());
  EXPECT_TRUE(listing->live.empty());
  ASSERT_EQ(listing->unreadable.size(), 1u);
  EXPECT_THAT(listing->unreadable[0], HasSubstr("broken.json"));
  EXPECT_TRUE(fs::exists(dir / "broken.json"));  // not ours to delete
}

TEST(ProcessProbe, ThisProcessIsAliveAnEndedOneAndARecycledPidAreNot) {
  JobRegistration self = job(1, 1, "self");
  EXPECT_GT(self.pid_start_ticks, 0u);
  EXPECT_TRUE(registered_process_alive(self));
  JobRegistration recycled = self;
  recycled.pid_start_ticks = self.pid_start_ticks + 1;  // the pid now belongs to a process started later
  EXPECT_FALSE(registered_process_alive(recycled));

  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  JobRegistration ended = self;
  ended.pid = child;
  ended.pid_start_ticks = 0;
  EXPECT_FALSE(registered_process_alive(ended));
}

TEST(ScopedJobRegistration, RemovesItsEntry) {
  fs::path dir = fresh_dir("scoped");
  JobRegistry registry(dir.string());
  JobRegistration r = job(5, 5, "scoped");
  fs::path file = dir / (r.job_id.to_hex() + ".json");
  {
    ScopedJobRegistration reg(registry, r);
    ASSERT_TRUE(reg.status().is_ok());
    EXPECT_EQ(reg.file(), file.string());
    EXPECT_TRUE(fs::exists(file));
  }
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
}  // namespace sluice::rest
