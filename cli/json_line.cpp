#include "json_line.hpp"

namespace corral::cli {

std::string json_line(const std::function<void(json::Writer&)>& body) { return json::text_of(body) + "\n"; }

}  // namespace corral::cli
