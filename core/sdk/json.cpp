#include "corral/json.hpp"

#include "corral/option_default.hpp"
#include "corral/model_shapes.hpp"

#include <rapidjson/error/en.h>

#include <algorithm>

namespace corral::json {
namespace {

// The length of the valid UTF-8 sequence at text[i], or 0 when the byte there does not
// start one (overlong forms, surrogates and code points past U+10FFFF are invalid too).
size_t utf8_sequence(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return 1;
  size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > text.size()) return 0;
  std::uint32_t cp = c & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (next & 0x3F);
  }
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  return cp >= kMin[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) ? len : 0;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0, n; i < text.size(); i += n)
    if ((n = utf8_sequence(text, i)) == 0) return false;
  return true;
}

namespace {

// Bytes as valid UTF-8: each byte of an invalid or truncated sequence becomes U+FFFD, so
// any text a provider or a file hands us still makes valid JSON.
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (size_t n = utf8_sequence(text, i)) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

// Refuses a member of `object` that is not in `known`: a typo such as "featurez" or
// "bestfit" must fail loudly at load, not leave a feature or a docs line silently empty.
void check_keys(const Value& object, std::initializer_list<std::string_view> known, const std::string& where) {
  for (const auto& m : object.GetObject()) {
    std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    throw Error(ErrorCode::invalid_argument, where + " has an unknown field '" + std::string(key) + "'",
                "the fields are: " + list);
  }
}

}  // namespace

const Value* find(const Value& object, const char* key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

namespace {

// The offset of the first bracket that nests arrays and objects deeper than `limit` in
// `text` (brackets inside strings do not count), or npos. RapidJSON parses recursively:
// a few hundred thousand '[' from a provider or a file would overflow the stack.
size_t too_deep_at(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

Document parse(std::string_view text, std::string_view what) {
  if (size_t at = too_deep_at(text, kMaxDepth); at != std::string_view::npos)
    throw Error(ErrorCode::invalid_argument, std::string(what) + " is not valid JSON here: arrays and objects nest " +
                                                 "deeper than " + std::to_string(kMaxDepth) + " levels at offset " +
                                                 std::to_string(at));
  Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError())
    throw Error(ErrorCode::invalid_argument,
                std::string(what) + " is not valid JSON: " +
                    rapidjson::GetParseError_En(doc.GetParseError()) + " at offset " +
                    std::to_string(doc.GetErrorOffset()));
  return doc;
}

std::string text_of(const std::function<void(Writer&)>& body) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  body(w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string dump(const Value& value) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  value.Accept(w);
  return {buffer.GetString(), buffer.GetSize()};
}

std::string get_string(const Value& object, const char* key, std::string fallback) {
  const Value* v = find(object, key);
  return v ? shape::Codec<std::string>::read(*v, key) : fallback;
}

std::int64_t get_int(const Value& object, const char* key, std::int64_t fallback) {
  const Value* v = find(object, key);
  return v ? shape::Codec<std::int64_t>::read(*v, key) : fallback;
}

bool get_bool(const Value& object, const char* key, bool fallback) {
  const Value* v = find(object, key);
  return v ? shape::Codec<bool>::read(*v, key) : fallback;
}

std::vector<std::string> get_strings(const Value& object, const char* key) {
  const Value* v = find(object, key);
  return v ? shape::Codec<std::vector<std::string>>::read(*v, key) : std::vector<std::string>{};
}

StringMap get_map(const Value& object, const char* key) {
  const Value* v = find(object, key);
  return v ? shape::Codec<StringMap>::read(*v, key) : StringMap{};
}

void write_string(Writer& w, const char* key, std::string_view value) {
  w.Key(key);
  write_text(w, value);
}

void write_text(Writer& w, std::string_view value) {
  if (is_valid_utf8(value)) {
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
    return;
  }
  std::string clean = valid_utf8(value);
  w.String(clean.data(), static_cast<rapidjson::SizeType>(clean.size()));
}

void write_key(Writer& w, std::string_view key) {
  if (is_valid_utf8(key)) {
    w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    return;
  }
  std::string clean = valid_utf8(key);
  w.Key(clean.data(), static_cast<rapidjson::SizeType>(clean.size()));
}

void write_strings(Writer& w, const char* key, const std::vector<std::string>& values) {
  w.Key(key);
  shape::Codec<std::vector<std::string>>::write(w, values);
}

void write_map(Writer& w, const char* key, const StringMap& values) {
  w.Key(key);
  shape::Codec<StringMap>::write(w, values);
}

std::string to_json(const ProviderSpec& spec) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  write_string(w, "name", spec.name);
  write_strings(w, "aliases", spec.aliases);
  write_string(w, "family", spec.family);
  write_string(w, "kind", to_string(spec.kind));
  write_strings(w, "targets", spec.targets);
  write_strings(w, "features", spec.features.names());
  if (!spec.idle.empty()) write_strings(w, "idle", spec.idle);
  w.Key("options");
  w.StartArray();
  for (const OptionSpec& o : spec.options) {
    w.StartObject();
    write_string(w, "name", o.name);
    write_string(w, "type", o.type);
    if (o.default_value) write_string(w, "default", *o.default_value);
    write_strings(w, "env", o.env);
    write_string(w, "help", o.help);
    w.Key("secret");
    w.Bool(o.secret);
    if (o.trusted) {
      w.Key("trusted");
      w.Bool(true);
    }
    if (!o.choices.empty()) write_strings(w, "choices", o.choices);
    if (o.tightest_first) {
      w.Key("tightest-first");
      w.Bool(true);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("docs");
  w.StartObject();
  write_string(w, "category", spec.docs.category);
  write_string(w, "location", spec.docs.location);
  write_string(w, "gpu", spec.docs.gpu);
  write_string(w, "cleanupOwner", spec.docs.cleanup_owner);
  write_string(w, "bestFit", spec.docs.best_fit);
  write_string(w, "caveat", spec.docs.caveat);
  if (!spec.docs.authentication.empty()) write_string(w, "authentication", spec.docs.authentication);
  for (const auto& [key, value] : {std::pair{"isolation", &spec.docs.isolation}, std::pair{"pause", &spec.docs.pause},
                                   std::pair{"fork", &spec.docs.fork}, std::pair{"network", &spec.docs.network}})
    if (!value->empty()) write_string(w, key, *value);
  w.EndObject();
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

ProviderSpec spec_from_json(std::string_view text) {
  Document doc = parse(text, "provider spec");
  if (!doc.IsObject())
    throw Error(ErrorCode::invalid_argument, "provider spec must be a JSON object");
  check_keys(doc, {"name", "aliases", "family", "kind", "targets", "features", "idle", "options", "docs"},
             "provider spec");
  ProviderSpec spec;
  spec.name = get_string(doc, "name");
  if (spec.name.empty())
    throw Error(ErrorCode::invalid_argument, "provider spec has no 'name'");
  for (char c : spec.name)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '-'))
      throw Error(ErrorCode::invalid_argument,
                  "provider name '" + spec.name + "' must be lower-case letters, digits and '-'");
  spec.aliases = get_strings(doc, "aliases");
  spec.family = get_string(doc, "family", spec.name);
  std::string kind = get_string(doc, "kind");
  auto parsed_kind = parse_kind(kind);
  if (!parsed_kind)
    throw Error(ErrorCode::invalid_argument,
                "field 'kind': unknown provider kind '" + kind + "'",
                "use delegated-run, ssh-lease or service-control");
  spec.kind = *parsed_kind;
  spec.targets = get_strings(doc, "targets");
  for (const std::string& f : get_strings(doc, "features")) {
    auto feature = parse_feature(f);
    if (!feature) {
      std::string known;
      for (Feature k : kAllFeatures) known += (known.empty() ? "" : ", ") + std::string(to_string(k));
      throw Error(ErrorCode::invalid_argument, "field 'features': unknown feature '" + f + "'",
                  "known features: " + known);
    }
    spec.features.insert(*feature);
  }
  spec.idle = get_strings(doc, "idle");
  for (const std::string& action : spec.idle)
    if (std::find(kIdleActions.begin(), kIdleActions.end(), action) == kIdleActions.end())
      throw Error(ErrorCode::invalid_argument, "field 'idle': unknown idle action '" + action + "'",
                  "use pause or stop");
  if (auto it = doc.FindMember("options"); it != doc.MemberEnd()) {
    if (!it->value.IsArray())
      throw Error(ErrorCode::invalid_argument, "field 'options' must be a list");
    for (const Value& o : it->value.GetArray()) {
      if (!o.IsObject()) throw Error(ErrorCode::invalid_argument, "an entry of 'options' is not an object");
      check_keys(o, {"name", "type", "default", "env", "help", "secret", "trusted", "choices", "tightest-first"},
                 "option '" + get_string(o, "name") + "'");
      OptionSpec opt;
      opt.name = get_string(o, "name");
      if (opt.name.empty())
        throw Error(ErrorCode::invalid_argument, "an entry of 'options' has no 'name'");
      opt.type = get_string(o, "type", "string");
      if (!is_option_type(opt.type))
        throw Error(ErrorCode::invalid_argument,
                    "option '" + opt.name + "': unknown type '" + opt.type + "'",
                    "use string, int, bool, duration, url, host, path or program");
      if (auto d = o.FindMember("default"); d != o.MemberEnd() && d->value.IsString())
        opt.default_value = d->value.GetString();
      opt.env = get_strings(o, "env");
      opt.help = get_string(o, "help");
      opt.secret = get_bool(o, "secret");
      opt.trusted = get_bool(o, "trusted");
      opt.choices = get_strings(o, "choices");
      opt.tightest_first = get_bool(o, "tightest-first");
      if (opt.tightest_first && opt.choices.empty())
        throw Error(ErrorCode::invalid_argument,
                    "option '" + opt.name + "' is \"tightest-first\" but lists no \"choices\"",
                    "list its choices, tightest first, e.g. \"choices\": [\"none\", \"shared\"]");
      check_option_default(opt);
      // An option that decides where requests (and so credentials) go, or which file or
      // program is used, must never come from a repository's config.
      if (decides_destination(opt.type) && !opt.trusted && !opt.secret)
        throw Error(ErrorCode::invalid_argument,
                    "option '" + opt.name + "' is of type " + opt.type +
                        ": it decides where credentials go or what runs, so it must be marked \"trusted\": true",
                    "add \"trusted\": true to the option, so a repository's corral.yaml cannot set it");
      spec.options.push_back(std::move(opt));
    }
  }
  if (auto it = doc.FindMember("docs"); it != doc.MemberEnd() && it->value.IsObject()) {
    const Value& d = it->value;
    check_keys(d,
               {"category", "location", "gpu", "cleanupOwner", "bestFit", "caveat", "authentication", "isolation",
                "pause", "fork", "network"},
               "field 'docs'");
    spec.docs.category = get_string(d, "category");
    spec.docs.location = get_string(d, "location");
    spec.docs.gpu = get_string(d, "gpu");
    spec.docs.cleanup_owner = get_string(d, "cleanupOwner");
    spec.docs.best_fit = get_string(d, "bestFit");
    spec.docs.caveat = get_string(d, "caveat");
    spec.docs.authentication = get_string(d, "authentication");
    spec.docs.isolation = get_string(d, "isolation");
    spec.docs.pause = get_string(d, "pause");
    spec.docs.fork = get_string(d, "fork");
    spec.docs.network = get_string(d, "network");
  }
  return spec;
}

void write_sandbox(Writer& w, const Sandbox& sandbox, bool include_secrets) {
  if (include_secrets) shape::write_object(w, sandbox);
  else shape::PublicSandbox::write(w, sandbox);
}

std::string to_json(const Sandbox& sandbox, bool include_secrets) {
  return text_of([&](Writer& w) { write_sandbox(w, sandbox, include_secrets); });
}

Sandbox sandbox_from(const Value& value) {
  if (!value.IsObject()) throw Error(ErrorCode::internal, "sandbox must be a JSON object");
  return shape::read_object<Sandbox>(value, "sandbox");
}

void write_check(Writer& w, const DoctorCheck& check) { shape::write_object(w, check); }

}  // namespace corral::json
