/* ts-console-line.c — a console line and where it came from. */
#include "ts-console-line.h"

struct _TsConsoleLine {
  GObject parent_instance;
  guint call_id;
  char *call_label;
  char *text;
  char time_text[16]; /* made when first shown: most lines of a flood never are */
  gint64 time_us;
  TsConsoleSource source;
};

enum {
  PROP_0,
  PROP_CALL_LABEL,
  PROP_TEXT,
  PROP_TIME_TEXT,
  PROP_SOURCE_TEXT,
  PROP_IS_PRINT,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(TsConsoleLine, ts_console_line, G_TYPE_OBJECT)

static void ts_console_line_finalize(GObject *object)
{
  TsConsoleLine *self = TS_CONSOLE_LINE(object);
  g_free(self->call_label);
  g_free(self->text);
  G_OBJECT_CLASS(ts_console_line_parent_class)->finalize(object);
}

const char *ts_console_source_name(TsConsoleSource source)
{
  static const char *const NAMES[] = {
    [TS_CONSOLE_SOURCE_HOST] = "stdout",
    [TS_CONSOLE_SOURCE_PRINT] = "ts_print",
    [TS_CONSOLE_SOURCE_STDERR] = "stderr",
    [TS_CONSOLE_SOURCE_WORKER] = "worker",
  };
  g_return_val_if_fail(source < G_N_ELEMENTS(NAMES), "");
  return NAMES[source];
}

void ts_console_format_time(gint64 time_us, char buf[16])
{
  g_autoptr(GDateTime) dt = g_date_time_new_from_unix_local(time_us / G_USEC_PER_SEC);
  g_snprintf(buf, 16, "%02d:%02d:%02d.%03d", g_date_time_get_hour(dt), g_date_time_get_minute(dt),
             g_date_time_get_second(dt), (int)(time_us % G_USEC_PER_SEC / 1000));
}

static const char *time_text(TsConsoleLine *self)
{
  if (!self->time_text[0])
    ts_console_format_time(self->time_us, self->time_text);
  return self->time_text;
}

static void ts_console_line_get_property(GObject *object, guint prop_id, GValue *value,
                                         GParamSpec *pspec)
{
  TsConsoleLine *self = TS_CONSOLE_LINE(object);
  switch (prop_id) {
  case PROP_CALL_LABEL: g_value_set_string(value, self->call_label); break;
  case PROP_TEXT: g_value_set_string(value, self->text); break;
  case PROP_TIME_TEXT: g_value_set_string(value, time_text(self)); break;
  case PROP_SOURCE_TEXT: g_value_set_string(value, ts_console_source_name(self->source)); break;
  case PROP_IS_PRINT: g_value_set_boolean(value, self->source == TS_CONSOLE_SOURCE_PRINT); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_console_line_class_init(TsConsoleLineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->finalize = ts_console_line_finalize;
  object_class->get_property = ts_console_line_get_property;
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY;
  properties[PROP_CALL_LABEL] = g_param_spec_string("call-label", NULL, NULL, NULL, flags);
  properties[PROP_TEXT] = g_param_spec_string("text", NULL, NULL, NULL, flags);
  properties[PROP_TIME_TEXT] = g_param_spec_string("time-text", NULL, NULL, NULL, flags);
  properties[PROP_SOURCE_TEXT] = g_param_spec_string("source-text", NULL, NULL, NULL, flags);
  properties[PROP_IS_PRINT] = g_param_spec_boolean("is-print", NULL, NULL, FALSE, flags);
  g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void ts_console_line_init(TsConsoleLine *self)
{
}

TsConsoleLine *ts_console_line_new(guint call_id, const char *call_label, gint64 time_us,
                                   TsConsoleSource source, const char *text)
{
  g_return_val_if_fail(source <= TS_CONSOLE_SOURCE_WORKER, NULL);
  TsConsoleLine *self = g_object_new(TS_TYPE_CONSOLE_LINE, NULL);
  self->call_id = call_id;
  self->source = source;
  self->call_label = g_strdup(call_label);
  self->text = g_strdup(text);
  self->time_us = time_us;
  return self;
}

guint ts_console_line_get_call_id(TsConsoleLine *self) { return self->call_id; }
const char *ts_console_line_get_call_label(TsConsoleLine *self) { return self->call_label; }
const char *ts_console_line_get_text(TsConsoleLine *self) { return self->text; }
gint64 ts_console_line_get_time(TsConsoleLine *self) { return self->time_us; }
TsConsoleSource ts_console_line_get_source(TsConsoleLine *self) { return self->source; }

void ts_console_line_set_source(TsConsoleLine *self, TsConsoleSource source)
{
  g_return_if_fail(TS_IS_CONSOLE_LINE(self));
  if (self->source == source)
    return;
  self->source = source;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SOURCE_TEXT]);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_IS_PRINT]);
}
