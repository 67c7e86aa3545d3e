// The helpers of checkpoint_it_util.h that build or check the main job, compiled once for every test that uses them.
#include "checkpoint_it_util.h"

namespace sluice::it {

DataStream<nexmark::Bid> add_bids(StreamExecutionEnvironment& env, const MainJob& job) {
  return env.from_source(nexmark::NexmarkSource(source_options(job)), "bids")
      .uid("bids")
      .filter([](const nexmark::Event& e) { return e.is_bid(); })
      .name("only-bids")
      .uid("only-bids")
      .map([](nexmark::Event&& e) { return e.bid(); })
      .name("to-bid")
      .uid("to-bid");
}

void build_main_job(StreamExecutionEnvironment& env, const MainJob& job) {
  auto updates = add_bids(env, job)
      .map(Throttle{})
      .name("throttle")
      .uid("throttle")
      .map(RecordNotifications{})
      .name("notifications")
      .uid("notifications")
      .key_by([](const nexmark::Bid& b) { return b.auction; })
      .process(per_auction::CountSumMax{})
      .name("per-auction")
      .uid("per-auction");
  if (job.hold_snapshots) updates = updates.map(HoldSnapshot{}).name("hold-snapshot").uid("hold-snapshot");
  updates
      .sink_to(file::TransactionalFileSink<per_auction::AuctionUpdate>(job.output_dir, per_auction::append_csv_line))
      .name("sink")
      .uid("sink");
}

std::string check_exactly_once(const MainJob& job) {
  auto src = source_options(job);
  auto oracle = nexmark::compute_per_auction_oracle(src.generator, src.generator.max_events);
  auto report = cli::verify_per_auction_output(job.output_dir, oracle);
  if (!report.is_ok()) return report.status().to_string();
  if (report->mismatches() != 0) {
    return "missing " + std::to_string(report->missing) + ", duplicates " + std::to_string(report->duplicates) +
           ", wrong finals " + std::to_string(report->wrong_finals) + ", malformed " +
           std::to_string(report->malformed) +
           (report->first_mismatches.empty() ? "" : ": " + report->first_mismatches.front());
  }
  if (report->records == 0) return "no output at all";
  return "";
}

Result<std::unique_ptr<JobClient>> submit(StreamExecutionEnvironment& env, const cluster::MiniClusterConfig& mc,
                                          const std::string& name) {
  auto sg = std::make_shared<StreamGraph>(env.stream_graph());
  graph::JobGraphOptions jo;
  jo.job_name = name;
  jo.default_parallelism = env.parallelism();
  jo.max_parallelism = env.max_parallelism();
  SLUICE_ASSIGN_OR_RETURN(graph::JobGraph jg, graph::build_job_graph(*sg, jo));
  return cluster::submit_job(std::move(sg), std::move(jg), mc);
}

Status ObservedFileSystem::create_dir(const std::string& path) {
  {
    std::lock_guard lock(mu_);
    if (fail_mkdir_.count(sluice::fs::path_file_name(path)) > 0) {
      log_.push_back({"mkdir-failed", path, std::chrono::steady_clock::now()});
      return Status::io_error("cannot create directory '" + path + "': Permission denied");
    }
  }
  Status s = base_->create_dir(path);
  add("mkdir", path);
  return s;
}

Status ObservedFileSystem::write_file(const std::string& path, const std::vector<uint8_t>& bytes,
                                      sluice::fs::Durability durability) {
  {
    std::unique_lock lock(mu_);
    for (const std::string& text : fail_write_) {
      if (path.find(text) == std::string::npos) continue;
      log_.push_back({"write-failed", path, std::chrono::steady_clock::now()});
      return Status::io_error("cannot write file '" + path + "': No space left on device");
    }
    for (auto& [text, hold] : holds_) {
      if (hold.used || path.find(text) == std::string::npos) continue;
      hold.used = true;
      hold.waiting = true;
      cv_.wait_for(lock, std::chrono::seconds(60), [&] { return hold.released; });
      hold.waiting = false;
      break;
    }
  }
  Status s = base_->write_file(path, bytes, durability);
  if (s.is_ok()) add("write", path);
  return s;
}

std::vector<std::pair<std::string, checkpoint::SubtaskChannelState>> channel_states(
    const checkpoint::RestorePoint& rp, checkpoint::CheckpointStorage& storage) {
  std::vector<std::pair<std::string, checkpoint::SubtaskChannelState>> out;
  for (const auto& op : rp.metadata.operators) {
    for (const auto& st : op.subtasks) {
      if (!st.channel_state) continue;
      auto raw = storage.read_state(rp.location, *st.channel_state);
      EXPECT_TRUE(raw.is_ok()) << raw.status().to_string();
      if (!raw.is_ok()) continue;
      auto decoded = checkpoint::decode_channel_state(*raw, "test");
      EXPECT_TRUE(decoded.is_ok()) << decoded.status().to_string();
      if (decoded.is_ok()) out.emplace_back(op.operator_id, std::move(decoded).value());
    }
  }
  return out;
}

}  // namespace sluice::it
