#include "rocksdb_ttl_compaction_filter.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "sluice/state/state_ttl_config.h"

namespace sluice {
namespace {

int64_t read_timestamp(const char* p) {
  int64_t ts;
  std::memcpy(&ts, p, sizeof(ts));  // TypeSerializer<int64_t>: host (little-endian) order
  return ts;
}

// One filter per compaction (RocksDB runs it on one thread), so the cached time needs no synchronization.
class TtlCompactionFilter final : public rocksdb::CompactionFilter {
 public:
  explicit TtlCompactionFilter(const TtlCompactionFilterConfig& config) : config_(config) {}
  const char* Name() const override { return "SluiceTtlCompactionFilter"; }

  Decision FilterV2(int, const rocksdb::Slice&, ValueType type, const rocksdb::Slice& value, std::string* new_value,
                    std::string*) const override {
    if (type != ValueType::kValue && type != ValueType::kMergeOperand) return Decision::kKeep;
    const int64_t now = current_time();
    const std::string_view bytes(value.data(), value.size());
    if (config_.list_element_size == nullptr) {
      if (bytes.size() < kTtlTimestampBytes) return Decision::kKeep;
      return expired(read_timestamp(bytes.data()), now) ? Decision::kRemove : Decision::kKeep;
    }
    return filter_list(bytes, now, new_value);
  }

 private:
  bool expired(int64_t ts, int64_t now) const { return StateTtlConfig::ttl_expired(ts, config_.ttl_ms, now); }

  int64_t current_time() const {
    if (seen_ % config_.query_time_after_num_entries == 0) now_ = config_.clock->now_ms();
    ++seen_;
    return now_;
  }

  Decision filter_list(std::string_view bytes, int64_t now, std::string* new_value) const {
    // First pass: does anything expire? Most compactions of live lists change nothing and copy nothing.
    size_t kept = 0, dropped = 0;
    for (size_t at = 0; at < bytes.size();) {
      const int64_t n = config_.list_element_size(bytes.substr(at));
      if (n < static_cast<int64_t>(kTtlTimestampBytes) || static_cast<size_t>(n) > bytes.size() - at) {
        return Decision::kKeep;
      }
      if (expired(read_timestamp(bytes.data() + at), now)) {
        ++dropped;
      } else {
        ++kept;
      }
      at += static_cast<size_t>(n);
    }
    if (dropped == 0) return Decision::kKeep;
    if (kept == 0) return Decision::kRemove;
    new_value->clear();
    for (size_t at = 0; at < bytes.size();) {
      const auto n = static_cast<size_t>(config_.list_element_size(bytes.substr(at)));
      if (!expired(read_timestamp(bytes.data() + at), now)) new_value->append(bytes.data() + at, n);
      at += n;
    }
    return Decision::kChangeValue;
  }

  TtlCompactionFilterConfig config_;
  mutable int64_t seen_ = 0;
  mutable int64_t now_ = 0;
};

class TtlCompactionFilterFactory final : public rocksdb::CompactionFilterFactory {
 public:
  explicit TtlCompactionFilterFactory(const TtlCompactionFilterConfig& config) : config_(config) {
    if (config_.query_time_after_num_entries < 1) config_.query_time_after_num_entries = 1;
  }
  const char* Name() const override { return "SluiceTtlCompactionFilterFactory"; }
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(const rocksdb::CompactionFilter::Context&) override {
    return std::make_unique<TtlCompactionFilter>(config_);
  }

 private:
  TtlCompactionFilterConfig config_;
};

}  // namespace

std::shared_ptr<rocksdb::CompactionFilterFactory> make_ttl_compaction_filter_factory(
    const TtlCompactionFilterConfig& config) {
  return std::make_shared<TtlCompactionFilterFactory>(config);
}

std::unique_ptr<rocksdb::CompactionFilter> DeferredTtlCompactionFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& context) {
  std::shared_ptr<rocksdb::CompactionFilterFactory> f;
  {
    std::lock_guard<std::mutex> lock(mu_);
    f = configured_;
  }
  return f ? f->CreateCompactionFilter(context) : nullptr;  // null: RocksDB compacts without a filter
}

void DeferredTtlCompactionFilterFactory::configure(const TtlCompactionFilterConfig& config) {
  auto f = make_ttl_compaction_filter_factory(config);
  std::lock_guard<std::mutex> lock(mu_);
  configured_ = std::move(f);
}

}  // namespace sluice
