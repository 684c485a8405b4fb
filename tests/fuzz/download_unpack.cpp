// A download archive comes from the sandbox: whatever its bytes, unpacking writes only
// inside the download folder, never a setuid file, and every link it leaves there
// resolves inside the folder (a loop resolves nowhere). Each input (a tar, gzipped or
// not) is unpacked into a fresh folder, bounded to 1 MiB of content.
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "corral/errors.hpp"
#include "workspace/downloads.hpp"
#include "link_escape.hpp"

namespace fs = std::filesystem;

namespace {

// A private folder for the whole run, removed at exit: one input's files never meet the next's.
struct Scratch {
  fs::path dir;
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "corral-fuzz-unpack-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) std::abort();
    dir = fs::canonical(pattern);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Scratch scratch;
  const fs::path input = scratch.dir / "input.tar.gz";
  const fs::path box = scratch.dir / "box";  // holds only the download folder afterwards
  const fs::path dir = box / "dl";
  std::error_code ec;
  fs::remove_all(box, ec);
  fs::create_directories(dir);
  std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    corral::unpack_download(input, {dir}, 1 << 20, {});
  } catch (const corral::Error&) {
  }
  for (const auto& e : fs::directory_iterator(box))
    if (e.path() != dir) std::abort();  // written beside the folder
  for (const auto& e : fs::directory_iterator(scratch.dir))
    if (e.path() != input && e.path() != box) std::abort();
  if (!corral::test::link_leading_out(dir).empty()) std::abort();
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) std::abort();
    if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)) != 0) std::abort();
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) std::abort();  // a fifo, a device
  }
  return 0;
}
