#include "exec_credential.hpp"

#include <ctime>

#include "corral/sdk/printable.hpp"
#include "corral/json.hpp"
#include "corral/sdk/http.hpp"
#include "corral/os/process.hpp"

extern char** environ;

namespace corral::kubernetes {
namespace {

constexpr long kPluginTimeoutSeconds = 60;
// How long a stopped plugin gets after SIGTERM before its group is killed.
constexpr int kStopGraceSeconds = 1;
// The end of its stderr the message may quote.
constexpr std::size_t kStderrShown = 400;

// Thrown from the stdout sink once the plugin printed more than kMaxCredentialBytes; the
// SDK kills its process group on the way out.
struct PrintedTooMuch {};

// The last bytes a plugin wrote to stderr: a plugin that writes without end costs a few
// hundred bytes, not its output.
class StderrTail {
 public:
  void add(std::string_view chunk) {
    text_.append(chunk);
    if (text_.size() > 2 * kStderrShown) {
      text_.erase(0, text_.size() - kStderrShown);
      cut_ = true;
    }
  }
  // What it said last, trimmed, on one line; "..." first when more came before.
  std::string text() const {
    std::string said = text_;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    bool cut = cut_;
    if (said.size() > kStderrShown) {
      said = said.substr(said.size() - kStderrShown);
      cut = true;
    }
    if (said.empty()) return said;
    return (cut ? "..." : "") + sdk::printable(said);
  }

 private:
  std::string text_;
  bool cut_ = false;  // the start was dropped
};

Error plugin_error(const ExecPlugin& plugin, const std::string& origin, const std::string& detail) {
  std::string hint = "run the plugin by hand to see what it needs (a login, a tool on PATH)";
  if (!plugin.install_hint.empty()) hint = plugin.install_hint;
  return Error(ErrorCode::auth, "the exec credential plugin '" + plugin.command + "' of " + origin + " " + detail,
               hint);
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t t = timegm(&tm);
  size_t i = static_cast<size_t>(consumed);
  if (i < text.size() && text[i] == '.')
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));) ++i;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    int hh = 0, mm = 0;
    if (std::sscanf(text.c_str() + i + 1, "%2d:%2d", &hh, &mm) != 2) return std::nullopt;
    const int offset = (hh * 60 + mm) * 60;
    t += text[i] == '+' ? -offset : offset;
  } else if (i >= text.size() || (text[i] != 'Z' && text[i] != 'z')) {
    return std::nullopt;
  }
  return std::chrono::system_clock::from_time_t(t);
}

ExecCredential run_exec_plugin(const ExecPlugin& plugin, const std::string& origin,
                               const std::function<bool()>& cancelled) {
  os::ProcessSpec spec;
  spec.argv.push_back(plugin.command);
  spec.argv.insert(spec.argv.end(), plugin.args.begin(), plugin.args.end());
  // The user's own environment (cloud CLIs need their config and credentials), then the
  // kubeconfig's entries, then what client-go tells every plugin.
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  for (const auto& [name, value] : plugin.env) env.push_back(name + "=" + value);
  env.push_back("KUBERNETES_EXEC_INFO={\"apiVersion\":\"" + plugin.api_version +
                "\",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":false}}");
  spec.env = std::move(env);
  std::string out;
  StderrTail err;
  os::ProcessOutcome run;
  try {
    run = os::run_process(
        spec,
        [&](std::string_view chunk) {
          if (out.size() + chunk.size() > kMaxCredentialBytes) throw PrintedTooMuch{};
          out.append(chunk);
        },
        [&](std::string_view chunk) { err.add(chunk); }, cancelled, kPluginTimeoutSeconds, kStopGraceSeconds);
  } catch (const PrintedTooMuch&) {
    throw plugin_error(plugin, origin,
                       "printed more than " + std::to_string(kMaxCredentialBytes / (1024 * 1024)) +
                           " MiB on stdout, far more than an ExecCredential takes; it was stopped");
  } catch (const Error& e) {
    throw plugin_error(plugin, origin, "cannot be run: " + std::string(e.what()));
  }
  if (run.cancelled)
    throw Error(ErrorCode::cancelled,
                "the exec credential plugin '" + plugin.command + "' of " + origin + " was stopped: interrupted");
  if (run.timed_out) throw plugin_error(plugin, origin, "did not answer within 60 s");
  if (run.exit_code != 0) {
    std::string said = err.text();
    throw plugin_error(plugin, origin,
                       "failed (exit " + std::to_string(run.exit_code) + ")" + (said.empty() ? "" : ": " + said));
  }
  ExecCredential credential;
  try {
    json::Document doc = json::parse(out, "ExecCredential");
    const json::Value* status = json::find(doc, "status");
    if (!status) throw Error(ErrorCode::invalid_argument, "no status");
    credential.token = json::get_string(*status, "token");
    credential.client_cert_pem = json::get_string(*status, "clientCertificateData");
    credential.client_key_pem = json::get_string(*status, "clientKeyData");
    if (std::string expiry = json::get_string(*status, "expirationTimestamp"); !expiry.empty())
      credential.expires = parse_rfc3339(expiry);
  } catch (const Error&) {
    // Never the parser's words: they could quote the credential.
    throw plugin_error(plugin, origin, "printed something that is not an ExecCredential");
  }
  if (credential.token.empty() && (credential.client_cert_pem.empty() || credential.client_key_pem.empty()))
    throw plugin_error(plugin, origin,
                       "printed an ExecCredential with neither a token nor a client certificate and key");
  return credential;
}

}  // namespace corral::kubernetes
