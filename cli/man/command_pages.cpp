#include "command_pages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "roff.hpp"

namespace corral::cli::man {
namespace {

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

// "corral providers describe": the command as it is typed.
std::string typed_name(const CLI::App& app) {
  return app.get_parent() ? typed_name(*app.get_parent()) + " " + app.get_name() : app.get_name();
}

std::string page_name(const CLI::App& app) {
  std::string name = typed_name(app);
  std::replace(name.begin(), name.end(), ' ', '-');
  return name;
}

bool takes_value(const CLI::Option& o) { return o.get_type_size_max() > 0; }

// `text`'s paragraphs (apart by a blank line) as roff ones, each one's lines joined: man
// fills them to the reader's width, where --help's own breaks would leave ragged lines.
std::string paragraphs(std::string text) {
  std::string out;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find("\n\n", start);
    if (end == std::string::npos) end = text.size();
    std::string paragraph = text.substr(start, end - start);
    std::replace(paragraph.begin(), paragraph.end(), '\n', ' ');
    if (!paragraph.empty()) out += (out.empty() ? "" : "\n.PP\n") + paragraph;
    start = end + 2;
  }
  return out;
}

// "-h, --help" or "--id LEASE", bold flags and an italic value name.
std::string option_tag(const CLI::Option& o) {
  std::vector<std::string> names;
  for (const std::string& n : o.get_snames()) names.push_back(fmt::format("\\fB{}\\fR", escape("-" + n)));
  for (const std::string& n : o.get_lnames()) names.push_back(fmt::format("\\fB{}\\fR", escape("--" + n)));
  std::string tag = fmt::format("{}", fmt::join(names, ", "));
  if (takes_value(o)) tag += fmt::format(" \\fI{}\\fR", escape(o.get_type_name()));
  return tag;
}

std::string describe(const CLI::Option& o) {
  std::string text = escape(o.get_description());
  if (!o.get_default_str().empty()) text += fmt::format(" (default: {})", escape(o.get_default_str()));
  return text + "\n";
}

std::string synopsis(const CLI::App& app) {
  std::string s = fmt::format(".B {}\n[\\fIOPTIONS\\fR]\n", escape(typed_name(app)));
  for (const CLI::Option* o : app.get_options()) {
    if (!o->get_positional()) continue;
    std::string name = escape(o->get_type_name() == "TEXT" ? o->get_name(true) : o->get_type_name());
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (o->get_expected_max() > 1) name += "\\&...";
    s += o->get_required() ? fmt::format("\\fI{}\\fR\n", name) : fmt::format("[\\fI{}\\fR]\n", name);
  }
  if (!visible_subcommands(app).empty())
    s += app.get_require_subcommand_min() > 0 ? "\\fICOMMAND\\fR\n" : "[\\fICOMMAND\\fR]\n";
  return s;
}

std::string options_section(const CLI::App& app) {
  std::string s;
  for (bool positional : {true, false}) {
    std::string items;
    for (const CLI::Option* o : app.get_options()) {
      if (o->get_positional() != positional) continue;
      items += ".TP\n";
      items += positional ? fmt::format("\\fI{}\\fR\n", escape(o->get_name(true))) : option_tag(*o) + "\n";
      items += describe(*o);
    }
    if (!items.empty()) s += (positional ? ".SH ARGUMENTS\n" : ".SH OPTIONS\n") + items;
  }
  return s;
}

std::string commands_section(const CLI::App& app) {
  std::string s;
  for (const CLI::App* sub : visible_subcommands(app))
    s += fmt::format(".TP\n\\fB{}\\fR\n{} (\\fB{}\\fR(1))\n", escape(sub->get_name()), escape(sub->get_description()),
                     escape(page_name(*sub)));
  return s.empty() ? s : ".SH COMMANDS\n" + s;
}

// Every page but `self`'s, each once: corral(1)'s see-also names them all.
void see_also(const CLI::App& app, const CLI::App& self, std::vector<std::string>& refs) {
  if (&app != &self) refs.push_back(fmt::format("\\fB{}\\fR(1)", escape(page_name(app))));
  for (const CLI::App* sub : visible_subcommands(app)) see_also(*sub, self, refs);
}

void add_pages(const CLI::App& app, std::string_view version, std::vector<Page>& pages) {
  std::string roff = heading(page_name(app), 1, version, "corral's command table (cli/commands/)");
  std::string summary = app.get_description();
  if (const std::string own = app.get_name() + ": "; summary.rfind(own, 0) == 0) summary.erase(0, own.size());
  roff += fmt::format(".SH NAME\n{} \\- {}\n", escape(page_name(app)), escape(summary));
  roff += ".SH SYNOPSIS\n" + synopsis(app);
  std::string details = app.get_footer();
  while (!details.empty() && details.back() == '\n') details.pop_back();
  if (!details.empty()) roff += ".SH DESCRIPTION\n" + paragraphs(escape(details)) + "\n";
  roff += options_section(app) + commands_section(app);
  std::vector<std::string> refs;
  if (app.get_parent()) {
    refs.push_back("\\fBcorral\\fR(1)");
  } else {
    see_also(app, app, refs);
    refs.push_back("\\fBcorral\\-plugin\\fR(7)");
  }
  roff += fmt::format(".SH SEE ALSO\n{}\n", fmt::join(refs, ",\n"));
  pages.push_back({page_name(app), 1, std::move(roff)});
  for (const CLI::App* sub : visible_subcommands(app)) add_pages(*sub, version, pages);
}

}  // namespace

std::vector<Page> command_pages(const CLI::App& app, std::string_view version) {
  std::vector<Page> pages;
  add_pages(app, version, pages);
  return pages;
}

}  // namespace corral::cli::man
