// Throughput of the exactly-once file sink and of the storage itself, on the local disk and on S3 (README.md):
//
//  - sink: `bytes` of the demo's update lines ("key,count,sum,max", ~22 bytes) written by the file sink's part
//    writer (file::TransactionalPartWriter, the writer TransactionalFileSink runs in each subtask, unchanged),
//    one subtask, with a checkpoint every `checkpoint_bytes`: at each the writer is flushed, its files closed for
//    commit (prepare_commit) and committed (commit_part_files, as the sink's committer does when the checkpoint
//    completes). On S3 that is a multipart upload per part file, parts sent as s3.multipart.size fills up,
//    completed at the commit. Records/s and MiB/s from the first record to the last commit; the committed files
//    are checked to hold every byte written.
//  - raw: what the server takes without Sluice's layers: `bytes` in 8 MiB objects PUT one after the other by
//    the S3 client (S3Client::put_object; one stream), then by 4 streams at once, and read back (get_object);
//    next to the same files written (fsynced) and read through the local filesystem. On loopback this is the
//    S3 server's own limit, which bounds every S3 figure of the bench.
//
// Runs alternate local / S3 `repeat` times; medians. JSON: {"records", "bytes", "local": {records_per_s,
// mib_per_s, runs}, "s3": {..., requests, bytes_sent}, "ratio_s3_to_local"} and {"object_bytes", "local":
// {write_mib_per_s, read_mib_per_s}, "s3": {put_mib_per_s, put_4_streams_mib_per_s, get_mib_per_s}}.
#pragma once

#include <cstdint>

#include "restore_runs.h"

namespace sluice::bench {

Result<Json> sink_throughput(const RestoreTargets& targets, int64_t bytes, int64_t checkpoint_bytes, int32_t repeat);
Result<Json> raw_throughput(const RestoreTargets& targets, int64_t bytes);

}  // namespace sluice::bench
