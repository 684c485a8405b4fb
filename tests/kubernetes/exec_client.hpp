// The tests' client for the stand-in's exec endpoint: a Boost.Beast WebSocket over TLS
// speaking the channel protocol byte by byte, so the tests see exactly what arrives (the
// empty first message, each channel's data, the status, how the stream ended).
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace corral::kubernetes::test {

// The server answered the upgrade with an HTTP error instead of switching protocols
// (`body` holds what of its answer Beast read: the status line and headers only).
struct UpgradeRefused : std::runtime_error {
  UpgradeRefused(int status_, std::string body_)
      : std::runtime_error("upgrade refused: HTTP " + std::to_string(status_) + ": " + body_), status(status_),
        body(std::move(body_)) {}
  int status;
  std::string body;
};

struct Message {
  int channel = -1;  // the first byte
  std::string data;  // the rest
};

// Everything an exec stream brought until it ended.
struct ExecOutcome {
  std::vector<Message> messages;
  std::string out, err;
  std::optional<std::string> status;  // channel 3's text
  bool close_frame = false;           // ended by a close frame (else the connection dropped)
  int close_code = 0;
};

class ExecClient {
 public:
  // Connects to `server` (https://127.0.0.1:PORT) and upgrades `target` offering
  // `protocols`; throws UpgradeRefused.
  ExecClient(const std::string& server, const std::string& ca_pem, const std::string& token, const std::string& target,
             const std::vector<std::string>& protocols = {"v5.channel.k8s.io", "v4.channel.k8s.io"});
  ~ExecClient();
  const std::string& protocol() const;
  void send(int channel, const std::string& data);
  void close_stdin();  // v5's CLOSE of channel 0: [255, 0]
  void close();        // a WebSocket close frame
  // The next message, or nullopt once the stream has ended (see outcome()).
  std::optional<Message> read();
  // Reads to the end and returns all that came (including what read() already returned).
  ExecOutcome finish();
  // What came so far.
  const ExecOutcome& outcome_so_far() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "/api/v1/namespaces/NS/pods/POD/exec?command=..&stdin=..&stdout=true&stderr=true&tty=..".
std::string exec_target(const std::string& ns, const std::string& pod, const std::vector<std::string>& command,
                        bool stdin_ = false, bool tty = false);

}  // namespace corral::kubernetes::test
