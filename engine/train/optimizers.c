/* optimizers.c — Keras' SGD (with momentum) and Adam (tracescope-train.h).
 * Every update is an assign op on a variable, so a traced step updates the
 * weights, the slots and `iterations` inside its graph. */
#include "train-private.h"

#include <stdio.h>
#include <stdlib.h>

typedef enum opt_kind { OPT_SGD, OPT_ADAM } opt_kind;

/* A variable's slots: SGD's momentum, or Adam's m and v. */
typedef struct slots {
  ts_tensor *s[2];
} slots;

static const struct {
  const char *name;          /* the optimizer's name scope and slot prefix */
  int n_slots;
  const char *slot_names[2];
} KINDS[] = {
  [OPT_SGD] = { "SGD", 1, { "momentum" } },
  [OPT_ADAM] = { "Adam", 2, { "m", "v" } },
};

struct ts_optimizer {
  opt_kind kind;
  double lr, momentum, beta_1, beta_2, epsilon;
  ts_tensor *iterations;     /* i64 scalar variable */
  GHashTable *slots;         /* variable (borrowed key, referenced) -> slots */
};

static void slots_free(gpointer p)
{
  slots *s = p;
  ts_tensor_unref(s->s[0]);
  ts_tensor_unref(s->s[1]);
  g_free(s);
}

static ts_optimizer *optimizer_new(opt_kind kind)
{
  ts_optimizer *o = g_new0(ts_optimizer, 1);
  o->kind = kind;
  char *name = g_strdup_printf("%s/iterations", KINDS[kind].name);
  ts_scope *scope = ts_scope_begin();
  TS_INIT_SCOPE o->iterations = ts_variable_new(ts_scalar_i64(0), name);
  ts_scope_end(scope);
  g_free(name);
  o->slots = g_hash_table_new_full(g_direct_hash, g_direct_equal,
                                   (GDestroyNotify)ts_tensor_unref, slots_free);
  if (!o->iterations) {
    ts_optimizer_free(o);
    return NULL;
  }
  return o;
}

ts_optimizer *ts_sgd_new(double learning_rate, double momentum)
{
  if (!(learning_rate >= 0) || !(momentum >= 0 && momentum <= 1)) {
    train_error(TS_ERR_INVALID_ARGUMENT,
                "SGD: learning rate must be >= 0 and momentum in [0, 1], got %g and %g",
                learning_rate, momentum);
    return NULL;
  }
  ts_optimizer *o = optimizer_new(OPT_SGD);
  if (o) {
    o->lr = learning_rate;
    o->momentum = momentum;
  }
  return o;
}

ts_optimizer *ts_adam_new(double learning_rate, double beta_1, double beta_2, double epsilon)
{
  if (!(learning_rate >= 0) || !(beta_1 >= 0 && beta_1 < 1) || !(beta_2 >= 0 && beta_2 < 1) ||
      !(epsilon >= 0)) {
    train_error(TS_ERR_INVALID_ARGUMENT,
                "Adam: learning rate and epsilon must be >= 0 and betas in [0, 1), got "
                "lr %g, beta_1 %g, beta_2 %g, epsilon %g",
                learning_rate, beta_1, beta_2, epsilon);
    return NULL;
  }
  ts_optimizer *o = optimizer_new(OPT_ADAM);
  if (o) {
    o->lr = learning_rate;
    o->beta_1 = beta_1;
    o->beta_2 = beta_2;
    o->epsilon = epsilon;
  }
  return o;
}

void ts_optimizer_free(ts_optimizer *o)
{
  if (!o)
    return;
  ts_tensor_unref(o->iterations);
  g_hash_table_destroy(o->slots);
  g_free(o);
}

ts_tensor *ts_optimizer_iterations(const ts_optimizer *o)
{
  return o ? o->iterations : NULL;
}

ts_tensor *ts_optimizer_slot(const ts_optimizer *o, const ts_tensor *var, const char *name)
{
  slots *s = o && var && name ? g_hash_table_lookup(o->slots, var) : NULL;
  for (int i = 0; s && i < KINDS[o->kind].n_slots; i++)
    if (strcmp(KINDS[o->kind].slot_names[i], name) == 0)
      return s->s[i];
  return NULL;
}

/* var's slots, made (zeros, eagerly) on first use; NULL + error. */
static slots *var_slots(ts_optimizer *o, ts_tensor *var)
{
  slots *s = g_hash_table_lookup(o->slots, var);
  if (s)
    return s;
  s = g_new0(slots, 1);
  ts_scope *scope = ts_scope_begin();
  TS_INIT_SCOPE {
    for (int i = 0; i < KINDS[o->kind].n_slots; i++) {
      char *name = g_strdup_printf("%s/%s/%s", KINDS[o->kind].name, var->name ? var->name : "var",
                                   KINDS[o->kind].slot_names[i]);
      s->s[i] = ts_variable_new(ts_zeros(var->dtype, var->shape), name);
      g_free(name);
    }
  }
  ts_scope_end(scope);
  if (!s->s[0] || (KINDS[o->kind].n_slots > 1 && !s->s[1])) {
    slots_free(s);
    return NULL;
  }
  g_hash_table_insert(o->slots, ts_tensor_ref(var), s);
  return s;
}

/* A host number as a scalar of dtype dt. */
static ts_tensor *num(ts_dtype dt, double v)
{
  return dt == TS_F64 ? ts_scalar_f64(v) : ts_scalar_f32((float)v);
}

/* g's shape and dtype must be var's. */
static bool check_pair(ts_loc loc, const char *opt, int i, ts_tensor *g, ts_tensor *var)
{
  if (!var || !var->is_variable || !ts_dtype_is_float(var->dtype)) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL,
                 "%s: entry %d is not a float variable", opt, i);
    return false;
  }
  ts_shape gs = ts_tensor_shape(g);
  bool shape_ok = gs.rank == var->shape.rank;
  for (int d = 0; shape_ok && d < gs.rank; d++)
    shape_ok = gs.dim[d] < 0 || gs.dim[d] == var->shape.dim[d];
  if (ts_tensor_dtype(g) == var->dtype && shape_ok)
    return true;
  char *gspec = ts_shape_dtype_string(ts_tensor_dtype(g), gs);
  char *vspec = ts_shape_dtype_string(var->dtype, var->shape);
  ts_error_set(TS_ERR_SHAPE, loc, NULL, "%s: gradient %d is %s, but its variable '%s' is %s",
               opt, i, gspec, var->name ? var->name : "?", vspec);
  free(gspec);
  free(vspec);
  return false;
}

static void sgd_update(ts_loc loc, const ts_optimizer *o, ts_tensor *g, ts_tensor *var, slots *s)
{
  ts_dtype dt = var->dtype;
  ts_tensor *step = ts_mul_at(loc, num(dt, o->lr), g);
  if (o->momentum == 0) {
    ts_assign_sub_at(loc, var, step);
    return;
  }
  ts_tensor *v = ts_sub_at(loc, ts_mul_at(loc, num(dt, o->momentum), ts_read_at(loc, s->s[0])), step);
  ts_assign_add_at(loc, var, ts_assign_at(loc, s->s[0], v));
}

/* Adam's step count as the update sees it: beta_1^t and beta_2^t, t =
 * iterations + 1, in dtype dt. */
typedef struct adam_powers {
  ts_tensor *beta_1, *beta_2;
} adam_powers;

static adam_powers adam_powers_of(ts_loc loc, const ts_optimizer *o, ts_dtype dt)
{
  ts_tensor *t = ts_cast_at(loc, ts_add_at(loc, ts_read_at(loc, o->iterations), ts_scalar_i64(1)), dt);
  return (adam_powers){ ts_pow_at(loc, num(dt, o->beta_1), t), ts_pow_at(loc, num(dt, o->beta_2), t) };
}

/* One ResourceApplyAdam per variable (ops/apply.c), as TensorFlow's
 * optimizer does: var, m and v updated in one pass, where the same update
 * written as separate ops would take a dozen passes over the data. */
static void adam_update(ts_loc loc, const ts_optimizer *o, ts_tensor *g, ts_tensor *var,
                        slots *s, adam_powers p)
{
  ts_dtype dt = var->dtype;
  ts_apply_adam_at(loc, var, s->s[0], s->s[1], p.beta_1, p.beta_2, num(dt, o->lr),
                   num(dt, o->beta_1), num(dt, o->beta_2), num(dt, o->epsilon), g);
}

bool ts_optimizer_scope_is(const char *component)
{
  if (!component)
    return false;
  for (size_t k = 0; k < G_N_ELEMENTS(KINDS); k++) {
    size_t n = strlen(KINDS[k].name);
    if (strncmp(component, KINDS[k].name, n) != 0)
      continue;
    const char *rest = component + n; /* "", or a graph's "_N" making the name unique */
    if (!*rest || (rest[0] == '_' && rest[1] && strspn(rest + 1, "0123456789") == strlen(rest + 1)))
      return true;
  }
  return false;
}

bool ts_optimizer_apply_at(ts_loc loc, ts_optimizer *o, ts_tensor *const *grads,
                           ts_tensor *const *vars, int n)
{
  if (!o || n < 0 || (n && (!grads || !vars))) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "optimizer apply: bad arguments (n = %d)", n);
    return false;
  }
  const char *name = KINDS[o->kind].name;
  g_autofree slots **per_var = g_new0(slots *, n ? n : 1);
  for (int i = 0; i < n; i++) {
    if (!grads[i])
      continue; /* no gradient: the variable stays as it is */
    if (!check_pair(loc, name, i, grads[i], vars[i]) || !(per_var[i] = var_slots(o, vars[i])))
      return false;
  }
  ts_scope *scope = ts_scope_begin();
  TS_NAME_SCOPE(name) {
    adam_powers powers[TS_DTYPE_COUNT] = { { NULL, NULL } }; /* Adam's, per dtype */
    for (int i = 0; i < n; i++) {
      if (!grads[i])
        continue;
      if (o->kind == OPT_SGD) {
        sgd_update(loc, o, grads[i], vars[i], per_var[i]);
        continue;
      }
      ts_dtype dt = vars[i]->dtype;
      if (!powers[dt].beta_1)
        powers[dt] = adam_powers_of(loc, o, dt);
      adam_update(loc, o, grads[i], vars[i], per_var[i], powers[dt]);
    }
    ts_assign_add_at(loc, o->iterations, ts_scalar_i64(1));
  }
  ts_scope_end(scope);
  return !ts_failed();
}
