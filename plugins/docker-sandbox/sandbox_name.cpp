#include "sandbox_name.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>

#include "corral/wire.hpp"

namespace corral::docker_sandbox {
namespace {

constexpr std::string_view kPrefix = "corral-";
constexpr size_t kHashTagLength = 8;   // FNV-1a of a lease id of another form
constexpr size_t kLeaseIdLength = 12;  // corral's own lease ids: 12 lower-case hex digits
constexpr size_t kMaxSlug = 40;

bool is_lower_hex(char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'); }

bool all_lower_hex(std::string_view text) {
  for (char c : text)
    if (!is_lower_hex(c)) return false;
  return true;
}

// True when `lease_id` is one corral makes, so the name can carry it whole.
bool carries_whole(std::string_view lease_id) {
  return lease_id.size() == kLeaseIdLength && all_lower_hex(lease_id);
}

// The tag after the slug: "-" then the tag, at the end of `name`, or empty.
std::string_view tag_of(std::string_view name) {
  for (size_t length : {kLeaseIdLength, kHashTagLength}) {
    if (name.size() < kPrefix.size() + 2 + length) continue;
    std::string_view tag = name.substr(name.size() - length);
    if (name[name.size() - length - 1] == '-' && all_lower_hex(tag)) return tag;
  }
  return {};
}

}  // namespace

std::string clean_slug(std::string_view slug) {
  std::string out;
  for (char raw : slug) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(raw)));
    bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0 && static_cast<unsigned char>(c) < 0x80;
    if (keep) out += c;
    else if (!out.empty() && out.back() != '-') out += '-';  // one '-' per run of others
    if (out.size() >= kMaxSlug) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "run" : out;
}

std::string lease_tag(std::string_view lease_id) {
  if (carries_whole(lease_id)) return std::string(lease_id);
  // FNV-1a: a stable, dependency-free fingerprint; it only needs to tell leases apart.
  std::uint32_t h = 2166136261u;
  for (char c : lease_id) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  char buf[kHashTagLength + 1];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return buf;
}

std::string sandbox_name(std::string_view slug, std::string_view lease_id) {
  return std::string(kPrefix) + clean_slug(slug) + "-" + lease_tag(lease_id);
}

std::optional<NameParts> parse_sandbox_name(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view tag = tag_of(name);
  if (tag.empty()) return std::nullopt;
  std::string_view slug = name.substr(kPrefix.size(), name.size() - kPrefix.size() - tag.size() - 1);
  // The slug must be one clean_slug could have produced, or the name is not ours.
  if (slug.empty() || clean_slug(slug) != slug) return std::nullopt;
  return NameParts{std::string(slug), std::string(tag)};
}

StringMap labels_of(const NameParts& parts) {
  StringMap labels = {{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kSlugLabel, parts.slug}};
  // A whole lease id lets `stop --orphans` see that a corral is still creating it.
  if (carries_whole(parts.tag)) labels[wire::kLeaseLabel] = parts.tag;
  return labels;
}

bool name_matches(const NameParts& parts, const StringMap& wanted) {
  for (const auto& [key, value] : wanted) {
    if (key == wire::kOwnerLabel) {
      if (value != wire::kOwnerValue) return false;
    } else if (key == wire::kSlugLabel) {
      if (clean_slug(value) != parts.slug) return false;
    } else if (key == wire::kLeaseLabel) {
      if (lease_tag(value) != parts.tag) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace corral::docker_sandbox
