// The S3 recoverable writer against a real S3-compatible server (the ctest fixture s3_server): persist with a
// leftover below S3's 5 MiB part minimum and with several full parts, recover in a new client as another process
// would, commit, commit twice, commit after an abort, the abort of unpublished files, parts sent several at once
// and a part that keeps failing.
#include "fs/s3/s3_recoverable_writer.h"

#include <gtest/gtest.h>

#include <random>

#include "fs/file_systems_from_config.h"
#include "fs/path.h"
#include "fs/s3/s3_file_system.h"
#include "fs/s3/tests/s3_fault_proxy.h"
#include "test_servers.h"

namespace sluice::s3 {
namespace {

constexpr size_t kMiB = 1 << 20;

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 31 + (i >> 9));
  return out;
}

std::vector<uint8_t> concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

class S3RecoverableWriterIT : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = sluice::testing::s3_test_server();
    ASSERT_EQ(server_.server.state, sluice::testing::TestServer::State::kAvailable) << server_.server.reason;
    std::random_device rd;
    root_ = "s3://" + server_.bucket + "/s3-recoverable-it/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + std::to_string(rd());
    fs_ = new_process();
    ASSERT_NE(fs_, nullptr);
  }
  void TearDown() override {
    if (fs_ == nullptr) return;
    auto w = writer(*fs_);
    auto listed = w->list_in_progress(root_);
    if (listed.is_ok()) {
      for (const auto& f : listed.value()) (void)w->abort(f);
    }
    (void)fs_->remove_all(root_);
  }

  // A filesystem with a client of its own, as another process after a restart would have. `endpoint` "": the
  // server's; `retry_limit` -1: the default.
  std::shared_ptr<fs::FileSystem> new_process(const std::string& endpoint = "", int retry_limit = -1) const {
    Configuration c;
    EXPECT_TRUE(c.set_string("s3.endpoint", endpoint.empty() ? server_.endpoint : endpoint).is_ok());
    if (retry_limit >= 0) {
      EXPECT_TRUE(c.set_string("s3.retry.limit", std::to_string(retry_limit)).is_ok());
      EXPECT_TRUE(c.set_string("s3.retry.interval", "10ms").is_ok());
    }
    EXPECT_TRUE(c.set_string("s3.access-key", server_.access_key).is_ok());
    EXPECT_TRUE(c.set_string("s3.secret-key", server_.secret_key).is_ok());
    EXPECT_TRUE(c.set_string("s3.path.style.access", "true").is_ok());
    EXPECT_TRUE(c.set_string("s3.multipart.size", "5mb").is_ok());
    auto f = fs::file_systems_from(c).for_path(root_);
    EXPECT_TRUE(f.is_ok()) << f.status().to_string();
    return f.is_ok() ? *f : nullptr;
  }
  static std::shared_ptr<fs::RecoverableWriter> writer(fs::FileSystem& f) {
    auto w = f.create_recoverable_writer(fs::RecoverableWriterOptions{});
    EXPECT_TRUE(w.is_ok()) << w.status().to_string();
    return *w;
  }
  S3Client& client() { return static_cast<S3FileSystem&>(*fs_).client(); }
  int server_port() const { return std::stoi(server_.endpoint.substr(server_.endpoint.rfind(':') + 1)); }
  std::string p(const std::string& rel) const { return fs::join_path(root_, rel); }
  std::string key(const std::string& rel) const { return parse_s3_path(p(rel))->key; }

  // Objects below the root (published files and leftovers).
  std::vector<std::string> objects() {
    std::vector<std::string> out;
    auto listed = client().list_objects(server_.bucket, parse_s3_path(root_)->key + "/");
    EXPECT_TRUE(listed.is_ok()) << listed.status().to_string();
    if (!listed.is_ok()) return out;
    for (const auto& o : listed.value().objects) {
      if (!o.key.ends_with("/")) out.push_back(fs::path_file_name(o.key));
    }
    return out;
  }

  sluice::testing::S3TestServer server_;
  std::string root_;
  std::shared_ptr<fs::FileSystem> fs_;
};

// Bytes below a part's size are persisted as a leftover object; a new client continues from exactly there, and
// what the failed process wrote after the persist is gone. Committing twice is a no-op.
TEST_F(S3RecoverableWriterIT, PersistsALeftoverBelowAPartAndANewClientContinuesExactlyThere) {
  const auto before = pattern(1000, 1), dropped = pattern(3000, 2), after = pattern(500, 3);
  fs::ResumeRecoverable resume;
  {
    auto out = writer(*fs_)->open(p("part-job-0-1-0"));
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    ASSERT_TRUE((*out)->write(before).is_ok());
    auto r = (*out)->persist();
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    resume = *r;
    EXPECT_EQ(resume.position_bytes, 1000u);
    ASSERT_TRUE((*out)->write(dropped).is_ok());
    ASSERT_TRUE((*out)->persist().is_ok()) << "a later persist the restored checkpoint does not know";
    (*out)->close();
  }
  EXPECT_EQ(*fs_->stat(p("part-job-0-1-0")), fs::PathKind::kMissing) << "nothing visible before commit";
  auto other = new_process();
  auto w = writer(*other);
  auto resumed = w->recover(resume);
  ASSERT_TRUE(resumed.is_ok()) << resumed.status().to_string();
  EXPECT_EQ((*resumed)->position_bytes(), 1000u);
  ASSERT_TRUE((*resumed)->write(after).is_ok());
  auto c = (*resumed)->close_for_commit();
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->size_bytes, 1500u);
  ASSERT_TRUE(w->commit(*c).is_ok());
  EXPECT_EQ(*other->read_file(p("part-job-0-1-0")), concat({before, after}));
  Status again = writer(*new_process())->commit(*c);
  EXPECT_TRUE(again.is_ok()) << "committing a committed file again: " << again.to_string();
  EXPECT_EQ(objects(), std::vector<std::string>{"part-job-0-1-0"}) << "leftover objects are deleted after commit";
}

// 11 MiB with 5 MiB parts: two full parts and a 1 MiB leftover at the persist. The failed process then uploaded
// a third part the checkpoint does not know; the recovered upload replaces it.
TEST_F(S3RecoverableWriterIT, PersistsSeveralFullPartsAndALeftoverAndRecoversPastPartsUploadedLater) {
  const auto persisted = pattern(11 * kMiB, 4), lost = pattern(6 * kMiB, 5), tail = pattern(2 * kMiB + 7, 6);
  fs::ResumeRecoverable resume;
  {
    auto out = writer(*fs_)->open(p("big"));
    ASSERT_TRUE(out.is_ok());
    ASSERT_TRUE((*out)->write(persisted).is_ok());
    auto r = (*out)->persist();
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    resume = *r;
    ASSERT_TRUE((*out)->write(lost).is_ok());  // completes part 3 with bytes after the checkpoint
    (*out)->close();
  }
  auto other = new_process();
  auto w = writer(*other);
  auto resumed = w->recover(resume);
  ASSERT_TRUE(resumed.is_ok()) << resumed.status().to_string();
  EXPECT_EQ((*resumed)->position_bytes(), 11 * kMiB);
  ASSERT_TRUE((*resumed)->write(tail).is_ok());
  auto c = (*resumed)->close_for_commit();
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  ASSERT_TRUE(w->commit(*c).is_ok());
  EXPECT_EQ(*other->read_file(p("big")), concat({persisted, tail}));
}

// A commit that truly cannot be done is an error naming the file, never a silent skip.
TEST_F(S3RecoverableWriterIT, CommitAfterAnAbortFailsNamingTheFile) {
  auto w = writer(*fs_);
  auto out = w->open(p("part-aborted"));
  ASSERT_TRUE(out.is_ok());
  ASSERT_TRUE((*out)->write(pattern(100, 7)).is_ok());
  auto c = (*out)->close_for_commit();
  ASSERT_TRUE(c.is_ok());
  auto listed = w->list_in_progress(root_);
  ASSERT_TRUE(listed.is_ok());
  ASSERT_EQ(listed->size(), 1u);
  ASSERT_TRUE(w->abort(listed->front()).is_ok());
  Status s = w->commit(*c);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.to_string();
  EXPECT_NE(s.message().find(p("part-aborted")), std::string::npos) << s.to_string();
  EXPECT_EQ(*fs_->stat(p("part-aborted")), fs::PathKind::kMissing);
}

// Unpublished files directly in a directory are listed (not those of a subdirectory) and aborted with their
// leftover objects, so no part stays billed.
TEST_F(S3RecoverableWriterIT, AbortsUnpublishedUploadsAndTheirLeftovers) {
  auto w = writer(*fs_);
  auto a = w->open(p("part-a"));
  auto b = w->open(p("part-b"));
  auto nested = w->open(p("sub/part-c"));
  ASSERT_TRUE(a.is_ok() && b.is_ok() && nested.is_ok());
  ASSERT_TRUE((*a)->write(pattern(10, 8)).is_ok());
  ASSERT_TRUE((*a)->persist().is_ok());
  auto listed = w->list_in_progress(root_);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ(listed->at(0).target_path, p("part-a"));
  EXPECT_EQ(listed->at(1).target_path, p("part-b"));
  EXPECT_EQ(objects().size(), 1u) << "part-a's leftover";
  for (const auto& f : *listed) ASSERT_TRUE(w->abort(f).is_ok());
  EXPECT_TRUE(w->list_in_progress(root_)->empty());
  EXPECT_TRUE(objects().empty());
  auto uploads = client().list_multipart_uploads(server_.bucket, key("sub") + "/");
  ASSERT_TRUE(uploads.is_ok());
  EXPECT_EQ(uploads->size(), 1u) << "a subdirectory's upload is not listed for the parent";
}

// Writes `bytes` in 64 KiB calls, as the file sink's part writer hands over its buffer. Returns the first failure.
Status write_in_pieces(fs::RecoverableOutputStream& out, const std::vector<uint8_t>& bytes) {
  constexpr size_t kPiece = 64 * 1024;
  for (size_t off = 0; off < bytes.size(); off += kPiece) {
    const size_t n = std::min(kPiece, bytes.size() - off);
    SLUICE_RETURN_IF_ERROR(out.write(std::span<const uint8_t>(bytes).subspan(off, n)));
  }
  return Status::ok();
}

// Full parts travel in the background, several at once, while the writer fills the next ones; the persisted
// recoverable names every part in order (a new client resumes at exactly the persisted position) and the
// committed file holds every byte in order.
TEST_F(S3RecoverableWriterIT, FullPartsTravelSeveralAtOnceAndTheRecoverableNamesThemInOrder) {
  const auto first = pattern(26 * kMiB + 11, 9), tail = pattern(7 * kMiB + 3, 10);  // 5 full parts, then more
  auto out = writer(*fs_)->open(p("parallel"));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  ASSERT_TRUE(write_in_pieces(**out, first).is_ok());
  auto r = (*out)->persist();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->position_bytes, first.size());
  EXPECT_GE(client().stats().peak_requests_in_flight, 2u) << "parts of one file were sent one at a time";
  (*out)->close();

  auto other = new_process();
  auto w = writer(*other);
  auto resumed = w->recover(*r);
  ASSERT_TRUE(resumed.is_ok()) << resumed.status().to_string();
  EXPECT_EQ((*resumed)->position_bytes(), first.size());
  ASSERT_TRUE(write_in_pieces(**resumed, tail).is_ok());
  auto c = (*resumed)->close_for_commit();
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->size_bytes, first.size() + tail.size());
  ASSERT_TRUE(w->commit(*c).is_ok());
  EXPECT_EQ(*other->read_file(p("parallel")), concat({first, tail}));
}

// A part that keeps failing (after the client's retries) fails the persist that waits for it, naming the file
// and the request, and every call after it; no recoverable is made that skips the lost part. The recoverable
// of the persist before it still resumes, as a restore from the last completed checkpoint would.
TEST_F(S3RecoverableWriterIT, APartThatKeepsFailingFailsThePersistNamingTheFileAndAnEarlierPersistResumes) {
  testing::S3FaultProxy proxy(server_port());
  proxy.inject("partNumber=2&", testing::S3FaultProxy::Fault::kErrorResponse, -1, 500, "InternalError");
  auto via_proxy = new_process("http://127.0.0.1:" + std::to_string(proxy.port()), 1);
  const auto before = pattern(1000, 11), lost = pattern(12 * kMiB, 12), after = pattern(300, 13);
  auto out = writer(*via_proxy)->open(p("failing"));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  ASSERT_TRUE((*out)->write(before).is_ok());
  auto r = (*out)->persist();
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // Parts 1 and 2 leave in the background; the failure shows at the latest when the persist waits for them.
  const Status written = write_in_pieces(**out, lost);
  auto failed = (*out)->persist();
  ASSERT_FALSE(failed.is_ok()) << "a persist after a lost part";
  const Status& s = written.is_ok() ? failed.status() : written;
  EXPECT_EQ(s.code(), StatusCode::kIOError) << s.to_string();
  EXPECT_NE(s.message().find(p("failing")), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("UploadPart"), std::string::npos) << s.to_string();
  EXPECT_EQ(proxy.faults_injected(), 2) << "one try and one retry of part 2";
  EXPECT_FALSE((*out)->close_for_commit().is_ok()) << "a failed file is never closed for commit";
  (*out)->close();

  auto other = new_process();
  auto w = writer(*other);
  auto resumed = w->recover(*r);
  ASSERT_TRUE(resumed.is_ok()) << resumed.status().to_string();
  ASSERT_TRUE((*resumed)->write(after).is_ok());
  auto c = (*resumed)->close_for_commit();
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  ASSERT_TRUE(w->commit(*c).is_ok());
  EXPECT_EQ(*other->read_file(p("failing")), concat({before, after}));
}

// A file given up while parts are still on the wire (a task failing mid-file): close() waits for them, so the
// abort that follows is the last request of the upload (S3 may store a part that arrives after an abort).
TEST_F(S3RecoverableWriterIT, CloseWaitsForPartsInFlightSoAnAbortAfterItIsFinal) {
  auto w = writer(*fs_);
  auto out = w->open(p("given-up"));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  ASSERT_TRUE(write_in_pieces(**out, pattern(16 * kMiB, 14)).is_ok());  // 3 parts leave in the background
  (*out)->close();
  EXPECT_EQ(client().stats().requests_in_flight, 0u) << "close() returned with parts of the file still on the wire";
  auto listed = w->list_in_progress(root_);
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  ASSERT_EQ(listed->size(), 1u);
  ASSERT_TRUE(w->abort(listed->front()).is_ok());
  out->reset();  // the stream is gone: nothing of it can still arrive
  auto after = w->list_in_progress(root_);
  ASSERT_TRUE(after.is_ok()) << after.status().to_string();
  EXPECT_TRUE(after->empty()) << "an upload reappeared after its abort: " << after->front().target_path;
  auto uploads = client().list_multipart_uploads(server_.bucket, parse_s3_path(root_)->key + "/");
  ASSERT_TRUE(uploads.is_ok());
  EXPECT_TRUE(uploads->empty());
}

}  // namespace
}  // namespace sluice::s3
