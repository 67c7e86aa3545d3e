// main() of the GoogleTest programs labelled `kafka`: compiled into each program (not linked from a library),
// so it replaces gtest_main's. Skips with kSkipReturnCode when the broker could not be fetched.
#include "test_servers.h"

int main(int argc, char** argv) {
  return sluice::testing::run_tests_with_server(sluice::testing::kafka_test_server(), "Kafka", argc, argv);
}
