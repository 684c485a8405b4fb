#include "provider_cli.hpp"

namespace corral::test {

ProviderCli::ProviderCli(std::string provider) : provider_(std::move(provider)) {
  cli.root().write("work/hello.txt", "hello from the workspace\n");
  cli.root().write("work/src/main.c", "int main(void) { return 0; }\n");
}

ProviderCli::~ProviderCli() {
  for (const auto& c : cli.claims()) seen.push_back(read_file(c));
  for (const auto& text : seen)
    for (const auto& secret : secrets) CHECK_MESSAGE(text.find(secret) == std::string::npos, "a secret leaked");
}

CliResult ProviderCli::run(std::vector<std::string> args, const std::string& cwd) {
  CliResult r = cli.run(args, cwd);
  seen.push_back(r.out);
  seen.push_back(r.err);
  return r;
}

std::vector<std::string> ProviderCli::script_args(const std::string& script, std::vector<std::string> flags) const {
  std::vector<std::string> args = {"run", "--provider", provider_, "--lease-output", handle_path()};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--", "sh", "-c", script});
  return args;
}

CliResult ProviderCli::run_script(const std::string& script, std::vector<std::string> flags) {
  return run(script_args(script, std::move(flags)));
}

std::string ProviderCli::handle_path() const { return (cli.root().path() / "handle.json").string(); }

json::Document ProviderCli::handle() {
  std::string text = read_file(handle_path());
  seen.push_back(text);
  REQUIRE_MESSAGE(!text.empty(), "no session handle was written");
  return json::parse(text, "handle");
}

}  // namespace corral::test
