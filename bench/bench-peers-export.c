/* bench-peers-export.c — tracescope-bench-export DIR: runs each workload
 * of the side-by-side benchmark once as a graph and saves what the peers
 * need to run the same model: DIR/KEY/argN.npy (tensor arguments),
 * DIR/KEY/<variable>.npy (the weights the seeds made, read from the
 * traced graph's variable handles), DIR/KEY/out.npy (our result, which the
 * peers compare theirs with) and DIR/KEY/workload.json naming them all;
 * and DIR/KEY/model.onnx, the traced function as ts_concrete_save_onnx
 * writes it, with DIR/manifest.json listing those models for
 * bench/peers/ort_bench.mjs (ONNX Runtime on our export). */
#include "peers-workloads.h"

#include <tracescope-onnx.h>

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Saves t as DIR/file; false with a message on stderr. */
static bool save(const char *dir, const char *file, const ts_tensor *t)
{
  char *path = g_build_filename(dir, file, NULL);
  bool ok = ts_npy_save(path, t);
  g_free(path);
  return ok;
}

/* The variables of g (handles named "variable=NAME" in its text), saved
 * as NAME.npy with '/' turned into '.'; their entries into json. */
static bool save_variables(const char *dir, const ts_graph *g, GString *json)
{
  char *text = ts_graph_to_text(g);
  char **lines = g_strsplit(text, "\n", -1);
  free(text);
  bool ok = true;
  int n = 0;
  for (int i = 0; lines[i] && ok; i++) {
    const char *hash = strchr(lines[i], '#'), *var = strstr(lines[i], "variable=");
    if (!hash || !var)
      continue;
    int id = atoi(hash + 1);
    var += strlen("variable=");
    char *name = g_strndup(var, strcspn(var, ",}"));
    char *file = g_strdup_printf("%s.npy", name);
    g_strdelimit(file, "/", '.');
    const ts_tensor *value = ts_node_value(ts_graph_node(g, id));
    ok = value && save(dir, file, value);
    g_string_append_printf(json, "%s\"%s\": \"%s\"", n++ ? ", " : "", name, file);
    g_free(name);
    g_free(file);
  }
  g_strfreev(lines);
  return ok;
}

/* DIR/model.onnx from fn's concrete function, and its entry in manifest
 * (ort_bench.mjs's format: the model, its inputs by name, our output). */
static bool export_onnx(const char *dir, const peer_workload *w, ts_function *fn, const ts_value *args,
                        int n_args, GString *manifest)
{
  ts_concrete *cf = ts_function_concrete(fn, 0);
  char *path = g_build_filename(dir, "model.onnx", NULL);
  bool ok = ts_concrete_save_onnx(cf, path);
  g_free(path);
  if (!ok)
    return false;
  const ts_graph *g = ts_concrete_graph(cf);
  g_string_append_printf(manifest, "%s\n  \"%s\": {\"label\": \"%s\", \"model\": \"%s/model.onnx\", \"inputs\": [",
                         manifest->len > 1 ? "," : "", w->key, w->label, w->key);
  for (int i = 0, k = 0; i < n_args; i++) {
    if (args[i].kind != TS_VALUE_TENSOR)
      continue;
    const char *name = ts_node_name(ts_graph_node(g, ts_graph_input(g, k)));
    g_string_append_printf(manifest, "%s{\"name\": \"%s\", \"file\": \"%s/arg%d.npy\"}", k ? ", " : "", name,
                           w->key, i);
    k++;
  }
  g_string_append_printf(manifest, "], \"expected\": \"%s/out.npy\"}", w->key);
  return true;
}

static bool export_workload(ts_module *seeds, const peer_workload *w, const char *root, GString *manifest)
{
  char *dir = g_build_filename(root, w->key, NULL);
  GString *json = g_string_new(NULL);
  ts_function *fn = ts_module_lookup(seeds, w->seed);
  ts_value args[PEER_MAX_ARGS];
  int n_args = fn ? w->args(args) : 0;
  ts_tensor *out = fn ? ts_function_call(fn, args, n_args) : NULL;
  bool ok = out != NULL;
  if (ok && g_mkdir_with_parents(dir, 0755) != 0) {
    ts_error_set(TS_ERR_IO, TS_HERE, NULL, "cannot make %s: %s", dir, g_strerror(errno));
    ok = false;
  }
  g_string_append_printf(json, "{\n  \"key\": \"%s\",\n  \"label\": \"%s\",\n  \"seed\": \"%s\",\n"
                         "  \"args\": [", w->key, w->label, w->seed);
  for (int i = 0; i < n_args && ok; i++) {
    if (args[i].kind == TS_VALUE_INT) {
      g_string_append_printf(json, "%s{\"int\": %lld}", i ? ", " : "", (long long)args[i].i);
      continue;
    }
    char file[32];
    g_snprintf(file, sizeof file, "arg%d.npy", i);
    ok = save(dir, file, args[i].tensor);
    g_string_append_printf(json, "%s{\"npy\": \"%s\"}", i ? ", " : "", file);
  }
  g_string_append(json, "],\n  \"vars\": {");
  ok = ok && save_variables(dir, ts_concrete_graph(ts_function_concrete(fn, 0)), json);
  g_string_append(json, "},\n  \"output\": \"out.npy\"\n}\n");
  ok = ok && save(dir, "out.npy", out);
  ok = ok && export_onnx(dir, w, fn, args, n_args, manifest);
  char *path = g_build_filename(dir, "workload.json", NULL);
  GError *error = NULL;
  if (ok && !g_file_set_contents(path, json->str, (gssize)json->len, &error)) {
    ts_error_set(TS_ERR_IO, TS_HERE, NULL, "%s", error->message);
    g_error_free(error);
    ok = false;
  }
  if (!ok) {
    ts_error *e = ts_error_take();
    fprintf(stderr, "tracescope-bench-export: %s: %s\n", w->key,
            e ? e->message : fn ? "failed" : "no such seed function");
    ts_error_free(e);
  }
  g_free(path);
  g_string_free(json, TRUE);
  g_free(dir);
  return ok;
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: tracescope-bench-export DIR\n");
    return 2;
  }
  ts_module *seeds = ts_module_open("seeds");
  if (!seeds) {
    ts_error *e = ts_error_take();
    fprintf(stderr, "tracescope-bench-export: %s\n", e ? e->message : "cannot open seeds");
    ts_error_free(e);
    return 1;
  }
  bool ok = true;
  GString *manifest = g_string_new("{");
  for (int i = 0; i < PEER_N_WORKLOADS; i++) {
    ts_scope *scope = ts_scope_begin();
    ok = export_workload(seeds, &PEER_WORKLOADS[i], argv[1], manifest) && ok;
    ts_scope_end(scope);
  }
  g_string_append(manifest, "\n}\n");
  char *path = g_build_filename(argv[1], "manifest.json", NULL);
  GError *error = NULL;
  if (!g_file_set_contents(path, manifest->str, (gssize)manifest->len, &error)) {
    fprintf(stderr, "tracescope-bench-export: %s\n", error->message);
    g_error_free(error);
    ok = false;
  }
  g_free(path);
  g_string_free(manifest, TRUE);
  ts_module_free(seeds);
  ts_release_all();
  return ok ? 0 : 1;
}
