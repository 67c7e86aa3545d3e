// When execute() prints its progress line (execution.progress-line): AUTO on a terminal, but not into a JSON log
// or with logging OFF; ON and OFF as said. The terminal is a pseudo-terminal made for the test.
#include "api/progress_line.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <initializer_list>
#include <string>

#include "sluice/config/configuration.h"

namespace sluice::api {
namespace {

class ProgressTestTerminal {
 public:
  ProgressTestTerminal() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    const int slave = ::open(::ptsname(master_), O_RDWR | O_NOCTTY);
    if (slave >= 0) file_ = ::fdopen(slave, "w");
  }
  ~ProgressTestTerminal() {
    if (file_ != nullptr) std::fclose(file_);
    if (master_ >= 0) ::close(master_);
  }
  std::FILE* file() const { return file_; }

 private:
  int master_ = -1;
  std::FILE* file_ = nullptr;
};

bool progress_wanted(std::initializer_list<const char*> settings, std::FILE* out) {
  Configuration config;
  for (const char* kv : settings) EXPECT_TRUE(config.apply_dynamic_property(kv).is_ok()) << kv;
  return progress_line_wanted(config, out);
}

TEST(ProgressLine, AutoPrintsOnATerminalUnlessTheLogIsJsonOrOff) {
  ProgressTestTerminal tty;
  // AUTO's decision depends on a terminal; a container without /dev/ptmx cannot make one, and the assertions below
  // would then test a pipe, not a terminal. Skipped there, with the reason in the test output.
  if (tty.file() == nullptr) GTEST_SKIP() << "this machine offers no pseudo-terminal (/dev/ptmx)";
  ASSERT_EQ(::isatty(::fileno(tty.file())), 1);
  EXPECT_TRUE(progress_wanted({}, tty.file()));
  EXPECT_FALSE(progress_wanted({"log.format=JSON"}, tty.file()));
  EXPECT_FALSE(progress_wanted({"log.level=OFF"}, tty.file()));
  EXPECT_TRUE(progress_wanted({"log.level=WARN"}, tty.file()));
  // Asked for explicitly, it prints whatever the log looks like; OFF never.
  EXPECT_TRUE(progress_wanted({"execution.progress-line=ON", "log.format=JSON"}, tty.file()));
  EXPECT_FALSE(progress_wanted({"execution.progress-line=OFF"}, tty.file()));

  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  EXPECT_FALSE(progress_wanted({}, file));  // AUTO into a file or pipe
  EXPECT_TRUE(progress_wanted({"execution.progress-line=ON"}, file));
  std::fclose(file);
}

}  // namespace
}  // namespace sluice::api
