#include "core/failure_markers.h"

namespace sluice {
namespace {

std::string marked(std::string message, std::string_view mark) {
  message += " (";
  message += mark;
  message += ")";
  return message;
}

}  // namespace

Status committable_data_gone(std::string message) {
  return Status::not_found(marked(std::move(message), kCommittableDataGoneMark));
}

Status path_refused(std::string message) {
  return Status::failed_precondition(marked(std::move(message), kPathRefusedMark));
}

bool has_failure_mark(const Status& s, std::string_view mark) {
  return !s.is_ok() && s.message().find(mark) != std::string::npos;
}

}  // namespace sluice
