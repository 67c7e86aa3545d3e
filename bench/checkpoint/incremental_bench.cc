// incremental_bench: what incremental RocksDB checkpoints save (the two figures of README.md), printed as one
// JSON object (progress on stderr):
//
//   incremental  after touching --touch-permille of --keys keys (ValueState<int64_t> on RocksDB): the bytes an
//                incremental checkpoint writes (new SSTs + private files) vs a full checkpoint's (the canonical
//                key-group stream). Target <= 5 %.
//   restore      restoring ~--restore-bytes of RocksDB state from an incremental checkpoint (files copied or
//                hard-linked, every file's size and XXH3 checked, the database opened) vs `cp -r` of the same
//                files. Reported, no target.
//
// The "checkpoint storage" is a folder (--dir): uploads are file copies, as FileSystemCheckpointStorage does.
#include <nlohmann/json.hpp>
#include <unistd.h>
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../common/bench_util.h"
#include "sluice/state/keyed_state_backend.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Flags {
  int64_t keys = 10'000'000;
  int64_t touch_permille = 10;  // 1 %
  int64_t restore_bytes = int64_t{1} << 30;
  int32_t max_parallelism = 128;
  std::string dir;
};

struct Uploaded {
  IncrementalRestoreHandle handle;
  uint64_t bytes_written = 0;  // new shared files + private files
  uint64_t full_bytes = 0;     // every file the handle refers to
};

// The asynchronous part, against a folder.
Uploaded upload(IncrementalKeyedSnapshot& snap, const std::string& dir) {
  Uploaded out;
  fs::create_directories(dir + "/shared");
  const std::string chk = dir + "/chk-" + std::to_string(snap.checkpoint_id.value());
  fs::create_directories(chk);
  std::map<std::string, SharedFileRef> shared = snap.shared_reused;
  IncrementalRestoreHandle& h = out.handle;
  h.range = snap.range;
  h.state_meta = snap.state_meta;
  h.what = "bench checkpoint " + std::to_string(snap.checkpoint_id.value());
  auto add = [&](std::vector<IncrementalRestoreFile>& list, const std::string& name, const std::string& path) {
    const uint64_t size = fs::file_size(path);
    // The checksum the storage would record, computed by the restore's own check below (XXH3 of the bytes).
    list.push_back({name, path, size, 0, "", nullptr});
    out.full_bytes += size;
  };
  for (const auto& [name, ref] : snap.shared_reused) add(h.shared_files, name, dir + "/" + ref.relative_path);
  for (const LocalSnapshotFile& f : snap.shared_to_upload) {
    const std::string rel = "shared/" + std::to_string(snap.checkpoint_id.value()) + "-" + f.name;
    fs::copy_file(f.path, dir + "/" + rel);
    shared[f.name] = SharedFileRef{rel, f.size_bytes, 0};
    out.bytes_written += f.size_bytes;
    add(h.shared_files, f.name, dir + "/" + rel);
  }
  for (const LocalSnapshotFile& f : snap.private_files) {
    fs::copy_file(f.path, chk + "/" + f.name, fs::copy_options::overwrite_existing);
    out.bytes_written += f.size_bytes;
    add(h.private_files, f.name, chk + "/" + f.name);
  }
  snap.set_uploaded(std::move(shared));
  snap.release();
  return out;
}

// XXH3 of each file (what the storage records when it uploads).
void fill_checksums(IncrementalRestoreHandle& h) {
  for (auto* list : {&h.shared_files, &h.private_files}) {
    for (IncrementalRestoreFile& f : *list) {
      FILE* in = std::fopen(f.path.c_str(), "rb");
      XXH3_state_t* st = XXH3_createState();
      XXH3_64bits_reset(st);
      std::vector<char> buf(1 << 20);
      size_t n;
      while (in != nullptr && (n = std::fread(buf.data(), 1, buf.size(), in)) > 0) XXH3_64bits_update(st, buf.data(), n);
      if (in != nullptr) std::fclose(in);
      f.checksum = XXH3_64bits_digest(st);
      XXH3_freeState(st);
    }
  }
}

std::unique_ptr<KeyedStateBackend<int64_t>> backend(const Flags& f, const std::string& local) {
  RocksDBStateBackendOptions o;
  o.local_dir = local;
  o.instance_name = "bench";
  auto b = make_keyed_state_backend<int64_t>(StateBackendKind::kRocksDB, KeyGroupRange(0, f.max_parallelism - 1),
                                             f.max_parallelism, o);
  if (!b.is_ok()) {
    std::fprintf(stderr, "%s\n", b.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(b).value();
}

nlohmann::json incremental_part(const Flags& f) {
  const std::string remote = f.dir + "/inc-storage";
  auto b = backend(f, f.dir + "/local");
  auto& v = b->get_state(ValueStateDescriptor<int64_t>("v"));
  auto t = Clock::now();
  for (int64_t k = 0; k < f.keys; ++k) {
    b->set_current_key(k);
    v.update(k);
  }
  std::fprintf(stderr, "incremental: loaded %lld keys in %.1f s\n", static_cast<long long>(f.keys), seconds_since(t));
  // Full checkpoint: the canonical stream of every key group.
  t = Clock::now();
  std::vector<uint8_t> full;
  std::vector<uint64_t> offsets;
  {
    auto snap = b->snapshot();
    Status st = write_all_key_groups(*snap, &full, &offsets);
    if (!st.is_ok()) std::fprintf(stderr, "%s\n", st.to_string().c_str());
  }
  const double full_s = seconds_since(t);
  // First incremental checkpoint (uploads everything), confirmed; then touch keys; the second one.
  t = Clock::now();
  auto s1 = b->snapshot_incremental(CheckpointId(1));
  Uploaded u1 = upload(**s1, remote);
  const double first_s = seconds_since(t);
  b->notify_checkpoint_complete(CheckpointId(1));
  std::mt19937_64 rng(42);
  const int64_t touched = f.keys * f.touch_permille / 1000;
  for (int64_t i = 0; i < touched; ++i) {
    b->set_current_key(static_cast<int64_t>(rng() % static_cast<uint64_t>(f.keys)));
    v.update(-1);
  }
  t = Clock::now();
  auto s2 = b->snapshot_incremental(CheckpointId(2));
  Uploaded u2 = upload(**s2, remote);
  const double second_s = seconds_since(t);
  b->notify_checkpoint_complete(CheckpointId(2));
  nlohmann::json j;
  j["keys"] = f.keys;
  j["touched_keys"] = touched;
  j["full_checkpoint_bytes"] = full.size();
  j["full_checkpoint_s"] = full_s;
  j["first_incremental_bytes"] = u1.bytes_written;
  j["first_incremental_s"] = first_s;
  j["incremental_bytes"] = u2.bytes_written;
  j["incremental_full_state_bytes"] = u2.full_bytes;
  j["incremental_s"] = second_s;
  j["incremental_shared_files_new"] = (*s2)->shared_to_upload.size();
  j["incremental_shared_files_reused"] = (*s2)->shared_reused.size();
  j["ratio_incremental_to_full"] = full.empty() ? 0.0 : static_cast<double>(u2.bytes_written) / static_cast<double>(full.size());
  j["target_ratio"] = 0.05;
  return j;
}

nlohmann::json restore_part(const Flags& f) {
  const std::string remote = f.dir + "/restore-storage";
  constexpr size_t kValueBytes = 200;
  // Random letters barely compress under RocksDB's default Snappy: about one SST byte per value and key byte.
  const int64_t keys = std::max<int64_t>(1, f.restore_bytes / static_cast<int64_t>(kValueBytes + 16));
  Uploaded u;
  {
    auto b = backend(f, f.dir + "/local");
    auto& v = b->get_state(ValueStateDescriptor<std::string>("payload"));
    std::mt19937_64 rng(7);
    std::string value(kValueBytes, 'x');
    auto t = Clock::now();
    for (int64_t k = 0; k < keys; ++k) {
      // Random letters, so the SST files hold about --restore-bytes.
      for (size_t i = 0; i < value.size(); i += 8) {
        uint64_t r = rng();
        for (size_t j = 0; j < 8 && i + j < value.size(); ++j, r >>= 8) value[i + j] = static_cast<char>('a' + (r & 0xff) % 26);
      }
      b->set_current_key(k);
      v.update(value);
    }
    std::fprintf(stderr, "restore: loaded %lld keys in %.1f s\n", static_cast<long long>(keys), seconds_since(t));
    auto s = b->snapshot_incremental(CheckpointId(1));
    u = upload(**s, remote);
  }
  fill_checksums(u.handle);
  // cp -r of the same files (page cache as warm as for the restore: both read what the upload just wrote).
  const std::string copy_to = f.dir + "/cp-target";
  auto t = Clock::now();
  const std::string cmd = "cp -r '" + remote + "' '" + copy_to + "'";
  const int rc = std::system(cmd.c_str());
  const double cp_s = seconds_since(t);
  fs::remove_all(copy_to);
  t = Clock::now();
  auto r = backend(f, f.dir + "/local");
  Status st = r->restore_incremental({u.handle});
  const double restore_s = seconds_since(t);
  if (!st.is_ok()) std::fprintf(stderr, "restore failed: %s\n", st.to_string().c_str());
  nlohmann::json j;
  j["keys"] = keys;
  j["state_bytes"] = u.full_bytes;
  j["files"] = u.handle.shared_files.size() + u.handle.private_files.size();
  j["restore_s"] = restore_s;
  j["cp_s"] = rc == 0 ? cp_s : -1.0;
  j["restore_ok"] = st.is_ok();
  j["ratio_restore_to_cp"] = cp_s > 0 ? restore_s / cp_s : 0.0;
  j["note"] = "restore hard-links SST files on the same filesystem and reads every file once for its checksum";
  return j;
}

void print_usage(const Flags& d) {
  std::printf(
      "usage: incremental_bench [--keys N] [--touch-permille P] [--restore-bytes B] [--dir D]\n"
      "  Incremental RocksDB checkpoints: bytes of an incremental checkpoint after touching P per mille of N keys\n"
      "  vs a full one, and the restore time of ~B bytes of state vs copying its files. Prints one JSON object.\n"
      "  --keys N            keys in ValueState<int64_t> (default %lld)\n"
      "  --touch-permille P  keys changed before the incremental checkpoint, per mille (default %lld)\n"
      "  --restore-bytes B   state size for the restore part; 0 skips it (default %lld)\n"
      "  --dir D             working folder (default: $TMPDIR/sluice-incremental-bench-<pid>, removed after)\n",
      static_cast<long long>(d.keys), static_cast<long long>(d.touch_permille), static_cast<long long>(d.restore_bytes));
}

int run(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      print_usage(f);
      return 0;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "%s: expected a value after it (see --help)\n", argv[argc - 1]);
    return 2;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], val = argv[i + 1];
    if (flag == "--dir") {
      f.dir = val;
      continue;
    }
    Result<int64_t> n = bench::parse_int<int64_t>(flag, val, 0, int64_t{1} << 40);
    if (!n.is_ok()) {
      std::fprintf(stderr, "%s\n", n.status().to_string().c_str());
      return 2;
    }
    if (flag == "--keys" && *n >= 1) f.keys = *n;
    else if (flag == "--touch-permille" && *n <= 1000) f.touch_permille = *n;
    else if (flag == "--restore-bytes") f.restore_bytes = *n;
    else {
      std::fprintf(stderr, "unknown or bad flag %s %s (flags: --keys N, --touch-permille P, --restore-bytes B, --dir D)\n",
                   flag.c_str(), val.c_str());
      return 2;
    }
  }
  const bool own_dir = f.dir.empty();
  if (own_dir) {
    const char* tmp = std::getenv("TMPDIR");
    f.dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/sluice-incremental-bench-" + std::to_string(::getpid());
  }
  fs::remove_all(f.dir);
  fs::create_directories(f.dir);
  nlohmann::json out;
  out["bench"] = "incremental_bench";
  out["incremental"] = incremental_part(f);
  if (f.restore_bytes > 0) out["restore"] = restore_part(f);
  std::printf("%s\n", out.dump(2).c_str());
  if (own_dir) fs::remove_all(f.dir);
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::run(argc, argv); }
