// The life of a stand-in run on its own (for a provider's official SDK check, a benchmark,
// a manual try): "--flag value" pairs on its command line, one line saying where it
// serves, then serving until SIGINT or SIGTERM.
//
// Threads: call serve_standin from main, before any other thread starts.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace corral::test {

// What each flag of a stand-in's command line sets, by the flag ("--port").
using StandinFlags = std::map<std::string, std::function<void(const char* value)>>;

// A setter that reads the flag's value as a number (atoi), and one that keeps it as text.
std::function<void(const char*)> number_flag(int& target);
std::function<void(const char*)> text_flag(std::string& target);

// Prints `usage` to stderr; 64, the exit status of a command line that cannot be read.
int usage_error(std::string_view usage);

// Runs a stand-in from its command line. Each "--flag value" pair goes to its setter in
// `flags` (a lone last argument is left alone); any other flag is usage_error(usage).
// Then `start` makes the stand-in, prints where it serves and returns what keeps it
// alive, with SIGINT and SIGTERM blocked (its server threads inherit the mask, so neither
// ends one of them) and SIGPIPE ignored; it serves until one of the two arrives. Returns
// main's exit status.
int serve_standin(int argc, char** argv, std::string_view usage, const StandinFlags& flags,
                  const std::function<std::shared_ptr<void>()>& start);

}  // namespace corral::test
