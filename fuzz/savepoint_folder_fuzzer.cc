// A savepoint or checkpoint folder whose `_metadata` is damaged or hostile, handed to what reads such folders: the
// restore path (resolve_restore_path of the folder, of its `_metadata` and of "latest"), the restore's file check,
// `sluice savepoint dispose` (dispose_savepoint) and the deletion of a claimed checkpoint (discard_location). The
// folders live in a filesystem in memory beside files nobody may touch. Besides never crashing, the readers must never
// delete a file outside the folder they were given, whatever its `_metadata` names (docs/safety.md: a job removes only
// files it owns): those bystanders must survive every input. The first byte picks a savepoint or a chk-<n> folder, and
// as in checkpoint_metadata_fuzzer whether the rest is the whole file or a protobuf payload framed here.
#include <google/protobuf/stubs/logging.h>
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/metadata_codec.h"
#include "checkpoint/restore_path.h"
#include "checkpoint/savepoint_files.h"

namespace {

using namespace sluice;
using namespace sluice::checkpoint;

// Plain absolute paths and file:// URIs of one tree in memory. Not thread-safe (the harness has one thread).
class MemoryFileSystem final : public fs::FileSystem {
 public:
  std::string_view scheme() const override { return "file"; }
  Status create_dir(const std::string& path) override {
    dirs_.insert(key(path));
    return Status::ok();
  }
  Status write_file(const std::string& path, const std::vector<uint8_t>& bytes, fs::Durability) override {
    const std::string k = key(path);
    for (std::string d = fs::path_parent(k); !d.empty() && d != "/"; d = fs::path_parent(d)) dirs_.insert(d);
    files_[k] = bytes;
    return Status::ok();
  }
  Status sync_dir(const std::string&) override { return Status::ok(); }
  Result<std::vector<uint8_t>> read_file(const std::string& path) override {
    auto it = files_.find(key(path));
    if (it == files_.end()) return Status::not_found("'" + path + "' does not exist");
    return it->second;
  }
  Result<fs::FileDigest> digest_file(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_file(path));
    return fs::FileDigest{bytes.size(), XXH3_64bits(bytes.data(), bytes.size())};
  }
  Result<fs::PathKind> stat(const std::string& path) override {
    const std::string k = key(path);
    if (files_.count(k) > 0) return fs::PathKind::kFile;
    if (dirs_.count(k) > 0 || k == "/") return fs::PathKind::kDirectory;
    return fs::PathKind::kMissing;
  }
  Result<std::vector<fs::DirEntry>> list_dir(const std::string& dir) override {
    const std::string k = key(dir);
    const std::string prefix = k == "/" ? "/" : k + "/";
    std::map<std::string, fs::PathKind> entries;
    for (const auto& [f, bytes] : files_) {
      if (f.rfind(prefix, 0) == 0 && f.find('/', prefix.size()) == std::string::npos) {
        entries[f.substr(prefix.size())] = fs::PathKind::kFile;
      }
    }
    for (const std::string& d : dirs_) {
      if (d.rfind(prefix, 0) == 0 && d.size() > prefix.size() && d.find('/', prefix.size()) == std::string::npos) {
        entries[d.substr(prefix.size())] = fs::PathKind::kDirectory;
      }
    }
    std::vector<fs::DirEntry> out;
    for (const auto& [name, kind] : entries) out.push_back(fs::DirEntry{name, kind});
    return out;
  }
  Status remove_file(const std::string& path) override {
    files_.erase(key(path));
    return Status::ok();
  }
  Status remove_empty_dir(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> left, list_dir(path));
    if (!left.empty()) return Status::failed_precondition("'" + path + "' is not empty");
    dirs_.erase(key(path));
    return Status::ok();
  }
  Status remove_all(const std::string& path) override {
    const std::string k = key(path);
    if (k == "/") std::abort();  // nothing may ever remove everything
    std::erase_if(files_, [&](const auto& f) { return f.first == k || f.first.rfind(k + "/", 0) == 0; });
    std::erase_if(dirs_, [&](const std::string& d) { return d == k || d.rfind(k + "/", 0) == 0; });
    return Status::ok();
  }

  bool exists(const std::string& path) const { return files_.count(key(path)) > 0; }

 private:
  static std::string key(const std::string& path) {
    std::string k = fs::normalize_path(fs::strip_file_scheme(path));
    while (k.size() > 1 && k.back() == '/') k.pop_back();
    return k;
  }
  std::map<std::string, std::vector<uint8_t>> files_;
  std::set<std::string> dirs_;
};

constexpr const char* kJob = "0123456789abcdef0123456789abcdef";
constexpr const char* kOtherJob = "fedcba9876543210fedcba9876543210";
constexpr const char* kSavepointDir = "/sp/savepoint-012345-000000000001";

// Files of other jobs and of the user, beside and around the folders under test.
const std::vector<std::string> kBystanders = {
    "/data/victim",
    "/sp/victim",
    "/sp/savepoint-012345-000000000002/_metadata",
    std::string("/ck/") + kOtherJob + "/chk-1/op-state",
    std::string("/ck/") + kOtherJob + "/shared/agg-0.sst",
    std::string("/ck/") + kJob + "/shared/agg-1.sst",
    std::string("/ck/") + kJob + "/taskowned/op-state",
    // Beside the entropy-injected data file of the seed checkpoint 10 (fuzz/make_corpus.cc): another checkpoint's
    // file and a shared file, a byte or a word away from its path.
    std::string("/ckdata/x7k2/ck/") + kJob + "/chk-11/source-op-0003",
    std::string("/ckdata/x7k2/ck/") + kJob + "/shared/source-op-0003",
};

std::vector<uint8_t> metadata_file(const uint8_t* data, size_t size) {
  if ((data[0] & 2) == 0) return std::vector<uint8_t>(data + 1, data + size);
  const uint32_t version = 1 + (data[0] >> 2) % CheckpointMetadata::kFormatVersion;
  std::vector<uint8_t> out(kMetadataMagic, kMetadataMagic + sizeof(kMetadataMagic));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(version >> (8 * i)));
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(size - 1) >> (8 * i)));
  out.insert(out.end(), data + 1, data + size);
  const uint64_t sum = XXH3_64bits(out.data(), out.size());
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(sum >> (8 * i)));
  return out;
}

// `own`: a folder whose files are the claimed checkpoint's own by the entropy-injection layout (its data files lie in
// ".../<job-id>/chk-<n>/" of any root), so deleting them is right; "" for none.
void check_bystanders(const MemoryFileSystem& fs, const char* step, const std::string& own = "") {
  for (const std::string& f : kBystanders) {
    if (!own.empty() && fs::path_parent(f).ends_with(own)) continue;
    if (!fs.exists(f)) {
      std::fprintf(stderr, "%s deleted '%s', which is outside the folder it was given\n", step, f.c_str());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);  // every undecodable string field would be logged
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto memory = std::make_shared<MemoryFileSystem>();
  for (const std::string& f : kBystanders) (void)memory->write_file(f, {1, 2, 3}, fs::Durability::kSync);
  fs::FileSystemRegistry registry;
  registry.register_file_system("file", memory);

  const std::vector<uint8_t> file = metadata_file(data, size);
  auto decoded = decode_metadata(file, "fuzz/_metadata");
  const bool savepoint = (data[0] & 1) == 0;
  const CheckpointId id = decoded.is_ok() ? decoded->checkpoint_id : CheckpointId(7);
  const std::string dir =
      savepoint ? std::string(kSavepointDir) : std::string("/ck/") + kJob + "/" + checkpoint_dir_name(id);
  (void)memory->write_file(fs::join_path(dir, kMetadataFileName), file, fs::Durability::kSync);
  (void)memory->write_file(fs::join_path(dir, "not-referenced"), {4}, fs::Durability::kSync);
  if (decoded.is_ok()) {
    // The files it names inside its folder exist (with other bytes than recorded: a restore's check fails on them).
    for (const std::string& rel : decoded->referenced_files()) {
      const std::string path = fs::normalize_path(handle_file_path(dir, rel));
      if (path.rfind(dir + "/", 0) == 0) (void)memory->write_file(path, {5}, fs::Durability::kSync);
    }
  }

  for (const std::string& path : {dir, fs::join_path(dir, kMetadataFileName)}) {
    auto point = resolve_restore_path(path, "", registry);
    if (point.is_ok()) {
      (void)check_restore_files(*memory, point->location, point->metadata, RestoreFileCheck::kSizes);
      (void)check_restore_files(*memory, point->location, point->metadata, RestoreFileCheck::kChecksums);
    }
  }
  if (savepoint) {
    (void)dispose_savepoint(*memory, dir);
    check_bystanders(*memory, "dispose_savepoint");
  } else {
    (void)resolve_restore_path("latest", "/ck", registry);
    FileSystemStorageOptions options;
    options.file_systems = registry;
    options.file_system = memory;
    FileSystemCheckpointStorage storage("/ck", options);
    (void)storage.discard_location(dir);
    check_bystanders(*memory, "discard_location of a claimed checkpoint", "/" + dir.substr(std::string("/ck/").size()));
  }
  return 0;
}
