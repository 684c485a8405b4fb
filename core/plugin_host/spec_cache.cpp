#include "plugin_host/spec_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>

#include "corral/json.hpp"
#include "corral/plugin_abi.h"
#include "base/hash.hpp"
#include "base/paths.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

// Bump when the entry layout or the meaning of a probe changes: old entries are re-probed.
constexpr int kFormat = 1;

std::int64_t nanoseconds(const struct timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

std::string entry_json(const fs::path& library, const CachedProbe& entry) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("format");
  w.Int(kFormat);
  w.Key("hostAbi");
  w.Uint(CORRAL_ABI_VERSION);
  json::write_string(w, "library", library.string());
  w.Key("stamp");
  w.StartObject();
  w.Key("device");
  w.Uint64(entry.stamp.device);
  w.Key("inode");
  w.Uint64(entry.stamp.inode);
  w.Key("size");
  w.Uint64(entry.stamp.size);
  w.Key("mtimeNs");
  w.Int64(entry.stamp.mtime_ns);
  w.Key("ctimeNs");
  w.Int64(entry.stamp.ctime_ns);
  w.EndObject();
  json::write_string(w, "sha256", entry.sha256);
  const ProbeResult& r = entry.result;
  w.Key("ok");
  w.Bool(r.ok());
  if (r.ok()) {
    json::write_string(w, "spec", r.spec_json);
    json::write_string(w, "version", r.plugin_version);
    w.Key("abi");
    w.Uint(r.abi_version);
  } else {
    json::write_string(w, "cause", to_string(r.error->cause));
    json::write_string(w, "message", r.error->message);
  }
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

std::optional<std::uint64_t> uint64_at(const json::Value& object, const char* key) {
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || !it->value.IsUint64()) return std::nullopt;
  return it->value.GetUint64();
}

std::optional<std::int64_t> int64_at(const json::Value& object, const char* key) {
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || !it->value.IsInt64()) return std::nullopt;
  return it->value.GetInt64();
}

// The entry in `text` when it is whole, of this format and ABI, and for `library`.
std::optional<CachedProbe> entry_from(std::string_view text, const fs::path& library) {
  json::Document doc;
  try {
    doc = json::parse(text, "spec cache entry");
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!doc.IsObject() || int64_at(doc, "format") != kFormat || uint64_at(doc, "hostAbi") != CORRAL_ABI_VERSION)
    return std::nullopt;
  auto stamp = doc.FindMember("stamp");
  if (stamp == doc.MemberEnd() || !stamp->value.IsObject()) return std::nullopt;
  auto device = uint64_at(stamp->value, "device"), inode = uint64_at(stamp->value, "inode"),
       size = uint64_at(stamp->value, "size");
  auto mtime = int64_at(stamp->value, "mtimeNs"), ctime = int64_at(stamp->value, "ctimeNs");
  if (!device || !inode || !size || !mtime || !ctime) return std::nullopt;
  try {
    if (json::get_string(doc, "library") != library.string()) return std::nullopt;  // a hash collision
    CachedProbe entry{{*device, *inode, *size, *mtime, *ctime}, json::get_string(doc, "sha256"), {}};
    if (entry.sha256.size() != 64) return std::nullopt;
    if (json::get_bool(doc, "ok")) {
      entry.result.spec_json = json::get_string(doc, "spec");
      entry.result.plugin_version = json::get_string(doc, "version");
      auto abi = uint64_at(doc, "abi");
      if (entry.result.spec_json.empty() || !abi) return std::nullopt;
      entry.result.abi_version = static_cast<std::uint32_t>(*abi);
    } else {
      auto cause = parse_load_failure(json::get_string(doc, "cause"));
      std::string message = json::get_string(doc, "message");
      if (!cause || message.empty()) return std::nullopt;
      entry.result.error = LoadError{*cause, std::move(message)};
    }
    return entry;
  } catch (const Error&) {  // a field of the wrong type
    return std::nullopt;
  }
}

}  // namespace

std::optional<FileStamp> stamp_of(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return std::nullopt;
  return FileStamp{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                   static_cast<std::uint64_t>(st.st_size), nanoseconds(st.st_mtim), nanoseconds(st.st_ctim)};
}

SpecCache::SpecCache(fs::path dir) : dir_(std::move(dir)) {}

SpecCache SpecCache::standard() { return SpecCache(paths::cache_dir() / "specs"); }

fs::path SpecCache::file_for(const fs::path& library) const {
  Sha256 hasher;
  hasher.update(library.string());
  return dir_ / (hasher.hex().substr(0, 32) + ".json");
}

std::optional<CachedProbe> SpecCache::get(const fs::path& library) const {
  const fs::path file = file_for(library);
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  // An entry someone else could have written would let them name or hide a provider.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) ||
      st.st_size > (16 << 20)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(done);
  return entry_from(text, library);
}

bool SpecCache::put(const fs::path& library, const CachedProbe& entry) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || ::chmod(dir_.c_str(), 0700) != 0) return false;
  const fs::path target = file_for(library);
  const fs::path temp = dir_ / fmt::format(".{}.{}.tmp", target.stem().string(), random_hex(4));
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const std::string text = entry_json(library, entry);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  // A torn entry would only be re-probed, but a whole one is what rename promises.
  bool ok = done == text.size() && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(temp.c_str(), target.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace corral
