#include "fs/entropy_injection.h"

#include "fs/file_system.h"

namespace sluice::fs {

Status EntropyInjection::validate(std::string_view key_option, std::string_view length_option) const {
  if (key.empty()) return Status::invalid_argument(std::string(key_option) + ": the entropy marker is empty");
  if (key.find('/') != std::string::npos) {
    return Status::invalid_argument(std::string(key_option) + ": '" + key +
                                    "' contains '/' (the marker stands for part of one path segment)");
  }
  if (length <= 0) {
    return Status::invalid_argument(std::string(length_option) + ": expected > 0 random characters, got " +
                                    std::to_string(length) + " (with " + std::string(key_option) + " '" + key + "')");
  }
  return Status::ok();
}

bool has_entropy_key(std::string_view path, std::string_view key) {
  return !key.empty() && path.find(key) != std::string_view::npos;
}

std::string remove_entropy_key(std::string_view path, std::string_view key) {
  if (!has_entropy_key(path, key)) return std::string(path);
  const size_t at = path.find(key);
  size_t begin = at, end = at + key.size();
  const bool segment_starts = begin == 0 || path[begin - 1] == '/';
  const bool segment_ends = end == path.size() || path[end] == '/';
  if (segment_starts && segment_ends) {
    // The whole segment: drop it with one separator ("a/_e_/b" -> "a/b", "a/_e_" -> "a").
    if (end < path.size()) {
      ++end;
    } else if (begin > 0) {
      --begin;
    }
  }
  return std::string(path.substr(0, begin)) + std::string(path.substr(end));
}

std::string inject_entropy(std::string_view path, std::string_view key, std::string_view entropy) {
  if (!has_entropy_key(path, key)) return std::string(path);
  const size_t at = path.find(key);
  return std::string(path.substr(0, at)) + std::string(entropy) + std::string(path.substr(at + key.size()));
}

std::string remove_entropy_key_of(const FileSystem& fs, std::string_view path) {
  const EntropyInjection* e = fs.entropy_injection();
  return e == nullptr ? std::string(path) : remove_entropy_key(path, e->key);
}

}  // namespace sluice::fs
