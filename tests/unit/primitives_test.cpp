// What is generated from corral/primitives.def: each primitive's descriptor slot and name,
// the SDK's descriptor (a primitive is in it when the plugin class provides it), and a
// plugin built before the last slot was appended still loading, without that slot.
#include <doctest/doctest.h>

#include <set>

#include "corral/sdk.hpp"
#include "plugin_host/loader.hpp"
#include "plugin_host/provider_session.hpp"

using namespace corral;

namespace {

// A primitive to put in one slot of a descriptor.
int url_slot(void*, const char*, const corral_host_v1*, void*) { return 0; }

// The smallest plugin class: only the required primitives.
class Minimal : public sdk::Provider {
 public:
  explicit Minimal(const sdk::Options&) {}
  Sandbox create(const CreateRequest&, const sdk::Host&) override { return {}; }
  void destroy(const Sandbox&, const sdk::Host&) override {}
  ExecResult exec(const Sandbox&, const Command&, const sdk::Host&) override { return {}; }
};

// One that adds downloads and pausing to what it inherits from Minimal.
class Pausing : public Minimal {
 public:
  using Minimal::Minimal;
  DownloadResult download(const Sandbox&, const DownloadRequest&, const sdk::Host&) override { return {}; }
  Sandbox pause(const Sandbox& s, const sdk::Host&) override { return s; }
};

constexpr char kSpec[] = R"({"name":"minimal"})";

// The names of the primitives `table` provides.
std::set<std::string> provided(const corral_plugin_v1& table) {
  std::set<std::string> out;
  for (const PrimitiveInfo& p : kPrimitives)
    if (table.*p.slot) out.insert(p.name);
  return out;
}

}  // namespace

TEST_CASE("each primitive is the descriptor member of its name, and its name reads back") {
  using Slot = corral_call_fn corral_plugin_v1::*;
  const std::pair<Primitive, Slot> expected[] = {
      {Primitive::doctor, &corral_plugin_v1::doctor},   {Primitive::create, &corral_plugin_v1::create},
      {Primitive::get, &corral_plugin_v1::get},         {Primitive::list, &corral_plugin_v1::list},
      {Primitive::destroy, &corral_plugin_v1::destroy}, {Primitive::exec, &corral_plugin_v1::exec},
      {Primitive::upload, &corral_plugin_v1::upload},   {Primitive::extend, &corral_plugin_v1::extend},
      {Primitive::url, &corral_plugin_v1::url},         {Primitive::pause, &corral_plugin_v1::pause},
      {Primitive::resume, &corral_plugin_v1::resume},   {Primitive::download, &corral_plugin_v1::download},
      {Primitive::fork, &corral_plugin_v1::fork},
  };
  REQUIRE(std::size(expected) == kPrimitives.size());
  corral_plugin_v1 d{};
  d.url = &url_slot;
  for (const auto& e : expected) {
    INFO(primitive_name(e.first));
    CHECK(primitive_info(e.first).slot == e.second);
    CHECK(primitive_named(primitive_name(e.first)) == e.first);
    CHECK((primitive_entry(d, e.first) == &url_slot) == (e.first == Primitive::url));
  }
  CHECK(std::string(primitive_name(Primitive::download)) == "download");
  CHECK_FALSE(primitive_named("open").has_value());
  CHECK_FALSE(primitive_named("").has_value());
}

TEST_CASE("the SDK's descriptor holds exactly the primitives the plugin class provides") {
  CHECK(provided(sdk::detail::make_descriptor<Minimal>("1", kSpec)) ==
        std::set<std::string>{"doctor", "create", "destroy", "exec"});
  CHECK(provided(sdk::detail::make_descriptor<Pausing>("1", kSpec)) ==
        std::set<std::string>{"doctor", "create", "destroy", "exec", "download", "pause"});
}

TEST_CASE("a plugin built before download was appended loads, and its download is never called") {
  LoadResult r = load_plugin(std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-raw8.so", {});
  REQUIRE_MESSAGE(r.plugin, (r.error ? r.error->message : ""));
  CHECK(bool(r.plugin->table().create));
  CHECK_FALSE(bool(r.plugin->table().download));  // past its struct_size, whatever its memory holds
  ProviderSession session(r.plugin, {}, {});
  CHECK_THROWS_WITH_AS(session.download({}, {}), "provider 'raw' does not support 'download'", Error);
  CHECK_NOTHROW(session.destroy({}));  // the primitives it has work
}
