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

// A distinct function for each slot, to tell them apart.
template <int N>
int slot_fn(void*, const char*, const corral_host_v1*, void*) {
  return N;
}

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

TEST_CASE("each primitive reads the descriptor member of its name, and its name reads back") {
  corral_plugin_v1 d{};
  d.doctor = slot_fn<1>;
  d.create = slot_fn<2>;
  d.get = slot_fn<3>;
  d.list = slot_fn<4>;
  d.destroy = slot_fn<5>;
  d.exec = slot_fn<6>;
  d.upload = slot_fn<7>;
  d.extend = slot_fn<8>;
  d.url = slot_fn<9>;
  d.pause = slot_fn<10>;
  d.resume = slot_fn<11>;
  d.download = slot_fn<12>;
  const std::pair<Primitive, int> expected[] = {
      {Primitive::doctor, 1}, {Primitive::create, 2}, {Primitive::get, 3},    {Primitive::list, 4},
      {Primitive::destroy, 5}, {Primitive::exec, 6},  {Primitive::upload, 7}, {Primitive::extend, 8},
      {Primitive::url, 9},    {Primitive::pause, 10}, {Primitive::resume, 11}, {Primitive::download, 12},
  };
  REQUIRE(std::size(expected) == kPrimitives.size());
  for (const auto& e : expected) {
    INFO(primitive_name(e.first));
    CHECK(primitive_entry(d, e.first)(nullptr, nullptr, nullptr, nullptr) == e.second);
    CHECK(primitive_named(primitive_name(e.first)) == e.first);
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
