// Reading a list the control plane hands out in pages, each naming the next by a token
// (a cursor, an X-Next-Token header). A server that never stops paging is a bug, not a
// list: the pages are bounded, so a broken server cannot keep corral busy for ever.
#pragma once

#include <functional>
#include <string>

namespace corral::sdk::remote {

// The most pages one list may take (100 sandboxes each, the providers' own page size).
inline constexpr int kMaxPages = 1000;

// Calls `fetch_page("")`, then again with each token it returns until one is "" or repeats; at most kMaxPages times,
// then Error(unavailable) naming `what`.
void for_each_page(const std::string& what, const std::function<std::string(const std::string& token)>& fetch_page);

}  // namespace corral::sdk::remote
