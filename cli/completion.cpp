#include "completion.hpp"

#include <algorithm>
#include <optional>

#include "command.hpp"
#include "completion_scripts.hpp"
#include "options.hpp"

namespace corral::cli {
namespace {

using Words = std::vector<std::string>;

bool is_flag(const std::string& word) { return word.size() > 1 && word[0] == '-'; }

// The visible subcommand of `app` called `name`, or nullptr.
const CLI::App* subcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_group().empty() && sub->get_name() == name) return sub;
  return nullptr;
}

// The option `--name` of the innermost command of `chain` or of one it falls through to.
const CLI::Option* option_of(const std::vector<const CLI::App*>& chain, const std::string& flag) {
  for (auto app = chain.rbegin(); app != chain.rend(); ++app) {
    for (const CLI::Option* o : (*app)->get_options())
      if (!o->get_positional() && o->check_name(flag)) return o;
    if (!(*app)->get_fallthrough()) break;
  }
  return nullptr;
}

// The provider option `flag` ("--local-network") names, or nullptr.
const OptionSpec* provider_option(const Registry& registry, const std::string& flag) {
  for (const ProviderEntry& e : registry.entries())
    if (e.ok())
      for (const OptionSpec& o : e.spec->options)
        if (!o.secret && e.spec->flag(o) == flag) return &o;
  return nullptr;
}

// Where the line stands: the innermost command typed, and whether a "--" ended its flags.
struct Position {
  std::vector<const CLI::App*> chain;
  bool after_dashes = false;
  size_t positionals = 0;  // words given to the innermost command that were not flags
  std::string provider;    // the value of --provider, when given
};

class Completer {
 public:
  Completer(const CLI::App& app, const CompletionSources& sources) : app_(app), sources_(sources) {}

  Words complete(const Words& words) {
    const std::string& typed = words.back();
    const Words before(words.begin(), words.end() - 1);
    const Position at = walk(before);
    if (at.after_dashes) return {};
    // bash splits "--provider=lo" into "--provider", "=", "lo" (and is at "=" right after
    // typing it); other shells keep the word whole.
    if (typed == "=" && !before.empty() && is_flag(before.back())) return values_of(at, before.back());
    if (before.size() >= 2 && before.back() == "=" && is_flag(before[before.size() - 2]))
      return values_of(at, before[before.size() - 2]);
    if (const size_t eq = typed.find('='); is_flag(typed) && eq != std::string::npos) {
      Words out;
      for (const std::string& v : values_of(at, typed.substr(0, eq))) out.push_back(typed.substr(0, eq + 1) + v);
      return out;
    }
    if (!before.empty() && takes_value(at, before.back())) return values_of(at, before.back());
    if (!typed.empty() && typed[0] == '-') return flags(at);
    Words subs;
    for (const CLI::App* sub : at.chain.back()->get_subcommands([](const CLI::App*) { return true; }))
      if (!sub->get_group().empty()) subs.push_back(sub->get_name());
    if (!subs.empty()) return subs;
    return positional_values(at);
  }

 private:
  // The command the words name and what was given to it.
  Position walk(const Words& words) {
    Position at;
    at.chain.push_back(&app_);
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string& w = words[i];
      if (w == "--") {
        at.after_dashes = true;
        break;
      }
      if (is_flag(w)) {
        const size_t eq = w.find('=');
        std::string value;
        if (eq != std::string::npos) {
          value = w.substr(eq + 1);
        } else if (i + 2 < words.size() && words[i + 1] == "=") {
          value = words[i += 2];  // bash's "--flag", "=", "value"
        } else if (takes_value(at, w) && i + 1 < words.size()) {
          value = words[++i];
        }
        if (w.substr(0, eq) == "--provider") at.provider = value;
        continue;
      }
      if (const CLI::App* sub = subcommand(*at.chain.back(), w)) {
        at.chain.push_back(sub);
        at.positionals = 0;
      } else {
        ++at.positionals;
      }
    }
    return at;
  }

  // True when `flag` is followed by its value: one of corral's options, or a provider's.
  bool takes_value(const Position& at, const std::string& flag) {
    if (!is_flag(flag)) return false;
    if (const CLI::Option* o = option_of(at.chain, flag)) return o->get_type_size_max() > 0;
    return provider_flags_apply(at) && provider_option(registry(), flag);
  }

  // True when the innermost command's table row takes --<provider>-<option> flags.
  static bool provider_flags_apply(const Position& at) {
    if (at.chain.size() < 2) return false;
    const std::string name = at.chain.back()->get_name();
    const std::string parent = at.chain.size() > 2 ? at.chain[at.chain.size() - 2]->get_name() : "";
    for (const Command* c : command_table())
      if (c->name == name && c->parent == parent) return c->provider_options;
    return false;
  }

  // What the option `flag` takes, as its value name says.
  Words values_of(const Position& at, const std::string& flag) {
    if (const CLI::Option* o = option_of(at.chain, flag)) return values_named(o->get_type_name());
    if (const OptionSpec* o = provider_flags_apply(at) ? provider_option(registry(), flag) : nullptr)
      return o->choices;
    return {};
  }

  // What the innermost command's next positional takes.
  Words positional_values(const Position& at) {
    size_t seen = 0;
    for (const CLI::Option* o : at.chain.back()->get_options())
      if (o->get_positional() && seen++ == at.positionals) return values_named(o->get_type_name());
    return {};
  }

  Words values_named(const std::string& value_name) {
    if (value_name == kLeaseValue) return sources_.leases();
    if (value_name == kShellValue) return {completion_shells().begin(), completion_shells().end()};
    if (value_name == kNetworkValue) return {"open", "none", "allow:"};
    // A value name that lists the choices: "{auto,never,json}", CLI11's "TEXT:{pause,stop}".
    if (const auto open = value_name.find('{'); open != std::string::npos && value_name.back() == '}') {
      Words choices;
      for (std::size_t start = open + 1; start < value_name.size();) {
        const std::size_t end = value_name.find_first_of(",}", start);
        choices.push_back(value_name.substr(start, end - start));
        start = end + 1;
      }
      return choices;
    }
    if (value_name != kProviderValue) return {};
    Words names;
    for (const ProviderEntry& e : registry().entries()) {
      if (e.ok()) {
        names.push_back(e.spec->name);
        names.insert(names.end(), e.spec->aliases.begin(), e.spec->aliases.end());
      } else if (e.error->cause == LoadFailure::not_probed && !e.meant.empty()) {
        names.push_back(e.meant);  // installed since corral last probed: its name is what its file says
      }
    }
    return names;
  }

  // The flags of the innermost command (and those it falls through to), then providers':
  // only the one --provider names, when it names one.
  Words flags(const Position& at) {
    Words out;
    for (size_t depth = at.chain.size(); depth-- > 0;) {
      for (const CLI::Option* o : at.chain[depth]->get_options())
        for (const std::string& n : o->get_lnames()) out.push_back("--" + n);
      if (!at.chain[depth]->get_fallthrough()) break;
    }
    if (!provider_flags_apply(at)) return out;
    const ProviderEntry* chosen = at.provider.empty() ? nullptr : registry().find(at.provider);
    for (const ProviderEntry& e : registry().entries())
      if (e.ok() && (!chosen || &e == chosen))
        for (const OptionSpec& o : e.spec->options)
          if (!o.secret) out.push_back(e.spec->flag(o));
    return out;
  }

  const Registry& registry() { return sources_.registry(); }

  const CLI::App& app_;
  const CompletionSources& sources_;
};

}  // namespace

Words complete_words(const CLI::App& app, const Words& words, const CompletionSources& sources) {
  if (words.empty()) return {};
  Words out = Completer(app, sources).complete(words);
  const std::string prefix = words.back() == "=" ? std::string() : words.back();
  std::erase_if(out, [&](const std::string& w) { return w.rfind(prefix, 0) != 0; });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Words kept_lease_names(const ClaimStore& claims) {
  Words out;
  for (const Claim& c : claims.all())
    if (c.kept) {
      if (!c.slug.empty()) out.push_back(c.slug);
      out.push_back(c.lease_id);
    }
  return out;
}

}  // namespace corral::cli
