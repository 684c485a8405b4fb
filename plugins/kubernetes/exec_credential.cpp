#include "exec_credential.hpp"

#include <ctime>

#include "corral/json.hpp"
#include "corral/sdk/process.hpp"

extern char** environ;

namespace corral::kubernetes {
namespace {

constexpr long kPluginTimeoutSeconds = 60;

Error plugin_error(const ExecPlugin& plugin, const std::string& origin, const std::string& detail) {
  std::string hint = "run the plugin by hand to see what it needs (a login, a tool on PATH)";
  if (!plugin.install_hint.empty()) hint = plugin.install_hint;
  return Error(ErrorCode::auth, "the exec credential plugin '" + plugin.command + "' of " + origin + " " + detail,
               hint);
}

// The end of what a plugin said on stderr, for the error (its own explanation).
std::string stderr_tail(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 400) text = "..." + text.substr(text.size() - 400);
  return text;
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

ExecCredential run_exec_plugin(const ExecPlugin& plugin, const std::string& origin) {
  sdk::ProcessSpec spec;
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
  sdk::CapturedProcess run;
  try {
    run = sdk::capture_process(spec, kPluginTimeoutSeconds);
  } catch (const Error& e) {
    throw plugin_error(plugin, origin, "cannot be run: " + std::string(e.what()));
  }
  if (run.timed_out) throw plugin_error(plugin, origin, "did not answer within 60 s");
  if (run.exit_code != 0) {
    std::string said = stderr_tail(run.err);
    throw plugin_error(plugin, origin,
                       "failed (exit " + std::to_string(run.exit_code) + ")" + (said.empty() ? "" : ": " + said));
  }
  ExecCredential credential;
  try {
    json::Document doc = json::parse(run.out, "ExecCredential");
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
