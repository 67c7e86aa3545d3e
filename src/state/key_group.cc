#include "sluice/state/key_group.h"

// Inline XXH3 here (same algorithm and results as libxxhash's exported XXH3_64bits): short keys hash in a
// few nanoseconds without the library's dispatch.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sluice {

std::string KeyGroupRange::to_string() const {
  if (is_empty()) return "[]";
  return "[" + std::to_string(start_) + ", " + std::to_string(end_) + "]";
}

uint64_t hash_key_bytes(const void* data, size_t size) { return XXH3_64bits(data, size); }

KeyGroupRange key_group_range_for_subtask(int32_t max_parallelism, int32_t parallelism, SubtaskIndex index) {
  assert(parallelism > 0 && parallelism <= max_parallelism);
  assert(index.value() >= 0 && index.value() < parallelism);
  const int64_t m = max_parallelism;
  const int64_t p = parallelism;
  const int64_t i = index.value();
  // start = ceil(i*m/p); end = ceil((i+1)*m/p) - 1 = floor(((i+1)*m - 1)/p).
  const int64_t start = (i * m + p - 1) / p;
  const int64_t end = ((i + 1) * m - 1) / p;
  return KeyGroupRange(static_cast<int32_t>(start), static_cast<int32_t>(end));
}

int32_t default_max_parallelism(int32_t parallelism) {
  const int64_t p = parallelism < 1 ? 1 : parallelism;
  const uint64_t wanted = std::bit_ceil(static_cast<uint64_t>(p + p / 2));
  if (wanted < static_cast<uint64_t>(kDefaultLowerBoundMaxParallelism)) return kDefaultLowerBoundMaxParallelism;
  if (wanted > static_cast<uint64_t>(kUpperBoundMaxParallelism)) return kUpperBoundMaxParallelism;
  return static_cast<int32_t>(wanted);
}

Status check_max_parallelism(int32_t max_parallelism, int32_t parallelism) {
  const std::string both =
      " (max parallelism " + std::to_string(max_parallelism) + ", parallelism " + std::to_string(parallelism) + ")";
  if (parallelism < 1) return Status::invalid_argument("parallelism must be at least 1" + both);
  if (max_parallelism < 1 || max_parallelism > kUpperBoundMaxParallelism) {
    return Status::invalid_argument("max parallelism must be in [1, " + std::to_string(kUpperBoundMaxParallelism) +
                                    "]" + both);
  }
  if (max_parallelism < parallelism) {
    return Status::invalid_argument(
        "max parallelism must be >= parallelism: it is the number of key groups, and every subtask needs at "
        "least one" +
        both);
  }
  return Status::ok();
}

}  // namespace sluice
