/* ts-sidebar-item.c — function and concrete-function rows. */
#include "ts-sidebar-item.h"

struct _TsSidebarItem {
  GObject parent_instance;
  TsLoadedModule *module;
  TsModuleFunction *fn;
  TsConcreteInfo *concrete; /* NULL: a function row (the module owns both) */
  int index;
  GListStore *children;
  char *title;
  char *subtitle;
};

enum { PROP_0, PROP_TITLE, PROP_SUBTITLE, PROP_TITLE_MARKUP, PROP_SUBTITLE_MARKUP, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(TsSidebarItem, ts_sidebar_item, G_TYPE_OBJECT)

static void ts_sidebar_item_finalize(GObject *object)
{
  TsSidebarItem *self = TS_SIDEBAR_ITEM(object);
  g_clear_object(&self->module);
  g_clear_object(&self->children);
  g_free(self->title);
  g_free(self->subtitle);
  G_OBJECT_CLASS(ts_sidebar_item_parent_class)->finalize(object);
}

/* The longest run of text without a break that the sidebar shows whole;
 * a longer one (a very long name) ends in "…" rather than widening the
 * sidebar or being broken.  The tooltip has the whole text. */
#define MAX_UNBROKEN_CHARS 30

/* Lines may break only between arguments: after ", " outside a shape
 * ("[2,3]", "shape=(2, 3)", a list "[1, -1]") and after " · ".  Every other
 * space becomes a no-break space, and a word joiner follows each "_" and
 * "-" so that no name is broken or hyphenated. */
static char *breakable_between_arguments(const char *text)
{
  GString *out = g_string_new(NULL);
  int shape_depth = 0; /* inside [..] or a "(" that follows "=" */
  GArray *opened = g_array_new(FALSE, FALSE, sizeof(gboolean));
  int run = 0;              /* characters since the last break */
  gboolean cut = FALSE;     /* dropping the rest of a run too long */
  for (const char *c = text; *c; c = g_utf8_next_char(c)) {
    if (*c == '[' || *c == '(') {
      gboolean shape = *c == '[' || (c > text && c[-1] == '=');
      g_array_append_val(opened, shape);
      shape_depth += shape;
    } else if ((*c == ']' || *c == ')') && opened->len > 0) {
      shape_depth -= g_array_index(opened, gboolean, opened->len - 1);
      g_array_set_size(opened, opened->len - 1);
    }
    gboolean after_comma = *c == ' ' && c > text && c[-1] == ',' && shape_depth == 0;
    gboolean after_dot = *c == ' ' && c >= text + 2 && g_str_has_prefix(c - 2, "·"); /* two bytes */
    if (after_comma || after_dot || *c == '\n') {
      g_string_append_c(out, *c);
      run = 0;
      cut = FALSE;
      continue;
    }
    if (cut)
      continue;
    if (++run > MAX_UNBROKEN_CHARS) {
      g_string_append(out, "…");
      cut = TRUE;
      continue;
    }
    if (*c == ' ') {
      g_string_append(out, "\u00a0");
    } else {
      g_string_append_len(out, c, g_utf8_next_char(c) - c);
      if (*c == '_' || *c == '-')
        g_string_append(out, "\u2060");
    }
  }
  g_array_free(opened, TRUE);
  return g_string_free(out, FALSE);
}

/* text escaped, inside <tag> unless tag is NULL; a wrapping label's text
 * made breakable only between arguments (a single-line label ellipsizes
 * the whole text itself, and its tooltip then shows what it left out) */
static char *markup(const char *raw, const char *tag, gboolean wraps)
{
  g_autofree char *text = wraps ? breakable_between_arguments(raw ? raw : "") : g_strdup(raw ? raw : "");
  g_autofree char *escaped = g_markup_escape_text(text, -1);
  return tag ? g_strdup_printf("<%s>%s</%s>", tag, escaped, tag) : g_steal_pointer(&escaped);
}

static void ts_sidebar_item_get_property(GObject *object, guint prop_id, GValue *value,
                                         GParamSpec *pspec)
{
  TsSidebarItem *self = TS_SIDEBAR_ITEM(object);
  switch (prop_id) {
  case PROP_TITLE: g_value_set_string(value, self->title); break;
  case PROP_SUBTITLE: g_value_set_string(value, self->subtitle); break;
  case PROP_TITLE_MARKUP: g_value_take_string(value, markup(self->title, self->concrete ? "tt" : "b", FALSE)); break;
  case PROP_SUBTITLE_MARKUP:
    g_value_take_string(value, markup(self->subtitle, self->concrete ? "tt" : NULL, TRUE));
    break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_sidebar_item_class_init(TsSidebarItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->finalize = ts_sidebar_item_finalize;
  object_class->get_property = ts_sidebar_item_get_property;
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  properties[PROP_TITLE] = g_param_spec_string("title", NULL, NULL, NULL, flags);
  properties[PROP_SUBTITLE] = g_param_spec_string("subtitle", NULL, NULL, NULL, flags);
  properties[PROP_TITLE_MARKUP] = g_param_spec_string("title-markup", NULL, NULL, NULL, flags);
  properties[PROP_SUBTITLE_MARKUP] = g_param_spec_string("subtitle-markup", NULL, NULL, NULL, flags);
  g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void ts_sidebar_item_init(TsSidebarItem *self)
{
  self->index = -1;
}

/* "x, y · 2 concrete functions · traced 2×" */
static void update_function_subtitle(TsSidebarItem *self)
{
  GString *s = g_string_new(NULL);
  int n_params = self->fn->n_params;
  for (int i = 0; i < n_params; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "(", self->fn->params[i]);
  g_string_append(s, n_params ? ")" : "()");
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->children));
  if (n == 0)
    g_string_append(s, " · not traced");
  else
    g_string_append_printf(s, " · %u concrete function%s · traced %d×", n, n == 1 ? "" : "s",
                           self->fn->trace_count);
  g_free(self->subtitle);
  self->subtitle = g_string_free(s, FALSE);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SUBTITLE]);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SUBTITLE_MARKUP]);
}

TsSidebarItem *ts_sidebar_item_new_function(TsLoadedModule *module, TsModuleFunction *fn)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(module) && fn != NULL, NULL);
  TsSidebarItem *self = g_object_new(TS_TYPE_SIDEBAR_ITEM, NULL);
  self->module = g_object_ref(module);
  self->fn = fn;
  self->title = g_strdup(fn->name);
  self->children = g_list_store_new(TS_TYPE_SIDEBAR_ITEM);
  for (guint i = 0; i < fn->concrete->len; i++)
    ts_sidebar_item_add_concrete(self, g_ptr_array_index(fn->concrete, i));
  update_function_subtitle(self);
  return self;
}

void ts_sidebar_item_add_concrete(TsSidebarItem *self, TsConcreteInfo *cf)
{
  g_return_if_fail(TS_IS_SIDEBAR_ITEM(self) && self->concrete == NULL && cf != NULL);
  TsSidebarItem *child = g_object_new(TS_TYPE_SIDEBAR_ITEM, NULL);
  child->module = g_object_ref(self->module);
  child->fn = self->fn;
  child->concrete = cf;
  child->index = cf->index;
  child->title = g_strdup(cf->signature);
  child->subtitle = g_strdup(cf->pretty_signature);
  g_list_store_append(self->children, child);
  g_object_unref(child);
  update_function_subtitle(self);
}

gboolean ts_sidebar_item_is_function(TsSidebarItem *self) { return self->concrete == NULL; }
const char *ts_sidebar_item_get_function_name(TsSidebarItem *self) { return self->fn->name; }
TsModuleFunction *ts_sidebar_item_get_function(TsSidebarItem *self) { return self->fn; }
TsLoadedModule *ts_sidebar_item_get_module(TsSidebarItem *self) { return self->module; }
TsConcreteInfo *ts_sidebar_item_get_concrete(TsSidebarItem *self) { return self->concrete; }
int ts_sidebar_item_get_concrete_index(TsSidebarItem *self) { return self->index; }

GListModel *ts_sidebar_item_get_children(TsSidebarItem *self)
{
  return self->children ? G_LIST_MODEL(self->children) : NULL;
}
