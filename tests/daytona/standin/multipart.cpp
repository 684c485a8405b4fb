#include "multipart.hpp"

#include <stdexcept>

namespace corral::daytona::standin {
namespace {

// The value of `key="..."` (or key=token) in a header line, or "".
std::string attribute(std::string_view header, const std::string& key) {
  size_t pos = 0;
  while ((pos = header.find(key + "=", pos)) != std::string_view::npos) {
    if (pos == 0 || header[pos - 1] == ' ' || header[pos - 1] == ';') break;
    pos += key.size();
  }
  if (pos == std::string_view::npos) return {};
  pos += key.size() + 1;
  if (pos < header.size() && header[pos] == '"') {
    size_t end = header.find('"', pos + 1);
    return std::string(header.substr(pos + 1, end - pos - 1));
  }
  size_t end = header.find_first_of("; \r\n", pos);
  return std::string(header.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
}

}  // namespace

std::optional<std::string> multipart_boundary(std::string_view content_type) {
  if (content_type.find("multipart/form-data") == std::string_view::npos) return std::nullopt;
  std::string b = attribute(content_type, "boundary");
  if (b.empty()) return std::nullopt;
  return b;
}

std::vector<FormPart> parse_multipart(std::string_view body, const std::string& boundary) {
  const std::string delimiter = "--" + boundary;
  std::vector<FormPart> parts;
  size_t pos = body.find(delimiter);
  if (pos == std::string_view::npos) throw std::runtime_error("no multipart boundary in the body");
  for (;;) {
    pos += delimiter.size();
    if (body.substr(pos, 2) == "--") return parts;  // the closing delimiter
    if (body.substr(pos, 2) != "\r\n") throw std::runtime_error("malformed multipart delimiter");
    pos += 2;
    size_t headers_end = body.find("\r\n\r\n", pos);
    if (headers_end == std::string_view::npos) throw std::runtime_error("multipart part without headers");
    std::string_view headers = body.substr(pos, headers_end - pos);
    size_t data_start = headers_end + 4;
    size_t next = body.find("\r\n" + delimiter, data_start);
    if (next == std::string_view::npos) throw std::runtime_error("multipart part without an end");
    FormPart part;
    part.name = attribute(headers, "name");
    part.filename = attribute(headers, "filename");
    part.data = std::string(body.substr(data_start, next - data_start));
    parts.push_back(std::move(part));
    pos = next + 2;
  }
}

}  // namespace corral::daytona::standin
