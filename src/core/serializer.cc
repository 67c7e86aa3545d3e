#include "sluice/core/serializer.h"

namespace sluice {

std::string TypeSerializerSnapshot::to_string() const {
  std::string s = type_name;
  if (!nested.empty()) {
    s += '<';
    for (size_t i = 0; i < nested.size(); ++i) {
      if (i) s += ',';
      s += nested[i].to_string();
    }
    s += '>';
  }
  if (version != 1) s += "@" + std::to_string(version);
  return s;
}

void TypeSerializerSnapshot::write(DataOutputView& out) const {
  out.write_string(type_name);
  out.write_varint(version);
  out.write_varint(nested.size());
  for (const auto& n : nested) n.write(out);
}

TypeSerializerSnapshot TypeSerializerSnapshot::read(DataInputView& in) {
  // Depth is bounded by the input size: each level consumes at least 3 bytes.
  TypeSerializerSnapshot s;
  s.type_name = in.read_string();
  s.version = static_cast<uint32_t>(in.read_varint());
  uint64_t n = in.read_varint();
  if (n > in.remaining()) {
    in.fail();
    return s;
  }
  for (uint64_t i = 0; i < n && in.ok(); ++i) s.nested.push_back(read(in));
  return s;
}

}  // namespace sluice
