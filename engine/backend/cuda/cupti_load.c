/* cuda/cupti_load.c — CUPTI through dlopen (cupti.h): found where the
 * toolkit puts it, checked for the version the records were laid out for. */
#include "cupti.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CUPTI_MAJOR (CUPTI_API_VERSION / 10000)

static ts_cupti_api api;
static const char *load_why;
static char why_text[512];

static char soname[32]; /* libcupti.so.<major> */

static void *open_lib(void)
{
  snprintf(soname, sizeof soname, "libcupti.so.%d", CUPTI_MAJOR);
  const char *env = getenv("TRACESCOPE_CUPTI");
  if (env && *env)
    return dlopen(env, RTLD_NOW | RTLD_LOCAL);
  void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  const char *home = getenv("CUDA_HOME");
  const char *dirs[] = { home, home, "/usr/local/cuda", "/usr/local/cuda" };
  const char *subdirs[] = { "lib64", "extras/CUPTI/lib64", "lib64", "extras/CUPTI/lib64" };
  for (size_t i = 0; !h && i < G_N_ELEMENTS(dirs); i++) {
    if (!dirs[i] || !*dirs[i])
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", dirs[i], subdirs[i], soname);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  return h;
}

static void load(void)
{
  void *h = open_lib();
  if (!h) {
    snprintf(why_text, sizeof why_text,
             "CUPTI not found (%s on the library path, $CUDA_HOME or /usr/local/cuda; "
             "TRACESCOPE_CUPTI names another): device times are off", soname);
    load_why = why_text;
    return;
  }
#define SYM(name)                                                              \
  if (!(*(void **)&api.name = dlsym(h, "cupti" #name))) {                       \
    snprintf(why_text, sizeof why_text, "CUPTI lacks cupti%s: device times are off", #name); \
    load_why = why_text;                                                       \
    dlclose(h);                                                                \
    return;                                                                    \
  }
  SYM(GetVersion)
  SYM(GetResultString)
  SYM(ActivityGetNextRecord)
  SYM(ActivityEnable)
  SYM(ActivityDisable)
  SYM(ActivityFlushAll)
  SYM(ActivityRegisterCallbacks)
  SYM(ActivityRegisterTimestampCallback)
  SYM(ActivityGetNumDroppedRecords)
  SYM(ActivityPushExternalCorrelationId)
  SYM(ActivityPopExternalCorrelationId)
  SYM(Subscribe)
  SYM(Unsubscribe)
  SYM(EnableCallback)
  SYM(GetGraphNodeId)
#undef SYM
  *(void **)&api.ActivityEnableRuntimeApi = dlsym(h, "cuptiActivityEnableRuntimeApi");
  *(void **)&api.ActivityEnableDriverApi = dlsym(h, "cuptiActivityEnableDriverApi");
  if (api.GetVersion(&api.version) != CUPTI_SUCCESS || api.version / 10000 != CUPTI_MAJOR) {
    snprintf(why_text, sizeof why_text,
             "CUPTI %u.%u at run time, built against %u.%u: its activity records are laid out "
             "otherwise, so device times are off (rebuild against the CUPTI installed)",
             api.version / 10000, api.version / 100 % 100, CUPTI_MAJOR,
             (unsigned)(CUPTI_API_VERSION / 100 % 100));
    load_why = why_text;
    dlclose(h);
    return;
  }
  api.lib = h;
}

const ts_cupti_api *ts__cupti_load(const char **why)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, load);
  if (!api.lib) {
    *why = load_why;
    return NULL;
  }
  return &api;
}
