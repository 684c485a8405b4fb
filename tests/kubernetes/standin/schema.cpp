#include "schema.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace corral::kubernetes::standin {

struct SchemaWalk {
  const Schemas& schemas;
  json::Document::AllocatorType* allocator;  // null: report only
  bool prune;
  std::vector<SchemaIssue> issues;

  const json::Value* resolve(const json::Value* schema) const {
    for (int hops = 0; schema && hops < 8; ++hops) {
      const json::Value* ref = json::find(*schema, "$ref");
      if (!ref || !ref->IsString()) return schema;
      std::string target = ref->GetString();
      target = target.substr(target.rfind('/') + 1);
      auto it = schemas.schemas_.find(target);
      if (it == schemas.schemas_.end()) throw std::runtime_error("schema " + target + " is not loaded");
      schema = it->second;
    }
    return schema;
  }

  static std::string json_type(const json::Value& v) {
    if (v.IsObject()) return "object";
    if (v.IsArray()) return "array";
    if (v.IsString()) return "string";
    if (v.IsBool()) return "boolean";
    if (v.IsInt64() || v.IsUint64()) return "integer";
    if (v.IsNumber()) return "number";
    return "null";
  }

  static bool has_type(const json::Value& v, const std::string& type) {
    if (type == "object") return v.IsObject();
    if (type == "array") return v.IsArray();
    if (type == "string") return v.IsString();
    if (type == "boolean") return v.IsBool();
    if (type == "integer") return v.IsInt64() || v.IsUint64();
    if (type == "number") return v.IsNumber();
    return true;
  }

  void add(SchemaIssue::Kind kind, const std::string& path, const std::string& expected, const std::string& message) {
    issues.push_back({kind, path, expected, message});
  }

  static std::string member_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  // Whether `v` has one of `schema`'s oneOf types (IntOrString, Quantity).
  bool one_of_matches(const json::Value& v, const json::Value& options) {
    for (const auto& option : options.GetArray()) {
      const json::Value* o = resolve(&option);
      const json::Value* t = json::find(*o, "type");
      if (!t || (t->IsString() && has_type(v, t->GetString()))) return true;
    }
    return false;
  }

  void check_format(const json::Value& v, const std::string& format, const std::string& path) {
    if (format == "int32" && v.IsNumber() && (!v.IsInt() || v.GetInt() != v.GetInt64()))
      add(SchemaIssue::Kind::format, path, format, path + ": " + std::to_string(v.GetDouble()) + " is out of range for int32");
    if (format == "date-time" && v.IsString()) {
      static const std::regex rfc3339(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))");
      if (!std::regex_match(v.GetString(), rfc3339))
        add(SchemaIssue::Kind::format, path, format, path + ": \"" + std::string(v.GetString()) + "\" is not an RFC 3339 time");
    }
    if (format == "byte" && v.IsString()) {
      static const std::regex base64(R"([A-Za-z0-9+/]*={0,2})");
      if (!std::regex_match(v.GetString(), base64))
        add(SchemaIssue::Kind::format, path, format, path + ": not base64");
    }
  }

  void walk(json::Value& v, const json::Value* schema_in, const std::string& path) {
    const json::Value* schema = resolve(schema_in);
    if (!schema || !schema->IsObject()) return;
    if (v.IsNull()) return;  // a null is an absent optional field (Go decodes it to the zero value)
    if (const json::Value* all = json::find(*schema, "allOf"); all && all->IsArray())
      for (const auto& part : all->GetArray()) walk(v, &part, path);
    if (const json::Value* one = json::find(*schema, "oneOf"); one && one->IsArray() && !one_of_matches(v, *one)) {
      add(SchemaIssue::Kind::type, path, "integer or string",
          path + ": expected an integer or a string, got " + json_type(v));
      return;
    }
    const json::Value* type = json::find(*schema, "type");
    if (type && type->IsString() && !has_type(v, type->GetString())) {
      add(SchemaIssue::Kind::type, path, type->GetString(),
          path + ": expected " + std::string(type->GetString()) + ", got " + json_type(v));
      return;
    }
    if (const json::Value* format = json::find(*schema, "format"); format && format->IsString())
      check_format(v, format->GetString(), path);
    if (const json::Value* values = json::find(*schema, "enum"); values && values->IsArray() && v.IsString()) {
      bool listed = false;
      std::string allowed;
      for (const auto& e : values->GetArray()) {
        if (e.IsString() && v.GetString() == std::string(e.GetString())) listed = true;
        if (e.IsString()) allowed += std::string(allowed.empty() ? "" : ", ") + "\"" + e.GetString() + "\"";
      }
      if (!listed)
        add(SchemaIssue::Kind::enum_value, path, allowed,
            path + ": Unsupported value: \"" + std::string(v.GetString()) + "\": supported values: " + allowed);
    }
    if (v.IsArray()) {
      if (const json::Value* items = json::find(*schema, "items"))
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) walk(v[i], items, path + "[" + std::to_string(i) + "]");
      return;
    }
    if (!v.IsObject()) return;
    const json::Value* properties = json::find(*schema, "properties");
    const json::Value* additional = json::find(*schema, "additionalProperties");
    const json::Value* preserve = json::find(*schema, "x-kubernetes-preserve-unknown-fields");
    const bool open = (preserve && preserve->IsTrue()) || (!properties && !additional);
    if (const json::Value* required = json::find(*schema, "required"); required && required->IsArray())
      for (const auto& r : required->GetArray()) {
        const json::Value* member = json::find(v, r.GetString());
        if (!member)
          add(SchemaIssue::Kind::required, member_path(path, r.GetString()), "",
              member_path(path, r.GetString()) + ": Required value");
      }
    for (auto m = v.MemberBegin(); m != v.MemberEnd();) {
      const std::string key = m->name.GetString();
      const json::Value* sub = properties ? json::find(*properties, key.c_str()) : nullptr;
      if (sub) {
        walk(m->value, sub, member_path(path, key));
      } else if (additional && additional->IsObject()) {
        walk(m->value, additional, member_path(path, key));
      } else if (!open && !(additional && additional->IsTrue())) {
        add(SchemaIssue::Kind::unknown_field, member_path(path, key), "",
            "unknown field \"" + member_path(path, key) + "\"");
        if (prune && allocator) {
          m = v.EraseMember(m);
          continue;
        }
      }
      ++m;
    }
  }
};

void Schemas::load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the schemas in " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  auto doc = std::make_unique<json::Document>();
  doc->Parse(text.str().c_str());
  if (doc->HasParseError() || !doc->IsObject()) throw std::runtime_error(path.string() + " is not JSON");
  const json::Value* components = json::find(*doc, "components");
  const json::Value* schemas = components ? json::find(*components, "schemas") : nullptr;
  if (!schemas || !schemas->IsObject()) throw std::runtime_error(path.string() + " has no components.schemas");
  for (const auto& m : schemas->GetObject()) schemas_[m.name.GetString()] = &m.value;
  if (const json::Value* paths = json::find(*doc, "paths"); paths && paths->IsObject())
    for (const auto& m : paths->GetObject()) paths_[m.name.GetString()] = &m.value;
  documents_.push_back(std::move(doc));
}

std::vector<SchemaIssue> Schemas::check(json::Value& value, json::Document::AllocatorType& allocator,
                                        const std::string& name, bool prune) const {
  auto it = schemas_.find(name);
  if (it == schemas_.end()) throw std::runtime_error("schema " + name + " is not loaded");
  SchemaWalk walk{*this, &allocator, prune, {}};
  walk.walk(value, it->second, "");
  return walk.issues;
}

std::map<std::string, std::string> Schemas::query_parameters(const std::string& path, const std::string& method) const {
  std::map<std::string, std::string> out;
  auto item = paths_.find(path);
  if (item == paths_.end()) return out;
  const json::Value* operation = json::find(*item->second, method.c_str());
  if (!operation) return out;
  for (const json::Value* list : {json::find(*item->second, "parameters"), json::find(*operation, "parameters")}) {
    if (!list || !list->IsArray()) continue;
    for (const auto& p : list->GetArray()) {
      const json::Value* in = json::find(p, "in");
      const json::Value* name = json::find(p, "name");
      const json::Value* schema = json::find(p, "schema");
      const json::Value* type = schema ? json::find(*schema, "type") : nullptr;
      if (in && in->IsString() && std::string(in->GetString()) == "query" && name && name->IsString())
        out[name->GetString()] = type && type->IsString() ? type->GetString() : "string";
    }
  }
  return out;
}

std::vector<SchemaIssue> Schemas::check(const json::Value& value, const std::string& name) const {
  auto it = schemas_.find(name);
  if (it == schemas_.end()) throw std::runtime_error("schema " + name + " is not loaded");
  SchemaWalk walk{*this, nullptr, false, {}};
  walk.walk(const_cast<json::Value&>(value), it->second, "");  // never changed without prune
  return walk.issues;
}

}  // namespace corral::kubernetes::standin
