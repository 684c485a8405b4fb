/* Test providers for the docs generator: one C plugin source built once per variant
 * (DOCS_VARIANT_<NAME>), each with a spec covering a different combination of kinds,
 * features, settings and docs metadata; two are broken on purpose. Every primitive is
 * present, so the loader accepts any feature set; none of them is ever called. */
#include <stddef.h>

#include "corral/plugin_abi.h"

#if defined(DOCS_VARIANT_CLOUDBOX)
/* Every feature but workspace-mount; two secret settings; a pipe in a help text. */
#define NAME "cloudbox"
static const char kSpec[] =
    "{\"name\":\"cloudbox\",\"aliases\":[\"cb\",\"cloud-box\"],\"family\":\"boxes\",\"kind\":\"delegated-run\","
    "\"targets\":[\"linux\",\"linux-arm64\"],"
    "\"features\":[\"pause-resume\",\"run-session\",\"url-bridge\",\"archive-sync\",\"keep-alive\",\"cleanup\"],"
    "\"options\":["
    "{\"name\":\"api-key\",\"env\":[\"CLOUDBOX_API_KEY\",\"CB_KEY\"],\"secret\":true,\"help\":\"the API key\"},"
    "{\"name\":\"region\",\"default\":\"eu\",\"choices\":[\"eu\",\"us\"],\"env\":[\"CLOUDBOX_REGION\"],"
    "\"help\":\"where sandboxes run\"},"
    "{\"name\":\"lifetime\",\"type\":\"duration\",\"default\":\"1h\",\"env\":[\"CLOUDBOX_LIFETIME\"],"
    "\"help\":\"how long a sandbox lives | then it is deleted\"},"
    "{\"name\":\"endpoint\",\"default\":\"https://api.cloudbox.invalid\",\"trusted\":true,\"env\":[\"CLOUDBOX_URL\"],"
    "\"help\":\"the API endpoint\"},"
    "{\"name\":\"session-token\",\"secret\":true,\"help\":\"a second credential, flag only\"}],"
    "\"docs\":{\"category\":\"cloud microVM\",\"location\":\"cloud\",\"gpu\":\"yes (A100, H100)\","
    "\"cleanupOwner\":\"corral; the provider deletes expired sandboxes\",\"bestFit\":\"GPU jobs\","
    "\"caveat\":\"billed per second\",\"isolation\":\"microVM\",\"pause\":\"memory kept, for 7 days\"}}";
#elif defined(DOCS_VARIANT_MOUNTBOX)
/* An ssh-lease provider that mounts the working tree; no credentials, no options. */
#define NAME "mountbox"
static const char kSpec[] =
    "{\"name\":\"mountbox\",\"kind\":\"ssh-lease\",\"targets\":[\"linux\",\"macos\"],"
    "\"features\":[\"workspace-mount\",\"cleanup\"],"
    "\"docs\":{\"category\":\"leased machine\",\"location\":\"self-hosted\",\"gpu\":\"no\","
    "\"cleanupOwner\":\"corral\",\"bestFit\":\"big builds on your own hardware\","
    "\"caveat\":\"commands change local files\"}}";
#elif defined(DOCS_VARIANT_BAREBOX)
/* No features at all: one run per sandbox and no workspace. */
#define NAME "barebox"
static const char kSpec[] =
    "{\"name\":\"barebox\",\"kind\":\"service-control\",\"targets\":[\"linux\"],\"features\":[],"
    "\"options\":[{\"name\":\"size\",\"type\":\"int\",\"env\":[\"BAREBOX_SIZE\"],\"help\":\"how big\"}],"
    "\"docs\":{\"category\":\"service\",\"location\":\"local\",\"gpu\":\"no\",\"cleanupOwner\":\"the service\","
    "\"bestFit\":\"smoke tests\",\"caveat\":\"no workspace\"}}";
#elif defined(DOCS_VARIANT_HYBRIDBOX)
/* Both ways of syncing, reusable but neither extendable nor cleanable. */
#define NAME "hybridbox"
static const char kSpec[] =
    "{\"name\":\"hybridbox\",\"kind\":\"delegated-run\",\"targets\":[\"linux\"],"
    "\"features\":[\"run-session\",\"archive-sync\",\"workspace-mount\"],"
    "\"options\":[{\"name\":\"token\",\"env\":[\"HYBRIDBOX_TOKEN\"],\"secret\":true,\"help\":\"access token\"}],"
    "\"docs\":{\"category\":\"hybrid\",\"location\":\"cloud\",\"gpu\":\"no\",\"cleanupOwner\":\"provider TTL\","
    "\"bestFit\":\"mixed workloads\",\"caveat\":\"two sync paths\"}}";
#elif defined(DOCS_VARIANT_INCOMPLETE)
/* Its docs lack the GPU and caveat fields and an option has no help: the loader refuses it. */
#define NAME "incomplete"
static const char kSpec[] =
    "{\"name\":\"incomplete\",\"kind\":\"delegated-run\",\"targets\":[\"linux\"],\"features\":[\"run-session\"],"
    "\"options\":[{\"name\":\"mystery\",\"env\":[\"INCOMPLETE_MYSTERY\"]}],"
    "\"docs\":{\"category\":\"unfinished\",\"location\":\"local\",\"cleanupOwner\":\"corral\","
    "\"bestFit\":\"nothing yet\"}}";
#elif defined(DOCS_VARIANT_TELEPORTER)
/* Advertises a feature no corral knows: the loader refuses its spec. */
#define NAME "teleporter"
static const char kSpec[] =
    "{\"name\":\"teleporter\",\"kind\":\"delegated-run\",\"targets\":[\"linux\"],"
    "\"features\":[\"run-session\",\"teleport\"],"
    "\"docs\":{\"category\":\"x\",\"location\":\"cloud\",\"gpu\":\"no\",\"cleanupOwner\":\"corral\","
    "\"bestFit\":\"x\",\"caveat\":\"x\"}}";
#else
#error "define one DOCS_VARIANT_<NAME>"
#endif

static void* docs_open(const char* config, const corral_host_v1* host, void* call) {
  (void)config;
  host->error(call, CORRAL_ERR_UNSUPPORTED, "a docs test plugin cannot run anything", NULL);
  return NULL;
}
static void docs_close(void* instance) { (void)instance; }
static int docs_call(void* instance, const char* request, const corral_host_v1* host, void* call) {
  (void)instance;
  (void)request;
  host->error(call, CORRAL_ERR_UNSUPPORTED, "a docs test plugin cannot run anything", NULL);
  return 1;
}

static const corral_plugin_v1 kDescriptor = {
    CORRAL_ABI_VERSION, sizeof(corral_plugin_v1), NAME, "1.2.3", kSpec, docs_open, docs_close,
    docs_call, docs_call, docs_call, docs_call, docs_call, docs_call, docs_call, docs_call, docs_call,
    docs_call, docs_call};

CORRAL_PLUGIN_EXPORT const corral_plugin_v1* corral_plugin_entry_v1(void) { return &kDescriptor; }
