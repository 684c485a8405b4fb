// The requests that move a file's bytes between this machine and a sandbox over HTTP
// (an upload of the workspace archive, a download archive fetched back). Their length is
// the file's, so no time limit bounds them; an idle guard gives up on a transfer that
// stopped moving instead, and a stop request aborts one at once. Add the provider's own
// headers, then send the request with Client::send (never retried: it streams).
#pragma once

#include <functional>
#include <string>

#include "corral/sdk/http.hpp"

namespace corral::sdk::http {

// How long a transfer may move no byte before it counts as stalled.
inline constexpr long kTransferIdleSeconds = 60;

// A GET of `url` whose 2xx body goes to `on_body` as it arrives, never held whole; `what`
// names it in errors; `on_transfer` (e.g. Host::transfer_reporter()) hears its progress.
Request streamed_get(std::string url, std::string what, BodyFn on_body, std::function<bool()> cancelled,
                     TransferFn on_transfer = {});

// A POST of local file `local_path` to `url` as the multipart field "file", named after
// the last part of `remote_path`; `on_transfer` hears its progress.
Request streamed_upload(std::string url, std::string what, const std::string& local_path,
                        const std::string& remote_path, std::function<bool()> cancelled, TransferFn on_transfer = {});

}  // namespace corral::sdk::http
