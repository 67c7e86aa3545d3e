// Configuration::from_yaml_*: Flink 2 style config.yaml, flat keys and nested maps. yaml-cpp throws; its
// exceptions stop here and become Statuses.
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <spdlog/spdlog.h>

#include "sluice/config/configuration.h"
#include "sluice/config/options.h"

namespace sluice {
namespace {

struct FlatEntry {
  std::string key;
  std::string value;
  int line = 0;  // 1-based; 0 when yaml-cpp gives no position
};

int line_of(const YAML::Node& node) {
  YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

std::string where(std::string_view source, int line) {
  std::string s = "config file '" + std::string(source) + "'";
  if (line > 0) s += ", line " + std::to_string(line);
  return s;
}

// Flattens nested maps into dotted keys: {a: {b: {c: v}}} and {a.b: {c: v}} both give "a.b.c".
Status flatten(const YAML::Node& node, const std::string& prefix, std::string_view source,
               std::vector<FlatEntry>* out) {
  // A key repeated in one map (e.g. `execution:` twice at the top level): YAML leaves it undefined and the two
  // blocks would be merged silently; an error naming both lines instead (leaf keys are checked after flattening).
  struct Seen {
    int line;
    bool map;
  };
  std::map<std::string, Seen, std::less<>> seen;
  for (const auto& kv : node) {
    const YAML::Node& key_node = kv.first;
    const YAML::Node& value = kv.second;
    if (!key_node.IsScalar() || key_node.Scalar().empty()) {
      return Status::invalid_argument(where(source, line_of(key_node)) + ": a key must be a non-empty string");
    }
    std::string key = prefix.empty() ? key_node.Scalar() : prefix + "." + key_node.Scalar();
    auto [it, inserted] = seen.emplace(key_node.Scalar(), Seen{line_of(key_node), value.IsMap()});
    if (!inserted && (value.IsMap() || it->second.map)) {
      return Status::invalid_argument(where(source, line_of(key_node)) + ": '" + key + "' is already set" +
                                      (it->second.line > 0 ? " on line " + std::to_string(it->second.line) : "") +
                                      "; expected each key once in a map (merge the two blocks)");
    }
    switch (value.Type()) {
      case YAML::NodeType::Map:
        SLUICE_RETURN_IF_ERROR(flatten(value, key, source, out));
        break;
      case YAML::NodeType::Scalar:
        out->push_back({key, value.Scalar(), line_of(key_node)});
        break;
      case YAML::NodeType::Null:  // "key:" with nothing after it: the empty string
        out->push_back({key, "", line_of(key_node)});
        break;
      default:
        return Status::invalid_argument(where(source, line_of(key_node)) + ": '" + key +
                                        "' has a list value; expected a single value or a map");
    }
  }
  return Status::ok();
}

Result<Configuration> parse_yaml(const std::string& text, std::string_view source) {
  std::vector<FlatEntry> entries;
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsNull()) return Configuration();  // an empty file
    if (!root.IsMap()) {
      return Status::invalid_argument(where(source, line_of(root)) +
                                      ": expected a map of configuration keys at the top level");
    }
    SLUICE_RETURN_IF_ERROR(flatten(root, "", source, &entries));
  } catch (const YAML::Exception& e) {
    std::string message = "config file '" + std::string(source) + "' is not valid YAML";
    if (!e.mark.is_null()) {
      message += " (line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) + ")";
    }
    return Status::invalid_argument(message + ": " + e.msg);
  }

  // A key given twice (literally, or once flat and once nested) is an error rather than last-one-wins:
  // the user cannot tell which value a run used.
  std::map<std::string, int, std::less<>> first_line;
  for (const FlatEntry& e : entries) {
    auto [it, inserted] = first_line.emplace(e.key, e.line);
    if (!inserted) {
      return Status::invalid_argument(where(source, e.line) + ": '" + e.key + "' is already set" +
                                      (it->second > 0 ? " on line " + std::to_string(it->second) : "") +
                                      "; expected each key once");
    }
  }

  // Deprecated keys first, so that a canonical key given in the same file wins (Flink's rule).
  std::set<std::string, std::less<>> canonical_present;
  for (const FlatEntry& e : entries) {
    OptionLookup found = find_option(e.key);
    if (found.option != nullptr && !found.deprecated) canonical_present.insert(found.option->key);
  }
  Configuration config;
  for (int pass = 0; pass < 2; ++pass) {
    for (const FlatEntry& e : entries) {
      OptionLookup found = find_option(e.key);
      bool deprecated = found.option != nullptr && found.deprecated;
      if (deprecated != (pass == 0)) continue;
      if (deprecated && canonical_present.count(found.option->key) > 0) {
        spdlog::warn("{}: ignoring deprecated key '{}' because '{}' is also set", where(source, e.line), e.key,
                     found.option->key);
        continue;
      }
      Status s = config.set_string(e.key, e.value);
      if (!s.is_ok()) return s.with_context(where(source, e.line));
    }
  }
  return config;
}

}  // namespace

Result<Configuration> Configuration::from_yaml_string(std::string_view yaml) {
  return parse_yaml(std::string(yaml), "<string>");
}

Result<Configuration> Configuration::from_yaml_file(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return Status::io_error("config file '" + path + "' cannot be accessed: " + ec.message());
  }
  if (!std::filesystem::exists(status)) return Status::not_found("config file '" + path + "' does not exist");
  if (std::filesystem::is_directory(status)) {
    return Status::invalid_argument("config file '" + path + "' is a directory, expected a YAML file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::io_error("config file '" + path + "' cannot be opened: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::io_error("config file '" + path + "' cannot be read: " + std::strerror(errno));
  return parse_yaml(text.str(), path);
}

}  // namespace sluice
