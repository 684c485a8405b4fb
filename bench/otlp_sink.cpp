// bench-otlp-sink PORT_FILE: a collector that takes every OTLP/HTTP POST on a loopback
// port and answers 200 with an empty ExportTraceServiceResponse at once, for the bench's
// "a traced run against an untraced one" row. Writes its port to PORT_FILE, then serves
// until killed.
#include <httplib.h>

#include <fstream>

int main(int argc, char** argv) {
  if (argc != 2) return 64;
  httplib::Server server;
  server.Post(R"(/.*)", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(), "application/x-protobuf");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0) return 69;
  std::ofstream(argv[1]) << port << "\n";
  return server.listen_after_bind() ? 0 : 69;
}
