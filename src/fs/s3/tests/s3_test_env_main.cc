// main() of s3_client_it: runs the tests when s3_test_env.h finds a server, else exits 77 (ctest: skipped) with
// a banner saying what is missing.
#include <gtest/gtest.h>

#include <cstdio>

#include "s3_test_env.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sluice::s3::testing::S3TestServer server = sluice::s3::testing::s3_test_server_from_env();
  if (!server.available) {
    std::fprintf(stderr,
                 "################################################################\n"
                 "SKIPPED: every test of this program needs an S3 test server:\n  %s\n"
                 "################################################################\n",
                 server.reason.c_str());
    return 77;
  }
  std::printf("S3 test server: %s, bucket %s\n", server.endpoint.c_str(), server.bucket.c_str());
  return RUN_ALL_TESTS();
}
