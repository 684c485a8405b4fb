#include "corral/sdk/streamed_transfer.hpp"

#include <utility>

namespace corral::sdk::http {
namespace {

// What both directions share: no time limit, the idle guard, cancellation, the name.
Request transfer(std::string method, std::string url, std::string what, std::function<bool()> cancelled,
                 TransferFn on_transfer) {
  Request r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.timeout_seconds = 0;  // size-dependent; the idle guard catches stalls
  r.idle_timeout_seconds = kTransferIdleSeconds;
  r.cancelled = std::move(cancelled);
  r.what = std::move(what);
  r.on_transfer = std::move(on_transfer);
  return r;
}

}  // namespace

Request streamed_get(std::string url, std::string what, BodyFn on_body, std::function<bool()> cancelled,
                     TransferFn on_transfer) {
  Request r = transfer("GET", std::move(url), std::move(what), std::move(cancelled), std::move(on_transfer));
  r.headers.emplace_back("Accept", "application/octet-stream");
  r.on_body = std::move(on_body);
  r.sandbox_stream = "download";  // a break mid-answer is reported as a lost download
  return r;
}

Request streamed_upload(std::string url, std::string what, const std::string& local_path,
                        const std::string& remote_path, std::function<bool()> cancelled, TransferFn on_transfer) {
  Request r = transfer("POST", std::move(url), std::move(what), std::move(cancelled), std::move(on_transfer));
  r.file = FilePart{"file", local_path, remote_path.substr(remote_path.rfind('/') + 1), "application/octet-stream"};
  return r;
}

}  // namespace corral::sdk::http
