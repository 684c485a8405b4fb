#include "corral/sdk.hpp"


#include "corral/wire.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <typeinfo>

namespace corral::sdk {

CommandDeadline::CommandDeadline(const Host& host, std::int64_t timeout_seconds)
    : host_(host),
      has_deadline_(timeout_seconds > 0),
      deadline_(std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds)) {}

bool CommandDeadline::stop() {
  // The deadline first: corral also tells a command to stop once its --timeout passed.
  if (has_deadline_ && std::chrono::steady_clock::now() >= deadline_) timed_out_ = true;
  return timed_out_ || host_.cancelled();
}

const std::string& Options::declared(const std::string& name) const {
  if (!declared_ || std::find(declared_->begin(), declared_->end(), name) != declared_->end()) return name;
  std::string names;
  for (const std::string& n : *declared_) names += (names.empty() ? "" : ", ") + n;
  throw Error(ErrorCode::internal,
              "the plugin read option '" + name + "', which its spec does not declare: a misspelt name in its code",
              "a bug in the plugin: its spec declares " + (names.empty() ? std::string("no option") : names));
}

std::string Options::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(declared(name));
  return it == values_.end() ? fallback : it->second;
}

std::int64_t Options::get_int(const std::string& name, std::int64_t fallback) const {
  auto it = values_.find(declared(name));
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
  auto it = values_.find(declared(name));
  if (it == values_.end() || it->second.empty()) return fallback;
  const std::string& v = it->second;
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  throw Error(ErrorCode::invalid_argument, "option '" + name + "' must be true or false, not '" + v + "'");
}

std::int64_t Options::get_duration(const std::string& name, std::int64_t fallback) const {
  auto it = values_.find(declared(name));
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

std::string crash_message(std::string_view plugin, std::string_view primitive, std::string_view cause) {
  return "provider plugin '" + std::string(plugin) + "' crashed during '" + std::string(primitive) + "' (" +
         std::string(cause) + ")";
}

std::string setting_name(std::string_view provider, std::string_view option) {
  std::string env = "CORRAL_";
  for (std::string_view part : {provider, std::string_view("_"), option})
    for (char c : part) env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "--" + std::string(provider) + "-" + std::string(option) + " or " + env;
}

namespace {
Error unsupported(Primitive primitive) {
  return Error(ErrorCode::unsupported,
               std::string("this provider does not implement '") + primitive_name(primitive) + "'");
}
}  // namespace

Sandbox Provider::get(const std::string&, const Host&) { throw unsupported(Primitive::get); }
std::vector<Sandbox> Provider::list(const StringMap&, const Host&) { throw unsupported(Primitive::list); }
void Provider::upload(const Sandbox&, const UploadRequest&, const Host&) { throw unsupported(Primitive::upload); }
Sandbox Provider::extend(const Sandbox&, std::int64_t, const Host&) { throw unsupported(Primitive::extend); }
std::string Provider::url(const Sandbox&, int, const Host&) { throw unsupported(Primitive::url); }
Sandbox Provider::pause(const Sandbox&, const Host&) { throw unsupported(Primitive::pause); }
DownloadResult Provider::download(const Sandbox&, const DownloadRequest&, const Host&) {
  throw unsupported(Primitive::download);
}
Sandbox Provider::resume(const Sandbox&, const Host&) { throw unsupported(Primitive::resume); }
std::vector<ForkOutcome> Provider::fork(const Sandbox&, const std::vector<ForkTarget>&, const Host&) {
  throw unsupported(Primitive::fork);
}

namespace detail {

namespace {

// An opened instance: the provider, and the plugin's name for crash reports.
struct Instance {
  std::unique_ptr<Provider> provider;
  const char* plugin;
};

// The demangled type of the exception being handled ("std::runtime_error").
std::string current_exception_type() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (!type) return "exception";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type->name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? name.get() : type->name();
}

// Reports the exception being handled to the host, `secrets` masked: a corral::Error as
// itself, anything else as a crash of `primitive`, which the plugin let escape.
void report_current_exception(const corral_host_v1* host, void* call, const char* plugin, const char* primitive,
                              const Redactor* secrets = nullptr) {
  auto masked = [secrets](const std::string& text) { return secrets ? secrets->apply(text) : text; };
  std::string cause = "an uncaught " + current_exception_type();
  try {
    throw;
  } catch (const Error& e) {
    const std::string message = masked(e.what()), hint = masked(e.hint());
    if (e.retry_after() && CORRAL_HOST_HAS(host, retry_after)) {
      const auto ms = std::clamp<std::int64_t>(e.retry_after()->count(), 0, UINT32_MAX);
      host->retry_after(call, static_cast<std::uint32_t>(ms));
    }
    host->error(call, static_cast<int>(e.code()), message.c_str(), hint.empty() ? nullptr : hint.c_str());
    return;
  } catch (const std::exception& e) {
    cause += std::string(": ") + e.what();
  } catch (...) {
  }
  const std::string message = masked(crash_message(plugin, primitive, cause));
  host->error(call, CORRAL_ERR_INTERNAL, message.c_str(), "a bug in the plugin: report it to its authors");
}

}  // namespace

int invoke(void* instance, const char* request, const corral_host_v1* host, void* call, Body body,
           const char* primitive) {
  Instance& self = *static_cast<Instance*>(instance);
  try {
    Host h(host, call, &self.provider->secrets());
    std::string result = body(*self.provider, request ? request : "{}", h);
    host->result(call, result.data(), result.size());
    return 0;
  } catch (...) {
    report_current_exception(host, call, self.plugin, primitive, &self.provider->secrets());
  }
  return 1;
}

void* open(const char* config, const corral_host_v1* host, void* call, Provider* (*factory)(const Options&),
           const char* plugin, std::shared_ptr<const std::vector<std::string>> declared) {
  try {
    std::unique_ptr<Provider> provider(factory(
        Options(wire::read<wire::OpenRequest>(config ? config : "{}", "plugin config").options, std::move(declared))));
    const std::string result = wire::to_json(wire::OpenResult{provider->target()});
    host->result(call, result.data(), result.size());
    return new Instance{std::move(provider), plugin};
  } catch (...) {
    report_current_exception(host, call, plugin, "open");
  }
  return nullptr;
}

void close(void* instance) { delete static_cast<Instance*>(instance); }

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

std::shared_ptr<const std::vector<std::string>> spec_option_names(const char* spec_json) {
  auto names = std::make_shared<std::vector<std::string>>();
  try {
    for (const OptionSpec& option : json::spec_from_json(spec_json ? spec_json : "{}").options)
      names->push_back(option.name);
  } catch (...) {
  }
  return names;
}

const char* spec_text(const ProviderSpec& spec) {
  static std::mutex mutex;
  static std::deque<std::string> texts;  // stable addresses for the process lifetime
  std::string text = json::to_json(spec);
  std::lock_guard lock(mutex);
  return texts.emplace_back(std::move(text)).c_str();
}

namespace {

// What each primitive does behind its wire: the Provider method its request asks for.
// The adapters below read the request and write the result of the types primitives.def
// names; only what is more than a call is written out here.
template <Primitive P>
using Tag = std::integral_constant<Primitive, P>;

wire::DoctorResult serve(Tag<Primitive::doctor>, Provider& p, const wire::Empty&, const Host& h) {
  std::vector<DoctorCheck> checks = p.doctor(h);
  for (DoctorCheck& c : checks) {
    c.detail = p.secrets().apply(c.detail);
    c.hint = p.secrets().apply(c.hint);
  }
  return {std::move(checks)};
}
Sandbox serve(Tag<Primitive::create>, Provider& p, const CreateRequest& m, const Host& h) { return p.create(m, h); }
Sandbox serve(Tag<Primitive::get>, Provider& p, const wire::GetRequest& m, const Host& h) { return p.get(m.id, h); }
wire::ListResult serve(Tag<Primitive::list>, Provider& p, const wire::ListRequest& m, const Host& h) {
  return {p.list(m.labels, h)};
}
wire::Empty serve(Tag<Primitive::destroy>, Provider& p, const wire::SandboxRequest& m, const Host& h) {
  p.destroy(m.sandbox, h);
  return {};
}
ExecResult serve(Tag<Primitive::exec>, Provider& p, const wire::ExecRequest& m, const Host& h) {
  return p.exec(m.sandbox, m.command, h);
}
wire::Empty serve(Tag<Primitive::upload>, Provider& p, const wire::UploadCall& m, const Host& h) {
  p.upload(m.sandbox, m.upload, h);
  return {};
}
Sandbox serve(Tag<Primitive::extend>, Provider& p, const wire::ExtendRequest& m, const Host& h) {
  return p.extend(m.sandbox, m.seconds, h);
}
wire::UrlResult serve(Tag<Primitive::url>, Provider& p, const wire::UrlRequest& m, const Host& h) {
  return {p.url(m.sandbox, m.port, h)};
}
Sandbox serve(Tag<Primitive::pause>, Provider& p, const wire::SandboxRequest& m, const Host& h) {
  return p.pause(m.sandbox, h);
}
Sandbox serve(Tag<Primitive::resume>, Provider& p, const wire::SandboxRequest& m, const Host& h) {
  return p.resume(m.sandbox, h);
}
DownloadResult serve(Tag<Primitive::download>, Provider& p, const wire::DownloadCall& m, const Host& h) {
  return p.download(m.sandbox, m.download, h);
}
wire::ForkResult serve(Tag<Primitive::fork>, Provider& p, const wire::ForkRequest& m, const Host& h) {
  wire::ForkResult result{p.fork(m.sandbox, m.forks, h)};
  if (result.forks.size() != m.forks.size())
    throw Error(ErrorCode::internal, "the provider answered " + std::to_string(result.forks.size()) +
                                         " fork outcomes for " + std::to_string(m.forks.size()) + " forks asked");
  return result;
}

}  // namespace

#define CORRAL_PRIMITIVE(slot, need, deadline, request, result)                              \
  std::string do_##slot(Provider& p, std::string_view text, const Host& h) {                 \
    using M = wire::Messages<Primitive::slot>;                                               \
    const M::Request message = wire::read<M::Request>(text, #slot " request");               \
    return wire::to_json<M::Result>(serve(Tag<Primitive::slot>{}, p, message, h));           \
  }
#include "corral/primitives.def"

}  // namespace detail
}  // namespace corral::sdk
