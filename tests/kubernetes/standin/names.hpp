// The API server's rules for names, label keys and label values, with its messages
// (k8s.io/apimachinery/pkg/util/validation): each returns the problems, none when valid.
#pragma once

#include <string>
#include <vector>

namespace corral::kubernetes::standin {

std::vector<std::string> dns1123_subdomain_errors(const std::string& value);
std::vector<std::string> dns1123_label_errors(const std::string& value);
std::vector<std::string> qualified_name_errors(const std::string& value);  // label and annotation keys
std::vector<std::string> label_value_errors(const std::string& value);

// `text` quoted as Go's %q prints it (for "Invalid value: ..." messages).
std::string go_quote(const std::string& text);

}  // namespace corral::kubernetes::standin
