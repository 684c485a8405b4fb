#include "plugin_host/elf_exports.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace corral {
namespace {

#if defined(__x86_64__)
constexpr Elf64_Half kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr Elf64_Half kMachine = EM_AARCH64;
#else
#error "elf_exports: add this machine's EM_ value"
#endif

// Reads `count` objects of T at `offset`; throws when the file is shorter than its
// headers say (a truncated or forged file).
template <typename T>
std::vector<T> read_at(std::ifstream& in, std::uint64_t offset, std::uint64_t count, const char* what) {
  constexpr std::uint64_t kLimit = 64u << 20;  // no real table comes near; a forged size could
  if (count > kLimit / sizeof(T)) throw std::runtime_error(fmt::format("its {} is implausibly large", what));
  std::vector<T> out(count);
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(count * sizeof(T)));
  if (!in) throw std::runtime_error(fmt::format("its {} lies beyond the end of the file", what));
  return out;
}

}  // namespace

bool elf_exports(const std::filesystem::path& path, std::string_view symbol) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot be opened");
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  if (!in || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) throw std::runtime_error("not an ELF file");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    throw std::runtime_error("not a 64-bit little-endian ELF file");
  if (header.e_type != ET_DYN) throw std::runtime_error(fmt::format("ELF type {}, not a shared library", header.e_type));
  if (header.e_machine != kMachine)
    throw std::runtime_error(fmt::format("built for ELF machine {}, this is {}", header.e_machine, kMachine));
  if (header.e_shentsize != sizeof(Elf64_Shdr)) throw std::runtime_error("unexpected section header size");

  auto sections = read_at<Elf64_Shdr>(in, header.e_shoff, header.e_shnum, "section table");
  for (const Elf64_Shdr& table : sections) {
    if (table.sh_type != SHT_DYNSYM) continue;
    if (table.sh_link >= sections.size()) throw std::runtime_error("its symbol table links to no string table");
    const Elf64_Shdr& strings_header = sections[table.sh_link];
    auto strings = read_at<char>(in, strings_header.sh_offset, strings_header.sh_size, "string table");
    auto symbols = read_at<Elf64_Sym>(in, table.sh_offset, table.sh_size / sizeof(Elf64_Sym), "symbol table");
    for (const Elf64_Sym& s : symbols) {
      if (s.st_shndx == SHN_UNDEF || s.st_name >= strings.size()) continue;  // imported, or a broken name
      const unsigned char bind = ELF64_ST_BIND(s.st_info), visibility = ELF64_ST_VISIBILITY(s.st_other);
      if ((bind != STB_GLOBAL && bind != STB_WEAK) || (visibility != STV_DEFAULT && visibility != STV_PROTECTED))
        continue;
      const char* name = strings.data() + s.st_name;
      if (std::string_view(name, strnlen(name, strings.size() - s.st_name)) == symbol) return true;
    }
    return false;
  }
  return false;  // no dynamic symbols at all: it exports nothing
}

}  // namespace corral
