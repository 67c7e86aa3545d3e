// Compiled, never linked, by the ctest serializer_missing_fields_compile_error (src/core/CMakeLists.txt): a struct
// without SLUICE_FIELDS must fail to serialize with Sluice's own message, not a page of template errors only.
// With -DSLUICE_WITH_FIELDS it compiles (the _control test), so the failure is the missing fields.
#include <cstdint>
#include <string>
#include <vector>

#include "sluice/core/serializer.h"

struct Trade {
  std::string symbol;
  int64_t qty = 0;
#ifdef SLUICE_WITH_FIELDS
  SLUICE_FIELDS(Trade, symbol, qty)
#endif
};

std::vector<uint8_t> encode(const Trade& t) { return sluice::serialize_bytes(t); }
