#include "sluice/connectors/file/rolling_policy.h"

#include <string>

namespace sluice::file {

bool RollingPolicy::should_roll_on_event(const PartFileInfo& file) const { return file.size_bytes >= part_size_bytes; }

bool RollingPolicy::should_roll_on_processing_time(const PartFileInfo& file, int64_t now_ms) const {
  if (kind != Kind::kDefault) return false;
  return now_ms - file.creation_time_ms >= rollover_interval_ms ||
         now_ms - file.last_update_time_ms >= inactivity_interval_ms;
}

bool RollingPolicy::should_roll_on_checkpoint(const PartFileInfo& file) const {
  return kind == Kind::kOnCheckpoint || should_roll_on_event(file);
}

Status RollingPolicy::validate() const {
  auto positive = [](const char* name, int64_t v) {
    return v > 0 ? Status::ok()
                 : Status::invalid_argument(std::string("file sink rolling policy: ") + name + " must be > 0, got " +
                                            std::to_string(v));
  };
  if (Status s = positive("part_size_bytes", part_size_bytes); !s.is_ok()) return s;
  if (kind == Kind::kOnCheckpoint) return Status::ok();
  if (Status s = positive("rollover_interval_ms", rollover_interval_ms); !s.is_ok()) return s;
  return positive("inactivity_interval_ms", inactivity_interval_ms);
}

}  // namespace sluice::file
