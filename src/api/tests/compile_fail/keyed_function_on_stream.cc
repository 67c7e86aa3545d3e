// Compiled, never linked, by the ctest keyed_function_on_stream_compile_error (src/api/CMakeLists.txt): a
// KeyedProcessFunction given to a stream that is not keyed must fail with Sluice's message naming key_by. With
// -DSLUICE_KEYED it compiles (the _control test), so the failure is the missing key_by.
#include <cstdint>
#include <string>

#include "sluice/api/datastream.h"
#include "sluice/api/environment.h"

struct CountPerKey : sluice::KeyedProcessFunction<std::string, std::string, int64_t> {
  void process_element(const std::string&, sluice::KeyedProcessContext<std::string>&,
                       sluice::Collector<int64_t>& out) override {
    out.collect(1);
  }
};

void build(sluice::DataStream<std::string> words) {
#ifdef SLUICE_KEYED
  words.key_by([](const std::string& w) { return w; }).process(CountPerKey{});
#else
  words.process(CountPerKey{});
#endif
}
