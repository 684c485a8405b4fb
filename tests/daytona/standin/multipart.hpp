// A small multipart/form-data reader for the stand-in's upload routes (whole bodies in
// memory: test archives are small).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::daytona::standin {

struct FormPart {
  std::string name;
  std::string filename;
  std::string data;
};

// The boundary of a multipart Content-Type, or nullopt when it is not multipart.
std::optional<std::string> multipart_boundary(std::string_view content_type);
// The parts of `body`; throws std::runtime_error when it is malformed.
std::vector<FormPart> parse_multipart(std::string_view body, const std::string& boundary);

}  // namespace corral::daytona::standin
