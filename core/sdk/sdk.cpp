#include "corral/sdk.hpp"

#include "corral/wire.hpp"

#include <cctype>
#include <deque>
#include <mutex>

namespace corral::sdk {

CommandDeadline::CommandDeadline(const Host& host, std::int64_t timeout_seconds)
    : host_(host),
      has_deadline_(timeout_seconds > 0),
      deadline_(std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds)) {}

bool CommandDeadline::stop() {
  if (host_.cancelled()) return true;
  if (has_deadline_ && std::chrono::steady_clock::now() >= deadline_) timed_out_ = true;
  return timed_out_;
}

std::string Options::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::int64_t Options::get_int(const std::string& name, std::int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return fallback;
  try {
    size_t used = 0;
    std::int64_t v = std::stoll(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error(ErrorCode::invalid_argument,
              "option '" + name + "' must be a whole number, not '" + it->second + "'");
}

bool Options::get_bool(const std::string& name, bool fallback) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return fallback;
  const std::string& v = it->second;
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  throw Error(ErrorCode::invalid_argument, "option '" + name + "' must be true or false, not '" + v + "'");
}

std::int64_t Options::get_duration(const std::string& name, std::int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return fallback;
  try {
    return parse_duration(it->second);
  } catch (const Error& e) {
    throw Error(ErrorCode::invalid_argument, "option '" + name + "': " + e.what(), e.hint());
  }
}

std::int64_t Options::get_duration_within(const std::string& name, std::int64_t fallback, std::int64_t min_seconds,
                                          std::int64_t max_seconds, const std::string& setting) const {
  const std::string range = format_duration(min_seconds) + " and " + format_duration(max_seconds);
  const std::string hint = "set " + setting + " to a duration between " + range + ", e.g. " + format_duration(fallback);
  std::int64_t seconds = 0;
  try {
    seconds = get_duration(name, fallback);
  } catch (const Error& e) {
    throw Error(ErrorCode::invalid_argument, e.what(), hint);
  }
  if (seconds < min_seconds || seconds > max_seconds)
    throw Error(ErrorCode::invalid_argument,
                "option '" + name + "' must be between " + range + ", not '" + get(name) + "'", hint);
  return seconds;
}

std::string setting_name(std::string_view provider, std::string_view option) {
  std::string env = "CORRAL_";
  for (std::string_view part : {provider, std::string_view("_"), option})
    for (char c : part) env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "--" + std::string(provider) + "-" + std::string(option) + " or " + env;
}

namespace {
Error unsupported(const char* primitive) {
  return Error(ErrorCode::unsupported, std::string("this provider does not implement '") + primitive + "'");
}
}  // namespace

Sandbox Provider::get(const std::string&, const Host&) { throw unsupported("get"); }
std::vector<Sandbox> Provider::list(const StringMap&, const Host&) { throw unsupported("list"); }
void Provider::upload(const Sandbox&, const UploadRequest&, const Host&) { throw unsupported("upload"); }
Sandbox Provider::extend(const Sandbox&, std::int64_t, const Host&) { throw unsupported("extend"); }
std::string Provider::url(const Sandbox&, int, const Host&) { throw unsupported("url"); }
Sandbox Provider::pause(const Sandbox&, const Host&) { throw unsupported("pause"); }
DownloadResult Provider::download(const Sandbox&, const DownloadRequest&, const Host&) {
  throw unsupported("download");
}
Sandbox Provider::resume(const Sandbox&, const Host&) { throw unsupported("resume"); }

namespace detail {

int invoke(void* instance, const char* request, const corral_host_v1* host, void* call, Body body) {
  try {
    Host h(host, call);
    std::string result = body(*static_cast<Provider*>(instance), request ? request : "{}", h);
    host->result(call, result.data(), result.size());
    return 0;
  } catch (const Error& e) {
    host->error(call, static_cast<int>(e.code()), e.what(), e.hint().empty() ? nullptr : e.hint().c_str());
  } catch (const std::exception& e) {
    host->error(call, CORRAL_ERR_INTERNAL, e.what(), nullptr);
  } catch (...) {
    host->error(call, CORRAL_ERR_INTERNAL, "unknown exception in plugin", nullptr);
  }
  return 1;
}

void* open(const char* config, const corral_host_v1* host, void* call, Provider* (*factory)(const Options&)) {
  try {
    return factory(Options(wire::read<wire::OpenRequest>(config ? config : "{}", "plugin config").options));
  } catch (const Error& e) {
    host->error(call, static_cast<int>(e.code()), e.what(), e.hint().empty() ? nullptr : e.hint().c_str());
  } catch (const std::exception& e) {
    host->error(call, CORRAL_ERR_INTERNAL, e.what(), nullptr);
  } catch (...) {
    host->error(call, CORRAL_ERR_INTERNAL, "unknown exception in plugin", nullptr);
  }
  return nullptr;
}

void close(void* instance) { delete static_cast<Provider*>(instance); }

const char* spec_name(const char* spec_json) {
  static std::mutex mutex;
  static std::deque<std::string> names;  // stable addresses for the process lifetime
  std::string name;
  try {
    name = json::get_string(json::parse(spec_json ? spec_json : "{}", "spec"), "name");
  } catch (...) {
  }
  std::lock_guard lock(mutex);
  return names.emplace_back(std::move(name)).c_str();
}

const char* spec_text(const ProviderSpec& spec) {
  static std::mutex mutex;
  static std::deque<std::string> texts;  // stable addresses for the process lifetime
  std::string text = json::to_json(spec);
  std::lock_guard lock(mutex);
  return texts.emplace_back(std::move(text)).c_str();
}

std::string do_doctor(Provider& p, std::string_view, const Host& h) { return wire::to_json(wire::DoctorResult{p.doctor(h)}); }

std::string do_create(Provider& p, std::string_view r, const Host& h) {
  return wire::to_json(p.create(wire::read<CreateRequest>(r, "create request"), h));
}

std::string do_get(Provider& p, std::string_view r, const Host& h) {
  return wire::to_json(p.get(wire::read<wire::GetRequest>(r, "get request").id, h));
}

std::string do_list(Provider& p, std::string_view r, const Host& h) {
  return wire::to_json(wire::ListResult{p.list(wire::read<wire::ListRequest>(r, "list request").labels, h)});
}

std::string do_destroy(Provider& p, std::string_view r, const Host& h) {
  p.destroy(wire::read<wire::SandboxRequest>(r, "destroy request").sandbox, h);
  return "{}";
}

std::string do_exec(Provider& p, std::string_view r, const Host& h) {
  wire::ExecRequest m = wire::read<wire::ExecRequest>(r, "exec request");
  return wire::to_json(p.exec(m.sandbox, m.command, h));
}

std::string do_upload(Provider& p, std::string_view r, const Host& h) {
  wire::UploadCall m = wire::read<wire::UploadCall>(r, "upload request");
  p.upload(m.sandbox, m.upload, h);
  return "{}";
}

std::string do_extend(Provider& p, std::string_view r, const Host& h) {
  wire::ExtendRequest m = wire::read<wire::ExtendRequest>(r, "extend request");
  return wire::to_json(p.extend(m.sandbox, m.seconds, h));
}

std::string do_url(Provider& p, std::string_view r, const Host& h) {
  wire::UrlRequest m = wire::read<wire::UrlRequest>(r, "url request");
  return wire::to_json(wire::UrlResult{p.url(m.sandbox, m.port, h)});
}

std::string do_pause(Provider& p, std::string_view r, const Host& h) {
  return wire::to_json(p.pause(wire::read<wire::SandboxRequest>(r, "pause request").sandbox, h));
}

std::string do_resume(Provider& p, std::string_view r, const Host& h) {
  return wire::to_json(p.resume(wire::read<wire::SandboxRequest>(r, "resume request").sandbox, h));
}

std::string do_download(Provider& p, std::string_view r, const Host& h) {
  wire::DownloadCall m = wire::read<wire::DownloadCall>(r, "download request");
  return wire::to_json(p.download(m.sandbox, m.download, h));
}

}  // namespace detail
}  // namespace corral::sdk
