// Owner locks of RocksDB working folders: a folder whose owner process was killed is removed (with its local
// snapshot folders) by the next sweep, and by the next store opened under the same local dir; live owners'
// folders - in another process or in this one - and folders Sluice did not create stay. Owners are child
// processes that take the lock and then either get SIGKILL or wait for the test to let them go.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sluice/detail/state/rocksdb/rocksdb_store.h"
#include "working_dir_owner.h"

namespace sluice::rocksdb_workdir {
namespace {

namespace fs = std::filesystem;

std::string test_dir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "sluice-rocksdb-owner-test-" + std::to_string(::getpid()) + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void put_file(const fs::path& p, const std::string& text = "data") { std::ofstream(p) << text; }

// A child process that owns `dir` (takes its lock) and then waits until the parent closes `release_fd` or kills
// it. Returns once the lock is held.
struct OwnerProcess {
  pid_t pid = -1;
  int release_fd = -1;

  explicit OwnerProcess(const std::string& dir) {
    int ready[2], release[2];
    if (::pipe(ready) != 0 || ::pipe(release) != 0) throw std::runtime_error("pipe failed");
    pid = ::fork();
    if (pid == 0) {
      ::close(ready[0]);
      ::close(release[1]);
      Result<OwnerLock> lock = OwnerLock::take(dir);
      const char ok = lock.is_ok() ? '1' : '0';
      if (::write(ready[1], &ok, 1) != 1) ::_exit(2);
      char c;
      while (::read(release[0], &c, 1) > 0) {
      }
      ::_exit(0);
    }
    ::close(ready[1]);
    ::close(release[0]);
    release_fd = release[1];
    char ok = '0';
    EXPECT_EQ(::read(ready[0], &ok, 1), 1);
    EXPECT_EQ(ok, '1') << "the child could not take the lock of " << dir;
    ::close(ready[0]);
  }
  void kill_hard() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(release_fd);
    pid = -1;
  }
  ~OwnerProcess() {
    if (pid < 0) return;
    ::close(release_fd);
    ::waitpid(pid, nullptr, 0);
  }
};

TEST(WorkingDirName, MatchesWhatTheStoreCreatesOnly) {
  EXPECT_TRUE(is_working_dir_name("sluice-rocksdb-job_1_op_x_0-0123456789abcdef"));
  EXPECT_TRUE(is_working_dir_name("sluice-rocksdb-a.b-c_d-restore-fedcba9876543210"));
  EXPECT_FALSE(is_working_dir_name("sluice-rocksdb-job-0123456789ABCDEF"));  // upper-case hex
  EXPECT_FALSE(is_working_dir_name("sluice-rocksdb-job-0123456789abcde"));   // 15 digits
  EXPECT_FALSE(is_working_dir_name("sluice-rocksdb-job_0123456789abcdef"));  // no '-' before the suffix
  EXPECT_FALSE(is_working_dir_name("sluice-rocksdb--0123456789abcdeg"));
  EXPECT_FALSE(is_working_dir_name("sluice-rocksdb-job x-0123456789abcdef"));
  EXPECT_FALSE(is_working_dir_name("rocksdb-job-0123456789abcdef"));
  EXPECT_FALSE(is_working_dir_name("sluice-rocksdb-job-0123456789abcdef-chk-3"));

  EXPECT_EQ(snapshot_dir_owner("sluice-rocksdb-job-0123456789abcdef-chk-3"), "sluice-rocksdb-job-0123456789abcdef");
  EXPECT_EQ(snapshot_dir_owner("sluice-rocksdb-job-0123456789abcdef-chk-"), "");
  EXPECT_EQ(snapshot_dir_owner("sluice-rocksdb-job-0123456789abcdef-chk-3x"), "");
  EXPECT_EQ(snapshot_dir_owner("my-data-chk-3"), "");
}

// A local dir with: a killed owner's folder and its snapshot folder, a live owner's folder in another process and
// one in this process (with its snapshot folder), and foreign entries: a folder with the working-folder name but
// no lock file, a folder with a free lock file but another name, a file with a working-folder name, and a
// snapshot folder whose working folder does not exist.
class AbandonedFolders : public ::testing::Test {
 protected:
  void SetUp() override {
    local = test_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    dead = local + "/sluice-rocksdb-dead-0000000000000001";
    live = local + "/sluice-rocksdb-live-0000000000000002";
    mine = local + "/sluice-rocksdb-mine-0000000000000003";
    for (const std::string& d : {dead, live, mine, dead + "-chk-7", mine + "-chk-7"}) fs::create_directories(d);
    put_file(dead + "/000001.sst");
    put_file(dead + "-chk-7/MANIFEST-000001");
    put_file(mine + "-chk-7/MANIFEST-000001");
    killed = std::make_unique<OwnerProcess>(dead);
    killed->kill_hard();
    alive = std::make_unique<OwnerProcess>(live);
    auto lock = OwnerLock::take(mine);
    ASSERT_TRUE(lock.is_ok()) << lock.status().to_string();
    own = std::move(lock).value();

    foreign = {local + "/sluice-rocksdb-nolock-0000000000000004", local + "/my-data",
               local + "/sluice-rocksdb-file-0000000000000005", local + "/sluice-rocksdb-gone-0000000000000006-chk-1"};
    fs::create_directories(foreign[0]);
    put_file(foreign[0] + "/000001.sst");
    fs::create_directories(foreign[1]);
    put_file(foreign[1] + "/" + std::string(kOwnerLockFileName), "");  // a free lock, but not our folder name
    put_file(foreign[2]);
    fs::create_directories(foreign[3]);
  }

  void expect_only_dead_removed() {
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_FALSE(fs::exists(dead + "-chk-7"));
    for (const std::string& p : {live, mine, mine + "-chk-7", live + "/" + std::string(kOwnerLockFileName)}) {
      EXPECT_TRUE(fs::exists(p)) << p;
    }
    for (const std::string& p : foreign) EXPECT_TRUE(fs::exists(p)) << p;
    EXPECT_TRUE(fs::exists(foreign[1] + "/" + std::string(kOwnerLockFileName)));
  }

  std::string local, dead, live, mine;
  std::vector<std::string> foreign;
  std::unique_ptr<OwnerProcess> killed, alive;
  OwnerLock own;
};

TEST_F(AbandonedFolders, ASweepRemovesOnlyTheKilledOwnersFolders) {
  EXPECT_EQ(remove_abandoned_working_dirs(local), std::vector<std::string>{dead});
  expect_only_dead_removed();
  EXPECT_EQ(remove_abandoned_working_dirs(local), std::vector<std::string>{}) << "nothing more is abandoned";
}

TEST_F(AbandonedFolders, AFreedFolderIsRemovedOnceItsOwnerEnds) {
  alive.reset();  // the owner exits normally without deleting its folder
  EXPECT_EQ(remove_abandoned_working_dirs(local), (std::vector<std::string>{dead, live}));
  EXPECT_TRUE(fs::exists(mine));
}

TEST_F(AbandonedFolders, OpeningAStoreUnderTheLocalDirSweepsIt) {
  auto store = RocksDBStore::open(RocksDBStore::Options{local, "next-run"});
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  expect_only_dead_removed();
  // The new store's folder is owned too: a sweep from "another run" leaves it.
  EXPECT_TRUE(fs::exists(fs::path((*store)->path()) / kOwnerLockFileName));
  EXPECT_EQ(remove_abandoned_working_dirs(local), std::vector<std::string>{});
  EXPECT_TRUE(fs::exists((*store)->path()));
}

TEST(OwnerLock, AMissingFolderIsAnIOErrorNamingIt) {
  const std::string dir = test_dir("no-folder") + "/sluice-rocksdb-x-0000000000000001";
  auto lock = OwnerLock::take(dir);
  ASSERT_FALSE(lock.is_ok());
  EXPECT_EQ(lock.status().code(), StatusCode::kIOError);
  EXPECT_NE(lock.status().message().find(dir), std::string::npos) << lock.status().to_string();
}

}  // namespace
}  // namespace sluice::rocksdb_workdir
