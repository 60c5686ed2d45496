/* ts-worker-error.c — the error domains, registered with GDBus once. */
#include "ts-worker-error.h"

#include "ts-worker-protocol.h"

/* "InvalidArgument" from the engine's "invalid argument". */
static char *dbus_name(ts_error_code code)
{
  g_autofree char *words = g_strdup(ts_error_code_name(code));
  g_autoptr(GString) name = g_string_new(TS_WORKER_ERROR_PREFIX);
  gboolean upper = TRUE;
  for (const char *c = words; *c; c++) {
    if (!g_ascii_isalnum(*c)) {
      upper = TRUE;
      continue;
    }
    g_string_append_c(name, upper ? g_ascii_toupper(*c) : *c);
    upper = FALSE;
  }
  return g_string_free(g_steal_pointer(&name), FALSE);
}

GQuark ts_engine_error_quark(void)
{
  static gsize quark;
  if (g_once_init_enter(&quark)) {
    /* GDBus keeps the names: made once, never freed */
    static GDBusErrorEntry entries[TS_ERROR_CODE_COUNT];
    for (int c = 0; c < TS_ERROR_CODE_COUNT; c++)
      entries[c] = (GDBusErrorEntry){ c, dbus_name(c) };
    gsize q = 0;
    g_dbus_error_register_error_domain("ts-engine-error-quark", &q, entries, G_N_ELEMENTS(entries));
    g_once_init_leave(&quark, q);
  }
  return (GQuark)quark;
}

GQuark ts_worker_error_quark(void)
{
  static gsize quark;
  if (g_once_init_enter(&quark)) {
    static const GDBusErrorEntry entries[] = {
      { TS_WORKER_ERROR_SPAWN, TS_WORKER_ERROR_PREFIX "Spawn" },
      { TS_WORKER_ERROR_PROTOCOL, TS_WORKER_ERROR_PREFIX "Protocol" },
      { TS_WORKER_ERROR_DIED, TS_WORKER_ERROR_PREFIX "Died" },
      { TS_WORKER_ERROR_BUSY, TS_WORKER_ERROR_PREFIX "Busy" },
    };
    gsize q = 0;
    g_dbus_error_register_error_domain("ts-worker-error-quark", &q, entries, G_N_ELEMENTS(entries));
    g_once_init_leave(&quark, q);
  }
  return (GQuark)quark;
}

char *ts_engine_error_input_message(const ts_error *e)
{
  g_return_val_if_fail(e != NULL, NULL);
  if (!e->detail)
    return g_strdup(e->message ? e->message : "unknown error");
  return e->op ? g_strdup_printf("%s: %s", e->op, e->detail) : g_strdup(e->detail);
}
