#include "names.hpp"

#include <regex>

namespace corral::kubernetes::standin {
namespace {

const std::regex kSubdomain(R"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)");
const std::regex kLabel(R"([a-z0-9]([-a-z0-9]*[a-z0-9])?)");
const std::regex kNamePart(R"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])");

const char* kSubdomainMessage =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const char* kLabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const char* kNamePartMessage =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const char* kLabelValueMessage =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

}  // namespace

std::vector<std::string> dns1123_subdomain_errors(const std::string& value) {
  std::vector<std::string> out;
  if (value.size() > 253) out.push_back("must be no more than 253 characters");
  if (!std::regex_match(value, kSubdomain)) out.push_back(kSubdomainMessage);
  return out;
}

std::vector<std::string> dns1123_label_errors(const std::string& value) {
  std::vector<std::string> out;
  if (value.size() > 63) out.push_back("must be no more than 63 characters");
  if (!std::regex_match(value, kLabel)) out.push_back(kLabelMessage);
  return out;
}

std::vector<std::string> qualified_name_errors(const std::string& value) {
  std::vector<std::string> out;
  std::string name = value;
  const size_t slash = value.find('/');
  if (slash != std::string::npos) {
    const std::string prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) out.push_back("prefix part must be non-empty");
    else
      for (const auto& e : dns1123_subdomain_errors(prefix)) out.push_back("prefix part " + e);
    if (name.find('/') != std::string::npos) {
      out.push_back("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
                    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
                    "prefix and '/' (e.g. 'example.com/MyName')");
      return out;
    }
  }
  if (name.empty()) out.push_back("name part must be non-empty");
  else if (name.size() > 63) out.push_back("name part must be no more than 63 characters");
  if (!name.empty() && !std::regex_match(name, kNamePart)) out.push_back(kNamePartMessage);
  return out;
}

std::vector<std::string> label_value_errors(const std::string& value) {
  std::vector<std::string> out;
  if (value.size() > 63) out.push_back("must be no more than 63 characters");
  if (!value.empty() && !std::regex_match(value, kNamePart)) out.push_back(kLabelValueMessage);
  return out;
}

std::string go_quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else out += static_cast<char>(c);
  }
  return out + "\"";
}

}  // namespace corral::kubernetes::standin
