#include "lease_record.hpp"

#include <algorithm>
#include <cctype>

#include <corral/json.hpp>

namespace corral_ssh {

std::string to_line(const LeaseRecord& record) {
  rapidjson::StringBuffer buffer;
  corral::json::Writer w(buffer);
  w.StartObject();
  corral::json::write_map(w, "labels", record.labels);
  w.EndObject();
  return buffer.GetString();
}

LeaseRecord record_from(std::string_view text) {
  corral::json::Document doc = corral::json::parse(text, "lease record");
  if (!doc.IsObject()) throw corral::Error(corral::ErrorCode::invalid_argument, "a lease record is not a JSON object");
  LeaseRecord record;
  record.labels = corral::json::get_map(doc, "labels");
  return record;
}

LeaseRecord record_from_output(std::string_view output) {
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.remove_suffix(1);
  size_t newline = output.rfind('\n');
  return record_from(newline == std::string_view::npos ? output : output.substr(newline + 1));
}

std::vector<ListedLease> parse_listing(std::string_view output) {
  std::vector<ListedLease> leases;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = std::min(output.find('\n', start), output.size());
    std::string_view line = output.substr(start, end - start);
    start = end + 1;
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos || !is_lease_id(line.substr(0, tab))) continue;
    try {
      leases.push_back({std::string(line.substr(0, tab)), record_from(line.substr(tab + 1))});
    } catch (const corral::Error&) {
      // Not a record this plugin wrote: not one of corral's leases.
    }
  }
  return leases;
}

bool is_lease_id(std::string_view id) {
  if (id.empty() || id.size() > 64 || id.front() == '-') return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

}  // namespace corral_ssh
