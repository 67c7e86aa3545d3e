// Which requests may change a job through the REST endpoint (PATCH, POST, PUT, DELETE: cancel, savepoint, stop). The
// endpoint has no authentication, as Flink's, and listens on loopback by default; what it refuses is a browser
// carrying a request it was not asked for by a page of this endpoint (cross-site request forgery), including a
// page of another site whose host name was re-pointed at this address (DNS rebinding). Programs such as curl and
// the sluice CLI send no Origin and are not affected.
//
// A state-changing request is refused when
//   - its Sec-Fetch-Site header says the page was of another site ("cross-site", "same-site");
//   - it has an Origin header (browsers send one with every such request) that is not "http://" + its Host
//     header, or is "null";
//   - it has an Origin and its Host names neither an IP address, "localhost", nor the endpoint's advertised
//     address (rest.address): a page under some other name that only resolves here.
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sluice::rest {

// Empty when the request may proceed, else why it is refused (the 403's message). Header values as received
// (empty when absent).
std::string refuse_state_change(std::string_view method, std::string_view host, std::string_view origin,
                                std::string_view sec_fetch_site, std::string_view advertised_address);

}  // namespace sluice::rest
