// Byte views that serializers write to and read from.
//
// Format: fixed-width integers and floats are little-endian; lengths are unsigned LEB128 varints.
// DataInputView never throws: a read past the end sets a sticky failure flag and returns zero values, so a
// decoder checks `ok()` once after a whole record (as protobuf's CodedInputStream does) instead of after
// every field. Thread-safety: none; one view per thread.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

static_assert(std::endian::native == std::endian::little, "Sluice's byte formats assume a little-endian host");

namespace sluice {

class DataOutputView {
 public:
  // Appends to *buf, which must outlive the view.
  explicit DataOutputView(std::vector<uint8_t>* buf) : buf_(buf) {}

  template <class T>
    requires std::is_trivially_copyable_v<T>
  void write_fixed(T v) {
    size_t n = buf_->size();
    buf_->resize(n + sizeof(T));
    std::memcpy(buf_->data() + n, &v, sizeof(T));
  }
  void write_u8(uint8_t v) { buf_->push_back(v); }
  void write_varint(uint64_t v) {
    while (v >= 0x80) {
      buf_->push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    buf_->push_back(static_cast<uint8_t>(v));
  }
  void write_bytes(const void* p, size_t n) {
    size_t at = buf_->size();
    buf_->resize(at + n);
    if (n) std::memcpy(buf_->data() + at, p, n);
  }
  // varint length, then the bytes: self-delimiting, so "ab"+"c" and "a"+"bc" differ.
  void write_string(std::string_view s) {
    write_varint(s.size());
    write_bytes(s.data(), s.size());
  }
  size_t size() const { return buf_->size(); }
  std::vector<uint8_t>& buffer() { return *buf_; }

 private:
  std::vector<uint8_t>* buf_;
};

class DataInputView {
 public:
  DataInputView(const uint8_t* data, size_t size) : p_(data), end_(data + size), begin_(data) {}
  explicit DataInputView(std::string_view s)
      : DataInputView(reinterpret_cast<const uint8_t*>(s.data()), s.size()) {}

  template <class T>
    requires std::is_trivially_copyable_v<T>
  T read_fixed() {
    T v{};
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) {
      fail();
      return v;
    }
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  uint8_t read_u8() { return read_fixed<uint8_t>(); }
  uint64_t read_varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) {
        fail();
        return 0;
      }
      uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail();  // more than 10 bytes: not a varint
    return 0;
  }
  // Reads n bytes; returns a view into the input (valid while the input is).
  std::string_view read_bytes(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) {
      fail();
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  std::string read_string() {
    uint64_t n = read_varint();
    return std::string(read_bytes(n));
  }

  bool ok() const { return !failed_; }
  bool at_end() const { return p_ == end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  size_t position() const { return static_cast<size_t>(p_ - begin_); }
  const uint8_t* current() const { return p_; }
  // Marks the input as malformed (a decoder found an impossible value). Sticky.
  void fail() {
    failed_ = true;
    p_ = end_;
  }

  // Elements that decode from no bytes (void namespaces, empty structs, structs migrated from a version without
  // fields) take memory and time the input's size does not bound, the more so in nested containers: a container
  // charges each one's size here, at least kMinEmptyElementCharge, and the input fails (false) once they come to
  // more than kMaxEmptyElementBytes in all - at most a million such elements per input.
  static constexpr uint64_t kMaxEmptyElementBytes = uint64_t{64} << 20;
  static constexpr size_t kMinEmptyElementCharge = 64;
  bool charge_empty_element(size_t memory_bytes) {
    empty_element_bytes_ += memory_bytes > kMinEmptyElementCharge ? memory_bytes : kMinEmptyElementCharge;
    if (empty_element_bytes_ <= kMaxEmptyElementBytes) return true;
    fail();
    return false;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* begin_;
  bool failed_ = false;
  uint64_t empty_element_bytes_ = 0;
};

}  // namespace sluice
