/* crash-helper MODULE FUNCTION [--thread | --limit-as]: a stand-in for the
 * worker for tests/test-crash-report.c.  Installs the crash handler on fd 3
 * (the crash pipe), opens MODULE and calls FUNCTION, which crashes.
 * --thread calls it on a thread of its own (after a first thread took an
 * alternate signal stack and exited, releasing it); --limit-as first limits
 * the address space to what is mapped now plus 256 MiB. */
#include <gmodule.h>
#include <stdio.h>
#include <sys/resource.h>

#include "crash-handler.h"

#define CRASH_FD 3
#define AS_HEADROOM (G_GUINT64_CONSTANT(256) << 20)

typedef void (*CrashFunc)(void);

static gpointer
init_and_exit(gpointer data)
{
  ts_crash_handler_thread_init();
  ts_crash_handler_thread_init();   /* once is enough: a no-op */
  return NULL;
}

static gpointer
run_on_thread(gpointer data)
{
  ts_crash_handler_thread_init();
  ((CrashFunc) data)();
  return NULL;
}

static gboolean
limit_address_space(void)
{
  g_autofree char *statm = NULL;
  guint64 pages;
  if (!g_file_get_contents("/proc/self/statm", &statm, NULL, NULL) ||
      sscanf(statm, "%" G_GUINT64_FORMAT, &pages) != 1)
    return FALSE;
  struct rlimit limit;
  limit.rlim_cur = limit.rlim_max = pages * (guint64) sysconf(_SC_PAGESIZE) + AS_HEADROOM;
  return setrlimit(RLIMIT_AS, &limit) == 0;
}

int
main(int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  if (argc < 3) {
    g_printerr("usage: crash-helper MODULE FUNCTION [--thread | --limit-as]\n");
    return 2;
  }
  const char *mode = argc > 3 ? argv[3] : "";
  GModule *module = g_module_open(argv[1], G_MODULE_BIND_LOCAL);
  gpointer symbol = NULL;
  if (module == NULL || !g_module_symbol(module, argv[2], &symbol)) {
    g_printerr("crash-helper: %s\n", g_module_error());
    return 2;
  }
  if (!ts_crash_handler_install(CRASH_FD, &error)) {
    g_printerr("crash-helper: %s\n", error->message);
    return 2;
  }
  if (g_str_equal(mode, "--limit-as") && !limit_address_space()) {
    g_printerr("crash-helper: cannot limit the address space\n");
    return 2;
  }
  CrashFunc crash = (CrashFunc) symbol;
  if (g_str_equal(mode, "--thread")) {
    g_thread_join(g_thread_new("exits", init_and_exit, NULL));
    g_thread_join(g_thread_new("crash", run_on_thread, (gpointer) crash));
  }
  else
    crash();
  g_printerr("crash-helper: %s returned\n", argv[2]);
  return 1;
}
