#include "fs/path.h"

#include <cctype>
#include <filesystem>
#include <system_error>
#include <vector>

namespace sluice::fs {
namespace {

std::string_view strip_trailing_slashes(std::string_view p, size_t root) {
  while (p.size() > std::max<size_t>(root, 1) && p.back() == '/') p.remove_suffix(1);
  return p;
}

// Length of an RFC 3986 scheme name at the start of `path` (not counting the ':'), or 0.
size_t scheme_name_length(std::string_view path) {
  if (path.empty() || !std::isalpha(static_cast<unsigned char>(path[0]))) return 0;
  size_t i = 1;
  while (i < path.size()) {
    unsigned char c = static_cast<unsigned char>(path[i]);
    if (!(std::isalnum(c) || c == '+' || c == '-' || c == '.')) break;
    ++i;
  }
  return i;
}

// Length of "scheme://" at the start of `path`, or 0.
size_t scheme_prefix_length(std::string_view path) {
  const size_t i = scheme_name_length(path);
  if (i == 0 || path.substr(i, 3) != "://") return 0;
  return i + 3;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string uri_scheme(std::string_view path) {
  size_t n = scheme_prefix_length(path);
  if (n == 0) return "";
  return lower(path.substr(0, n - 3));
}

std::string mistyped_uri_scheme(std::string_view path) {
  const size_t i = scheme_name_length(path);
  // One letter before ':' is too little to mean a scheme (and reads as a drive letter elsewhere).
  if (i < 2 || i >= path.size() || path[i] != ':' || scheme_prefix_length(path) > 0) return "";
  return lower(path.substr(0, i));
}

std::string file_uri_host(std::string_view path) {
  if (uri_scheme(path) != "file") return "";
  std::string_view rest = path.substr(7);
  return std::string(rest.substr(0, rest.find('/')));
}

size_t uri_root_length(std::string_view path) {
  size_t n = scheme_prefix_length(path);
  if (n == 0) return 0;
  size_t slash = path.find('/', n);
  return slash == std::string_view::npos ? path.size() : slash;
}

std::string join_path(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  std::string out(strip_trailing_slashes(a, uri_root_length(a)));
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  if (out.back() != '/') out += '/';
  out += b;
  return out;
}

std::string path_file_name(std::string_view path) {
  const size_t root = uri_root_length(path);
  path = strip_trailing_slashes(path, root);
  if (root > 0 && path.size() <= root) return "";
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string path_parent(std::string_view path) {
  const size_t root = uri_root_length(path);
  path = strip_trailing_slashes(path, root);
  if (root > 0) {
    if (path.size() <= root) return "";
    size_t slash = path.rfind('/');
    // "file:///x": the authority is empty and the path absolute, so its parent is "file:///".
    if (slash <= root) return std::string(path.substr(0, path[root - 1] == '/' ? root + 1 : root));
    return std::string(strip_trailing_slashes(path.substr(0, slash), root));
  }
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  if (slash == 0) return "/";
  return std::string(strip_trailing_slashes(path.substr(0, slash), 0));
}

std::string strip_file_scheme(std::string_view path) {
  if (uri_scheme(path) != "file") return std::string(path);
  std::string_view rest = path.substr(7);
  if (rest.substr(0, 9) == "localhost" && (rest.size() == 9 || rest[9] == '/')) rest.remove_prefix(9);
  return std::string(rest);
}

std::string normalize_path(std::string_view path) {
  const size_t root = uri_root_length(path);
  std::string out(path.substr(0, root));
  std::string_view rest = path.substr(root);
  const bool absolute = !rest.empty() && rest.front() == '/';
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= rest.size()) {
    size_t j = rest.find('/', i);
    if (j == std::string_view::npos) j = rest.size();
    std::string_view part = rest.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(part);  // a relative path keeps leading ".."
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  if (absolute) out += '/';
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k > 0) out += '/';
    out += parts[k];
  }
  if (out.empty()) out = ".";
  return out;
}

std::string canonical_path(std::string_view path) {
  const std::string scheme = uri_scheme(path);
  if (!scheme.empty() && scheme != "file") return normalize_path(path);
  std::error_code ec;
  // Absolute first: weakly_canonical leaves a relative path relative when no part of it exists yet.
  const std::filesystem::path absolute = std::filesystem::absolute(strip_file_scheme(path), ec);
  const std::string local = ec ? strip_file_scheme(path) : absolute.string();
  auto p = std::filesystem::weakly_canonical(local, ec);
  // The part that does not exist yet is normalized lexically, which keeps a trailing "/" ("a/b/." -> "a/b/").
  std::string out = ec ? normalize_path(local) : p.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace sluice::fs
