#include "private_temp_file.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <corral/errors.hpp>
#include <fmt/format.h>

namespace corral_ssh {

PrivateTempFile::PrivateTempFile() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string pattern = (dir / "corral-ssh-XXXXXX").string();
  int fd = ::mkstemp(pattern.data());  // mode 0600, a fresh name: nobody else can have it open
  if (fd < 0)
    throw corral::Error(corral::ErrorCode::internal, fmt::format("cannot create a temporary file in {}", dir.string()),
                        "set TMPDIR to a writable folder");
  ::close(fd);
  path_ = std::move(pattern);
}

PrivateTempFile::~PrivateTempFile() {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

std::string PrivateTempFile::read(size_t limit) const {
  std::ifstream in(path_, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

}  // namespace corral_ssh
