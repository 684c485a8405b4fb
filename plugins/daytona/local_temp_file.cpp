#include "local_temp_file.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "corral/types.hpp"

namespace corral::daytona {

LocalTempFile::LocalTempFile(const std::string& content) {
  std::string pattern = (std::filesystem::temp_directory_path() / "corral-daytona-XXXXXX").string();
  int fd = ::mkstemp(pattern.data());  // mode 0600
  if (fd < 0) throw Error(ErrorCode::internal, "cannot create a temporary file in " + pattern.substr(0, pattern.rfind('/')));
  ::close(fd);
  path_ = pattern;
  std::ofstream out(path_, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out.flush()) throw Error(ErrorCode::internal, "cannot write the temporary file " + path_);
}

LocalTempFile::~LocalTempFile() {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace corral::daytona
