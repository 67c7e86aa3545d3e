#include "fs/file_system_registry.h"

#include <gtest/gtest.h>

#include "fs/fault_injection_file_system.h"

namespace sluice::fs {
namespace {

TEST(FileSystemRegistry, PlainPathsAndFileUrisAreLocal) {
  FileSystemRegistry reg;
  for (const std::string p : {"/var/ck", "ck", "file:///var/ck", "FILE:///x", "file://localhost/x", "./s3:x"}) {
    auto f = reg.for_path(p);
    ASSERT_TRUE(f.is_ok()) << p << ": " << f.status().to_string();
    EXPECT_EQ((*f)->scheme(), "file") << p;
  }
}

TEST(FileSystemRegistry, AnUnsupportedSchemeIsRefusedNamingItAndTheSupportedOnes) {
  FileSystemRegistry reg;
  auto f = reg.for_path("hdfs:///checkpoints");
  ASSERT_FALSE(f.is_ok());
  EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
  const std::string& m = f.status().message();
  EXPECT_NE(m.find("'hdfs'"), std::string::npos) << m;
  EXPECT_NE(m.find("hdfs:///checkpoints"), std::string::npos) << m;
  EXPECT_NE(m.find("supported: file"), std::string::npos) << m;
  Status st = reg.check_supported("gs://b/ck", "execution.checkpointing.dir");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("execution.checkpointing.dir: ", 0), 0u) << st.message();
  EXPECT_EQ(reg.check_supported("", "--restore").code(), StatusCode::kInvalidArgument);
}

// A URI missing its "//" would otherwise become a local folder named "s3:" beside the job.
TEST(FileSystemRegistry, AMistypedUriAndAFileUriWithAHostAreRefused) {
  FileSystemRegistry reg;
  for (const std::string p : {"s3:/bucket/ck", "s3:bucket/ck"}) {
    Status st = reg.check_supported(p, "--checkpoint-dir");
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << p;
    EXPECT_NE(st.message().find("'" + p + "' looks like a URI without '//' (expected s3://"), std::string::npos)
        << st.message();
    EXPECT_FALSE(reg.for_path(p).is_ok()) << p;
  }
  Status st = reg.check_supported("file://otherhost/tmp/x", "--output");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("names the host 'otherhost'"), std::string::npos) << st.message();
  for (const char* empty : {"file://", "file://localhost"}) {
    st = reg.check_supported(empty, "--output");
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << empty;
    EXPECT_NE(st.message().find("--output: '" + std::string(empty) + "' names no folder"), std::string::npos)
        << st.message();
  }
}

TEST(FileSystemRegistry, AFactoryRunsOnceOnFirstUseAndItsErrorNamesThePath) {
  FileSystemRegistry reg;
  int calls = 0;
  reg.register_scheme("s3", [&]() -> Result<std::shared_ptr<FileSystem>> {
    ++calls;
    if (calls == 1) return Status::invalid_argument("s3.endpoint: not set");
    return std::shared_ptr<FileSystem>(std::make_shared<FaultInjectionFileSystem>());
  });
  EXPECT_TRUE(reg.check_supported("s3://b/ck", "x").is_ok());
  EXPECT_EQ(calls, 0) << "checking a scheme creates nothing";
  auto first = reg.for_path("s3://b/ck");
  ASSERT_FALSE(first.is_ok());
  EXPECT_NE(first.status().message().find("s3://b/ck"), std::string::npos);
  EXPECT_NE(first.status().message().find("s3.endpoint"), std::string::npos);
  FileSystemRegistry copy = reg;
  auto a = copy.for_path("s3://b/ck");
  auto b = reg.for_path("s3://b/other");
  ASSERT_TRUE(a.is_ok());
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(a->get(), b->get()) << "copies share the created filesystem";
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(reg.schemes(), (std::vector<std::string>{"file", "s3"}));
}

}  // namespace
}  // namespace sluice::fs
