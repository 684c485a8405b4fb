// The Connect envelope encoder and the incremental decoder of server streams.
#include <doctest/doctest.h>

#include "corral/sdk/connect.hpp"

using namespace corral;
namespace connect = corral::sdk::connect;

TEST_CASE("an envelope is flags, a big-endian length and the payload") {
  std::string e = connect::envelope("{\"a\":1}");
  REQUIRE(e.size() == 5 + 7);
  CHECK(e[0] == '\0');
  CHECK(e.substr(1, 4) == std::string("\0\0\0\x07", 4));
  CHECK(e.substr(5) == "{\"a\":1}");
  std::string big(70000, 'x');
  std::string eb = connect::envelope(big, connect::kFlagEndStream);
  CHECK(static_cast<unsigned char>(eb[0]) == 0x02);
  CHECK(eb.substr(1, 4) == std::string("\0\x01\x11\x70", 4));  // 70000 = 0x011170
}

TEST_CASE("the decoder reassembles envelopes fed in arbitrary chunks") {
  std::string stream = connect::envelope("first") + connect::envelope("") + connect::envelope(std::string(1000, 'z')) +
                       connect::envelope("{}", connect::kFlagEndStream);
  for (size_t step : {size_t{1}, size_t{3}, size_t{5}, size_t{7}, size_t{4096}}) {
    connect::Decoder d;
    std::vector<connect::Message> got;
    for (size_t i = 0; i < stream.size(); i += step) {
      d.feed(std::string_view(stream).substr(i, step), [&](const connect::Message& m) { got.push_back(m); });
    }
    INFO(step);
    REQUIRE(got.size() == 4);
    CHECK(got[0].payload == "first");
    CHECK(got[1].payload.empty());
    CHECK(got[2].payload == std::string(1000, 'z'));
    CHECK_FALSE(got[2].end_stream());
    CHECK(got[3].end_stream());
    CHECK(got[3].payload == "{}");
    CHECK(d.at_boundary());
  }
}

TEST_CASE("the decoder knows when a stream stopped inside an envelope") {
  std::string one = connect::envelope("abcdef");
  connect::Decoder d;
  int count = 0;
  d.feed(one.substr(0, 3), [&](const connect::Message&) { ++count; });
  CHECK_FALSE(d.at_boundary());  // inside the header
  d.feed(one.substr(3, 5), [&](const connect::Message&) { ++count; });
  CHECK_FALSE(d.at_boundary());  // inside the payload
  d.feed(one.substr(8), [&](const connect::Message&) { ++count; });
  CHECK(d.at_boundary());
  CHECK(count == 1);
}

TEST_CASE("oversized and compressed messages are refused") {
  connect::Decoder small(10);
  CHECK_THROWS_AS(small.feed(connect::envelope(std::string(11, 'a')), [](const connect::Message&) {}), Error);
  connect::Decoder d;
  CHECK_THROWS_AS(d.feed(connect::envelope("x", connect::kFlagCompressed), [](const connect::Message&) {}), Error);
}

TEST_CASE("end-of-stream payloads: clean or carrying an error") {
  CHECK_FALSE(connect::end_stream_error("{}").has_value());
  CHECK_FALSE(connect::end_stream_error("").has_value());
  auto e = connect::end_stream_error(R"({"error":{"code":"not_found","message":"no such process"}})");
  REQUIRE(e.has_value());
  CHECK(e->code == "not_found");
  CHECK(e->message == "no such process");
  CHECK(connect::code_for("unauthenticated") == ErrorCode::auth);
  CHECK(connect::code_for("resource_exhausted") == ErrorCode::quota);
  CHECK(connect::code_for("unavailable") == ErrorCode::unavailable);
  CHECK(connect::code_for("deadline_exceeded") == ErrorCode::timeout);
  CHECK(connect::code_for("whatever") == ErrorCode::internal);
}

TEST_CASE("a garbled end-of-stream payload is the provider's fault (unavailable)") {
  for (const char* bad : {"not json", R"({"error":"oops"})", R"({"error":{"code":7}})"}) {
    INFO(bad);
    try {
      connect::end_stream_error(bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::unavailable);
    }
  }
}
