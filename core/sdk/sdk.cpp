#include "corral/sdk.hpp"

#include <deque>
#include <mutex>

namespace corral::sdk {

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
Sandbox Provider::resume(const Sandbox&, const Host&) { throw unsupported("resume"); }

namespace detail {

int invoke(void* instance, const char* request, const corral_host_v1* host, void* call, Body body) {
  try {
    json::Document doc = json::parse(request ? request : "{}", "request");
    Host h(host, call);
    std::string result = body(*static_cast<Provider*>(instance), doc, h);
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
    json::Document doc = json::parse(config ? config : "{}", "plugin config");
    return factory(Options(json::get_map(doc, "options")));
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
    name = json::get_string(json::parse(spec_json, "spec"), "name");
  } catch (...) {
  }
  std::lock_guard lock(mutex);
  return names.emplace_back(std::move(name)).c_str();
}

namespace {

std::string empty_object() { return "{}"; }

Sandbox sandbox_of(const json::Document& request) {
  auto it = request.FindMember("sandbox");
  if (it == request.MemberEnd()) throw Error(ErrorCode::internal, "request has no 'sandbox'");
  return json::sandbox_from(it->value);
}

}  // namespace

std::string do_doctor(Provider& p, const json::Document&, const Host& h) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("checks");
  w.StartArray();
  for (const DoctorCheck& c : p.doctor(h)) json::write_check(w, c);
  w.EndArray();
  w.EndObject();
  return buffer.GetString();
}

std::string do_create(Provider& p, const json::Document& r, const Host& h) {
  return json::to_json(p.create(json::create_request_from(r), h), true);
}

std::string do_get(Provider& p, const json::Document& r, const Host& h) {
  return json::to_json(p.get(json::get_string(r, "id"), h), true);
}

std::string do_list(Provider& p, const json::Document& r, const Host& h) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("sandboxes");
  w.StartArray();
  for (const Sandbox& s : p.list(json::get_map(r, "labels"), h)) json::write_sandbox(w, s, false);
  w.EndArray();
  w.EndObject();
  return buffer.GetString();
}

std::string do_destroy(Provider& p, const json::Document& r, const Host& h) {
  p.destroy(sandbox_of(r), h);
  return empty_object();
}

std::string do_exec(Provider& p, const json::Document& r, const Host& h) {
  auto it = r.FindMember("command");
  if (it == r.MemberEnd()) throw Error(ErrorCode::internal, "exec request has no 'command'");
  ExecResult result = p.exec(sandbox_of(r), json::command_from(it->value), h);
  return "{\"exitCode\":" + std::to_string(result.exit_code) + "}";
}

std::string do_upload(Provider& p, const json::Document& r, const Host& h) {
  UploadRequest u;
  u.archive_path = json::get_string(r, "archive");
  u.size = static_cast<std::uint64_t>(json::get_int(r, "size"));
  p.upload(sandbox_of(r), u, h);
  return empty_object();
}

std::string do_extend(Provider& p, const json::Document& r, const Host& h) {
  return json::to_json(p.extend(sandbox_of(r), json::get_int(r, "seconds"), h), true);
}

std::string do_url(Provider& p, const json::Document& r, const Host& h) {
  std::string url = p.url(sandbox_of(r), static_cast<int>(json::get_int(r, "port")), h);
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "url", url);
  w.EndObject();
  return buffer.GetString();
}

std::string do_pause(Provider& p, const json::Document& r, const Host& h) {
  return json::to_json(p.pause(sandbox_of(r), h), true);
}

std::string do_resume(Provider& p, const json::Document& r, const Host& h) {
  return json::to_json(p.resume(sandbox_of(r), h), true);
}

}  // namespace detail
}  // namespace corral::sdk
