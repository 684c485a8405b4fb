// The stand-in cluster's world: the object store, the pods' runtime side (their folders,
// processes and where each is in its start), the nodes the scheduler fits pods to, the
// credentials and access rules, the fault switches, and what clients sent. Everything is
// guarded by mutex() except where noted.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "faults.hpp"
#include "identity.hpp"
#include "object.hpp"
#include "pod_process.hpp"
#include "schema.hpp"
#include "standin_state.hpp"
#include "store.hpp"

namespace corral::kubernetes::standin {

struct Node {
  std::string name;
  std::string ip;
  double cpu = 4;                   // allocatable cores
  double memory = 8.0 * (1 << 30);  // allocatable bytes
  Labels labels;
};

// One container of a pod, as the kubelet sees it.
struct ContainerRuntime {
  std::string name;
  std::string image;         // as the spec names it
  std::vector<std::string> argv;  // command + args; empty: the image's own (a process that runs until stopped)
  std::vector<std::string> env;   // its spec.env values, NAME=value
  std::string working_dir = "/";
  std::string container_id;  // containerd://..., once created
  pid_t pid = -1;            // its main process (group), while it runs
  bool running = false;
  Clock::time_point started_at;
  // Terminated: exit code, reason (Completed, Error, StartError), when.
  std::optional<int> exit_code;
  std::string term_reason, term_message;
  Clock::time_point finished_at;
  int restarts = 0;
  std::optional<Clock::time_point> restart_at;  // CrashLoopBackOff until then
};

// An exec stream the kubelet may have to end from its side (an eviction that drops it).
struct ExecLink {
  std::function<void()> drop;  // closes the stream with no status; safe from any thread
};

struct PodRuntime {
  enum class Stage { scheduling, pulling, pull_failed, creating, running, finished };
  std::string ns, name, uid;
  std::filesystem::path root;  // its "/"
  std::filesystem::path logs;  // its containers' logs
  Stage stage = Stage::scheduling;
  Clock::time_point created;
  Clock::time_point due;  // when the stage's next step happens
  std::string node, host_ip, pod_ip;
  std::string unschedulable;  // why it cannot be scheduled, when it cannot
  Clock::time_point scheduled_at, started_at, ready_changed_at;
  bool ready = false;
  std::optional<Clock::time_point> ready_at;  // unset: never
  std::string image_error;       // ErrImagePull's message
  bool image_backoff = false;    // ErrImagePull has turned into ImagePullBackOff
  std::vector<ContainerRuntime> containers;
  std::string reason, message;   // of a pod that failed as a whole (Evicted, DeadlineExceeded)
  std::set<pid_t> groups;        // every process group started in it (containers and execs)
  std::vector<std::weak_ptr<ExecLink>> exec_links;
  std::filesystem::path folder;  // root and logs are in it; removed with the pod
  std::string service_account_token;  // the token its service account volume holds
  int ip_index = 0;
  bool deleting = false;
  Clock::time_point kill_at;     // grace period over: SIGKILL what remains
};

// A request as received, for tests to assert on.
struct RecordedRequest {
  std::string method;
  std::string target;  // path and query
  std::string route;   // "create pods", ...
  std::string user;
  std::string content_type;
  std::string user_agent;
  std::string body;
};

class State {
 public:
  explicit State(std::filesystem::path root);
  std::mutex& mutex() { return mutex_; }
  const std::filesystem::path& root() const { return root_; }

  Store store;
  Schemas schemas;  // loaded once at start; read without the mutex
  Faults faults;
  Access access;
  std::map<std::string, Identity> tokens;  // accepted bearer tokens
  std::set<std::string> service_accounts;  // "namespace/name" that exist
  std::vector<Node> nodes;
  std::map<std::pair<std::string, std::string>, PodRuntime> pods;  // by namespace and name
  std::map<std::string, int> calls;                                // per route
  std::vector<RecordedRequest> requests;
  std::vector<std::string> answer_violations;  // the stand-in's answers that broke a schema
  std::string server_url;                      // https://127.0.0.1:PORT, once listening
  std::string ca_pem;
  int pods_started = 0;  // numbers the pod IPs handed out

  Spawner& spawner() { return spawner_; }  // thread-safe
  std::atomic<bool> stopping{false};

  // Consumes one of `times` when `route` is the armed one ("*" arms every route).
  static bool take(const std::string& armed, int& times, const std::string& route);
  // Threads of their own (an exec's process waiter, a container's), joined when the
  // stand-in stops; safe without the mutex.
  ::corral::test::Workers workers;

 private:
  std::filesystem::path root_;
  std::mutex mutex_;
  Spawner spawner_;
};

}  // namespace corral::kubernetes::standin
