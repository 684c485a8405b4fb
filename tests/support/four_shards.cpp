#include "four_shards.hpp"

#include <doctest/doctest.h>

#include <set>

#include "corral/json.hpp"

namespace corral::test {

std::string four_shard_script(int failing, int code) {
  return "echo \"{shard}/{shards} $CORRAL_SHARD_INDEX/$CORRAL_SHARD_COUNT $(cat hello.txt)\"; [ {shard} != " +
         std::to_string(failing) + " ] || exit " + std::to_string(code);
}

void check_four_shards(const CliResult& r, const std::string& handle_text, int failing, int code) {
  CHECK(r.exit_code == code);
  CHECK_MESSAGE(r.err.find("shard " + std::to_string(failing) + "/4 failed with exit code " + std::to_string(code)) !=
                    std::string::npos,
                r.err);
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    CHECK_MESSAGE(r.out.find("[" + n + "/4] " + n + "/4 " + n + "/4 hello from the workspace\n") != std::string::npos,
                  r.out);
  }
  auto doc = json::parse(handle_text, "session handle");
  REQUIRE(doc.IsObject());
  REQUIRE(doc.HasMember("shards"));
  REQUIRE(doc["shards"].Size() == 4);
  std::set<std::string> sandboxes;
  for (auto& s : doc["shards"].GetArray()) sandboxes.insert(json::get_string(s, "sandboxId"));
  CHECK(sandboxes.size() == 4);
}

}  // namespace corral::test
