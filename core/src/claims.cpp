#include "claims.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "corral/json.hpp"
#include "hash.hpp"
#include "paths.hpp"

namespace fs = std::filesystem;

namespace corral {

LeaseLock& LeaseLock::operator=(LeaseLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

LeaseLock::~LeaseLock() {
  if (fd_ >= 0) ::close(fd_);
}

void write_claim_fields(json::Writer& w, const Claim& c) {
  json::write_string(w, "leaseId", c.lease_id);
  json::write_string(w, "slug", c.slug);
  json::write_string(w, "provider", c.provider);
  json::write_string(w, "sandboxId", c.sandbox_id);
  json::write_map(w, "details", c.details);
  json::write_string(w, "workspace", c.workspace);
  json::write_string(w, "fingerprint", c.fingerprint);
  json::write_string(w, "createdAt", c.created_at);
  w.Key("kept");
  w.Bool(c.kept);
}

std::string claim_to_json(const Claim& c) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("version");
  w.Int(1);
  write_claim_fields(w, c);
  w.EndObject();
  return std::string(buffer.GetString()) + "\n";
}

Claim claim_from_json(std::string_view text, const std::string& what) {
  json::Document doc = json::parse(text, what);
  Claim c;
  c.lease_id = json::get_string(doc, "leaseId");
  c.slug = json::get_string(doc, "slug");
  c.provider = json::get_string(doc, "provider");
  c.sandbox_id = json::get_string(doc, "sandboxId");
  c.details = json::get_map(doc, "details");
  c.workspace = json::get_string(doc, "workspace");
  c.fingerprint = json::get_string(doc, "fingerprint");
  c.created_at = json::get_string(doc, "createdAt");
  c.kept = json::get_bool(doc, "kept");
  if (c.lease_id.empty() || c.provider.empty() || c.sandbox_id.empty())
    throw Error(ErrorCode::invalid_argument, what + " lacks leaseId, provider or sandboxId");
  return c;
}

ClaimStore ClaimStore::standard() { return ClaimStore(paths::state_dir() / "leases"); }

fs::path ClaimStore::path_of(const std::string& lease_id) const {
  // Lease ids are generated hex, but --id is user input: never let it name another path.
  if (lease_id.empty() || lease_id.find_first_of("/\\") != std::string::npos || lease_id[0] == '.')
    throw Error(ErrorCode::invalid_argument, fmt::format("'{}' is not a valid lease id", lease_id));
  return dir_ / (lease_id + ".json");
}

void ClaimStore::write(const Claim& claim) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  ::chmod(dir_.c_str(), 0700);
  const fs::path target = path_of(claim.lease_id);
  const fs::path temp = dir_ / fmt::format(".{}.{}.tmp", claim.lease_id, random_hex(4));
  const std::string text = claim_to_json(claim);
  auto failure = [&](const char* step) {
    int err = errno;
    ::unlink(temp.c_str());
    return Error(ErrorCode::internal,
                 fmt::format("cannot write lease claim {}: {} failed: {}", target.string(), step, std::strerror(err)),
                 "check that the state directory is writable and the disk is not full");
  };
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw failure("create");
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      throw failure("write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    throw failure("fsync");
  }
  ::close(fd);
  if (::rename(temp.c_str(), target.c_str()) != 0) throw failure("rename");
  // Make the rename itself durable.
  int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::optional<Claim> ClaimStore::read(const std::string& lease_id) const {
  const fs::path p = path_of(lease_id);
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw Error(ErrorCode::internal, fmt::format("cannot read {}: {}", p.string(), std::strerror(errno)));
  }
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return claim_from_json(text, "lease claim " + p.string());
}

std::vector<Claim> ClaimStore::all() const {
  std::vector<Claim> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const fs::path& p = e.path();
    if (p.extension() != ".json" || p.filename().string()[0] == '.') continue;
    try {
      if (auto c = read(p.stem().string())) out.push_back(std::move(*c));
    } catch (const Error&) {
      // A corrupt claim is reported by `corral list`'s caller through read(); skip here.
    }
  }
  std::sort(out.begin(), out.end(), [](const Claim& a, const Claim& b) {
    return std::tie(a.created_at, a.lease_id) < std::tie(b.created_at, b.lease_id);
  });
  return out;
}

void ClaimStore::remove(const std::string& lease_id) const {
  ::unlink(path_of(lease_id).c_str());
  ::unlink((dir_ / (lease_id + ".lock")).c_str());
}

Claim ClaimStore::resolve(const std::string& id) const {
  if (id.find_first_of("/\\") == std::string::npos && !id.empty() && id[0] != '.')
    if (auto c = read(id)) return *c;
  std::vector<Claim> matches;
  std::vector<Claim> claims = all();
  for (const Claim& c : claims)
    if (c.slug == id) matches.push_back(c);
  if (matches.size() == 1) return matches.front();
  if (matches.size() > 1)
    throw Error(ErrorCode::invalid_argument, fmt::format("'{}' names {} leases", id, matches.size()),
                "use the lease id shown by `corral list`");
  std::vector<std::string> known;
  for (const Claim& c : claims) known.push_back(c.slug);
  throw Error(ErrorCode::not_found, fmt::format("no lease '{}' on this machine", id),
              known.empty() ? "there are no kept leases; `corral run --keep` creates one"
                            : fmt::format("known leases: {} (see `corral list`)", fmt::join(known, ", ")));
}

namespace {

int open_lock_file(const fs::path& dir, const std::string& lease_id) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path p = dir / (lease_id + ".lock");
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    throw Error(ErrorCode::internal, fmt::format("cannot open lock {}: {}", p.string(), std::strerror(errno)));
  return fd;
}

}  // namespace

LeaseLock ClaimStore::lock(const std::string& lease_id, const std::function<void()>& on_wait,
                           const std::function<bool()>& cancelled) const {
  path_of(lease_id);  // validates the id
  LeaseLock lock(open_lock_file(dir_, lease_id));
  bool waited = false;
  // Polled rather than blocking, so a waiting process still notices Ctrl-C.
  while (::flock(lock.fd(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      throw Error(ErrorCode::internal, fmt::format("cannot lock lease {}: {}", lease_id, std::strerror(errno)));
    if (!waited && on_wait) on_wait();
    waited = true;
    if (cancelled && cancelled())
      throw Error(ErrorCode::cancelled, fmt::format("stopped waiting for lease {}", lease_id));
    ::usleep(50'000);
  }
  return lock;
}

std::optional<LeaseLock> ClaimStore::try_lock(const std::string& lease_id) const {
  path_of(lease_id);
  int fd = open_lock_file(dir_, lease_id);
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return LeaseLock(fd);
  ::close(fd);
  return std::nullopt;
}

}  // namespace corral
