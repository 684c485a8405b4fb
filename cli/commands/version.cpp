// `corral version`: corral's version and the plugin ABI it loads; needs no settings.
#include <iostream>

#include "commands/commands.hpp"
#include "corral/plugin_abi.h"

#ifndef CORRAL_VERSION
#define CORRAL_VERSION "0.0.0"
#endif

namespace corral::cli {
namespace {

Runner define(CLI::App&) {
  return [](Context&) {
    std::cout << version_line() << "\n";
    return 0;
  };
}

}  // namespace

std::string version_number() { return CORRAL_VERSION; }

std::string version_line() {
  return std::string("corral ") + CORRAL_VERSION + " (plugin ABI " + std::to_string(CORRAL_ABI_VERSION) + ")";
}

const Command kVersion = {
    .name = "version",
    .summary = "Print corral's version",
    .needs_settings = false,
    .define = define,
};

}  // namespace corral::cli
