#include "http_types.hpp"

#include <cctype>

namespace corral::kubernetes::standin {
namespace {

std::string percent_decode(const std::string& s, bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string HttpRequest::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

std::string HttpRequest::param(const std::string& key) const {
  auto it = query.find(key);
  return it == query.end() ? "" : it->second;
}

std::vector<std::string> HttpRequest::params(const std::string& key) const {
  std::vector<std::string> out;
  auto range = query.equal_range(key);
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
  return out;
}

bool HttpRequest::flag(const std::string& key) const {
  const std::string v = param(key);
  return v == "true" || v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "True";
}

void parse_target(HttpRequest& request) {
  const size_t mark = request.target.find('?');
  request.path = percent_decode(request.target.substr(0, mark), false);
  request.query.clear();
  if (mark == std::string::npos) return;
  const std::string rest = request.target.substr(mark + 1);
  for (size_t at = 0; at <= rest.size();) {
    size_t amp = rest.find('&', at);
    if (amp == std::string::npos) amp = rest.size();
    const std::string pair = rest.substr(at, amp - at);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      request.query.emplace(percent_decode(pair.substr(0, eq), true),
                            eq == std::string::npos ? "" : percent_decode(pair.substr(eq + 1), true));
    }
    at = amp + 1;
  }
}

}  // namespace corral::kubernetes::standin
