// The fingerprint of a program's JobGraph: what every process of an application-mode cluster must agree on before
// a TaskManager may run the JobManager's subtasks (docs/cluster.md). Two processes that built the same program with
// the same job options get the same value; a different operator chain or chaining strategy, name, uid, parallelism,
// max parallelism, exchange (its partitioning), job property (the demo's seed, say) or task setting gives another
// one, and the JobManager refuses the TaskManager naming both values.
// A 64-bit XXH3 hash of a canonical encoding (xxHash, https://xxhash.com), not a security check: it catches a
// process started with another program or other options, not a forged one. Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "graph/job_graph.h"

namespace sluice::graph {

// `task_settings`: the configuration every process's tasks must share (checkpointing mode, state backend, ...),
// by name; any difference gives another fingerprint too.
uint64_t job_graph_fingerprint(const StreamGraph& stream_graph, const JobGraph& job_graph,
                               const std::map<std::string, std::string>& job_properties,
                               const std::map<std::string, std::string>& task_settings = {});

// The job properties and task settings a fingerprint covers, by one name each ("job property <key>", "setting
// <key>"): a TaskManager sends them with its fingerprint, so a refusal names the options that differ instead of two
// hash values. The operators themselves are only in the hash.
std::map<std::string, std::string> fingerprint_settings(const std::map<std::string, std::string>& job_properties,
                                                        const std::map<std::string, std::string>& task_settings);

}  // namespace sluice::graph
