#include "fs/s3/s3_file_system.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <utility>

#include "fs/path.h"
#include "fs/s3/s3_recoverable_writer.h"

namespace sluice::s3 {
namespace {

// Chunk of a streamed read (digest_file): bounded memory for objects of any size.
constexpr uint64_t kStreamChunkBytes = 8ull << 20;

struct Xxh3 {
  Xxh3() : state(XXH3_createState(), &XXH3_freeState) { XXH3_64bits_reset(state.get()); }
  void update(const uint8_t* data, size_t n) { XXH3_64bits_update(state.get(), data, n); }
  uint64_t digest() const { return XXH3_64bits_digest(state.get()); }
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state;
};

// The local file's size and XXH3-64, read in 1 MiB blocks.
Result<fs::FileDigest> digest_local(const std::string& local_path) {
  std::unique_ptr<std::FILE, decltype(&std::fclose)> f(std::fopen(local_path.c_str(), "rb"), &std::fclose);
  if (!f) return Status::not_found("cannot open file '" + local_path + "'");
  Xxh3 h;
  std::vector<uint8_t> buf(1 << 20);
  fs::FileDigest d;
  for (;;) {
    size_t n = std::fread(buf.data(), 1, buf.size(), f.get());
    if (n > 0) {
      h.update(buf.data(), n);
      d.size_bytes += n;
    }
    if (n < buf.size()) break;
  }
  if (std::ferror(f.get())) return Status::io_error("cannot read file '" + local_path + "'");
  d.checksum = h.digest();
  return d;
}

// The key prefix that lists what is below `key` ("" for the bucket root).
std::string dir_prefix(const std::string& key) { return key.empty() ? key : key + "/"; }

}  // namespace

Result<S3Location> parse_s3_path(std::string_view path) {
  if (fs::uri_scheme(path) != "s3") return Status::invalid_argument("'" + std::string(path) + "' is not an s3:// path");
  std::string rest = fs::normalize_path(path).substr(5);  // after "s3://"
  size_t slash = rest.find('/');
  S3Location loc;
  loc.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) loc.key = rest.substr(slash + 1);
  if (loc.bucket.empty() || loc.bucket == ".") {
    return Status::invalid_argument("'" + std::string(path) + "': expected s3://<bucket>/<key>, found no bucket");
  }
  if (loc.key == ".") loc.key.clear();
  return loc;
}

S3FileSystem::S3FileSystem(std::shared_ptr<S3Client> client, std::optional<fs::EntropyInjection> entropy,
                           std::shared_ptr<NameSource> names)
    : client_(std::move(client)), entropy_(std::move(entropy)), names_(name_source_or_random(std::move(names))) {}

Status S3FileSystem::create_dir(const std::string& path) { return parse_s3_path(path).status(); }

Status S3FileSystem::sync_dir(const std::string& dir) { return parse_s3_path(dir).status(); }

Status S3FileSystem::write_file(const std::string& path, const std::vector<uint8_t>& bytes, fs::Durability) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  return client_->upload_bytes(l.bucket, l.key, bytes).with_context("writing '" + path + "'");
}

Result<std::vector<uint8_t>> S3FileSystem::read_file(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  auto r = client_->get_object(l.bucket, l.key);
  if (!r.is_ok()) return r.status().with_context("reading '" + path + "'");
  return r;
}

Result<fs::FileDigest> S3FileSystem::digest_file(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  auto head = client_->head_object(l.bucket, l.key);
  if (!head.is_ok()) return head.status().with_context("reading '" + path + "'");
  Xxh3 h;
  fs::FileDigest d;
  while (d.size_bytes < head->size_bytes) {
    auto chunk = client_->get_object_range(l.bucket, l.key, d.size_bytes,
                                           std::min(kStreamChunkBytes, head->size_bytes - d.size_bytes));
    if (!chunk.is_ok()) return chunk.status().with_context("reading '" + path + "'");
    if (chunk->empty()) {
      return Status::io_error("reading '" + path + "': the object ended at " + std::to_string(d.size_bytes) +
                              " bytes, HEAD said " + std::to_string(head->size_bytes) + " (replaced while read?)");
    }
    h.update(chunk->data(), chunk->size());
    d.size_bytes += chunk->size();
  }
  d.checksum = h.digest();
  return d;
}

Result<fs::PathKind> S3FileSystem::stat(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  if (!l.key.empty()) {
    auto head = client_->head_object(l.bucket, l.key);
    if (head.is_ok()) return fs::PathKind::kFile;
    if (head.status().code() != StatusCode::kNotFound) return head.status().with_context("stat '" + path + "'");
  }
  // A prefix is a directory when an object is below it; the bucket root is one when the bucket exists (a
  // missing bucket makes the listing fail, naming it).
  auto page = client_->list_objects_page(l.bucket, dir_prefix(l.key), "/", "", 1);
  if (!page.is_ok()) return page.status().with_context("stat '" + path + "'");
  if (l.key.empty() || !page->objects.empty() || !page->common_prefixes.empty()) return fs::PathKind::kDirectory;
  return fs::PathKind::kMissing;
}

Result<uint64_t> S3FileSystem::file_size(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  auto head = client_->head_object(l.bucket, l.key);
  if (!head.is_ok()) return head.status().with_context("stat '" + path + "'");
  return head->size_bytes;
}

Result<std::vector<fs::DirEntry>> S3FileSystem::list_dir(const std::string& dir) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(dir));
  const std::string prefix = dir_prefix(l.key);
  auto listing = client_->list_objects(l.bucket, prefix, "/");
  if (!listing.is_ok()) return listing.status().with_context("listing '" + dir + "'");
  std::vector<fs::DirEntry> out;
  for (const ObjectInfo& o : listing->objects) {
    std::string name = o.key.substr(prefix.size());
    if (name.empty()) continue;  // a "directory marker" object some tools create
    out.push_back({std::move(name), fs::PathKind::kFile});
  }
  for (const std::string& p : listing->common_prefixes) {
    std::string name = p.substr(prefix.size());
    while (!name.empty() && name.back() == '/') name.pop_back();
    if (!name.empty()) out.push_back({std::move(name), fs::PathKind::kDirectory});
  }
  std::sort(out.begin(), out.end(), [](const fs::DirEntry& a, const fs::DirEntry& b) { return a.name < b.name; });
  return out;
}

Status S3FileSystem::remove_file(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  return client_->delete_object(l.bucket, l.key).with_context("removing '" + path + "'");
}

Status S3FileSystem::remove_empty_dir(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  auto page = client_->list_objects_page(l.bucket, dir_prefix(l.key), "", "", 100);
  if (!page.is_ok()) return page.status().with_context("removing '" + path + "'");
  for (const ObjectInfo& o : page->objects) {
    if (!(o.key.ends_with('/') && o.etag.empty())) {
      return Status::failed_precondition("directory '" + path + "' is not empty");
    }
  }
  return Status::ok();
}

Status S3FileSystem::remove_all(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  if (l.key.empty()) {
    return Status::invalid_argument("refusing to remove everything in bucket '" + l.bucket + "' ('" + path + "')");
  }
  auto listing = client_->list_objects(l.bucket, dir_prefix(l.key));
  if (!listing.is_ok()) return listing.status().with_context("removing '" + path + "'");
  // Nothing below the prefix: the path names a file, or nothing.
  if (listing->objects.empty()) return remove_file(path);
  std::vector<std::string> keys;
  for (const ObjectInfo& o : listing->objects) {
    // Some stores list their folders as keys ending in '/' without an ETag; they go with their last object.
    if (!(o.key.ends_with('/') && o.etag.empty())) keys.push_back(o.key);
  }
  auto errors = client_->delete_objects(l.bucket, keys);
  if (!errors.is_ok()) return errors.status().with_context("removing '" + path + "'");
  if (!errors->empty()) {
    const DeleteObjectError& e = errors->front();
    return Status::io_error("removing '" + path + "': " + std::to_string(errors->size()) +
                            " objects could not be deleted, e.g. '" + e.key + "': " + e.code + " " + e.message);
  }
  return Status::ok();
}

Result<fs::FileDigest> S3FileSystem::copy_local_file(const std::string& local_path, const std::string& path,
                                                     fs::Durability) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  SLUICE_ASSIGN_OR_RETURN(fs::FileDigest d, digest_local(local_path));
  auto size = client_->upload_file(l.bucket, l.key, local_path);
  if (!size.is_ok()) return size.status().with_context("uploading '" + local_path + "' to '" + path + "'");
  if (*size != d.size_bytes) {
    return Status::io_error("uploading '" + local_path + "' to '" + path + "': the file changed while uploaded (" +
                            std::to_string(d.size_bytes) + " bytes read, " + std::to_string(*size) + " uploaded)");
  }
  return d;
}

Result<fs::FileDigest> S3FileSystem::copy_to_local_file(const std::string& path, const std::string& local_path,
                                                        fs::LocalCopyMode) {
  SLUICE_ASSIGN_OR_RETURN(S3Location l, parse_s3_path(path));
  auto size = client_->download_to_file(l.bucket, l.key, local_path);
  if (!size.is_ok()) return size.status().with_context("downloading '" + path + "'");
  return digest_local(local_path);
}

Result<std::shared_ptr<fs::RecoverableWriter>> S3FileSystem::create_recoverable_writer(
    const fs::RecoverableWriterOptions& /*options: nothing to write back*/) {
  return make_s3_recoverable_writer(client_, names_);
}

}  // namespace sluice::s3
