// A JSON document on one line, for the --json forms of the commands.
#pragma once

#include <functional>
#include <string>

#include "corral/json.hpp"

namespace corral::cli {

// What `body` writes, followed by a newline.
std::string json_line(const std::function<void(json::Writer&)>& body);

}  // namespace corral::cli
