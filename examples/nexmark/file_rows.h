// Query rows as committed part files (OutputMode::kFiles): each row is one line, the hex of its serialized bytes
// (its TypeSerializer), written by the exactly-once TransactionalFileSink; read back from the committed part files
// of the folder (`part-*`; pending `.part-*` files are not output) for verify(). Every process of a cluster writes
// its subtasks' rows into the folder, so the process that verifies needs to reach it (a local or shared folder).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sluice/sluice.h"

namespace sluice::nexmark::queries {

template <class Row>
void append_row_line(const Row& row, std::string& line) {
  std::vector<uint8_t> bytes;
  DataOutputView out(&bytes);
  TypeSerializer<Row>::serialize(row, out);
  static constexpr char kHex[] = "0123456789abcdef";
  for (uint8_t b : bytes) {
    line.push_back(kHex[b >> 4]);
    line.push_back(kHex[b & 15]);
  }
}

// The rows of every committed part file in `dir`, in file-name order. kNotFound when `dir` does not exist;
// kCorruption naming the file and line when a line is not a row.
template <class Row>
Result<std::vector<Row>> read_row_files(const std::string& dir) {
  namespace stdfs = std::filesystem;
  std::error_code ec;
  if (!stdfs::is_directory(dir, ec)) return Status::not_found("query output folder '" + dir + "' does not exist");
  std::vector<std::string> files;
  for (const auto& e : stdfs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().filename().string().rfind("part-", 0) == 0) files.push_back(e.path().string());
  }
  if (ec) return Status::io_error("listing '" + dir + "': " + ec.message());
  std::sort(files.begin(), files.end());
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::vector<Row> rows;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) return Status::io_error("cannot read '" + file + "'");
    std::string line;
    for (int64_t n = 1; std::getline(in, line); ++n) {
      std::vector<uint8_t> bytes(line.size() / 2);
      bool ok = line.size() % 2 == 0;
      for (size_t i = 0; ok && i < bytes.size(); ++i) {
        const int hi = nibble(line[2 * i]), lo = nibble(line[2 * i + 1]);
        ok = hi >= 0 && lo >= 0;
        bytes[i] = static_cast<uint8_t>(hi << 4 | (lo & 15));
      }
      if (ok) {
        DataInputView view(bytes.data(), bytes.size());
        Row row = TypeSerializer<Row>::deserialize(view);
        ok = view.ok() && view.at_end();
        if (ok) rows.push_back(std::move(row));
      }
      if (!ok) return Status::corruption("'" + file + "' line " + std::to_string(n) + " is not a query row");
    }
  }
  return rows;
}

}  // namespace sluice::nexmark::queries
