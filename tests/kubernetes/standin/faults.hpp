// The switches tests flip to make the stand-in API server misbehave as a real cluster can.
// Routes are "<verb> <resource>" as RBAC names them: "create pods", "get pods", "list pods",
// "watch pods", "patch pods", "delete pods", "create pods/exec", "create networkpolicies",
// "list events", ...; "*" is every route.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>

namespace corral::kubernetes::standin {

struct Faults {
  // 429 TooManyRequests, with Retry-After and details.retryAfterSeconds, to the next
  // `throttle_times` calls of `throttle_route`.
  std::string throttle_route;
  int throttle_times = 0;
  int retry_after_seconds = 1;

  // 500 InternalError to the next `fail_times` calls of `fail_route`.
  std::string fail_route;
  int fail_times = 0;
  // Those 500s quote the request's Authorization header in their message, as a proxy's or
  // a debugging server's error page may, then a newline and a line that reads as corral's.
  bool fail_echoes_authorization = false;

  // 2xx answers to `huge_answer_route` carry `huge_answer_bytes` of JSON whitespace after
  // the object: well-formed, and far larger than any real answer.
  std::string huge_answer_route;
  std::size_t huge_answer_bytes = 0;

  // 2xx answers to `mistype_route` have the dotted field `mistype_field` ("metadata",
  // "status.phase") of the wrong type: a string in place of anything else, a number in
  // place of a string. Applied after the schema check, as a server's fault a client sees.
  std::string mistype_route;
  std::string mistype_field;

  // The next `watch_end_times` watches end (a clean end of the stream, as when the API
  // server's watch timeout passes) after `watch_end_after_events` events.
  int watch_end_times = 0;
  int watch_end_after_events = 0;
  // The next `watch_gone_times` watches get one ERROR event, a 410 Expired Status ("too
  // old resource version"), and end: clients must list again.
  int watch_gone_times = 0;

  // Scheduling: non-empty, every pod not yet scheduled stays Pending, unschedulable with
  // this message (as the scheduler words it). Empty: the scheduler fits pods to the nodes
  // by their requests and nodeSelector, and explains itself when they do not fit.
  std::string unschedulable_message;

  // Images that cannot be pulled: their pods go ErrImagePull, then ImagePullBackOff.
  std::set<std::string> unpullable_images;

  // How long each step of a pod's start takes, in milliseconds. ready_ms < 0: the pod
  // runs but never becomes Ready (a readiness probe that never passes).
  int schedule_ms = 0;
  int pull_ms = 10;
  int start_ms = 10;
  int ready_ms = 10;
  // From ErrImagePull to ImagePullBackOff.
  int image_backoff_ms = 50;

  // Exec: the next `exec_cut_times` exec streams are cut after `exec_cut_after_bytes`
  // bytes of output: the TCP connection dropped with no close frame, or with
  // `exec_cut_with_close_frame` a normal close frame, in either case with no status.
  int exec_cut_times = 0;
  long exec_cut_after_bytes = 0;
  bool exec_cut_with_close_frame = false;
  // Exec: the next `exec_stall_times` exec streams go silent once `exec_stall_after_bytes`
  // bytes of output are out: the connection stays open, but nothing more is sent and
  // nothing read, pings included (a cut cable, a node's proxy that hung), until the
  // client hangs up.
  int exec_stall_times = 0;
  long exec_stall_after_bytes = 0;
  // Exec speaks v4.channel.k8s.io only, as API servers before Kubernetes 1.30 do (v5,
  // which can close stdin, is declined when offered).
  bool exec_v4_only = false;
  // Exec: the next `exec_linger_times` exec streams send the exit status and a close
  // frame, then keep the TCP connection open, reading nothing more, until the client hangs up.
  int exec_linger_times = 0;
  // Exec: a command that exits non-zero has this as the message of its ExitCode cause
  // instead of the number ("" = the number).
  std::string exec_exit_cause;

  // A field (dotted, "status.containerStatuses.0.imageID") removed from every answer that
  // has it: what proves the stand-in's own check of its answers against the schemas.
  std::string corrupt_answer_field;
};

// Who may do what. Every authenticated user may do everything, except as narrowed here.
struct Access {
  // "<verb> <resource>" (as in Faults) denied to every user: 403 Forbidden.
  std::set<std::string> denied;
  // Users confined to these namespaces (others: 403); users absent here are not confined.
  std::map<std::string, std::set<std::string>> namespaces_of;
};

}  // namespace corral::kubernetes::standin
