// Reads which symbols an ELF shared library exports, from the file alone, so the loader
// can refuse a library that is no corral plugin before running any of its code.
//
// Boost.DLL's library_info (1.74, what Debian ships) names symbols from whichever string
// table comes last in the file instead of the one the symbol table links to, so it misses
// the entry point of perfectly good plugins (e.g. one that imports pause()). This reads
// the dynamic symbol table with its own string table, which is what dlsym consults.
#pragma once

#include <filesystem>
#include <string_view>

namespace corral {

// True when the library at `path` defines and exports `symbol` (global or weak, default
// or protected visibility) in its dynamic symbol table. Throws std::runtime_error saying
// why when the file is not an ELF shared library for this machine.
bool elf_exports(const std::filesystem::path& path, std::string_view symbol);

}  // namespace corral
