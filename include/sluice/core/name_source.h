// NameSource: the randomness that names what a run creates - its job id, the unique suffixes of checkpoint state
// files and RocksDB uploads, RocksDB working folders, savepoint folders and trigger ids, S3 leftover objects and
// S3 entropy prefixes - behind one injectable, seedable object (STYLE.md habit 4; FoundationDB's seeded
// deterministic random), so a test can fix every name a run produces and replay it.
//
// Draws are grouped in named streams ("job-id", "savepoint-dir", a writer's own name, ...). The n-th draw of a
// stream is a pure function of (seed, stream name, n): SplitMix64 (Steele, Lea, Flood: "Fast splittable
// pseudorandom number generators", OOPSLA 2014) over the seed, a 64-bit FNV-1a hash of the stream name and n.
// So threads that draw from different streams do not disturb each other's sequence, and a run with the same
// seed draws the same values in every stream whatever the scheduling. Callers pick streams that one thread at a
// time draws from (e.g. per operator subtask) when they need the assignment of values to be reproducible too.
// The names are not secrets: this is not a cryptographic generator.
//
// Default (random()): seeded from std::random_device, so names differ from run to run and between processes,
// as before this class existed. seeded(s): the same seed gives the same names. The set of stream names should
// stay bounded (one counter of 8 bytes plus the name is kept per stream for the object's life).
//
// Thread-safety: every method may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "sluice/core/ids.h"

namespace sluice {

class NameSource {
 public:
  // Seeded from std::random_device: names differ on every run (the default everywhere a source is optional).
  static std::shared_ptr<NameSource> random();
  // Fixed: the same seed gives the same draws in every stream.
  static std::shared_ptr<NameSource> seeded(uint64_t seed);
  // `seed_fixed`: whether the seed was chosen (is_seeded()), for logs.
  NameSource(uint64_t seed, bool seed_fixed);
  NameSource(const NameSource&) = delete;
  NameSource& operator=(const NameSource&) = delete;

  // The next 64 random bits of `stream`.
  uint64_t next(std::string_view stream);
  // `digits` lowercase hex digits (1..16) of next(stream), zero-padded.
  std::string hex(std::string_view stream, int digits = 16);
  // `length` characters of [0-9a-z] (lower case: S3 keys are case-sensitive, but other stores and tools are not),
  // drawn from `stream`.
  std::string alphanumeric(std::string_view stream, size_t length);
  // A 128-bit job id from the stream "job-id" (the first call of a seeded source always gives the same id).
  JobId job_id();

  bool is_seeded() const { return seed_fixed_; }
  uint64_t seed() const { return seed_; }

 private:
  const uint64_t seed_;
  const bool seed_fixed_;
  std::mutex mu_;
  std::map<std::string, uint64_t, std::less<>> draws_;  // per stream: how many values were drawn; guarded by mu_
};

// `names` if set, else a fresh random source: what a component uses when no source was injected.
std::shared_ptr<NameSource> name_source_or_random(std::shared_ptr<NameSource> names);

}  // namespace sluice
