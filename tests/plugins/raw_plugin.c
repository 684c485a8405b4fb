/* Hand-written C plugins that are broken in one precise way each, to check that the
 * loader refuses them with the right cause. RAW_VARIANT selects the defect:
 *   0 none, 1 no entry point, 2 ABI from the future, 3 feature without its primitive,
 *   4 unknown feature, 5 its ELF constructor segfaults, 6 its entry point segfaults,
 *   7 its entry point never returns, 8 none, but built before `download` was appended to
 *   corral_plugin_v1: its struct_size ends before that slot (whatever memory follows).
 * 5 to 7 must only ever be loaded in a probe child: they take down whoever loads them. */
#include <stddef.h>
#include <unistd.h>

#include "corral/plugin_abi.h"

static const char kSpec[] =
    "{\"name\":\"raw\",\"kind\":\"delegated-run\",\"targets\":[\"linux\"],"
    "\"docs\":{\"category\":\"test\",\"location\":\"local\",\"gpu\":\"no\",\"cleanupOwner\":\"corral\","
    "\"bestFit\":\"tests\",\"caveat\":\"broken on purpose\"},"
#if RAW_VARIANT == 3
    "\"features\":[\"run-session\",\"url-bridge\"]}";
#elif RAW_VARIANT == 4
    "\"features\":[\"teleport\"]}";
#else
    "\"features\":[\"run-session\"]}";
#endif

static void* raw_open(const char* config, const corral_host_v1* host, void* call) {
  (void)config; (void)host; (void)call;
  static int instance;
  return &instance;
}
static void raw_close(void* instance) { (void)instance; }
static int raw_call(void* instance, const char* request, const corral_host_v1* host, void* call) {
  (void)instance; (void)request;
  host->result(call, "{}", 2);
  return 0;
}

static const corral_plugin_v1 kDescriptor = {
#if RAW_VARIANT == 2
    999u, /* an ABI from the future */
#else
    CORRAL_ABI_VERSION,
#endif
#if RAW_VARIANT == 8
    offsetof(corral_plugin_v1, download), /* the slot is past the end: the host must not call it */
#else
    sizeof(corral_plugin_v1),
#endif
    "raw", "0.0.1", kSpec, raw_open, raw_close,
    NULL,     /* doctor */
    raw_call, /* create */
    raw_call, /* get */
    NULL,     /* list */
    raw_call, /* destroy */
    raw_call, /* exec */
    NULL, NULL,
    NULL, /* url: missing although variant 3 advertises url-bridge */
    NULL, NULL,
#if RAW_VARIANT == 8
    raw_call, /* download: what follows an older, shorter descriptor in memory */
#else
    NULL, /* download */
#endif
};

#if RAW_VARIANT == 5 || RAW_VARIANT == 6
/* Volatile, so the compiler cannot prove the write faults and drop or reorder it. Not
 * null: UndefinedBehaviorSanitizer checks stores through null and would end the process
 * with its report first. Nothing is ever mapped in the zero page, so this faults too. */
static int* volatile nowhere = (int*)16;
#endif

#if RAW_VARIANT == 5
/* Runs at dlopen, before the host can look at anything. */
__attribute__((constructor)) static void crash_on_load(void) { *nowhere = 1; }
#endif

#if RAW_VARIANT == 1
/* No entry point: a library that is not a corral plugin. */
CORRAL_PLUGIN_EXPORT const corral_plugin_v1* some_other_symbol(void) { return &kDescriptor; }
#else
CORRAL_PLUGIN_EXPORT const corral_plugin_v1* corral_plugin_entry_v1(void) {
#if RAW_VARIANT == 6
  *nowhere = 1;
#elif RAW_VARIANT == 7
  for (;;) pause();
#endif
  return &kDescriptor;
}
#endif
