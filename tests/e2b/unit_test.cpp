// The e2b plugin's pure rules: where envd is, the exit code an envd `end` event means, and
// which envd can end a command's input.
#include <doctest/doctest.h>

#include "envd.hpp"

using namespace corral;
using corral::e2b::envd_base_url;
using corral::e2b::envd_closes_stdin;
using corral::e2b::exit_code_of;

namespace {

int code_of(const char* end_json) { return exit_code_of(json::parse(end_json, "end")); }

}  // namespace

TEST_CASE("envd lives on port 49983 of the sandbox's host unless E2B_SANDBOX_URL routes it") {
  CHECK(envd_base_url("", "isb123", "e2b.app") == "https://49983-isb123.e2b.app");
  CHECK(envd_base_url("", "isb123", "eu.example.dev") == "https://49983-isb123.eu.example.dev");
  CHECK(envd_base_url("http://127.0.0.1:9000", "isb123", "e2b.app") == "http://127.0.0.1:9000");
}

TEST_CASE("an end event's exit code: proto3 defaults, exit codes and Go's signal texts") {
  CHECK(code_of(R"j({"exited":true,"status":"exit status 0"})j") == 0);  // exitCode omitted
  CHECK(code_of(R"j({})j") == 0);
  CHECK(code_of(R"j({"exitCode":3,"exited":true})j") == 3);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: killed"})j") == 137);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: terminated"})j") == 143);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: segmentation fault (core dumped)"})j") == 139);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: aborted (core dumped)"})j") == 134);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: bus error (core dumped)"})j") == 135);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: illegal instruction (core dumped)"})j") == 132);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: floating point exception (core dumped)"})j") == 136);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: alarm clock"})j") == 142);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: user defined signal 1"})j") == 138);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: user defined signal 2"})j") == 140);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: bad system call (core dumped)"})j") == 159);
  CHECK(code_of(R"j({"exitCode":-1,"status":"signal: something new"})j") == 255);
  CHECK(code_of(R"j({"exitCode":0,"exited":false,"status":"signal: hangup"})j") == 129);
}

TEST_CASE("CloseStdin came with envd 0.5.2; a version corral cannot read is taken to have it") {
  CHECK(envd_closes_stdin("0.5.2"));
  CHECK(envd_closes_stdin("0.5.4"));
  CHECK(envd_closes_stdin("0.10.0"));
  CHECK(envd_closes_stdin("1.0.0"));
  CHECK(envd_closes_stdin("v0.5.3"));
  CHECK(envd_closes_stdin("0.5.2-beta"));
  CHECK_FALSE(envd_closes_stdin("0.5.1"));
  CHECK_FALSE(envd_closes_stdin("0.4.9"));
  CHECK_FALSE(envd_closes_stdin("0.1.5"));
  CHECK(envd_closes_stdin(""));
  CHECK(envd_closes_stdin("unknown"));
  CHECK(envd_closes_stdin("0.5"));
  CHECK(envd_closes_stdin("99999999.0.0"));
}
