// The recoverable writer of the local disk (recoverable_writer.h; after Flink's LocalRecoverableWriter).
//
// A file for `<dir>/<name>` is written to the hidden sibling `<dir>/.<name>.inprogress`. persist() fsyncs it and
// records its length; recover() truncates it back to that length and continues (a file closed for commit since,
// but not committed, is taken back from its pending name: a restore from the checkpoint that persisted it, after
// a failed run rolled it, continues it). close_for_commit() fsyncs it and
// renames it to `<dir>/.<name>.pending` (directory synced); commit() renames the pending file to `<dir>/<name>`
// (directory synced). A commit that finds no pending file but the final file succeeds (committed before).
// Recoverables record the hidden file's name, not its directory: a committable commits next to whatever target
// path it is given, so an output directory moved or copied between runs commits in place.
//
// While writing, every `bytes_per_sync` bytes are handed to the kernel's writeback (sync_file_range without
// waiting, RocksDB's bytes_per_sync), so the fsync of persist / close_for_commit, often on a task thread, waits
// for at most about that much dirty data. Durability still comes from the fsync alone.
//
// Thread-safety: as recoverable_writer.h.
#pragma once

#include <cstdint>
#include <memory>

#include "fs/recoverable_writer.h"

namespace sluice::fs {

struct LocalRecoverableWriterOptions {
  int64_t bytes_per_sync = 1 << 20;  // bytes; 0 turns early writeback off
};

std::shared_ptr<RecoverableWriter> make_local_recoverable_writer(LocalRecoverableWriterOptions options = {});

}  // namespace sluice::fs
