#include "selectors.hpp"

#include <algorithm>
#include <cctype>

#include "names.hpp"

namespace corral::kubernetes::standin {
namespace {

// The label selector lexer's tokens (labels/selector.go).
struct Token {
  enum class Kind { end, identifier, comma, open, close, bang, equals, double_equals, not_equals, in, not_in, greater, less };
  Kind kind = Kind::end;
  std::string text;
};

bool special(char c) { return c == '!' || c == '=' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<'; }

std::vector<Token> lex(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    using K = Token::Kind;
    if (c == ',') out.push_back({K::comma, ","}), ++i;
    else if (c == '(') out.push_back({K::open, "("}), ++i;
    else if (c == ')') out.push_back({K::close, ")"}), ++i;
    else if (c == '>') out.push_back({K::greater, ">"}), ++i;
    else if (c == '<') out.push_back({K::less, "<"}), ++i;
    else if (c == '!' && i + 1 < s.size() && s[i + 1] == '=') out.push_back({K::not_equals, "!="}), i += 2;
    else if (c == '!') out.push_back({K::bang, "!"}), ++i;
    else if (c == '=' && i + 1 < s.size() && s[i + 1] == '=') out.push_back({K::double_equals, "=="}), i += 2;
    else if (c == '=') out.push_back({K::equals, "="}), ++i;
    else {
      size_t j = i;
      while (j < s.size() && !special(s[j]) && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      std::string word = s.substr(i, j - i);
      Token::Kind kind = word == "in" ? K::in : word == "notin" ? K::not_in : K::identifier;
      out.push_back({kind, word});
      i = j;
    }
  }
  out.push_back({Token::Kind::end, ""});
  return out;
}

[[noreturn]] void fail(const std::string& detail) { throw SelectorError("unable to parse requirement: " + detail); }

void check_key(const std::string& key) {
  auto errors = qualified_name_errors(key);
  if (!errors.empty()) fail("key: Invalid value: " + go_quote(key) + ": " + errors.front());
}

void check_value(const std::string& value) {
  auto errors = label_value_errors(value);
  if (!errors.empty()) fail("values[0][" + value + "]: Invalid value: " + go_quote(value) + ": " + errors.front());
}

bool is_integer(const std::string& s) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  return i < s.size() && std::all_of(s.begin() + static_cast<long>(i), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

bool LabelRequirement::matches(const Labels& labels) const {
  auto it = labels.find(key);
  const bool has = it != labels.end();
  auto listed = [&] { return has && std::find(values.begin(), values.end(), it->second) != values.end(); };
  switch (op) {
    case Op::equals:
    case Op::in: return listed();
    case Op::not_equals:
    case Op::not_in: return !listed();
    case Op::exists: return has;
    case Op::does_not_exist: return !has;
    case Op::greater:
    case Op::less:
      if (!has || !is_integer(it->second)) return false;
      return op == Op::greater ? std::stoll(it->second) > std::stoll(values[0])
                               : std::stoll(it->second) < std::stoll(values[0]);
  }
  return false;
}

bool LabelSelector::matches(const Labels& labels) const {
  return std::all_of(requirements.begin(), requirements.end(), [&](const auto& r) { return r.matches(labels); });
}

LabelSelector LabelSelector::parse(const std::string& text) {
  using K = Token::Kind;
  using Op = LabelRequirement::Op;
  const std::vector<Token> tokens = lex(text);
  LabelSelector out;
  size_t at = 0;
  if (tokens[at].kind == K::end) return out;
  for (;;) {
    LabelRequirement r;
    if (tokens[at].kind == K::bang) {
      ++at;
      if (tokens[at].kind != K::identifier) fail("found '" + tokens[at].text + "', expected: identifier after '!'");
      r.key = tokens[at++].text;
      r.op = Op::does_not_exist;
      check_key(r.key);
    } else {
      if (tokens[at].kind != K::identifier) fail("found '" + tokens[at].text + "', expected: !, identifier, or 'end of string'");
      r.key = tokens[at++].text;
      check_key(r.key);
      switch (tokens[at].kind) {
        case K::comma:
        case K::end: r.op = Op::exists; break;
        case K::equals:
        case K::double_equals:
        case K::not_equals:
        case K::greater:
        case K::less: {
          const K kind = tokens[at++].kind;
          r.op = kind == K::not_equals ? Op::not_equals : kind == K::greater ? Op::greater : kind == K::less ? Op::less : Op::equals;
          std::string value;
          if (tokens[at].kind == K::identifier) value = tokens[at++].text;
          else if (tokens[at].kind != K::comma && tokens[at].kind != K::end)
            fail("found '" + tokens[at].text + "', expected: identifier");
          if ((r.op == Op::greater || r.op == Op::less) && !is_integer(value))
            fail("for 'Gt', 'Lt' operators, the value must be an integer");
          if (r.op != Op::greater && r.op != Op::less) check_value(value);
          r.values.push_back(value);
          break;
        }
        case K::in:
        case K::not_in: {
          r.op = tokens[at++].kind == K::in ? Op::in : Op::not_in;
          if (tokens[at].kind != K::open) fail("found '" + tokens[at].text + "', expected: '('");
          ++at;
          for (;;) {
            if (tokens[at].kind == K::identifier) {
              check_value(tokens[at].text);
              r.values.push_back(tokens[at++].text);
            } else if (tokens[at].kind == K::comma || tokens[at].kind == K::close) {
              r.values.push_back("");  // an empty value between separators
            } else {
              fail("found '" + tokens[at].text + "', expected: ',', ')' or identifier");
            }
            if (tokens[at].kind == K::close) break;
            if (tokens[at].kind != K::comma) fail("found '" + tokens[at].text + "', expected: ',' or ')'");
            ++at;
          }
          ++at;
          break;
        }
        default: fail("found '" + tokens[at].text + "', expected: in, notin, =, ==, !=, gt, lt");
      }
    }
    out.requirements.push_back(std::move(r));
    if (tokens[at].kind == K::end) break;
    if (tokens[at].kind != K::comma) fail("found '" + tokens[at].text + "', expected: ',' or 'end of string'");
    ++at;
  }
  return out;
}

bool FieldSelector::matches(const std::function<std::optional<std::string>(const std::string&)>& value_of) const {
  for (const auto& r : requirements) {
    auto v = value_of(r.field);
    if (!v) return false;
    if ((*v == r.value) == r.negated) return false;
  }
  return true;
}

FieldSelector FieldSelector::parse(const std::string& text) {
  FieldSelector out;
  if (text.empty()) return out;
  // Split on unescaped commas, then on the first unescaped = / == / !=.
  std::vector<std::string> parts;
  std::string current;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      current += text[i];
      current += text[++i];
    } else if (text[i] == ',') {
      parts.push_back(current);
      current.clear();
    } else {
      current += text[i];
    }
  }
  parts.push_back(current);
  auto unescape = [](const std::string& s) {
    std::string r;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        const char n = s[i + 1];
        if (n != '\\' && n != ',' && n != '=' && n != '!') throw SelectorError("invalid field selector: invalid escape sequence: \\" + std::string(1, n));
        r += n;
        ++i;
      } else {
        r += s[i];
      }
    }
    return r;
  };
  for (const auto& part : parts) {
    size_t op = std::string::npos;
    for (size_t i = 0; i < part.size(); ++i) {
      if (part[i] == '\\') {
        ++i;
        continue;
      }
      if (part[i] == '=' || (part[i] == '!' && i + 1 < part.size() && part[i + 1] == '=')) {
        op = i;
        break;
      }
    }
    if (op == std::string::npos) throw SelectorError("invalid selector: '" + text + "'; can't understand '" + part + "'");
    FieldRequirement r;
    r.field = unescape(part.substr(0, op));
    size_t value_at = op + 1;
    if (part[op] == '!') r.negated = true, value_at = op + 2;
    else if (value_at < part.size() && part[value_at] == '=') ++value_at;
    r.value = unescape(part.substr(value_at));
    out.requirements.push_back(std::move(r));
  }
  return out;
}

}  // namespace corral::kubernetes::standin
