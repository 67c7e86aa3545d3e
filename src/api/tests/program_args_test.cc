// The command line of a program: Sluice's flags set their keys, everything else reaches the program in its order,
// and a bad flag fails naming it.
#include "sluice/api/program_args.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "api/job_flags.h"
#include "sluice/config/cluster_options.h"
#include "sluice/config/logging_options.h"
#include "sluice/config/options.h"

namespace sluice {
namespace {

Result<ProgramArgs> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "my-job");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_program_args(static_cast<int>(argv.size()), argv.data());
}

std::string error_of(std::vector<std::string> args) {
  Result<ProgramArgs> r = parse(std::move(args));
  EXPECT_FALSE(r.is_ok());
  return r.is_ok() ? "" : r.status().to_string();
}

std::string yaml_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name + "-" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(ProgramArgs, SluiceFlagsSetTheirKeysAndTheRestReachesTheProgramInOrder) {
  auto r = parse({"--input", "in.txt", "-Dparallelism.default=3", "--restore", "latest", "pos", "--claim-mode=claim",
                  "--allow-non-restored-state", "-D", "pipeline.name=x", "--verbose", "--summary-json", "s.json", "-x"});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->remaining, (std::vector<std::string>{"--input", "in.txt", "pos", "--verbose", "-x"}));
  EXPECT_FALSE(r->help_requested);
  const Configuration& c = r->env.configuration();
  EXPECT_EQ(c.get(options::kDefaultParallelism), 3);
  EXPECT_EQ(c.get(options::kPipelineName), "x");
  EXPECT_EQ(c.get(options::kStateRecoveryPath), "latest");
  EXPECT_EQ(c.get(options::kStateRecoveryClaimMode), RecoveryClaimMode::kClaim);
  EXPECT_TRUE(c.get(options::kIgnoreUnclaimedState));
  EXPECT_FALSE(c.get(options::kRehashKeyGroups));
  EXPECT_EQ(c.get(options::kJobSummaryPath), "s.json");
}

TEST(ProgramArgs, APositionalArgumentAfterADynamicPropertyStaysTheProgramsOwn) {
  auto r = parse({"-D", "parallelism.default=3", "input.txt", "-D", "pipeline.name=y", "out"});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->remaining, (std::vector<std::string>{"input.txt", "out"}));
  EXPECT_EQ(r->env.configuration().get(options::kDefaultParallelism), 3);
  EXPECT_EQ(r->env.configuration().get(options::kPipelineName), "y");
}

TEST(ProgramArgs, NoArgumentsGiveTheDefaults) {
  auto r = parse({});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r->remaining.empty());
  EXPECT_FALSE(r->env.configuration().contains(options::kStateRecoveryPath.key));
  EXPECT_EQ(r->env.configuration().get(options::kProcessRole), ProcessRole::kMiniCluster);
}

TEST(ProgramArgs, DynamicPropertiesWinOverTheConfigFile) {
  const std::string file = yaml_file("program-args", "parallelism.default: 4\npipeline.name: from-file\n");
  for (const std::string& flag : {std::string("--config"), std::string("-c")}) {
    auto r = parse({flag, file, "-Dparallelism.default=6"});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->env.configuration().get(options::kDefaultParallelism), 6);
    EXPECT_EQ(r->env.configuration().get(options::kPipelineName), "from-file");
  }
  auto r = parse({"--config=" + file});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->env.configuration().get(options::kDefaultParallelism), 4);
}

TEST(ProgramArgs, RoleAndCheckRestoreSetTheirKeys) {
  auto r = parse({"--role", "taskmanager", "--check-restore", "/sp/savepoint-1"});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->env.configuration().get(options::kProcessRole), ProcessRole::kTaskManager);
  EXPECT_EQ(r->env.configuration().get(options::kStateRecoveryPath), "/sp/savepoint-1");
  EXPECT_TRUE(r->env.configuration().get(options::kCheckRestoreOnly));
}

TEST(ProgramArgs, HelpIsReportedAndListsEveryFlag) {
  for (const std::string& flag : {std::string("--help"), std::string("-h")}) {
    auto r = parse({"--own-flag", flag});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_TRUE(r->help_requested);
    EXPECT_EQ(r->remaining, (std::vector<std::string>{"--own-flag"}));
  }
  const std::string help = program_args_help();
  for (const char* flag : {"--config", "-D", "--restore", "--claim-mode", "--allow-non-restored-state",
                           "--rehash-key-groups", "--summary-json", "--role", "--check-restore", "--help"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag << " missing from:\n" << help;
  }
  EXPECT_NE(help.find("execution.state-recovery.path"), std::string::npos) << help;
  // The program prints its own usage line before this text; CLI11's would name no program.
  EXPECT_EQ(help.find("Usage:"), std::string::npos) << help;
  EXPECT_EQ(help.find("\n\n\n"), std::string::npos) << help;  // no empty lines where the usage line was
}

TEST(ProgramArgs, BadFlagsFailNamingTheFlag) {
  EXPECT_NE(error_of({"--restore"}).find("--restore"), std::string::npos);
  EXPECT_NE(error_of({"--claim-mode", "KEEP"}).find("--claim-mode"), std::string::npos);
  EXPECT_NE(error_of({"--role", "worker"}).find("--role"), std::string::npos);
  EXPECT_NE(error_of({"-D", "no-equals-sign"}).find("-D no-equals-sign"), std::string::npos);
  EXPECT_NE(error_of({"-Dparallelism.default=zero"}).find("parallelism.default"), std::string::npos);
  EXPECT_NE(error_of({"--config", "/nonexistent/sluice.yaml"}).find("/nonexistent/sluice.yaml"), std::string::npos);
  EXPECT_NE(error_of({"--summary-json"}).find("--summary-json"), std::string::npos);
  const std::string file = yaml_file("program-args-twice", "parallelism.default: 2\n");
  EXPECT_NE(error_of({"--config", file, "--config", file}).find("--config"), std::string::npos);
}

// The error names the code once: "InvalidArgument: -D x=y: ...", not "InvalidArgument: -D x=y: InvalidArgument: ...".
TEST(ProgramArgs, AFlagsErrorNamesItsCodeOnce) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-D", "no-equals-sign"}, std::vector<std::string>{"-Dparallelism.default=zero"},
        std::vector<std::string>{"--claim-mode", "KEEP"}, std::vector<std::string>{"--role", "worker"}}) {
    const std::string error = error_of(args);
    const size_t first = error.find("InvalidArgument");
    ASSERT_NE(first, std::string::npos) << error;
    EXPECT_EQ(error.find("InvalidArgument", first + 1), std::string::npos) << error;
  }
}

// from_args prints this for --help: the usage line names the program as it was started, without its folder.
TEST(ProgramArgs, TheHelpOfAProgramNamesIt) {
  const std::string help = api::program_args_help_for("/opt/jobs/my-job");
  EXPECT_NE(help.find("Usage: my-job [OPTIONS]"), std::string::npos) << help;
  EXPECT_EQ(help.find("/opt/jobs"), std::string::npos) << help;
  EXPECT_NE(help.find("--restore"), std::string::npos) << help;
}

// A mistyped flag names the flag it was probably meant to be; -p (the built-in jobs' flag) names the key.
TEST(ProgramArgs, AnUnknownArgumentOfFromArgsSuggestsTheFlagItResembles) {
  auto error = [](std::vector<const char*> argv) {
    auto env = StreamExecutionEnvironment::from_args(static_cast<int>(argv.size()), argv.data());
    return env.is_ok() ? std::string("accepted") : env.status().to_string();
  };
  EXPECT_NE(error({"my-job", "--restor", "latest"}).find("unknown argument '--restor': did you mean '--restore'?"),
            std::string::npos)
      << error({"my-job", "--restor", "latest"});
  EXPECT_NE(error({"my-job", "--sumary-json=x"}).find("did you mean '--summary-json'?"), std::string::npos);
  for (const char* p : {"-p", "--parallelism", "-p4"}) {
    EXPECT_NE(error({"my-job", p, "2"}).find("-D parallelism.default=N"), std::string::npos) << p;
  }
  EXPECT_EQ(error({"my-job", "--frobnicate"}).find("did you mean"), std::string::npos);
}

TEST(ProgramArgs, FromArgsTakesSluicesFlags) {
  const std::vector<const char*> argv = {"my-job", "-Dparallelism.default=5", "--restore", "p"};
  auto env = StreamExecutionEnvironment::from_args(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(env.is_ok()) << env.status().to_string();
  EXPECT_EQ(env->parallelism(), 5);
  EXPECT_EQ(env->configuration().get(options::kStateRecoveryPath), "p");
}

// A mistyped flag would otherwise start the job afresh (a --restor p run from scratch next to the committed output).
TEST(ProgramArgs, FromArgsRefusesAnArgumentItDoesNotKnowNamingIt) {
  for (const std::vector<const char*>& argv : {std::vector<const char*>{"my-job", "--restor", "p"},
                                               std::vector<const char*>{"my-job", "-p", "3"},
                                               std::vector<const char*>{"my-job", "input.txt"}}) {
    auto env = StreamExecutionEnvironment::from_args(static_cast<int>(argv.size()), argv.data());
    ASSERT_FALSE(env.is_ok()) << argv[1];
    EXPECT_EQ(env.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(env.status().message().find(std::string("unknown argument '") + argv[1] + "'"), std::string::npos)
        << env.status().to_string();
    EXPECT_NE(env.status().message().find("parse_program_args"), std::string::npos) << env.status().to_string();
  }
}

TEST(ProgramArgsDeathTest, FromArgsPrintsTheHelpAndExitsZero) {
  const std::vector<const char*> argv = {"my-job", "--help"};
  EXPECT_EXIT((void)StreamExecutionEnvironment::from_args(static_cast<int>(argv.size()), argv.data()),
              ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace sluice
