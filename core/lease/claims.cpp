#include "lease/claims.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <set>

#include "corral/json.hpp"
#include "corral/os/fd_write.hpp"
#include "corral/os/file_lock.hpp"
#include "corral/os/read_file.hpp"
#include "corral/shape.hpp"
#include "base/hash.hpp"
#include "base/paths.hpp"
#include "base/printable.hpp"
#include "lease/cleanup_command.hpp"
#include "lease/slug.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

fs::path lock_path(const fs::path& dir, const std::string& lease_id) { return dir / (lease_id + ".lock"); }
fs::path commands_lock_path(const fs::path& dir, const std::string& lease_id) { return dir / (lease_id + ".exec"); }

}  // namespace

bool valid_lease_id(std::string_view id) {
  return !id.empty() && id.size() <= kMaxLeaseIdLength && id[0] != '.' &&
         id.find_first_of("/\\") == std::string_view::npos;
}

std::string shown_lease_name(std::string_view name) {
  constexpr std::size_t kShown = 64;
  return printable(name.substr(0, kShown)) + (name.size() > kShown ? "..." : "");
}

// The slugs of leases being created through one store, whose claims are not written yet.
struct ClaimStore::HeldSlugs {
  std::mutex mutex;
  std::multiset<std::string> slugs;  // a slug may be held twice: by its create, then by a fan-out
};

ClaimStore::ClaimStore(fs::path dir) : dir_(std::move(dir)), held_(std::make_shared<HeldSlugs>()) {}

SlugHold ClaimStore::hold_new_slug() const {
  std::vector<Claim> existing = all();
  std::lock_guard guard(held_->mutex);
  std::string slug = make_slug([&](const std::string& s) {
    return held_->slugs.count(s) > 0 ||
           std::any_of(existing.begin(), existing.end(), [&](const Claim& c) { return c.slug == s; });
  });
  held_->slugs.insert(slug);
  return SlugHold(held_, std::move(slug));
}

SlugHold ClaimStore::hold_slug(const std::string& slug) const {
  std::lock_guard guard(held_->mutex);
  held_->slugs.insert(slug);
  return SlugHold(held_, slug);
}

SlugHold::SlugHold(std::shared_ptr<ClaimStore::HeldSlugs> held, std::string slug)
    : held_(std::move(held)), slug_(std::move(slug)) {}

SlugHold::~SlugHold() {
  if (!held_) return;  // moved from
  std::lock_guard guard(held_->mutex);
  if (auto it = held_->slugs.find(slug_); it != held_->slugs.end()) held_->slugs.erase(it);  // this hold only
}

}  // namespace corral

namespace corral::shape {

// A count such as a pool's size: a number outside int's range reads as -1, which no
// count allows, so the check below names it rather than a type.
struct Count {
  static bool empty(int v) { return v == 0; }
  static void write(json::Writer& w, int v) { w.Int(v); }
  static int read(const json::Value& v, const char* key) {
    const std::int64_t n = Codec<std::int64_t>::read(v, key);
    return n < INT_MIN || n > INT_MAX ? -1 : static_cast<int>(n);
  }
};

template <>
struct Shape<PoolTag> {
  static constexpr auto fields =
      std::tuple{field("key", &PoolTag::key), field_as<Count>("size", &PoolTag::size),
                 field("filledAt", &PoolTag::filled_at), field("expiresAt", &PoolTag::expires_at),
                 field("noRefill", &PoolTag::no_refill, omitted)};
};

template <>
struct Shape<Claim> {
  static constexpr auto fields = std::tuple{
      field("leaseId", &Claim::lease_id),
      field("slug", &Claim::slug),
      field("provider", &Claim::provider),
      field("sandboxId", &Claim::sandbox_id),
      field("details", &Claim::details),
      field("workspace", &Claim::workspace),
      field("fingerprint", &Claim::fingerprint),
      field("ranSinceSync", &Claim::ran_since_sync, omitted),
      field("createdAt", &Claim::created_at),
      field("kept", &Claim::kept),
      field("paused", &Claim::paused, omitted),
      // Absent for open, so claims of sandboxes made before policies read the same.
      field("network", &Claim::network, omitted),
      field("target", &Claim::target, omitted),
      field("pool", &Claim::pool, omitted),
  };
  static void check(const Claim& c, std::string_view what) {
    // What a fill writes, or damage: never numbers for the pool's arithmetic to overflow.
    constexpr std::int64_t kMaxTagSize = 1000, kLatest = std::int64_t{1} << 40;  // seconds: ~34,000 years
    if (const std::optional<PoolTag>& tag = c.pool;
        tag && (tag->size < 1 || tag->size > kMaxTagSize || tag->filled_at < 0 || tag->expires_at < tag->filled_at ||
                tag->expires_at > kLatest))
      throw Error(ErrorCode::invalid_argument, std::string(what) + " has a pool tag out of range");
    if (c.lease_id.empty() || c.provider.empty() || c.sandbox_id.empty())
      throw Error(ErrorCode::invalid_argument, std::string(what) + " lacks leaseId, provider or sandboxId");
  }
};

}  // namespace corral::shape

namespace corral {

void write_claim_fields(json::Writer& w, const Claim& c) { shape::write_fields(w, c); }

std::string claim_to_json(const Claim& c) {
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("version");
    w.Int(1);
    write_claim_fields(w, c);
    w.EndObject();
  }) + "\n";
}

Claim claim_from_json(std::string_view text, const std::string& what) {
  json::Document doc = json::parse(text, what);
  // Anything may be left in the state folder; only an object has fields to read.
  if (!doc.IsObject()) throw Error(ErrorCode::invalid_argument, what + " is not a JSON object");
  return shape::read_object<Claim>(doc, what);
}

ClaimStore ClaimStore::standard() { return ClaimStore(paths::state_dir() / "leases"); }

fs::path ClaimStore::path_of(const std::string& lease_id) const {
  // Lease ids are generated hex, but --id is user input: never let it name another path.
  if (!valid_lease_id(lease_id))
    throw Error(ErrorCode::invalid_argument, fmt::format("'{}' is not a valid lease id", shown_lease_name(lease_id)));
  return dir_ / (lease_id + ".json");
}

void ClaimStore::write(const Claim& claim, Durability durability) const {
  ensure_dir();
  write_file_atomically(path_of(claim.lease_id), claim_to_json(claim), 0600, "lease claim", durability);
}

void ClaimStore::ensure_dir() const { paths::make_private_folder(dir_, "folder of lease claims"); }

namespace {

// Claims and file lists are corral's own small files; anything else there (a link, a
// FIFO, something huge) is damage to report, never to follow, wait on or load whole.
constexpr std::uint64_t kMaxClaimBytes = 1 << 20;
constexpr std::uint64_t kMaxFileListBytes = 256ull << 20;

// The whole file, or nullopt when it does not exist; throws invalid-argument saying why
// it cannot be read.
std::optional<std::string> read_small_file(const fs::path& p, std::uint64_t max_bytes, const std::string& what) {
  return os::read_regular_file(p, max_bytes, what, os::Links::refuse);
}

// The string value of `"key":"..."` in possibly truncated JSON text, or empty.
std::string salvage(const std::string& text, const std::string& key) {
  std::string needle = "\"" + key + "\":\"";
  size_t at = text.find(needle);
  if (at == std::string::npos) return {};
  at += needle.size();
  size_t end = text.find('"', at);
  if (end == std::string::npos) return {};
  std::string value = text.substr(at, end - at);
  // Only plain ids are trusted out of a broken file.
  if (value.empty() || value.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") !=
                           std::string::npos)
    return {};
  return value;
}

}  // namespace

std::optional<Claim> ClaimStore::read(const std::string& lease_id) const {
  const fs::path p = path_of(lease_id);
  try {
    std::optional<std::string> text = read_small_file(p, kMaxClaimBytes, "lease claim");
    if (!text) return std::nullopt;
    return claim_from_json(*text, "lease claim " + p.string());
  } catch (const Error& e) {
    throw Error(ErrorCode::config, fmt::format("the lease claim {} is corrupt: {}", p.string(), e.what()),
                fmt::format("`{}` removes it (and its sandbox, when its id can be read)", cleanup_command("", lease_id)));
  }
}

std::optional<ClaimFile> ClaimStore::inspect(const std::string& lease_id) const {
  const fs::path p = path_of(lease_id);
  std::optional<std::string> text;
  try {
    text = read_small_file(p, kMaxClaimBytes, "lease claim");
  } catch (const Error& e) {
    return ClaimFile{lease_id, std::nullopt, e.what(), {}, {}};
  }
  if (!text) return std::nullopt;
  ClaimFile f;
  f.lease_id = lease_id;
  try {
    f.claim = claim_from_json(*text, "lease claim " + p.string());
    f.provider = f.claim->provider;
    f.sandbox_id = f.claim->sandbox_id;
  } catch (const Error& e) {
    f.problem = e.what();
    f.provider = salvage(*text, "provider");
    f.sandbox_id = salvage(*text, "sandboxId");
  }
  return f;
}

std::vector<ClaimFile> ClaimStore::scan() const {
  sweep_stray_files();
  std::vector<ClaimFile> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const fs::path& p = e.path();
    if (p.extension() != ".json" || p.filename().string()[0] == '.') continue;
    try {
      if (auto f = inspect(p.stem().string())) out.push_back(std::move(*f));
    } catch (const Error& err) {
      out.push_back({p.stem().string(), std::nullopt, err.what(), {}, {}});
    }
  }
  std::sort(out.begin(), out.end(), [](const ClaimFile& a, const ClaimFile& b) { return a.lease_id < b.lease_id; });
  return out;
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
      // Corrupt claims are reported by scan(), which `list` and `doctor` use.
    }
  }
  std::sort(out.begin(), out.end(), [](const Claim& a, const Claim& b) {
    return std::tie(a.created_at, a.lease_id) < std::tie(b.created_at, b.lease_id);
  });
  return out;
}

void ClaimStore::remove(const std::string& lease_id) const {
  ::unlink(path_of(lease_id).c_str());
  ::unlink((dir_ / (lease_id + ".files")).c_str());
  ::unlink(commands_lock_path(dir_, lease_id).c_str());
  ::unlink(lock_path(dir_, lease_id).c_str());
}

std::vector<std::string> ClaimStore::synced_files(const std::string& lease_id) const {
  path_of(lease_id);  // validates the id
  std::optional<std::string> text;
  try {
    text = read_small_file(dir_ / (lease_id + ".files"), kMaxFileListBytes, "synced file list");
  } catch (const Error&) {
    return {};  // an unreadable list only costs the removal of deleted files
  }
  std::vector<std::string> files;
  if (!text) return files;
  std::string_view rest = *text;
  while (!rest.empty()) {
    size_t nul = rest.find('\0');
    if (nul == std::string_view::npos) break;  // a torn last entry is dropped
    files.emplace_back(rest.substr(0, nul));
    rest.remove_prefix(nul + 1);
  }
  return files;
}

void ClaimStore::write_synced_files(const std::string& lease_id, const std::vector<std::string>& files) const {
  path_of(lease_id);
  ensure_dir();
  std::string text;
  for (const std::string& f : files) {
    text += f;
    text += '\0';
  }
  // A hint for the next sync's removals, written twice per sync: a power loss that loses
  // it costs at most a file deleted locally staying in a kept sandbox, not two fsyncs a run.
  write_file_atomically(dir_ / (lease_id + ".files"), text, 0600, "synced file list", Durability::process_crash);
}

std::string ClaimStore::host_id() const {
  // Beside the leases folder, not in it: it belongs to the whole state, not to a lease.
  ensure_dir();
  const fs::path p = dir_.parent_path() / "host-id";
  // The id in the first line of the file's `text`; nullopt when there is none, or no valid one.
  auto id_in = [](const std::optional<std::string>& text) -> std::optional<std::string> {
    if (!text) return std::nullopt;
    std::string id = text->substr(0, text->find('\n'));
    if (id.size() != 12 || id.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
    return id;
  };
  int err = 0;  // why the last attempt failed
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::optional<std::string> text;
    try {
      text = read_small_file(p, 4096, "host id");
    } catch (const Error&) {
      text = "";  // damaged: replaced below
    }
    if (std::optional<std::string> id = id_in(text)) return *id;
    // The id is written whole to a file of its own, then linked into place: another corral
    // (or another shard of this one) never reads a half-written id, and when two race,
    // link() lets one win and the other reads the winner's. A damaged file is replaced.
    const std::string id = random_hex(6);
    fs::path temp = p;
    temp += ".new-" + random_hex(6);
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      err = errno;
      continue;
    }
    const bool written = os::write_all(fd, id + "\n") && ::fsync(fd) == 0;
    if (!written) err = errno;
    ::close(fd);
    const bool placed = written && (text ? ::rename(temp.c_str(), p.c_str()) : ::link(temp.c_str(), p.c_str())) == 0;
    if (written && !placed && errno != EEXIST) err = errno;
    ::unlink(temp.c_str());  // after link() the id lives on under p; after rename() it is gone already
    if (placed) return id;
  }
  if (std::optional<std::string> id = id_in(read_small_file(p, 4096, "host id"))) return *id;  // the last race was lost to a complete id
  throw Error(os::write_error_code(err), fmt::format("cannot create {}: {}", p.string(), std::strerror(err)),
              "check that the state directory is writable and the disk is not full");
}

Claim ClaimStore::resolve(const std::string& id) const {
  if (valid_lease_id(id))
    if (auto c = read(id)) return *c;
  std::vector<Claim> matches;
  std::vector<Claim> claims = all();
  for (const Claim& c : claims)
    if (c.slug == id) matches.push_back(c);
  if (matches.empty() && valid_lease_id(id))
    if (auto f = inspect(id); f && !f->claim)
      throw Error(ErrorCode::config, fmt::format("the lease claim of '{}' is corrupt: {}", shown_lease_name(id), f->problem),
                  fmt::format("`{}` removes it (and its sandbox, when its id can be read)", cleanup_command("", id)));
  if (matches.size() == 1) return matches.front();
  if (matches.size() > 1)
    throw Error(ErrorCode::invalid_argument, fmt::format("'{}' names {} leases", shown_lease_name(id), matches.size()),
                "use the lease id shown by `corral list`");
  std::vector<std::string> known;
  for (const Claim& c : claims) known.push_back(c.slug);
  throw Error(ErrorCode::not_found, fmt::format("no lease '{}' on this machine", shown_lease_name(id)),
              known.empty() ? "there are no kept leases; `corral run --keep` creates one"
                            : fmt::format("known leases: {} (see `corral list`)", fmt::join(known, ", ")));
}

LeaseLock ClaimStore::lock(const std::string& lease_id, const std::function<void()>& on_wait,
                           const std::function<bool()>& cancelled) const {
  path_of(lease_id);  // validates the id
  paths::make_private_folder(dir_, "folder of lease claims");
  return os::FileLock::acquire(lock_path(dir_, lease_id), "lease " + lease_id, {on_wait, cancelled});
}

LeaseLock ClaimStore::lock_commands(const std::string& lease_id, os::LockMode mode,
                                   const std::function<void()>& on_wait,
                                   const std::function<bool()>& cancelled) const {
  path_of(lease_id);  // validates the id
  paths::make_private_folder(dir_, "folder of lease claims");
  return os::FileLock::acquire(commands_lock_path(dir_, lease_id), "the commands of lease " + lease_id,
                               {on_wait, cancelled}, mode);
}

bool ClaimStore::in_use(const std::string& lease_id) const {
  path_of(lease_id);
  return os::FileLock::held_elsewhere(lock_path(dir_, lease_id)) ||
         os::FileLock::held_at_all(commands_lock_path(dir_, lease_id));
}

std::optional<LeaseLock> ClaimStore::try_lock(const std::string& lease_id) const {
  path_of(lease_id);
  paths::make_private_folder(dir_, "folder of lease claims");
  return os::FileLock::try_acquire(lock_path(dir_, lease_id), "lease " + lease_id);
}

void ClaimStore::sweep_stray_files() const {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const fs::path& p = e.path();
    if (p.extension() != ".lock" && p.extension() != ".files" && p.extension() != ".exec") continue;
    const std::string lease_id = p.stem().string();
    try {
      if (fs::exists(path_of(lease_id), ec)) continue;
      // Held: a creation or a stop under way. Free: nobody's, once its claim is gone.
      std::optional<LeaseLock> held = try_lock(lease_id);
      if (!held || fs::exists(path_of(lease_id), ec)) continue;
      ::unlink((dir_ / (lease_id + ".files")).c_str());
      ::unlink(commands_lock_path(dir_, lease_id).c_str());
      ::unlink(lock_path(dir_, lease_id).c_str());
    } catch (const Error&) {
      // Not a lease id corral makes: not corral's to remove.
    }
  }
}

}  // namespace corral
