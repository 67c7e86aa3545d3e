#include "fs/folder_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fs/tests/fs_test_util.h"

namespace sluice::fs {
namespace {

using testing::TempDir;

std::string lock_file_text(const std::string& dir) {
  std::ifstream in(dir + "/" + std::string(kFolderLockFileName));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FolderLock, ASecondHolderIsRefusedNamingTheFirstUntilTheFirstLetsGo) {
  TempDir tmp;
  const std::string dir = tmp / "out/nested";  // created with its parents
  auto first = FolderLock::take(dir, "output folder 'out'", "job 'first' (job id 1)");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_TRUE(first->held());
  EXPECT_EQ(lock_file_text(dir), "job 'first' (job id 1)\n");

  // Same process, another open file description: refused like another process.
  auto second = FolderLock::take("file://" + dir, "output folder 'out'", "job 'second'");
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("output folder 'out' is in use by job 'first' (job id 1)"),
            std::string::npos)
      << second.status().to_string();
  EXPECT_EQ(lock_file_text(dir), "job 'first' (job id 1)\n") << "the refused holder wrote nothing";

  *first = FolderLock();
  EXPECT_FALSE(std::filesystem::exists(dir + "/" + std::string(kFolderLockFileName)))
      << "the holder leaves the folder as it found it";
  auto third = FolderLock::take(dir, "output folder 'out'", "job 'third'");
  ASSERT_TRUE(third.is_ok()) << third.status().to_string();
  EXPECT_EQ(lock_file_text(dir), "job 'third'\n");
}

TEST(FolderLock, AKilledHolderLeavesNoStaleLock) {
  TempDir tmp;
  const std::string dir = tmp / "ck";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = FolderLock::take(dir, "checkpoint folder", "job 'child'");
    const char c = lock.is_ok() ? 'y' : 'n';
    (void)::write(ready[1], &c, 1);
    for (;;) ::pause();
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto refused = FolderLock::take(dir, "checkpoint folder", "job 'parent'");
  EXPECT_TRUE(std::filesystem::exists(dir + "/" + std::string(kFolderLockFileName))) << "a refused taker keeps it";
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("job 'child'"), std::string::npos) << refused.status().to_string();

  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_EQ(lock_file_text(dir), "job 'child'\n") << "a killed holder's file stays, unlocked";
  auto taken = FolderLock::take(dir, "checkpoint folder", "job 'parent'");
  ASSERT_TRUE(taken.is_ok()) << "the kernel dropped the killed holder's lock: " << taken.status().to_string();
  EXPECT_EQ(lock_file_text(dir), "job 'parent'\n");
}

TEST(FolderLock, ALinkInPlaceOfTheLockFileIsNotFollowed) {
  TempDir tmp;
  const std::string dir = tmp / "out";
  std::filesystem::create_directories(dir);
  const std::string victim = tmp / "someone-elses-file";
  { std::ofstream(victim) << "keep me\n"; }
  std::filesystem::create_symlink(victim, dir + "/" + std::string(kFolderLockFileName));
  auto lock = FolderLock::take(dir, "output folder 'out'", "job 'x'");
  ASSERT_FALSE(lock.is_ok());
  EXPECT_NE(lock.status().message().find("output folder 'out': cannot open the lock file '"), std::string::npos)
      << lock.status().to_string();
  std::ifstream in(victim);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "keep me");
}

// Every spelling of one local folder is one claim; what the registry refuses (another host, no folder) gets none,
// so no lock creates the folder it refuses.
TEST(LocalFolderClaim, EverySpellingOfALocalFolderIsOneClaim) {
  TempDir tmp;
  const std::string dir = tmp / "out";
  auto plain = local_folder_claim(dir, "output folder");
  ASSERT_TRUE(plain.has_value());
  for (const std::string& same : {"file://" + dir, "file://localhost" + dir, dir + "/", dir + "/."}) {
    auto claim = local_folder_claim(same, "output folder");
    ASSERT_TRUE(claim.has_value()) << same;
    EXPECT_EQ(claim->key, plain->key) << same;
  }
  for (const std::string& none : {std::string("file://"), std::string("file://localhost"), "file://otherhost" + dir,
                                  std::string("s3:/bucket/x"), std::string("s3://bucket/x")}) {
    EXPECT_FALSE(local_folder_claim(none, "output folder").has_value()) << none;
  }
}

TEST(FolderLock, AFolderThatCannotBeCreatedNamesItself) {
  TempDir tmp;
  { std::ofstream(tmp / "file") << "x"; }
  auto lock = FolderLock::take(tmp / "file/sub", "output folder 'file/sub'", "job 'x'");
  ASSERT_FALSE(lock.is_ok());
  EXPECT_NE(lock.status().message().find("output folder 'file/sub': cannot create '"), std::string::npos)
      << lock.status().to_string();
}

// A lock file this user may not write (another user's, left by a killed holder or held by a running one): its
// holder is still seen, and a free one is replaced. Root writes any file, so this runs as an unprivileged user
// (fs_folder_lock_unprivileged_test) and skips when run directly as root.
TEST(FolderLock, ALockFileThisUserCannotWriteStillLocks) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write any file; fs_folder_lock_unprivileged_test runs this as uid 65534";
  TempDir tmp;
  const std::string dir = tmp / "out";
  auto first = FolderLock::take(dir, "output folder 'out'", "job 'first'");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  const std::string lock_path = dir + "/" + std::string(kFolderLockFileName);
  std::filesystem::permissions(lock_path, std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
                                              std::filesystem::perms::others_read);
  auto refused = FolderLock::take(dir, "output folder 'out'", "job 'second'");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition) << refused.status().to_string();
  EXPECT_NE(refused.status().message().find("in use by job 'first'"), std::string::npos) << refused.status().to_string();

  // A killed holder's file: stays, unlocked and read-only. Made so by letting go of the lock but keeping the file.
  std::filesystem::copy_file(lock_path, tmp / "kept");
  *first = FolderLock();
  std::filesystem::rename(tmp / "kept", lock_path);
  ASSERT_EQ(::access(lock_path.c_str(), W_OK), -1) << "the left lock file must not be writable for this test";
  auto third = FolderLock::take(dir, "output folder 'out'", "job 'third'");
  ASSERT_TRUE(third.is_ok()) << third.status().to_string();
  EXPECT_EQ(lock_file_text(dir), "job 'third'\n");
  auto fourth = FolderLock::take(dir, "output folder 'out'", "job 'fourth'");
  ASSERT_FALSE(fourth.is_ok());
  EXPECT_NE(fourth.status().message().find("in use by job 'third'"), std::string::npos) << fourth.status().to_string();
}

}  // namespace
}  // namespace sluice::fs
