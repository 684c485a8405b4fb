#include "lease/slug.hpp"

#include <array>
#include <string_view>

#include "base/hash.hpp"

namespace corral {
namespace {

constexpr std::array<std::string_view, 48> kAdjectives = {
    "amber", "bold",  "brave", "brisk", "calm",  "clever", "cosy",  "crisp", "dapper", "eager", "fair",  "fancy",
    "gentle", "glad", "grand", "happy", "hardy", "humble", "jolly", "keen",  "kind",   "lively", "lucky", "merry",
    "mellow", "neat", "nimble", "noble", "plucky", "polite", "proud", "quick", "quiet", "rapid", "shiny", "silent",
    "snug",  "spry",  "steady", "sunny", "swift", "tidy",  "trusty", "vivid", "warm",  "witty", "zesty", "zen"};

constexpr std::array<std::string_view, 48> kNouns = {
    "badger", "beaver", "bison",  "camel", "cobra",  "condor", "crane",  "dingo", "eagle",  "falcon", "ferret", "finch",
    "gecko",  "heron",  "ibis",   "jackal", "koala", "lemur",  "llama",  "lynx",  "marmot", "marten", "mole",   "moose",
    "newt",   "ocelot", "okapi",  "orca",  "osprey", "otter",  "panda",  "puffin", "quail", "raven",  "robin",  "salmon",
    "seal",   "shrew",  "skunk",  "sloth", "stoat",  "swan",   "tapir",  "toad",  "vole",   "walrus", "wombat", "yak"};

}  // namespace

std::string make_slug(const std::function<bool(const std::string&)>& taken,
                      const std::function<unsigned(unsigned bound)>& random) {
  std::string slug;
  for (int attempt = 0; attempt < 16; ++attempt) {
    slug = std::string(kAdjectives[random(kAdjectives.size())]) + "-" + std::string(kNouns[random(kNouns.size())]);
    if (!taken(slug)) return slug;
  }
  for (unsigned n = 2;; ++n) {
    std::string candidate = slug + "-" + std::to_string(n);
    if (!taken(candidate)) return candidate;
  }
}

std::string make_slug(const std::function<bool(const std::string&)>& taken) {
  return make_slug(taken, [](unsigned bound) {
    unsigned long v = std::stoul(random_hex(4), nullptr, 16);
    return static_cast<unsigned>(v % bound);
  });
}

}  // namespace corral
