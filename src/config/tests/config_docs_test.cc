// Fails when a registered option is missing from docs/configuration.md, or its row there disagrees with the
// code on the default or the deprecated aliases.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sluice/config/options.h"

#ifndef SLUICE_SOURCE_DIR
#error "SLUICE_SOURCE_DIR must be defined by the build"
#endif

namespace sluice {
namespace {

std::string read_docs() {
  // A path, not std::string(SLUICE_SOURCE_DIR) + "...": GCC 12 at -O1 reports a false -Warray-bounds on that
  // constant concatenation (GCC bug 105651's family).
  std::ifstream in(std::filesystem::path(SLUICE_SOURCE_DIR) / "docs" / "configuration.md");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The table row whose first cell is `key` in backticks, or "" when there is none.
std::string row_of(const std::string& docs, const std::string& key) {
  const std::string start = "| `" + key + "` |";
  size_t at = docs.find(start);
  if (at == std::string::npos || (at > 0 && docs[at - 1] != '\n')) return "";
  size_t end = docs.find('\n', at);
  return docs.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

TEST(ConfigDocs, EveryRegisteredKeyIsDocumented) {
  const std::string docs = read_docs();
  ASSERT_FALSE(docs.empty()) << "cannot read " << SLUICE_SOURCE_DIR << "/docs/configuration.md";
  for (const ConfigOptionBase* option : all_options()) {
    std::string row = row_of(docs, option->key);
    ASSERT_FALSE(row.empty()) << "docs/configuration.md has no table row starting with | `" << option->key
                              << "` |";
    std::string default_cell = "`" + option->default_value_string() + "`";
    if (option->default_value_string().empty()) default_cell = "(empty)";
    EXPECT_NE(row.find("| " + default_cell + " |"), std::string::npos)
        << option->key << ": the row must give the default as " << default_cell << "\n" << row;
    EXPECT_NE(row.find(std::string(option->type_name())), std::string::npos) << option->key << "\n" << row;
    for (const std::string& alias : option->deprecated_keys) {
      EXPECT_NE(row.find("`" + alias + "`"), std::string::npos)
          << option->key << ": the row must list the deprecated key `" << alias << "`\n" << row;
    }
  }
}

}  // namespace
}  // namespace sluice
