// A stand-in cluster for one test: the server, an HTTPS client holding its token, and
// helpers to make pods and wait for them through a watch. At the end it checks that no
// answer the stand-in gave broke the API's schemas.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "https_client.hpp"
#include "standin.hpp"

namespace corral::kubernetes::test {

namespace standin = corral::kubernetes::standin;

struct PodSpecText {
  std::string image = "busybox:1.36";
  std::vector<std::string> command;  // empty: the image's own
  std::string labels = "{}";         // JSON object
  std::string extra_spec;            // more PodSpec members, JSON text without braces: "\"nodeSelector\":{...}"
  std::string container_extra;       // more Container members
};

// A Pod manifest (JSON) named `name`.
std::string pod_manifest(const std::string& name, const PodSpecText& spec = {});

class Cluster {
 public:
  explicit Cluster(standin::Options options = {});
  ~Cluster();
  standin::StandIn server;
  HttpsClient api;
  std::string ns = "corral";
  bool expect_violations = false;  // the test arms the corrupt-answer fault
  std::map<std::string, std::string> created_at;  // resourceVersion of each pod create_pod made

  std::string pods() const { return "/api/v1/namespaces/" + ns + "/pods"; }
  std::string pod(const std::string& name) const { return pods() + "/" + name; }
  // Creates a pod; fails the test unless the API answers 201.
  json::Document create_pod(const std::string& name, const PodSpecText& spec = {});
  // Watches the pod until `until` holds for it (fails the test when the watch ends first);
  // returns that state. For a pod create_pod made, the watch replays every change since its
  // creation, so a state the pod passed through before the watch began is not missed.
  json::Document watch_pod(const std::string& name, const std::function<bool(const json::Value&)>& until);
  json::Document wait_ready(const std::string& name);
  // Watches the pod until it is DELETED (fails the test when the watch ends first).
  void wait_deleted(const std::string& name);
  // The Events whose involvedObject is the pod.
  std::vector<std::string> event_reasons(const std::string& name);
};

bool is_ready(const json::Value& pod);
std::string condition(const json::Value& pod, const std::string& type, const char* member = "status");

}  // namespace corral::kubernetes::test
