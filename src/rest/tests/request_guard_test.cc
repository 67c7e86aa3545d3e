#include "rest/request_guard.h"

#include <gtest/gtest.h>

namespace sluice::rest {
namespace {

TEST(RequestGuard, ClientsWithoutABrowserAndReadsPass) {
  EXPECT_EQ(refuse_state_change("PATCH", "127.0.0.1:8081", "", "", "127.0.0.1"), "");
  EXPECT_EQ(refuse_state_change("POST", "myhost.example:8081", "", "", "127.0.0.1"), "") << "curl by host name";
  EXPECT_EQ(refuse_state_change("GET", "evil.example:8081", "http://evil.example:8081", "cross-site", "127.0.0.1"), "");
}

TEST(RequestGuard, TheEndpointsOwnPagesPass) {
  EXPECT_EQ(refuse_state_change("POST", "127.0.0.1:8081", "http://127.0.0.1:8081", "same-origin", "127.0.0.1"), "");
  EXPECT_EQ(refuse_state_change("PATCH", "localhost:8081", "http://LOCALHOST:8081", "", "127.0.0.1"), "");
  EXPECT_EQ(refuse_state_change("POST", "[::1]:8081", "http://[::1]:8081", "", "127.0.0.1"), "");
  EXPECT_EQ(refuse_state_change("POST", "jm.internal:8081", "http://jm.internal:8081", "", "jm.internal"), "")
      << "the advertised rest.address";
}

TEST(RequestGuard, PagesOfOtherSitesAreRefused) {
  EXPECT_NE(refuse_state_change("POST", "127.0.0.1:8081", "http://evil.example", "", "127.0.0.1"), "");
  EXPECT_NE(refuse_state_change("PATCH", "127.0.0.1:8081", "null", "", "127.0.0.1"), "") << "a sandboxed page";
  EXPECT_NE(refuse_state_change("POST", "127.0.0.1:8081", "", "cross-site", "127.0.0.1"), "");
  EXPECT_NE(refuse_state_change("DELETE", "127.0.0.1:8081", "http://127.0.0.1:9999", "", "127.0.0.1"), "")
      << "another port is another origin";
  const std::string why = refuse_state_change("POST", "127.0.0.1:8081", "http://evil.example", "", "127.0.0.1");
  EXPECT_NE(why.find("http://evil.example"), std::string::npos) << why;
}

TEST(RequestGuard, AHostNameThatOnlyResolvesHereIsRefused) {
  // DNS rebinding: the page's origin and the Host agree, but the name is not one this endpoint answers to.
  const std::string why =
      refuse_state_change("POST", "rebind.example:8081", "http://rebind.example:8081", "", "127.0.0.1");
  EXPECT_NE(why.find("rebind.example"), std::string::npos) << why;
}

}  // namespace
}  // namespace sluice::rest
