/* corral plugin ABI, version 1.
 *
 * The boundary between corral and a provider plugin is plain C so that plugins built
 * by other teams, with other compilers and flags, load safely: no C++ object, exception
 * or allocator ever crosses it. Requests and results cross as JSON text; bulk output
 * crosses as raw bytes through the host's emit callback.
 *
 * Evolution rule: structs only grow at the end; `struct_size` tells each side which
 * members the other one has. A change that is not a pure append bumps CORRAL_ABI_VERSION.
 *
 * Threads. corral opens one instance per command (open gets the resolved options) and
 * calls it from one thread, one call at a time, until close. A fan-out (corral run
 * --shards N) opens N instances of one plugin in one process and calls them from N
 * threads at once, each instance from its own thread: an instance keeps its state to
 * itself, whatever instances share (globals, a library's global state) must be safe from
 * several threads, and a child forked before exec must close what it does not need (a
 * pipe another thread opened meanwhile would stay open in it). Several corral processes
 * may work on one sandbox at once: runs on one lease wait for each other, but get and url
 * may overlap another process's exec, and so may another exec (its sync done) on a
 * provider with exec-concurrent, which keeps what a command needs (a pid file, a session)
 * to that command. The host functions of one call (corral_host_v1)
 * serve only while that call runs: cancelled may be asked from any thread; the others
 * must not run at once on two threads.
 */
#ifndef CORRAL_PLUGIN_ABI_H
#define CORRAL_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORRAL_ABI_VERSION 1u
#define CORRAL_PLUGIN_ENTRY_SYMBOL "corral_plugin_entry_v1"

#if defined(_WIN32)
#define CORRAL_PLUGIN_EXPORT __declspec(dllexport)
#else
#define CORRAL_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* The closed set of error codes a primitive may report. */
typedef enum corral_error_code {
  CORRAL_ERR_INTERNAL = 1,
  CORRAL_ERR_NOT_FOUND = 2,
  CORRAL_ERR_AUTH = 3,
  CORRAL_ERR_INVALID_ARGUMENT = 4,
  CORRAL_ERR_QUOTA = 5,
  CORRAL_ERR_UNAVAILABLE = 6,
  CORRAL_ERR_TIMEOUT = 7,
  CORRAL_ERR_CANCELLED = 8,
  CORRAL_ERR_UNSUPPORTED = 9
} corral_error_code;

typedef enum corral_stream { CORRAL_STDOUT = 1, CORRAL_STDERR = 2 } corral_stream;

typedef enum corral_log_level {
  CORRAL_LOG_DEBUG = 0,
  CORRAL_LOG_INFO = 1,
  CORRAL_LOG_WARN = 2
} corral_log_level;

/* Services the host passes into every call. `call` is the host's per-call context and
 * is passed back unchanged, only until the call returns; the host copies every buffer
 * before returning. Threads: cancelled from any thread; the others one at a time. */
typedef struct corral_host_v1 {
  uint32_t struct_size;
  /* Sets the call's JSON result (at most once per call). */
  void (*result)(void* call, const char* json, size_t len);
  /* Sets the call's error; `hint` may be NULL. The primitive then returns non-zero. */
  void (*error)(void* call, int code, const char* message, const char* hint);
  /* Streams command output as it arrives. */
  void (*emit)(void* call, int stream, const char* data, size_t len);
  /* Non-zero once the user asked to stop (Ctrl-C): stop the remote work and return
   * CORRAL_ERR_CANCELLED. Cheap enough to poll in an output loop, from any thread. */
  int (*cancelled)(void* call);
  /* A diagnostic line for the user (never secrets). */
  void (*log)(void* call, int level, const char* message);
  /* A short note about a slow phase ("uploading 12 MB"). */
  void (*progress)(void* call, const char* message);
  /* Appended: absent when struct_size does not reach it (use CORRAL_HOST_HAS).
   * Bytes of the call's transfer moved so far (upload: sent; download: received), of
   * `total` (0 = not known). The SDK's HTTP uploads and downloads report it themselves. */
  void (*transfer)(void* call, uint64_t done, uint64_t total);
  /* Appended: says the error the call is about to report is only "not now" (the
   * provider's rate limit): the same call may succeed after `milliseconds` (0 = the
   * provider did not say when). Call it before host->error. */
  void (*retry_after)(void* call, uint32_t milliseconds);
  /* Appended, for exec of a command whose request says "stdin": true (a provider with
   * exec-stdin): reads the command's next input into `buffer`, waiting at most
   * `timeout_ms` for some. Returns the bytes read (1..capacity), 0 at the end of the
   * input (close the command's stdin; later reads return 0 again), or -1 when none came
   * in time. Threads: from one thread at a time, which may be another than the call's
   * while the call's thread uses the other host functions (a pump feeding the command). */
  long (*read_input)(void* call, char* buffer, size_t capacity, int timeout_ms);
  /* Appended, for exec on a provider with exec-signals: the signal the user asks the
   * command to get (SIGINT for Ctrl-C, SIGTERM, SIGHUP), once; 0 when there is none to
   * pass on. Such a provider passes it to the command and keeps running it: cancelled()
   * turns non-zero only when the command did not end within the user's --stop-timeout,
   * and the command is then killed as before. Poll it as cancelled() is; any thread. */
  int (*take_signal)(void* call);
  /* Appended, for exec of a command whose request says "tty": true (a provider with
   * exec-tty): the size of the user's terminal in `rows` and `cols`; non-zero when it
   * differs from what this call last reported (always at the first ask), 0 when it is
   * unchanged or not known. Poll it as cancelled() is, and pass a change on to the
   * command's terminal (its SIGWINCH). Any thread. */
  int (*window_size)(void* call, uint16_t* rows, uint16_t* cols);
} corral_host_v1;

/* Whether host table `h` reaches member `m` (a member appended after a plugin's host). */
#define CORRAL_HOST_HAS(h, m) \
  ((h)->struct_size >= offsetof(corral_host_v1, m) + sizeof(((corral_host_v1*)0)->m) && (h)->m != NULL)

/* Every primitive has this shape: a JSON request in, a JSON result out through
 * host->result, 0 on success, non-zero after host->error on failure. */
typedef int (*corral_call_fn)(void* instance, const char* request_json,
                              const corral_host_v1* host, void* call);

typedef struct corral_plugin_v1 {
  uint32_t abi_version; /* CORRAL_ABI_VERSION the plugin was built against */
  uint32_t struct_size; /* sizeof(corral_plugin_v1) as the plugin saw it */
  const char* name;     /* provider name, equal to the spec's "name" */
  const char* plugin_version;
  const char* spec_json; /* the ProviderSpec, see docs/plugin-authoring.md */

  /* Creates an instance from the resolved options ({"options": {...}}); NULL after
   * host->error on failure. Required. It may report host->result {"target": "..."}: who
   * the instance works for when more than its options decide it (no secret in it), which
   * keeps warm pools and leases of different accounts apart. Threads: a fan-out opens
   * its instances from several threads at once. */
  void* (*open)(const char* config_json, const corral_host_v1* host, void* call);
  /* Releases an instance, once no call of it runs. Required. */
  void (*close)(void* instance);

  /* Primitives. NULL means "not provided"; the loader checks that every advertised
   * feature has the primitives it needs. create, destroy and exec are required.
   * Threads: never two at once on one instance; instances of a fan-out at once. */
  corral_call_fn doctor;  /* {} -> {"checks":[{"name","ok","detail","hint"}]} */
  /* {"leaseId","slug","labels","workspace"} -> Sandbox. Appended members a plugin may
   * ignore: "ephemeral": true when the run releases the sandbox at its end (absent: it may
   * be kept), "workspaceBytes": the most the workspace may take (absent: no bound). */
  corral_call_fn create;
  corral_call_fn get;     /* {"id"} -> Sandbox */
  corral_call_fn list;    /* {"labels"} -> {"sandboxes":[Sandbox]} */
  corral_call_fn destroy; /* {"sandbox"} -> {} */
  corral_call_fn exec;    /* {"sandbox","command"} -> {"exitCode"} ; output via emit */
  corral_call_fn upload;  /* {"sandbox","archive","size"} -> {} : unpack into workdir */
  corral_call_fn extend;  /* {"sandbox","seconds"} -> Sandbox */
  corral_call_fn url;     /* {"sandbox","port"} -> {"url"} */
  corral_call_fn pause;   /* {"sandbox"} -> Sandbox */
  corral_call_fn resume;  /* {"sandbox"} -> Sandbox */
  /* Appended: absent when struct_size does not reach it.
   * {"sandbox","cwd","patterns","archive","maxBytes"} -> {"size","missing"} : writes a
   * .tar.gz of the files matching the patterns (relative to cwd) to the local path
   * `archive`, at most maxBytes of it. */
  corral_call_fn download;
  /* Appended: absent when struct_size does not reach it.
   * {"sandbox","forks":[{"leaseId","slug","labels"}]} ->
   * {"forks":[{"sandbox"} | {"error":{"code","message"}}]} : one copy of the sandbox's
   * current state per entry, in order; a fork that could not be made is an error entry.
   * A failed or cancelled call leaves none of the forks it made. */
  corral_call_fn fork;
} corral_plugin_v1;

/* The one symbol a plugin exports. */
typedef const corral_plugin_v1* (*corral_plugin_entry_v1_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* CORRAL_PLUGIN_ABI_H */
