// The configuration's text readers (sluice/config/configuration.h): config.yaml (from_yaml_string, and
// from_yaml_file through a file), `-D key=value` flags (apply_dynamic_property), and every registered option's
// parser (durations, memory sizes, enums, numbers, booleans; option_type.h). The first byte picks the reader.
// Errors must be Statuses; a value an option accepted must format to text that parses back to the same value
// (OptionType's contract: parse(format(v)) == v), whole configurations included, and numbers must be written as
// numbers (an optional sign, digits; for doubles a decimal point and exponent too).
#include <unistd.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "sluice/config/configuration.h"
#include "sluice/config/options.h"

namespace {

using namespace sluice;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

size_t digits(std::string_view s, size_t i) {
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i;
}

// [+-]? digits ( . digits? )? ( [eE] [+-]? digits )?  or  [+-]? . digits ...
bool is_decimal_number(std::string_view text, bool integer) {
  const std::string_view s = trim(text);
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t int_end = digits(s, i);
  bool any = int_end > i;
  i = int_end;
  if (integer) return any && i == s.size();
  if (i < s.size() && s[i] == '.') {
    const size_t frac_end = digits(s, i + 1);
    any = any || frac_end > i + 1;
    i = frac_end;
  }
  if (!any) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t exp_end = digits(s, i);
    if (exp_end == i) return false;
    i = exp_end;
  }
  return i == s.size();
}

// Every value set in `config` goes through -D again and must come back unchanged.
void check_reparses(const Configuration& config) {
  Configuration again;
  for (const auto& [key, value] : config.to_map()) {
    if (!again.apply_dynamic_property(key + "=" + value).is_ok()) std::abort();
  }
  if (!(again == config)) std::abort();
}

void check_option_parsers(std::string_view text) {
  for (const ConfigOptionBase* option : all_options()) {
    auto parsed = option->parse_value(text);
    if (!parsed.is_ok()) continue;
    const std::string_view type = option->type_name();
    if ((type == "Integer" || type == "Long") && !trim(text).empty() && !is_decimal_number(text, true)) std::abort();
    if (type == "Double" && !trim(text).empty() && !is_decimal_number(text, false)) std::abort();
    auto again = option->parse_value(parsed->formatted);
    if (!again.is_ok() || again->formatted != parsed->formatted) std::abort();
  }
}

void check_yaml_file(std::string_view text) {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/config-fuzzer-" +
           std::to_string(::getpid()) + ".yaml";
  }();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  auto config = Configuration::from_yaml_file(path);
  ::unlink(path.c_str());
  if (config.is_ok()) check_reparses(*config);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // deprecated keys warn on every input
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto config = Configuration::from_yaml_string(text);
      if (config.is_ok()) check_reparses(*config);
      break;
    }
    case 1:
      check_yaml_file(text);
      break;
    case 2: {  // one -D flag per line, up to 8 (each unknown key is compared with every known one)
      Configuration config;
      size_t start = 0;
      for (int flags = 0; flags < 8 && start <= text.size(); ++flags) {
        const size_t end = std::min(text.find('\n', start), text.size());
        (void)config.apply_dynamic_property(text.substr(start, end - start));
        start = end + 1;
      }
      check_reparses(config);
      break;
    }
    case 3:
      check_option_parsers(text);
      break;
  }
  return 0;
}
