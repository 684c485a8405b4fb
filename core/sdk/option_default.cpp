#include "corral/option_default.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

struct XdgVariable {
  std::string_view name;
  const char* fallback;  // under $HOME
};
constexpr XdgVariable kXdg[] = {
    {"XDG_STATE_HOME", ".local/state"}, {"XDG_CONFIG_HOME", ".config"}, {"XDG_CACHE_HOME", ".cache"}};

// "${NAME}".
std::string reference(const XdgVariable& x) { return "${" + std::string(x.name) + "}"; }

// The XDG variable `value` starts with as "${NAME}" (followed by "/" or nothing), if any.
const XdgVariable* leading_xdg(std::string_view value) {
  for (const XdgVariable& x : kXdg) {
    const std::string ref = reference(x);
    if (value.substr(0, ref.size()) == ref && (value.size() == ref.size() || value[ref.size()] == '/')) return &x;
  }
  return nullptr;
}

}  // namespace

fs::path xdg_folder(std::string_view name, const EnvFn& env) {
  for (const XdgVariable& x : kXdg) {
    if (x.name != name) continue;
    std::optional<std::string> value = env(std::string(name));
    if (value && !value->empty() && (*value)[0] == '/') return fs::path(*value);
    std::optional<std::string> home = env("HOME");
    return (home && !home->empty() ? fs::path(*home) : fs::path("/")) / x.fallback;
  }
  throw Error(ErrorCode::internal, "no XDG folder called " + std::string(name));
}

void check_option_default(const OptionSpec& option) {
  if (!option.default_value) return;
  const std::string& value = *option.default_value;
  const XdgVariable* x = leading_xdg(value);
  const size_t rest = x ? reference(*x).size() : 0;
  std::string why;
  if (value.find("${", rest) != std::string::npos)
    why = "a default may use ${XDG_STATE_HOME}, ${XDG_CONFIG_HOME} or ${XDG_CACHE_HOME} only at its start, "
          "followed by / or nothing";
  else if (x && option.type != "path")
    why = "only an option of type path may default to an XDG folder";
  if (!why.empty())
    throw Error(ErrorCode::invalid_argument,
                "option '" + option.name + "' has the default '" + value + "': " + why);
}

std::string expand_option_default(const std::string& value, const EnvFn& env) {
  const XdgVariable* x = leading_xdg(value);
  if (!x) return value;
  return (xdg_folder(x->name, env).string() + value.substr(reference(*x).size()));
}

}  // namespace corral
