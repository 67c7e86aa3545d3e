#include "fs/file_system_registry.h"

#include <utility>

#include "fs/path.h"

namespace sluice::fs {

FileSystemRegistry::FileSystemRegistry() : state_(std::make_shared<State>()) {
  register_file_system("file", local_file_system());
}

void FileSystemRegistry::register_scheme(const std::string& scheme, Factory factory) {
  std::lock_guard lock(state_->mu);
  state_->entries[scheme] = Entry{std::move(factory), nullptr};
}

void FileSystemRegistry::register_file_system(const std::string& scheme, std::shared_ptr<FileSystem> fs) {
  std::lock_guard lock(state_->mu);
  state_->entries[scheme] = Entry{nullptr, std::move(fs)};
}

std::vector<std::string> FileSystemRegistry::schemes() const {
  std::lock_guard lock(state_->mu);
  std::vector<std::string> out;
  for (const auto& [name, entry] : state_->entries) out.push_back(name);
  return out;
}

Status FileSystemRegistry::check_supported(const std::string& path, const std::string& what) const {
  const std::string context = what.empty() ? "" : what + ": ";
  if (path.empty()) return Status::invalid_argument(context + "expected a path or URI, got an empty value");
  std::string scheme = uri_scheme(path);
  if (scheme.empty()) {
    const std::string mistyped = mistyped_uri_scheme(path);
    if (mistyped.empty()) return Status::ok();
    return Status::invalid_argument(context + "'" + path + "' looks like a URI without '//' (expected " + mistyped +
                                    "://...); a local path containing ':' must start with './' or '/'");
  }
  if (scheme == "file") {
    const std::string host = file_uri_host(path);
    if (!host.empty() && host != "localhost") {
      return Status::invalid_argument(context + "'" + path + "' names the host '" + host +
                                      "': a file URI names a local path (file:///path or file://localhost/path)");
    }
    if (strip_file_scheme(path).empty()) {
      return Status::invalid_argument(context + "'" + path + "' names no folder (expected file:///path)");
    }
  }
  std::lock_guard lock(state_->mu);
  if (state_->entries.count(scheme) > 0) return Status::ok();
  std::string supported;
  for (const auto& [name, entry] : state_->entries) supported += (supported.empty() ? "" : ", ") + name;
  return Status::invalid_argument(context + "unsupported URI scheme '" + scheme + "' in '" + path +
                                  "' (supported: " + supported + ", and plain paths)");
}

Result<std::shared_ptr<FileSystem>> FileSystemRegistry::for_path(const std::string& path) const {
  SLUICE_RETURN_IF_ERROR(check_supported(path, ""));
  std::string scheme = uri_scheme(path);
  if (scheme.empty()) scheme = "file";
  std::lock_guard lock(state_->mu);  // held while a factory runs: each filesystem is created once
  Entry& e = state_->entries.at(scheme);
  if (!e.fs) {
    auto created = e.factory();
    if (!created.is_ok()) return created.status().with_context("'" + path + "'");
    e.fs = std::move(created).value();
  }
  return e.fs;
}

}  // namespace sluice::fs
