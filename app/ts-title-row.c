/* ts-title-row.c — a header row whose title gets its natural width first
 * (ts-title-row.h).  Children are laid out left to right, SPACING apart,
 * the first taking what the others leave; a hidden child takes nothing. */
#include "ts-title-row.h"

#define SPACING 4 /* px: 6 left sequential_model's title 2 px short of the 1280 px window's row */

struct _TsTitleRow {
  GtkWidget parent_instance;
  GtkWidget *title;       /* inside the first child: its natural width is wanted */
  GtkWidget *collapsible; /* a child that hides when the title needs its room */
  gboolean collapsed;
};

static void ts_title_row_buildable_init(GtkBuildableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(TsTitleRow, ts_title_row, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(GTK_TYPE_BUILDABLE, ts_title_row_buildable_init))

static GtkBuildableIface *parent_buildable;

/* <child> in a template: the widget goes at the end of the row. */
static void ts_title_row_add_child(GtkBuildable *buildable, GtkBuilder *builder, GObject *child, const char *type)
{
  if (GTK_IS_WIDGET(child))
    gtk_widget_set_parent(GTK_WIDGET(child), GTK_WIDGET(buildable));
  else
    parent_buildable->add_child(buildable, builder, child, type);
}

static void ts_title_row_buildable_init(GtkBuildableIface *iface)
{
  parent_buildable = g_type_interface_peek_parent(iface);
  iface->add_child = ts_title_row_add_child;
}

enum { PROP_0, PROP_TITLE, PROP_COLLAPSIBLE, N_PROPS };
static GParamSpec *properties[N_PROPS];

static int natural_width(GtkWidget *widget)
{
  int natural = 0;
  gtk_widget_measure(widget, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &natural, NULL, NULL);
  return natural;
}

/* The width the children other than the first take side by side, with
 * or without the collapsible one (its natural width, or minimum when
 * natural is false). */
static int tools_width(TsTitleRow *self, gboolean with_collapsible, gboolean natural)
{
  int width = 0;
  GtkWidget *first = gtk_widget_get_first_child(GTK_WIDGET(self));
  for (GtkWidget *c = first ? gtk_widget_get_next_sibling(first) : NULL; c; c = gtk_widget_get_next_sibling(c)) {
    if (!gtk_widget_get_visible(c) || (c == self->collapsible && !with_collapsible))
      continue;
    int min = 0, nat = 0;
    gtk_widget_measure(c, GTK_ORIENTATION_HORIZONTAL, -1, &min, &nat, NULL, NULL);
    width += (natural ? nat : min) + SPACING;
  }
  return width;
}

static void ts_title_row_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                 int *natural, int *minimum_baseline, int *natural_baseline)
{
  TsTitleRow *self = TS_TITLE_ROW(widget);
  GtkWidget *first = gtk_widget_get_first_child(widget);
  *minimum = *natural = 0;
  if (orientation == GTK_ORIENTATION_HORIZONTAL) {
    if (first)
      gtk_widget_measure(first, orientation, -1, minimum, natural, NULL, NULL);
    *minimum += tools_width(self, FALSE, FALSE);
    *natural += tools_width(self, TRUE, TRUE);
    return;
  }
  for (GtkWidget *c = first; c; c = gtk_widget_get_next_sibling(c)) {
    if (!gtk_widget_get_visible(c))
      continue;
    int min = 0, nat = 0;
    gtk_widget_measure(c, orientation, -1, &min, &nat, NULL, NULL);
    *minimum = MAX(*minimum, min);
    *natural = MAX(*natural, nat);
  }
}

static void ts_title_row_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
  TsTitleRow *self = TS_TITLE_ROW(widget);
  GtkWidget *first = gtk_widget_get_first_child(widget);
  if (!first)
    return;
  int title = natural_width(self->title ? self->title : first);
  gboolean collapsed = self->collapsible && title + tools_width(self, TRUE, TRUE) > width;
  if (self->collapsible && collapsed != self->collapsed)
    gtk_widget_set_child_visible(self->collapsible, !collapsed); /* no resize: the row's size stays */
  self->collapsed = collapsed;
  /* the tools at their natural width while the first child keeps its
   * minimum, else at their minimum; the first child takes the rest */
  int first_min = 0;
  gtk_widget_measure(first, GTK_ORIENTATION_HORIZONTAL, -1, &first_min, NULL, NULL, NULL);
  gboolean natural = first_min + tools_width(self, !collapsed, TRUE) <= width;
  int x = MAX(width - tools_width(self, !collapsed, natural), first_min);
  gtk_widget_allocate(first, x, height, baseline, NULL);
  for (GtkWidget *c = gtk_widget_get_next_sibling(first); c; c = gtk_widget_get_next_sibling(c)) {
    if (!gtk_widget_get_visible(c) || (c == self->collapsible && collapsed))
      continue;
    int min = 0, nat = 0;
    gtk_widget_measure(c, GTK_ORIENTATION_HORIZONTAL, -1, &min, &nat, NULL, NULL);
    int w = natural ? nat : min;
    x += SPACING;
    gtk_widget_allocate(c, w, height, baseline, gsk_transform_translate(NULL, &GRAPHENE_POINT_INIT((float)x, 0)));
    x += w;
  }
}

gboolean ts_title_row_get_collapsed(TsTitleRow *self)
{
  g_return_val_if_fail(TS_IS_TITLE_ROW(self), FALSE);
  return self->collapsed;
}

static void ts_title_row_dispose(GObject *object)
{
  TsTitleRow *self = TS_TITLE_ROW(object);
  self->title = self->collapsible = NULL; /* descendants: they go with the children */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  G_OBJECT_CLASS(ts_title_row_parent_class)->dispose(object);
}

static void ts_title_row_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  TsTitleRow *self = TS_TITLE_ROW(object);
  switch (id) {
  case PROP_TITLE: g_value_set_object(value, self->title); break;
  case PROP_COLLAPSIBLE: g_value_set_object(value, self->collapsible); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

/* Both are set once, from the template: the widgets are the row's. */
static void ts_title_row_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  TsTitleRow *self = TS_TITLE_ROW(object);
  switch (id) {
  case PROP_TITLE: self->title = g_value_get_object(value); break;
  case PROP_COLLAPSIBLE: self->collapsible = g_value_get_object(value); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); return;
  }
  gtk_widget_queue_resize(GTK_WIDGET(self));
}

static void ts_title_row_class_init(TsTitleRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = ts_title_row_dispose;
  object_class->get_property = ts_title_row_get_property;
  object_class->set_property = ts_title_row_set_property;
  widget_class->measure = ts_title_row_measure;
  widget_class->size_allocate = ts_title_row_size_allocate;
  properties[PROP_TITLE] = g_param_spec_object("title", NULL, NULL, GTK_TYPE_WIDGET,
                                               G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_COLLAPSIBLE] = g_param_spec_object("collapsible", NULL, NULL, GTK_TYPE_WIDGET,
                                                     G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  gtk_widget_class_set_css_name(widget_class, "box");
}

static void ts_title_row_init(TsTitleRow *self)
{
}
