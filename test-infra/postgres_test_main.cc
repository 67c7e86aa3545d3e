// main() of the GoogleTest programs labelled `postgres` (see kafka_test_main.cc).
#include "test_servers.h"

int main(int argc, char** argv) {
  return sluice::testing::run_tests_with_server(sluice::testing::postgres_test_server(), "PostgreSQL", argc, argv);
}
