// main() of the GoogleTest programs labelled `s3` (see kafka_test_main.cc).
#include "test_servers.h"

int main(int argc, char** argv) {
  return sluice::testing::run_tests_with_server(sluice::testing::s3_test_server().server, "S3", argc, argv);
}
