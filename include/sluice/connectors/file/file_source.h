// FileSource: the lines of text files (Flink's FileSource with a TextLineInputFormat).
//
// The paths given may be files or directories (a directory contributes its regular files, recursively, in
// name order; hidden files starting with '.' or '_' are skipped, as Flink does). Each file is one split; its
// position is the byte offset of the next line, so a restore resumes mid-file. Splits are handed out on
// request, so fast readers take more files. Lines are emitted without the trailing "\n" (and "\r\n").
// Bounded. Errors: a path that does not exist fails the job when the enumerator starts, naming the path;
// an unreadable file fails the reading task, naming the file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/operators/source_operator.h"
#include "sluice/source/source.h"

namespace sluice::file {

struct FileSplit {
  std::string path;
  int64_t offset = 0;  // bytes of the file already emitted (always at a line start)
  std::string split_id() const { return path; }
  bool operator==(const FileSplit&) const = default;
  SLUICE_FIELDS(FileSplit, path, offset)
};

// Lists the files under `paths` as described above. kNotFound names a missing path.
Result<std::vector<std::string>> list_files(const std::vector<std::string>& paths);

class FileSource final : public Source<std::string, FileSplit> {
 public:
  explicit FileSource(std::vector<std::string> paths) : paths_(std::move(paths)) {}
  static FileSource for_paths(std::vector<std::string> paths) { return FileSource(std::move(paths)); }

  Boundedness boundedness() const override { return Boundedness::kBounded; }
  std::unique_ptr<SplitEnumerator<FileSplit>> create_enumerator(SplitEnumeratorContext<FileSplit>& ctx) const override;
  std::unique_ptr<SplitEnumerator<FileSplit>> restore_enumerator(SplitEnumeratorContext<FileSplit>& ctx,
                                                                const std::vector<uint8_t>& state) const override;
  std::unique_ptr<SourceReader<std::string, FileSplit>> create_reader(SourceReaderContext& ctx) const override;

 private:
  std::vector<std::string> paths_;
};

}  // namespace sluice::file

// The file source's operator and coordinator are compiled once, in the file connector's library, instead of in
// every program that reads files (docs/benchmarks.md "Build time").
namespace sluice {
extern template class SourceOperator<std::string, file::FileSplit>;
extern template class SourceCoordinator<std::string, file::FileSplit>;
}  // namespace sluice
