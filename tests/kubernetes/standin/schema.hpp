// The OpenAPI v3 schemas of the objects the stand-in serves (tests/kubernetes/schemas),
// and the check of a JSON value against one: what keeps the stand-in's requests and
// answers true to the official API documents. It reads the constructs those documents
// use: $ref, allOf, oneOf, type, properties, additionalProperties, items, required, enum,
// format (int32, int64, date-time, byte) and x-kubernetes-preserve-unknown-fields.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "corral/json.hpp"

namespace corral::kubernetes::standin {

struct SchemaIssue {
  enum class Kind { type, required, unknown_field, enum_value, format };
  Kind kind = Kind::type;
  std::string path;      // "spec.containers[0].image"
  std::string expected;  // for type: "string", "integer", ...; for enum: the allowed values
  std::string message;   // the whole problem in words
};

class Schemas {
 public:
  // Adds every schema under components.schemas of the OpenAPI document at `path`; throws
  // std::runtime_error when it cannot be read.
  void load(const std::filesystem::path& path);
  bool has(const std::string& name) const { return schemas_.count(name) != 0; }

  // The problems of `value` against schema `name`. With `prune`, fields the schema does not
  // define are removed from `value` as they are reported (what the API server does with an
  // unknown field when the client did not ask for strict validation).
  std::vector<SchemaIssue> check(json::Value& value, json::Document::AllocatorType& allocator,
                                 const std::string& name, bool prune = false) const;
  // The same without changing anything.
  std::vector<SchemaIssue> check(const json::Value& value, const std::string& name) const;

  // The query parameters the documents declare for `method` ("get", "post", ...) on the
  // path `path` ("/api/v1/namespaces/{namespace}/pods"), with their types ("boolean",
  // "integer", "string"); empty when the documents have no such operation.
  std::map<std::string, std::string> query_parameters(const std::string& path, const std::string& method) const;

 private:
  std::vector<std::unique_ptr<json::Document>> documents_;
  std::map<std::string, const json::Value*> schemas_;
  std::map<std::string, const json::Value*> paths_;
  friend struct SchemaWalk;
};

}  // namespace corral::kubernetes::standin
