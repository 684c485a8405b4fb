#include "env_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace corral::docker_sandbox {
namespace {

bool bad_name_char(char c) { return c == '=' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0'; }

}  // namespace

std::string env_file_text(const StringMap& env) {
  std::string text;
  for (const auto& [name, value] : env) {
    bool bad_name = name.empty() || name[0] == '#';
    for (char c : name) bad_name = bad_name || bad_name_char(c);
    if (bad_name)
      throw Error(ErrorCode::invalid_argument, "cannot forward environment variable '" + name + "' to a Docker Sandbox",
                  "variable names must be non-empty and contain no '=', blanks or leading '#'");
    // docker's env-file format has no quoting: a line break would start a new variable.
    if (value.find_first_of(std::string_view("\n\r\0", 3)) != std::string::npos)
      throw Error(ErrorCode::invalid_argument,
                  "environment variable '" + name + "' has a multi-line value, which sbx's env file cannot carry",
                  "put the value in a file inside the workspace and read it from there");
    text += name;
    text += '=';
    text += value;
    text += '\n';
  }
  return text;
}

EnvFile::EnvFile(const StringMap& env) {
  std::string text = env_file_text(env);
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/corral-sbx-env-XXXXXX";
  int fd = ::mkostemp(pattern.data(), O_CLOEXEC);  // mkostemp creates the file 0600
  if (fd < 0)
    throw Error(ErrorCode::internal, "cannot create a temporary env file in " + pattern.substr(0, pattern.rfind('/')) +
                                         ": " + std::strerror(errno),
                "set TMPDIR to a writable folder");
  path_ = pattern;
  ::fchmod(fd, S_IRUSR | S_IWUSR);  // in case a umask-less filesystem widened it
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(path_.c_str());
      throw Error(ErrorCode::internal, "cannot write the temporary env file: " + std::string(std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

EnvFile::~EnvFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

}  // namespace corral::docker_sandbox
