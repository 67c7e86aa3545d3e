#include "sluice/api/program_args.h"

#include <cctype>
#include <memory>
#include <string_view>
#include <utility>

#include <CLI/CLI.hpp>

#include "api/job_flags.h"
#include "config/edit_distance.h"
#include "sluice/config/cluster_options.h"
#include "sluice/config/options.h"

namespace sluice {
namespace {

struct ProgramFlags {
  api::JobFlags job;
  std::string role;
  std::string check_restore;
  bool help = false;
};

// Without a program name the help has no usage line: a program with flags of its own prints its usage line first,
// and CLI11's would read "Usage: [OPTIONS]", naming nothing.
class OptionsOnlyFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* /*app*/, std::string /*name*/) const override { return ""; }
};

// One definition for parsing and for the help text.
std::unique_ptr<CLI::App> program_app(ProgramFlags* f, std::string name = "") {
  const bool named = !name.empty();
  auto app = std::make_unique<CLI::App>("Sluice options (every program built on StreamExecutionEnvironment)",
                                        std::move(name));
  if (!named) app->formatter(std::make_shared<OptionsOnlyFormatter>());
  app->set_help_flag();  // --help is a flag like the others: the program adds its own flags to the text
  app->allow_extras();   // the program's own arguments, handed back in order
  app->add_flag("--help,-h", f->help, "Print this help (and the program's own flags, if it has any) and exit");
  api::add_job_flags(app.get(), &f->job);
  app->add_option("--role", f->role,
                  "Run as this process of a cluster: jobmanager, taskmanager or mini_cluster (the default) - "
                  "execution.process-role (docs/cluster.md)");
  app->add_option("--check-restore", f->check_restore,
                  "Only check whether the job would restore this savepoint or checkpoint: print the report and exit, 0 "
                  "if it would, 1 if not (docs/savepoints.md)");
  return app;
}

}  // namespace

Result<ProgramArgs> parse_program_args(int argc, const char* const* argv) {
  ProgramFlags f;
  std::unique_ptr<CLI::App> app = program_app(&f);
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return Status::invalid_argument(std::string("command line: ") + e.what());
  }
  SLUICE_ASSIGN_OR_RETURN(Configuration config, api::job_configuration(f.job));
  if (!f.role.empty()) {
    SLUICE_RETURN_IF_ERROR(config.set_string(options::kProcessRole.key, f.role).with_context("--role"));
  }
  if (!f.check_restore.empty()) {
    // execute_async then builds the job graph, checks that it would restore the path, prints the report and exits.
    SLUICE_RETURN_IF_ERROR(config.set_string(options::kStateRecoveryPath.key, f.check_restore));
    SLUICE_RETURN_IF_ERROR(config.set_string(options::kCheckRestoreOnly.key, "true"));
  }
  ProgramArgs out;
  out.env = StreamExecutionEnvironment(std::move(config));
  out.remaining = app->remaining();
  out.help_requested = f.help;
  return out;
}

std::string program_args_help() {
  ProgramFlags f;
  return program_app(&f)->help();
}

namespace api {

std::string unknown_argument_hint(std::string_view arg) {
  const bool parallelism = arg == "-p" || arg.starts_with("--parallelism") ||
                           (arg.size() > 2 && arg.starts_with("-p") && std::isdigit(static_cast<unsigned char>(arg[2])));
  if (parallelism) return ": the parallelism is -D parallelism.default=N";
  if (!arg.starts_with("--") || arg.size() < 4) return "";
  const std::string_view name = arg.substr(2, arg.find('=') == std::string_view::npos ? std::string_view::npos
                                                                                       : arg.find('=') - 2);
  ProgramFlags f;
  std::unique_ptr<CLI::App> app = program_app(&f);
  std::string best;
  size_t best_distance = 3;  // at most two edits away
  for (const CLI::Option* option : app->get_options()) {
    for (const std::string& long_name : option->get_lnames()) {
      const size_t d = config::edit_distance(name, long_name);
      if (d < best_distance) {
        best_distance = d;
        best = long_name;
      }
    }
  }
  return best.empty() ? "" : ": did you mean '--" + best + "'?";
}

std::string program_args_help_for(const char* argv0) {
  std::string name = argv0 != nullptr ? argv0 : "";
  if (const size_t slash = name.rfind('/'); slash != std::string::npos) name.erase(0, slash + 1);
  ProgramFlags f;
  return program_app(&f, std::move(name))->help();
}

}  // namespace api

}  // namespace sluice
