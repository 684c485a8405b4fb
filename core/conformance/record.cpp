#include "conformance/record.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidjson/prettywriter.h>

#include <algorithm>
#include <ctime>

#include "base/hash.hpp"
#include "base/printable.hpp"
#include "conformance/checks/checks.hpp"
#include "corral/errors.hpp"
#include "corral/json.hpp"
#include "corral/os/read_file.hpp"

namespace corral {

namespace {

constexpr int kRecordFormat = 1;  // "record": bumped when a field changes meaning

using conformance::CheckDef;

// The verdict of the checks `covers` picks among those `spec` takes, from their outcomes in `report`.
template <class Covers>
Verdict verdict_of(const ConformanceReport& report, const ProviderSpec& spec, Covers covers) {
  bool any = false, all_passed = true;
  for (const CheckDef& def : conformance::all_checks()) {
    // A check skipped because another feature is not advertised tells nothing of this one.
    if (!conformance::missing_features(def, spec).empty() || !covers(def)) continue;
    any = true;
    auto ran = std::find_if(report.checks.begin(), report.checks.end(),
                            [&](const CheckResult& c) { return c.id == def.id; });
    if (ran != report.checks.end() && ran->outcome == CheckResult::Outcome::failed) return Verdict::failed;
    if (ran == report.checks.end() || ran->outcome != CheckResult::Outcome::passed) all_passed = false;
  }
  if (!any) return Verdict::not_checkable;
  return all_passed ? Verdict::verified : Verdict::not_verified;
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
  return text;
}

std::optional<CheckResult::Outcome> parse_outcome(std::string_view text) {
  for (auto o : {CheckResult::Outcome::passed, CheckResult::Outcome::failed, CheckResult::Outcome::skipped})
    if (to_string(o) == text) return o;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::verified: return "verified";
    case Verdict::failed: return "failed";
    case Verdict::not_verified: return "not-verified";
    case Verdict::not_checkable: return "not-checkable";
  }
  return "not-verified";
}

std::optional<Verdict> parse_verdict(std::string_view text) {
  for (Verdict v : {Verdict::verified, Verdict::failed, Verdict::not_verified, Verdict::not_checkable})
    if (to_string(v) == text) return v;
  return std::nullopt;
}

Verdict VerificationRecord::verdict(std::string_view name) const {
  for (const auto& [feature, verdict] : features)
    if (feature == name) return verdict;
  return Verdict::not_verified;
}

Verdict feature_verdict(const ConformanceReport& report, Feature feature) {
  return verdict_of(report, report.spec, [feature](const CheckDef& def) {
    if (!def.needs_any.empty()) return std::find(def.needs_any.begin(), def.needs_any.end(), feature) != def.needs_any.end();
    return !def.needs.empty() && def.needs.back() == feature;
  });
}

Verdict contract_verdict(const ConformanceReport& report) {
  return verdict_of(report, report.spec,
                    [](const CheckDef& def) { return def.needs.empty() && def.needs_any.empty(); });
}

VerificationRecord make_record(const ConformanceReport& report, const ProviderSpec& spec,
                               const std::filesystem::path& library, const std::string& plugin_version,
                               const std::string& kit_version) {
  VerificationRecord r;
  r.provider = spec.name;
  r.plugin_file = library.filename().string();
  r.plugin_sha256 = sha256_file(library);
  r.plugin_version = plugin_version;
  r.kit_version = kit_version;
  r.date = today_utc();
  r.contract = contract_verdict(report);
  for (Feature f : kAllFeatures)
    if (spec.features.has(f)) r.features.emplace_back(std::string(to_string(f)), feature_verdict(report, f));
  for (const CheckResult& c : report.checks) r.checks.push_back({c.id, c.title, c.outcome, c.detail, 0});
  return r;
}

std::string record_to_json(const VerificationRecord& r) {
  const std::string compact = json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("record");
    w.Int(kRecordFormat);
    json::write_string(w, "provider", r.provider);
    w.Key("plugin");
    w.StartObject();
    json::write_string(w, "file", r.plugin_file);
    json::write_string(w, "sha256", r.plugin_sha256);
    json::write_string(w, "version", r.plugin_version);
    w.EndObject();
    json::write_string(w, "kit", r.kit_version);
    json::write_string(w, "date", r.date);
    json::write_string(w, "contract", to_string(r.contract));
    w.Key("features");
    w.StartObject();
    for (const auto& [feature, verdict] : r.features) json::write_string(w, feature.c_str(), to_string(verdict));
    w.EndObject();
    w.Key("checks");
    w.StartArray();
    for (const CheckResult& c : r.checks) {
      w.StartObject();
      json::write_string(w, "id", c.id);
      json::write_string(w, "outcome", to_string(c.outcome));
      if (!c.detail.empty()) json::write_string(w, "detail", c.detail);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  });
  // Indented, one value per line: a record kept in a tree diffs readably.
  json::Document doc = json::parse(compact, "verification record");
  rapidjson::StringBuffer pretty;
  rapidjson::PrettyWriter<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                          rapidjson::MemoryPoolAllocator<>>
      pw(pretty);
  pw.SetIndent(' ', 2);
  doc.Accept(pw);
  return std::string(pretty.GetString(), pretty.GetSize()) + "\n";
}

VerificationRecord parse_record(std::string_view text, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return ConfigError(fmt::format("verification record {}: {}", what, why),
                       "make it again with `corral conformance --provider NAME --record FILE`");
  };
  json::Document doc;
  try {
    doc = json::parse(text, what);
  } catch (const Error& e) {
    throw bad(e.what());
  }
  if (!doc.IsObject()) throw bad("not a JSON object");
  VerificationRecord r;
  try {
    if (json::get_int(doc, "record") != kRecordFormat)
      throw bad(fmt::format("\"record\" is not {}, the format this corral reads", kRecordFormat));
    r.provider = json::get_string(doc, "provider");
    const json::Value* plugin = json::find(doc, "plugin");
    if (!plugin || !plugin->IsObject()) throw bad("has no \"plugin\" object");
    r.plugin_file = json::get_string(*plugin, "file");
    r.plugin_sha256 = json::get_string(*plugin, "sha256");
    r.plugin_version = json::get_string(*plugin, "version");
    r.kit_version = json::get_string(doc, "kit");
    r.date = json::get_string(doc, "date");
    auto verdict = [&](const std::string& text, const std::string& field) {
      std::optional<Verdict> v = parse_verdict(text);
      if (!v) throw bad(fmt::format("{} is {}, not verified, failed, not-verified or not-checkable", field, printable(text)));
      return *v;
    };
    r.contract = verdict(json::get_string(doc, "contract"), "\"contract\"");
    if (const json::Value* features = json::find(doc, "features")) {
      if (!features->IsObject()) throw bad("\"features\" is not an object");
      for (const auto& m : features->GetObject()) {
        const std::string name(m.name.GetString(), m.name.GetStringLength());
        if (!m.value.IsString()) throw bad(fmt::format("feature {} is not a string", printable(name)));
        r.features.emplace_back(name, verdict(m.value.GetString(), "feature " + printable(name)));
      }
    }
    if (const json::Value* checks = json::find(doc, "checks")) {
      if (!checks->IsArray()) throw bad("\"checks\" is not an array");
      for (const json::Value& c : checks->GetArray()) {
        if (!c.IsObject()) throw bad("a check is not an object");
        std::optional<CheckResult::Outcome> outcome = parse_outcome(json::get_string(c, "outcome"));
        if (!outcome) throw bad("a check's outcome is not passed, failed or skipped");
        r.checks.push_back({json::get_string(c, "id"), "", *outcome, json::get_string(c, "detail"), 0});
      }
    }
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw bad(e.what());
  }
  if (r.provider.empty() || r.plugin_sha256.size() != 64) throw bad("names no provider or no plugin sha256");
  return r;
}

std::filesystem::path default_record_path(const std::filesystem::path& library) {
  return library.parent_path() / (library.stem().string() + ".conformance.json");
}

std::optional<VerificationRecord> read_record_file(const std::filesystem::path& file) {
  constexpr std::uint64_t kMaxRecord = 1 << 20;  // a record of every check is a few kilobytes
  std::optional<std::string> text;
  try {
    text = os::read_regular_file(file, kMaxRecord, "verification record");
  } catch (const Error& e) {
    throw ConfigError(e.what(), "make it again with `corral conformance --provider NAME --record FILE`");
  }
  if (!text) return std::nullopt;
  return parse_record(*text, file.string());
}

Verification read_verification(const std::filesystem::path& record_file, const std::string& plugin_sha256) {
  using Standing = Verification::Standing;
  Verification v;
  try {
    std::optional<VerificationRecord> record = read_record_file(record_file);
    if (!record) {
      v.why_not = "no verification record";
    } else if (record->plugin_sha256 != plugin_sha256) {
      v.standing = Standing::other_build;
      v.why_not = fmt::format("verification record {} is for another build of the plugin (its sha256 differs)",
                              record_file.string());
    } else {
      v.standing = Standing::counts;
      v.record = std::move(record);
    }
  } catch (const Error& e) {
    v.standing = Standing::unreadable;
    v.why_not = printable(e.what());
  }
  return v;
}

Verification read_verification(const ProviderEntry& entry) {
  return read_verification(entry.record.empty() ? default_record_path(entry.library) : entry.record, entry.sha256);
}

std::string verification_json(const Verification& v) {
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("counts");
    w.Bool(v.record.has_value());
    if (!v.record) {
      json::write_string(w, "whyNot", v.why_not);
    } else {
      json::write_string(w, "kit", v.record->kit_version);
      json::write_string(w, "date", v.record->date);
      json::write_string(w, "contract", to_string(v.record->contract));
      w.Key("features");
      w.StartObject();
      for (const auto& [feature, verdict] : v.record->features) json::write_string(w, feature.c_str(), to_string(verdict));
      w.EndObject();
    }
    w.EndObject();
  });
}

std::string verification_summary(const Verification& v, const ProviderSpec& spec) {
  switch (v.standing) {
    case Verification::Standing::missing: return "no record";
    case Verification::Standing::other_build: return "record of another build";
    case Verification::Standing::unreadable: return "unreadable record";
    case Verification::Standing::counts: break;
  }
  int checkable = 0, verified = 0;
  std::vector<std::string> failed;
  for (Feature f : kAllFeatures) {
    if (!spec.features.has(f)) continue;
    const Verdict verdict = v.record->verdict(to_string(f));
    checkable += verdict != Verdict::not_checkable;
    verified += verdict == Verdict::verified;
    if (verdict == Verdict::failed) failed.emplace_back(to_string(f));
  }
  std::string text = fmt::format("{} of {} checkable features", verified, checkable);
  if (v.record->contract != Verdict::verified) text += fmt::format(", run contract {}", to_string(v.record->contract));
  if (!failed.empty()) text += fmt::format(", failed: {}", fmt::join(failed, ", "));
  return text + fmt::format(" (corral {}, {})", v.record->kit_version, v.record->date);
}

}  // namespace corral
