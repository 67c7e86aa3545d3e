// RocksDBNativeMetricMonitor: publishes the enabled native RocksDB metrics (state.backend.rocksdb.metrics.*) of
// one instance as gauges, one group per column family as Flink's RocksDBNativeMetricMonitor (internal:
// includes RocksDB's headers).
//
// A gauge reads its RocksDB property (GetIntProperty, thread-safe) when the metrics are snapshotted. close()
// reads every gauge one last time and detaches from the database; from then on the gauges report those final
// values (a job's metrics stay readable after its tasks ended), and the database may close.
//
// Thread-safety: register_column_family and close on the task thread; the gauges from any thread.
#pragma once

#include <rocksdb/db.h>

#include <memory>
#include <string>
#include <vector>

#include "sluice/state/state_backend.h"

namespace sluice {

class RocksDBNativeMetricMonitor {
 public:
  RocksDBNativeMetricMonitor(rocksdb::DB* db, RocksDBNativeMetricOptions options, RocksDBNativeMetricRegistrar registrar);
  ~RocksDBNativeMetricMonitor();
  RocksDBNativeMetricMonitor(const RocksDBNativeMetricMonitor&) = delete;
  RocksDBNativeMetricMonitor& operator=(const RocksDBNativeMetricMonitor&) = delete;

  // Registers a gauge per enabled property for column family `handle` in group `group` (the state's name).
  // `handle` must stay valid until close().
  void register_column_family(const std::string& group, rocksdb::ColumnFamilyHandle* handle);
  // Idempotent; call before the column family handles are destroyed.
  void close();

  // The RocksDB properties `options` enables ("rocksdb.block-cache-usage", ...).
  static std::vector<std::string> properties_of(const RocksDBNativeMetricOptions& options);

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::vector<std::string> properties_;
  RocksDBNativeMetricRegistrar registrar_;
};

}  // namespace sluice
