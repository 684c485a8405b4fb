#include "corral/os/trusted_path.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

namespace fs = std::filesystem;

namespace corral::os {
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit (MAXSYMLINKS)

// The name `chown` should give the current user.
std::string my_name() {
  if (const struct passwd* pw = ::getpwuid(::geteuid())) return pw->pw_name;
  return std::to_string(::geteuid());
}

// Only root and the current user may own what decides what corral runs.
std::optional<Distrust> check_owner(const fs::path& p, const struct stat& st) {
  if (st.st_uid == 0 || st.st_uid == ::geteuid()) return std::nullopt;
  // chown follows a link unless told -h, and would change its target instead.
  const char* no_follow = S_ISLNK(st.st_mode) ? "-h " : "";
  return Distrust{p, "is owned by uid " + std::to_string(st.st_uid) + ", neither root nor you",
                  "chown " + std::string(no_follow) + my_name() + " " + p.string()};
}

// Nobody else may write it. A sticky folder (like /tmp) lets others add names but not
// rename or remove ours, which is enough for a folder further up the path; the folder
// that directly names the file or a link must be closed, since whoever can write it can
// take the name whenever it is replaced (an upgrade, a re-created link).
std::optional<Distrust> check_mode(const fs::path& p, const struct stat& st, bool sticky_is_enough) {
  if (!(st.st_mode & (S_IWGRP | S_IWOTH))) return std::nullopt;
  const bool sticky = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
  if (sticky && sticky_is_enough) return std::nullopt;
  std::string problem = (st.st_mode & S_IWOTH) ? "is world-writable" : "is group-writable";
  if (sticky) problem += " and directly holds the file or a link to it (a sticky bit is only enough further up)";
  return Distrust{p, std::move(problem), "chmod go-w " + p.string()};
}

std::optional<Distrust> examine(const fs::path& p, struct stat& st) {
  if (::lstat(p.c_str(), &st) == 0) return std::nullopt;
  return Distrust{p, std::string("cannot be examined: ") + std::strerror(errno), ""};
}

// True when nothing but "" and "." is left to walk: the next component is the last.
bool is_last(const std::deque<fs::path>& todo) {
  return std::all_of(todo.begin(), todo.end(), [](const fs::path& p) { return p.empty() || p == "."; });
}

}  // namespace

std::string Distrust::describe() const {
  return fix.empty() ? at.string() + " " + problem : at.string() + " " + problem + " (fix with: " + fix + ")";
}

TrustCheck check_trusted_path(const fs::path& file) {
  auto refuse = [](Distrust d) { return TrustCheck{{}, std::move(d)}; };
  std::error_code ec;
  fs::path absolute = file.is_absolute() ? file : fs::current_path(ec) / file;
  if (ec) return refuse({file, "cannot be located: " + ec.message(), ""});
  const fs::path relative = absolute.relative_path();
  std::deque<fs::path> todo(relative.begin(), relative.end());

  // `here` is the physical folder reached so far; every folder on the way was checked on
  // entry, so a ".." only returns to a checked one.
  fs::path here = "/";
  struct stat here_st {};
  if (auto d = examine(here, here_st)) return refuse(*d);
  if (auto d = check_owner(here, here_st)) return refuse(*d);
  if (auto d = check_mode(here, here_st, true)) return refuse(*d);
  int links = 0;
  while (!todo.empty()) {
    const fs::path name = todo.front();
    todo.pop_front();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      here = here.parent_path();
      if (auto d = examine(here, here_st)) return refuse(*d);
      continue;
    }
    const fs::path next = here / name;
    struct stat st {};
    if (auto d = examine(next, st)) return refuse(*d);
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxLinks) return refuse({next, "has too many levels of symbolic links", ""});
      if (auto d = check_mode(here, here_st, false)) return refuse(*d);
      if (auto d = check_owner(next, st)) return refuse(*d);
      fs::path target = fs::read_symlink(next, ec);
      if (ec) return refuse({next, "cannot be read: " + ec.message(), ""});
      if (target.is_absolute()) {
        here = "/";
        if (auto d = examine(here, here_st)) return refuse(*d);
      }
      const fs::path rest = target.relative_path();
      todo.insert(todo.begin(), rest.begin(), rest.end());
      continue;
    }
    if (is_last(todo)) {
      if (auto d = check_mode(here, here_st, false)) return refuse(*d);
      if (auto d = check_owner(next, st)) return refuse(*d);
      if (auto d = check_mode(next, st, false)) return refuse(*d);
      return {next, std::nullopt};
    }
    if (!S_ISDIR(st.st_mode)) return refuse({next, "is not a folder", ""});
    if (auto d = check_owner(next, st)) return refuse(*d);
    if (auto d = check_mode(next, st, true)) return refuse(*d);
    here = next;
    here_st = st;
  }
  // The path ended in ".." or named "/": a folder, checked on the way.
  return {here, std::nullopt};
}

}  // namespace corral::os
