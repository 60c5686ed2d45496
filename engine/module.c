/* module.c — modules: shared objects exporting tracescope_module, loaded
 * with their ABI checked; each export becomes a polymorphic ts_function. */
#include "engine-private.h"

#include <gmodule.h>
#include <stdio.h>

struct ts_module {
  GModule *handle; /* NULL for a static module */
  char *path;
  char *title;
  int n_functions;
  ts_function **functions;
  char ***examples;      /* per function: its example arguments, or NULL */
};

static const ts_loc no_loc = { NULL, NULL, 0 };

void ts_module_free(ts_module *module)
{
  if (!module)
    return;
  for (int i = 0; i < module->n_functions; i++) {
    ts_function_free(module->functions[i]);
    g_strfreev(module->examples[i]);
  }
  g_free(module->functions);
  g_free(module->examples);
  if (module->handle)
    g_module_close(module->handle);
  g_free(module->path);
  g_free(module->title);
  g_free(module);
}

static bool is_identifier(const char *s)
{
  if (!g_ascii_isalpha(*s) && *s != '_')
    return false;
  for (s++; *s; s++)
    if (!g_ascii_isalnum(*s) && *s != '_')
      return false;
  return true;
}

/* "name, x, y": a function named name with parameters x and y; NULL if any
 * part is not an identifier. */
static ts_function *function_from_export(const ts_export *e)
{
  char **parts = g_strsplit(e->spec, ",", -1);
  int n = (int)g_strv_length(parts);
  bool ok = n > 0;
  for (int i = 0; ok && i < n; i++)
    ok = is_identifier(g_strstrip(parts[i]));
  ts_function *f = NULL;
  if (ok) {
    char *params = g_strjoinv(", ", parts + 1);
    f = ts_function_new(parts[0], e->fn, params);
    g_free(params);
  }
  g_strfreev(parts);
  return f;
}

#define MAX_EXAMPLES 64 /* a list without its NULL must not be read without end */

/* A copy of f's example arguments, checked: one per parameter, each an
 * argument spec that parses.  NULL (no examples) or false with an error. */
static bool examples_from_export(const ts_export *e, ts_function *f, const char *path, char ***out)
{
  *out = NULL;
  if (!e->examples)
    return true;
  int n_params = ts_function_n_params(f), n = 0;
  while (n < MAX_EXAMPLES && e->examples[n])
    n++;
  if (n == MAX_EXAMPLES || (n_params > 0 && n != n_params)) {
    ts_error_set(TS_ERR_FORMAT, no_loc, NULL, "'%s': the examples of '%s' give %s%d argument%s; it takes %d",
                 path, ts_function_name(f), n == MAX_EXAMPLES ? "at least " : "", n, n == 1 ? "" : "s", n_params);
    return false;
  }
  ts_scope *scope = ts_scope_begin();
  bool ok = true;
  for (int i = 0; ok && i < n; i++) {
    ts_value v;
    if ((ok = ts_value_parse(e->examples[i], &v)))
      ts_value_clear(&v);
    else {
      ts_error *err = ts_error_take();
      ts_error_set(TS_ERR_FORMAT, no_loc, NULL, "'%s': example argument %d of '%s': %s", path, i,
                   ts_function_name(f), err && err->detail ? err->detail : "not an argument spec");
      ts_error_free(err);
    }
  }
  ts_scope_end(scope);
  if (ok)
    *out = g_strdupv((char **)e->examples);
  return ok;
}

/* Checks info and fills module's functions; false with an error naming path. */
static bool module_load_info(ts_module *module, const ts_module_info *info)
{
  const char *path = module->path;
  if (info->abi_version != TS_ABI_VERSION) {
    ts_error_set(TS_ERR_FORMAT, no_loc, NULL, "'%s' was built for Tracescope ABI %u, this is ABI %d",
                 path, info->abi_version, TS_ABI_VERSION);
    return false;
  }
  if (info->n_exports < 0 || (info->n_exports > 0 && !info->exports)) {
    ts_error_set(TS_ERR_FORMAT, no_loc, NULL, "'%s' has a malformed export table (%d exports)",
                 path, info->n_exports);
    return false;
  }
  module->title = g_strdup(info->title ? info->title : "");
  module->functions = g_new0(ts_function *, info->n_exports > 0 ? info->n_exports : 1);
  module->examples = g_new0(char **, info->n_exports > 0 ? info->n_exports : 1);
  for (int i = 0; i < info->n_exports; i++) {
    const ts_export *e = &info->exports[i];
    ts_function *f = e->fn && e->spec ? function_from_export(e) : NULL;
    if (!f) {
      ts_error_set(TS_ERR_FORMAT, no_loc, NULL, "'%s': export %d has a malformed spec '%s'", path,
                   i, e->spec ? e->spec : "(null)");
      return false;
    }
    module->functions[module->n_functions++] = f;
    if (!examples_from_export(e, f, path, &module->examples[i]))
      return false;
    if (ts_module_lookup(module, ts_function_name(f)) != f) {
      ts_error_set(TS_ERR_FORMAT, no_loc, NULL, "'%s' exports function '%s' twice", path,
                   ts_function_name(f));
      return false;
    }
  }
  return true;
}

ts_module *ts_module_new_static(const ts_module_info *info, const char *path)
{
  TS_CHECK_ARG(info != NULL, NULL);
  ts_module *module = g_new0(ts_module, 1);
  module->path = g_strdup(path ? path : "(static)");
  if (!module_load_info(module, info)) {
    ts_module_free(module);
    return NULL;
  }
  return module;
}

/* "seeds" is the bundled module: $TRACESCOPE_SEEDS, else the build tree's, else the installed one. */
static const char *module_resolve(const char *path)
{
  if (strcmp(path, "seeds") != 0)
    return path;
  const char *env = g_getenv("TRACESCOPE_SEEDS");
  if (env && *env)
    return env;
  if (g_file_test(TS_SEEDS_BUILD_PATH, G_FILE_TEST_EXISTS))
    return TS_SEEDS_BUILD_PATH;
  return TS_SEEDS_INSTALL_PATH;
}

/* What to do about a module file that is not there: the file meant
 * (NAME.so, the bundled seeds), else what a module is. */
static char *missing_module_hint(const char *given)
{
  if (strcmp(given, "seeds") == 0) {
    const char *env = g_getenv("TRACESCOPE_SEEDS");
    return g_strdup(env && *env ? "TRACESCOPE_SEEDS names it: set it to the bundled examples' seeds.so, or unset it"
                                : "the bundled examples are neither built nor installed: build them (make build) "
                                  "or install them (meson install), or set TRACESCOPE_SEEDS to seeds.so");
  }
  g_autofree char *so = g_strconcat(given, ".so", NULL);
  if (g_file_test(so, G_FILE_TEST_IS_REGULAR))
    return g_strdup_printf("did you mean '%s'?", so);
  g_autofree char *base = g_path_get_basename(given);
  const char *const bundled[] = { "seeds" };
  if (ts_nearest_name(base, bundled, 1))
    return g_strdup("did you mean 'seeds', the bundled examples?");
  return g_strdup("a module is the path of a .so built against libtracescope, or seeds for the "
                  "bundled examples");
}

/* Whether the file starts as an ELF object does. */
static bool is_elf(const char *path)
{
  char magic[4] = { 0 };
  FILE *f = fopen(path, "rb");
  if (!f)
    return false;
  size_t n = fread(magic, 1, sizeof magic, f);
  fclose(f);
  return n == sizeof magic && memcmp(magic, "\x7f" "ELF", 4) == 0;
}

/* dlopen's error, and for a file that is not a shared object (C source,
 * an executable) how to build one. */
static void set_open_error(const char *path, const char *why)
{
  bool elf = is_elf(path);
  if (elf && !strstr(why, "executable")) {
    ts_error_set(TS_ERR_IO, no_loc, NULL, "cannot open module '%s': %s", path, why);
    return;
  }
  bool source = g_str_has_suffix(path, ".c");
  g_autofree char *stem = source ? g_strndup(path, strlen(path) - 2) : g_strdup("FILE");
  ts_error_set(TS_ERR_IO, no_loc, NULL,
               "cannot open module '%s': %s (build a shared object: "
               "cc -shared -fPIC %s.c -o %s.so $(pkg-config --cflags --libs tracescope))",
               path, elf ? why : "not a shared object", stem, stem);
}

ts_module *ts_module_open(const char *path)
{
  TS_CHECK_ARG(path != NULL, NULL);
  const char *given = path;
  path = module_resolve(path);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_autofree char *hint = missing_module_hint(given);
    ts_error_set(TS_ERR_NOT_FOUND, no_loc, NULL, "cannot open module '%s': no such file (%s)", path, hint);
    return NULL;
  }
  /* dlopen searches the library path for names without a slash; users mean a file. */
  char *file = g_canonicalize_filename(path, NULL);
  GModule *handle = g_module_open(file, G_MODULE_BIND_LOCAL);
  g_free(file);
  if (!handle) {
    set_open_error(path, g_module_error());
    return NULL;
  }
  ts_module *module = g_new0(ts_module, 1);
  module->handle = handle;
  module->path = g_strdup(path);
  gpointer symbol = NULL;
  if (!g_module_symbol(handle, TS_MODULE_SYMBOL, &symbol) || !symbol) {
    ts_error_set(TS_ERR_FORMAT, no_loc, NULL,
                 "'%s' is not a Tracescope module: symbol " TS_MODULE_SYMBOL " not found"
                 " (a module names its functions with TS_MODULE(...) from tracescope.h)", path);
    ts_module_free(module);
    return NULL;
  }
  if (!module_load_info(module, symbol)) {
    ts_module_free(module);
    return NULL;
  }
  return module;
}

const char *ts_module_title(const ts_module *module)
{
  return module->title;
}

const char *ts_module_path(const ts_module *module)
{
  return module->path;
}

int ts_module_n_functions(const ts_module *module)
{
  return module->n_functions;
}

ts_function *ts_module_function(const ts_module *module, int i)
{
  TS_CHECK_ARG(i >= 0 && i < module->n_functions, NULL);
  return module->functions[i];
}

ts_function *ts_module_lookup(const ts_module *module, const char *name)
{
  for (int i = 0; i < module->n_functions; i++)
    if (strcmp(ts_function_name(module->functions[i]), name) == 0)
      return module->functions[i];
  return NULL;
}

const char *ts_module_nearest_function(const ts_module *module, const char *name)
{
  TS_CHECK_ARG(module != NULL, NULL);
  const char **names = g_new(const char *, module->n_functions + 1);
  for (int i = 0; i < module->n_functions; i++)
    names[i] = ts_function_name(module->functions[i]);
  const char *near = ts_nearest_name(name, names, (size_t)module->n_functions);
  g_free(names);
  return near;
}

const char *const *ts_module_examples(const ts_module *module, int i)
{
  TS_CHECK_ARG(module != NULL, NULL);
  if (i < 0 || i >= module->n_functions)
    return NULL;
  return (const char *const *)module->examples[i];
}
