// Label and field selectors as the API server parses and matches them
// (k8s.io/apimachinery/pkg/labels and pkg/fields): `app=web,tier!=db,env in (a,b),!legacy`
// and `metadata.name=x,status.phase!=Failed`.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace corral::kubernetes::standin {

using Labels = std::map<std::string, std::string>;

// A selector the API server would refuse (400 BadRequest, with this message).
class SelectorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LabelRequirement {
  enum class Op { equals, not_equals, in, not_in, exists, does_not_exist, greater, less };
  std::string key;
  Op op = Op::exists;
  std::vector<std::string> values;
  bool matches(const Labels& labels) const;
};

struct LabelSelector {
  std::vector<LabelRequirement> requirements;  // all must hold; none: everything matches
  bool matches(const Labels& labels) const;
  // Parses the query form; throws SelectorError.
  static LabelSelector parse(const std::string& text);
};

struct FieldRequirement {
  std::string field;
  bool negated = false;  // !=
  std::string value;
};

struct FieldSelector {
  std::vector<FieldRequirement> requirements;
  // True when every requirement holds; `value_of` gives a field's value (nullopt: the
  // resource has no such selectable field).
  bool matches(const std::function<std::optional<std::string>(const std::string&)>& value_of) const;
  // Parses the query form (with \, \= and \! escapes); throws SelectorError.
  static FieldSelector parse(const std::string& text);
};

}  // namespace corral::kubernetes::standin
