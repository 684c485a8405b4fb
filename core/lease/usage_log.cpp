#include "lease/usage_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>

#include "corral/errors.hpp"
#include "corral/json.hpp"
#include "corral/os/errno_error.hpp"
#include "corral/os/fd_write.hpp"
#include "corral/os/file_lock.hpp"
#include "corral/os/read_file.hpp"
#include "corral/os/unique_fd.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

// A line longer than this is no record of ours.
constexpr std::size_t kMaxLine = 4096;

fs::path moved_aside(const fs::path& file) { return file.string() + ".1"; }

}  // namespace

std::optional<std::int64_t> parse_utc_time(const std::string& text) {
  std::tm tm{};
  const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end != '\0') return std::nullopt;
  return static_cast<std::int64_t>(::timegm(&tm));
}

std::string usage_line(const UsageRecord& r) {
  return json::text_of([&](json::Writer& w) {
           w.StartObject();
           json::write_string(w, "provider", r.provider);
           json::write_string(w, "lease", r.lease_id);
           json::write_string(w, "slug", r.slug);
           json::write_string(w, "sandbox", r.sandbox_id);
           w.Key("start");
           w.Int64(r.start);
           w.Key("end");
           w.Int64(r.end);
           w.Key("pooled");
           w.Bool(r.pooled);
           w.Key("kept");
           w.Bool(r.kept);
           w.EndObject();
         }) +
         "\n";
}

std::optional<UsageRecord> parse_usage_line(std::string_view line) {
  if (line.empty() || line.size() > kMaxLine || line.front() != '{') return std::nullopt;
  try {
    json::Document doc = json::parse(line, "usage record");
    if (!doc.IsObject()) return std::nullopt;
    const json::Value* start = json::find(doc, "start");
    const json::Value* end = json::find(doc, "end");
    if (!start || !end || !start->IsInt64() || !end->IsInt64()) return std::nullopt;
    UsageRecord r;
    r.provider = json::get_string(doc, "provider");
    r.lease_id = json::get_string(doc, "lease");
    r.slug = json::get_string(doc, "slug");
    r.sandbox_id = json::get_string(doc, "sandbox");
    r.start = start->GetInt64();
    r.end = end->GetInt64();
    r.pooled = json::get_bool(doc, "pooled");
    r.kept = json::get_bool(doc, "kept");
    if (r.provider.empty() || r.end < r.start) return std::nullopt;
    return r;
  } catch (const Error&) {
    return std::nullopt;
  }
}

UsageLog::UsageLog(fs::path file, std::uint64_t max_bytes) : file_(std::move(file)), max_bytes_(max_bytes) {}

fs::path UsageLog::standard_file(const fs::path& leases_dir) { return leases_dir.parent_path() / "usage.log"; }

void UsageLog::append(const UsageRecord& record) const {
  const std::string line = usage_line(record);
  os::FileLock lock = os::FileLock::acquire(file_.string() + ".lock", "the usage log");
  os::UniqueFd fd(::open(file_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!fd.valid()) throw os::errno_error(os::write_error_code(errno), "cannot open the usage log " + file_.string(), errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(ErrorCode::config, "the usage log " + file_.string() + " is not a file",
                "remove it: corral starts it anew");
  // A line cut by an earlier crash must not swallow this one: start it on a line of its own
  // (read access is for that last byte).
  off_t size = ::lseek(fd.get(), 0, SEEK_END);
  std::string text = line;
  if (size > 0) {
    char last = '\n';
    if (::pread(fd.get(), &last, 1, size - 1) == 1 && last != '\n') text.insert(0, "\n");
  }
  if (!os::write_all(fd.get(), text))
    throw os::errno_error(os::write_error_code(errno), "cannot write the usage log " + file_.string(), errno);
  if (static_cast<std::uint64_t>(size) + text.size() > max_bytes_) {
    std::error_code ec;
    fs::rename(file_, moved_aside(file_), ec);  // a failed move leaves one longer file, no lost line
  }
}

UsageLog::Contents UsageLog::read() const {
  Contents out;
  for (const fs::path& path : {moved_aside(file_), file_}) {
    std::optional<std::string> text = os::read_regular_file(path, 2 * max_bytes_ + kMaxLine, "usage log", os::Links::refuse);
    if (!text) continue;
    std::size_t at = 0;
    while (at < text->size()) {
      std::size_t nl = text->find('\n', at);
      if (nl == std::string::npos) nl = text->size();
      const std::string_view line(text->data() + at, nl - at);
      if (!line.empty()) {
        if (std::optional<UsageRecord> r = parse_usage_line(line)) out.records.push_back(std::move(*r));
        else ++out.skipped;
      }
      at = nl + 1;
    }
  }
  return out;
}

}  // namespace corral
