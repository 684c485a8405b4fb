#include "markdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "roff.hpp"

namespace corral::cli::man {
namespace {

using Lines = std::vector<std::string_view>;

Lines split_lines(std::string_view text) {
  Lines lines;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return lines;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Running text with its inline markup as fonts, as one roff line; links keep their text.
std::string inline_text(std::string_view text) {
  std::string out;
  std::string plain;  // escaped whole, so a UTF-8 sequence is never split
  auto flush = [&] {
    out += escape_chars(plain);
    plain.clear();
  };
  size_t i = 0;
  auto span = [&](std::string_view close, const char* font) {
    const size_t open = close.size();
    const size_t end = text.find(close, i + open);
    if (end == std::string_view::npos) return false;
    flush();
    out += fmt::format("\\f{}{}\\fR", font, escape_chars(text.substr(i + open, end - i - open)));
    i = end + close.size();
    return true;
  };
  while (i < text.size()) {
    if (text[i] == '`' && span("`", "B")) continue;
    if (starts_with(text.substr(i), "**") && span("**", "B")) continue;
    if (text[i] == '[') {
      const size_t close = text.find("](", i);
      const size_t end = close == std::string_view::npos ? close : text.find(')', close);
      if (end != std::string_view::npos) {
        flush();
        out += inline_text(text.substr(i + 1, close - i - 1));
        i = end + 1;
        continue;
      }
    }
    plain += text[i++];
  }
  flush();
  // The line must not start a request.
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

// The cells of a table row; "|" inside `code` or escaped as "\\|" is text.
std::vector<std::string> table_cells(std::string_view row) {
  row = trim(row);
  if (starts_with(row, "|")) row.remove_prefix(1);
  if (!row.empty() && row.back() == '|' && !(row.size() > 1 && row[row.size() - 2] == '\\')) row.remove_suffix(1);
  std::vector<std::string> cells;
  std::string cell;
  bool in_code = false;
  for (size_t i = 0; i <= row.size(); ++i) {
    if (i == row.size() || (row[i] == '|' && !in_code)) {
      cells.emplace_back(trim(cell));
      cell.clear();
      continue;
    }
    if (row[i] == '`') in_code = !in_code;
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') ++i;
    cell += row[i];
  }
  return cells;
}

class Converter {
 public:
  explicit Converter(std::string_view markdown) : lines_(split_lines(markdown)) {}

  std::string run() {
    while (i_ < lines_.size()) {
      const std::string_view line = lines_[i_];
      if (blank(line)) {
        ++i_;
      } else if (starts_with(line, "```")) {
        fenced_code();
      } else if (starts_with(line, "    ")) {
        indented_code();
      } else if (starts_with(line, "#")) {
        heading(line);
      } else if (starts_with(line, "|")) {
        table();
      } else if (starts_with(line, "- ")) {
        list_item();
      } else {
        paragraph();
      }
    }
    return out_;
  }

 private:
  void heading(std::string_view line) {
    const size_t level = line.find_first_not_of('#');
    const std::string text = inline_text(trim(line.substr(level)));
    if (level == 2) out_ += fmt::format(".SH \"{}\"\n", text);
    if (level >= 3) out_ += fmt::format(".SS \"{}\"\n", text);
    ++i_;
  }

  void code_lines(const Lines& code) {
    out_ += ".PP\n.RS 4\n.nf\n";
    for (std::string_view l : code) out_ += "\\&" + escape_chars(l) + "\n";
    out_ += ".fi\n.RE\n";
  }

  void fenced_code() {
    Lines code;
    for (++i_; i_ < lines_.size() && !starts_with(lines_[i_], "```"); ++i_) code.push_back(lines_[i_]);
    ++i_;
    code_lines(code);
  }

  void indented_code() {
    Lines code;
    for (; i_ < lines_.size() && (starts_with(lines_[i_], "    ") || blank(lines_[i_])); ++i_)
      code.push_back(blank(lines_[i_]) ? std::string_view() : lines_[i_].substr(4));
    while (!code.empty() && code.back().empty()) code.pop_back();
    code_lines(code);
  }

  // A row per tagged paragraph: the first cell the tag, the others "header: cell".
  void table() {
    const std::vector<std::string> header = table_cells(lines_[i_]);
    i_ += 2;  // the header and its |---| line
    for (; i_ < lines_.size() && starts_with(trim(lines_[i_]), "|"); ++i_) {
      const std::vector<std::string> cells = table_cells(lines_[i_]);
      out_ += fmt::format(".TP\n{}\n", cells.empty() || cells[0].empty() ? "\\&" : inline_text(cells[0]));
      for (size_t c = 1; c < cells.size(); ++c) {
        const std::string name = c < header.size() ? header[c] : std::string();
        out_ += name.empty() ? "" : inline_text(name) + ": ";
        out_ += inline_text(cells[c]) + (c + 1 < cells.size() ? ";\n" : "\n");
      }
    }
  }

  // Lines of running text up to a blank line or the next block; a `list` item's first line
  // loses its "- ", and its indented lines belong to it.
  void running_text(bool list) {
    std::string text;
    for (bool first = true; i_ < lines_.size(); ++i_, first = false) {
      const std::string_view line = lines_[i_];
      if (blank(line) || starts_with(line, "```") || starts_with(line, "#") || starts_with(line, "|")) break;
      if (!first && starts_with(line, "- ")) break;
      if (!first && !list && starts_with(line, "    ")) break;
      text += (first ? "" : " ") + std::string(trim(first && list ? line.substr(2) : line));
    }
    out_ += inline_text(text) + "\n";
  }

  void list_item() {
    out_ += ".IP \\(bu 2\n";
    running_text(true);
  }

  void paragraph() {
    out_ += ".PP\n";
    running_text(false);
  }

  Lines lines_;
  size_t i_ = 0;
  std::string out_;
};

}  // namespace

std::string markdown_to_roff(std::string_view markdown) { return Converter(markdown).run(); }

std::string_view from_heading(std::string_view markdown, std::string_view heading) {
  const std::string line = fmt::format("## {}\n", heading);
  size_t at = markdown.find(line);
  while (at != std::string_view::npos && at > 0 && markdown[at - 1] != '\n') at = markdown.find(line, at + 1);
  return at == std::string_view::npos ? std::string_view() : markdown.substr(at);
}

}  // namespace corral::cli::man
