#include "corral/sdk/labels.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "corral/json.hpp"
#include "corral/os/atomic_file.hpp"

namespace fs = std::filesystem;

namespace corral::sdk {

fs::path labels_file(const fs::path& folder) { return folder / "labels.json"; }

void write_labels(const fs::path& folder, const StringMap& labels) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_map(w, "labels", labels);
  w.EndObject();
  // Labels name the sandbox's owner, lease and host: not secret, but nobody else's business.
  os::write_file_atomically(labels_file(folder), std::string_view(buffer.GetString(), buffer.GetSize()), 0600,
                        "the sandbox's labels", os::Durability::process_crash);
}

StringMap read_labels(const fs::path& folder) {
  const fs::path file = labels_file(folder);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return {};
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof())
    throw Error(ErrorCode::internal, "cannot read " + file.string() + ": " + std::strerror(errno));
  try {
    json::Document doc = json::parse(text, "the file");
    if (!doc.IsObject()) throw Error(ErrorCode::invalid_argument, "the file is not a JSON object");
    return json::get_map(doc, "labels");
  } catch (const Error& e) {
    throw Error(ErrorCode::internal, "the sandbox's labels in " + file.string() + " are corrupt: " + e.what(),
                "remove the sandbox's folder; `corral list --remote` no longer recognises it");
  }
}

}  // namespace corral::sdk
