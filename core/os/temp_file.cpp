#include "corral/os/temp_file.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"

namespace corral::os {

TempFile::TempFile(std::string_view tag, std::string_view content) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string pattern = (dir / ("corral-" + std::string(tag) + "-XXXXXX")).string();
  int fd = ::mkstemp(pattern.data());  // mode 0600, O_EXCL: a name of our own
  if (fd < 0)
    throw Error(ErrorCode::internal, "cannot create a temporary file in " + dir.string() + ": " + std::strerror(errno),
                "set TMPDIR to a writable folder");
  path_ = std::move(pattern);
  if (!write_all(fd, content)) {
    int err = errno;
    ::close(fd);
    ::unlink(path_.c_str());
    throw Error(ErrorCode::internal, "cannot write the temporary file " + path_ + ": " + std::strerror(err),
                "free some space in " + dir.string() + ", or set TMPDIR to another folder");
  }
  ::close(fd);
}

TempFile::~TempFile() { ::unlink(path_.c_str()); }

std::string TempFile::read(std::size_t limit) const {
  std::ifstream in(path_, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

}  // namespace corral::os
