#include "exec_session.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <algorithm>
#include <array>
#include <deque>
#include <mutex>

#include "kubelet.hpp"
#include "network_policy.hpp"
#include "status.hpp"
#include "terminal_size.hpp"

namespace corral::kubernetes::standin {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using Descriptor = asio::posix::stream_descriptor;

constexpr char kStdin = 0, kStdout = 1, kStderr = 2, kStatus = 3, kResize = 4;
constexpr unsigned char kClose = 255;

// How threads other than the session's (the process waiter, an eviction) reach it: posts
// into its io_context while the session lives, and are dropped once it has ended (the
// io_context may be gone by then).
template <class S>
struct Mailbox {
  std::mutex mutex;
  asio::io_context* ioc = nullptr;
  std::weak_ptr<S> session;
  template <class F>
  void post(F f) {
    std::lock_guard lock(mutex);
    if (!ioc) return;
    asio::post(*ioc, [s = session, f] {
      if (auto p = s.lock()) f(*p);
    });
  }
  void close() {
    std::lock_guard lock(mutex);
    ioc = nullptr;
  }
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(State& state, const ExecPlan& plan, TlsStream& stream, asio::io_context& ioc)
      : state_(state), plan_(plan), ws_(stream), ioc_(ioc), work_(asio::make_work_guard(ioc)), out_(ioc), err_(ioc), in_(ioc),
        mailbox_(std::make_shared<Mailbox<Session>>()) {}

  void run(const beast::http::request<beast::http::string_body>& request) {
    mailbox_->ioc = &ioc_;
    mailbox_->session = shared_from_this();
    ws_.set_option(websocket::stream_base::decorator([protocol = plan_.protocol](websocket::response_type& res) {
      res.set(beast::http::field::sec_websocket_protocol, protocol);
    }));
    ws_.binary(true);
    ws_.read_message_max(16 * 1024 * 1024);
    beast::error_code ec;
    ws_.accept(request, ec);
    if (ec) return end();
    // The first message: empty, on the lowest channel the client reads.
    const char first = plan_.out ? kStdout : plan_.err ? kStderr : kStatus;
    ws_.write(asio::buffer(&first, 1), ec);
    if (ec) return end();
    std::string failure;
    ProcessSpec spec;
    prepare(spec, failure);
    StartedProcess p;
    if (failure.empty()) {
      try {
        p = state_.spawner().start(spec);
      } catch (const StartError& e) {
        failure = std::string("error executing command in container: ") + e.what();
      }
    }
    if (!failure.empty()) {
      send(kStatus, exec_error_status(failure));
      finish();
      ioc_.run();
      return;
    }
    {
      std::lock_guard lock(state_.mutex());
      auto rt = state_.pods.find({plan_.ns, plan_.pod});
      if (rt != state_.pods.end()) rt->second.groups.insert(p.pid);
      else ::kill(-p.pid, SIGKILL);
    }
    out_.assign(p.out_fd);
    if (p.err_fd >= 0) err_.assign(p.err_fd);
    else err_done_ = true;  // a terminal: stderr comes with stdout
    if (p.in_fd >= 0) in_.assign(p.in_fd);
    state_.workers.start([mailbox = mailbox_, pid = p.pid] {
      const int code = wait_exit_code(pid);
      mailbox->post([code](Session& s) { s.exited(code); });
    });
    pump(out_, kStdout, out_buffer_, out_done_);
    if (!err_done_) pump(err_, kStderr, err_buffer_, err_done_);
    read_client();
    ioc_.run();
  }

 private:
  // What the command runs with (or why it cannot run), and the stream's faults.
  void prepare(ProcessSpec& spec, std::string& failure) {
    std::lock_guard lock(state_.mutex());
    auto rt = state_.pods.find({plan_.ns, plan_.pod});
    ObjectPtr pod = state_.store.get(pod_type(), plan_.ns, plan_.pod);
    if (rt == state_.pods.end() || !pod) {
      failure = "pod " + plan_.pod + " is gone";
      return;
    }
    const ContainerRuntime* c = nullptr;
    for (const auto& x : rt->second.containers)
      if (x.name == plan_.container) c = &x;
    spec.root = rt->second.root;
    spec.hostname = plan_.pod;
    spec.working_dir = c ? c->working_dir : "/";
    spec.argv = plan_.command;
    spec.env = c ? pod_environment(state_, rt->second, *c) : std::vector<std::string>{};
    spec.no_network = egress_denied(state_.store, *pod);
    spec.with_stdin = plan_.in;
    spec.tty = plan_.tty;
    link_ = std::make_shared<ExecLink>();
    link_->drop = [mailbox = mailbox_] { mailbox->post([](Session& s) { s.drop_hard(); }); };
    auto& links = rt->second.exec_links;
    links.erase(std::remove_if(links.begin(), links.end(), [](const auto& l) { return l.expired(); }), links.end());
    links.push_back(link_);
    if (State::take("*", state_.faults.exec_cut_times, "*")) {
      cut_after_ = state_.faults.exec_cut_after_bytes;
      cut_with_close_ = state_.faults.exec_cut_with_close_frame;
    }
    if (State::take("*", state_.faults.exec_stall_times, "*")) stall_after_ = state_.faults.exec_stall_after_bytes;
    linger_ = State::take("*", state_.faults.exec_linger_times, "*");
    exit_cause_ = state_.faults.exec_exit_cause;
    const std::string& program = plan_.command[0];
    if (!find_in_pod(spec.root, program))
      failure = "error executing command in container: failed to exec in container: failed to start exec \"" +
                random_hex(64) + "\": OCI runtime exec failed: exec failed: unable to start container process: exec: \"" +
                program + "\": " +
                (program.find('/') == std::string::npos ? std::string("executable file not found in $PATH")
                                                        : "stat " + program + ": no such file or directory") +
                ": unknown";
  }

  void pump(Descriptor& from, char channel, std::array<char, 32768>& buffer, bool& done) {
    auto self = shared_from_this();
    from.async_read_some(asio::buffer(buffer.data() + 1, buffer.size() - 1),
                         [this, self, &from, channel, &buffer, &done](beast::error_code ec, size_t n) {
                           if (ec || !accepting_) {
                             done = true;
                             maybe_finish();
                             return;
                           }
                           buffer[0] = channel;
                           if ((channel == kStdout && plan_.out) || (channel == kStderr && plan_.err)) {
                             send_raw(std::string(buffer.data(), n + 1));
                             sent_bytes_ += static_cast<long>(n);
                           }
                           if (cut_after_ >= 0 && sent_bytes_ >= cut_after_) return cut();
                           if (stall_after_ >= 0 && sent_bytes_ >= stall_after_) {
                             stalling_ = true;  // once what is queued is out
                             if (!writing_) stall();
                             return;
                           }
                           pump(from, channel, buffer, done);
                         });
  }

  void read_client() {
    auto self = shared_from_this();
    ws_.async_read(incoming_, [this, self](beast::error_code ec, size_t) {
      if (ec) {  // the client closed or went away: the command goes on without its stdin
        client_gone_ = true;
        close_stdin();
        if (!closing_) drop_hard();
        return;
      }
      const std::string data = beast::buffers_to_string(incoming_.data());
      incoming_.consume(incoming_.size());
      if (!data.empty() && data[0] == kStdin && in_.is_open()) {
        auto chunk = std::make_shared<std::string>(data.substr(1));
        asio::async_write(in_, asio::buffer(*chunk), [this, self, chunk](beast::error_code, size_t) { read_client(); });
        return;
      }
      if (!data.empty() && data[0] == kResize && plan_.tty) {
        for (const TerminalSize& size : resizes_.take(std::string_view(data).substr(1))) resize(size);
        return read_client();
      }
      // v5 only: [255, 0] closes the command's stdin. Under v4 the byte names no channel
      // and is ignored, as the kubelet does. With a terminal it closes only the stand-in's
      // copy of its master: the command's terminal stays (containerd would hang it up).
      if (data.size() >= 2 && static_cast<unsigned char>(data[0]) == kClose && data[1] == kStdin &&
          plan_.protocol == "v5.channel.k8s.io")
        close_stdin();
      read_client();
    });
  }

  // The command's terminal is now `size`: its foreground job gets SIGWINCH.
  void resize(const TerminalSize& size) {
    if (!out_.is_open()) return;
    winsize w{};
    w.ws_row = size.rows;
    w.ws_col = size.cols;
    ::ioctl(out_.native_handle(), TIOCSWINSZ, &w);
  }

  void close_stdin() {
    beast::error_code ec;
    if (in_.is_open()) in_.close(ec);
  }

  void exited(int code) {
    exit_code_ = code;
    maybe_finish();
  }

  void maybe_finish() {
    if (!accepting_ || !exit_code_ || !out_done_ || !err_done_) return;
    send(kStatus, exec_exit_status(*exit_code_, plan_.command, exit_cause_));
    finish();
  }

  void send(char channel, const std::string& data) { send_raw(std::string(1, channel) + data); }

  void send_raw(std::string message) {
    if (!accepting_ || client_gone_) return;
    queue_.push_back(std::move(message));
    if (!writing_) write_next();
  }

  void write_next() {
    if (queue_.empty()) {
      writing_ = false;
      if (stalling_) return stall();
      if (close_when_drained_) close();
      return;
    }
    writing_ = true;
    auto self = shared_from_this();
    ws_.async_write(asio::buffer(queue_.front()), [this, self](beast::error_code ec, size_t) {
      queue_.pop_front();
      if (ec) return drop_hard();
      write_next();
    });
  }

  // Nothing more is sent: close once what is queued is out.
  void finish() {
    accepting_ = false;
    close_when_drained_ = true;
    if (!writing_) close();
  }

  // The cut fault: the stream ends with no status, by a close frame or a dropped connection.
  void cut() {
    if (!cut_with_close_) return drop_hard();
    if (writing_) queue_.erase(queue_.begin() + 1, queue_.end());  // the first is on its way
    else queue_.clear();
    finish();
  }

  // The stall fault: this session's thread stops running its io_context, so nothing is
  // sent or read (Beast answers pings only while reading) and the connection stays open,
  // until the client hangs up or the stand-in stops.
  void stall() {
    if (ended_) return;
    const int fd = beast::get_lowest_layer(ws_).native_handle();
    for (int waited_ms = 0; !state_.stopping && waited_ms < 120'000; waited_ms += 50) {
      pollfd hangup{fd, POLLRDHUP, 0};
      if (::poll(&hangup, 1, 50) > 0 && (hangup.revents & (POLLRDHUP | POLLHUP | POLLERR))) break;
    }
    drop_hard();
  }

  void close() {
    if (closing_ || ended_) return;
    closing_ = true;
    if (client_gone_) return end();
    if (linger_) return linger();
    auto self = shared_from_this();
    ws_.async_close(websocket::close_code::normal, [this, self](beast::error_code) { end(); });
  }

  // The linger fault: the close frame async_close would send (FIN, Close, code 1000; a
  // server's frames are unmasked), written beside Beast, then nothing: the client's answer
  // is never read and the TCP connection stays open, as stall() keeps it.
  void linger() {
    static const unsigned char kCloseFrame[] = {0x88, 0x02, 0x03, 0xE8};
    beast::error_code ec;
    asio::write(ws_.next_layer(), asio::buffer(kCloseFrame), ec);
    stall();
  }

  void drop_hard() {
    if (ended_) return;
    beast::error_code ec;
    beast::get_lowest_layer(ws_).shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(ws_).close(ec);
    end();
  }

  void end() {
    if (ended_) return;
    ended_ = true;
    accepting_ = false;
    beast::error_code ec;
    if (out_.is_open()) out_.close(ec);
    if (err_.is_open()) err_.close(ec);
    close_stdin();
    mailbox_->close();
    work_.reset();
  }

  State& state_;
  ExecPlan plan_;
  websocket::stream<TlsStream&> ws_;
  asio::io_context& ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  Descriptor out_, err_, in_;
  std::shared_ptr<Mailbox<Session>> mailbox_;
  std::array<char, 32768> out_buffer_{}, err_buffer_{};
  bool out_done_ = false, err_done_ = false;
  beast::flat_buffer incoming_;
  TerminalSizeReader resizes_;
  std::deque<std::string> queue_;
  bool accepting_ = true, writing_ = false, close_when_drained_ = false, closing_ = false, ended_ = false,
       client_gone_ = false;
  std::optional<int> exit_code_;
  long sent_bytes_ = 0;
  long cut_after_ = -1;
  bool cut_with_close_ = false;
  long stall_after_ = -1;
  bool stalling_ = false;
  bool linger_ = false;
  std::string exit_cause_;
  std::shared_ptr<ExecLink> link_;
};

}  // namespace

void run_exec(State& state, const ExecPlan& plan, TlsStream& stream, boost::asio::io_context& ioc,
              const boost::beast::http::request<boost::beast::http::string_body>& request) {
  auto session = std::make_shared<Session>(state, plan, stream, ioc);
  session->run(request);
}

}  // namespace corral::kubernetes::standin
