// Test helpers: damage a checkpoint file the ways a disk or a careless hand does - cut short, bytes flipped in
// place (same size, so only a checksum finds it), or deleted - and check what a failed restore says and leaves.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "sluice/core/status.h"

namespace sluice::it {

enum class Damage { kTruncate, kFlip, kRemove };

inline const char* damage_name(Damage how) {
  switch (how) {
    case Damage::kTruncate: return "truncated";
    case Damage::kFlip: return "flipped";
    case Damage::kRemove: return "missing";
  }
  return "?";
}

inline void damage(const std::string& file, Damage how) {
  namespace fs = std::filesystem;
  switch (how) {
    case Damage::kTruncate: fs::resize_file(file, fs::file_size(file) / 2); break;
    case Damage::kRemove: fs::remove(file); break;
    case Damage::kFlip: {
      std::fstream io(file, std::ios::in | std::ios::out | std::ios::binary);
      const auto size = static_cast<std::streamoff>(fs::file_size(file));
      for (std::streamoff at : {size / 3, size / 2}) {
        io.seekg(at);
        char c = 0;
        io.get(c);
        io.seekp(at);
        io.put(static_cast<char>(~c));
      }
      break;
    }
  }
}

// The error of a restore of a checkpoint with `file` damaged `how`: kNotFound saying "missing" for a deleted
// file, kCorruption saying "damaged" otherwise, and the file's name. The words are looked for outside the test's
// scratch folder, whose name may hold them; the caller keeps them out of the folders it names.
inline void expect_error_names_damage(const Status& error, const std::string& file, Damage how) {
  const std::string text = error.to_string();
  const std::string name = std::filesystem::path(file).filename().string();
  EXPECT_NE(text.find(name), std::string::npos) << "the error must name the file " << file << ": " << text;
  std::string words = text;
  const std::string scratch = ::testing::TempDir();
  for (size_t at = words.find(scratch); at != std::string::npos; at = words.find(scratch, at)) {
    words.erase(at, scratch.size());
  }
  if (how == Damage::kRemove) {
    EXPECT_EQ(error.code(), StatusCode::kNotFound) << text;
    EXPECT_NE(words.find("missing"), std::string::npos) << "the error must say the file is missing: " << text;
  } else {
    EXPECT_EQ(error.code(), StatusCode::kCorruption) << text;
    EXPECT_NE(words.find("damaged"), std::string::npos) << "the error must say the file is damaged: " << text;
  }
}

// Paths of the regular files under `dir`, recursively, but for files in the middle of a write-then-rename
// ("<name>.<nonce>.inprogress", e.g. a checkpoint's statistics being rewritten): they are renamed away by design;
// and for a running job's lock file (.sluice-job.lock, docs/safety.md), which the job removes when it ends.
inline std::set<std::string> files_under(const std::string& dir) {
  std::set<std::string> out;
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().string().ends_with(".inprogress")) continue;
    if (e.path().filename() == ".sluice-job.lock") continue;
    out.insert(e.path().string());
  }
  return out;
}

// Every file of `before` but `removed` (the one the test deleted) is still under its path.
inline void expect_all_still_there(const std::set<std::string>& before, const std::string& dir,
                                   const std::string& removed) {
  const std::set<std::string> after = files_under(dir);
  for (const std::string& f : before) {
    if (f == removed) continue;
    EXPECT_TRUE(after.contains(f)) << "deleted after the failed restore: " << f;
  }
}

}  // namespace sluice::it
