// This machine's name (gethostname(2)), as a running job's claims and logs record it for the people and jobs
// they refuse. Thread-safety: any thread.
#pragma once

#include <string>

namespace sluice {

// The host name; "an unknown host" when the system cannot say.
std::string host_name();

}  // namespace sluice
