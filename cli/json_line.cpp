#include "json_line.hpp"

namespace corral::cli {

std::string json_line(const std::function<void(json::Writer&)>& body) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  body(w);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace corral::cli
