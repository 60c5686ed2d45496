/* control_flow.c — AutoGraph for C: the runtime behind TS_IF / TS_ELSE /
 * TS_END_IF, TS_WHILE and TS_FOR, and the functional ts_cond and
 * ts_while_loop built on it.
 *
 * Eagerly, or on a concrete condition while tracing, TS_IF and TS_WHILE
 * are plain C control flow; TS_FOR is plain C eagerly only.  Otherwise each
 * branch (or the loop condition and body, once each) is traced into a
 * subgraph frame, and one If or While node of the enclosing frame takes the
 * condition or the loop variables plus every outer value the subgraphs
 * captured.  The statement's state lives in its ts_cf_block on the user's
 * stack; while tracing, a heap part (cf_state) holds what the subgraphs
 * need.
 *
 * TS_BREAK, TS_CONTINUE and TS_RETURN set flags on the enclosing loop's
 * block (found through ts_cf_block.up) or the function's ts_fn_jumps and
 * end the innermost block; traced blocks carry the flags out as If outputs
 * and loop variables, and the code after them is guarded (see "jumps"). */
#include "function-private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { KIND_IF, KIND_WHILE, KIND_FOR };
static const char *const kind_names[] = { "TS_IF", "TS_WHILE", "TS_FOR" };

/* ts_cf_block.phase */
enum {
  PH_DONE,        /* finished: the statement's loop ends */
  PH_FAILED,      /* an error ended it; its variables are NULL */
  PH_PLAIN_READY, /* TS_IF, plain C: the chosen branch runs next */
  PH_PLAIN,       /* plain C control flow */
  PH_THEN_READY,  /* TS_IF traced: the then branch is traced next */
  PH_THEN,
  PH_ELSE,
  PH_COND,        /* TS_WHILE traced: the condition is traced next */
  PH_BODY_READY,  /* TS_FOR traced: the body is traced next */
  PH_BODY,
  PH_PROBE_READY, /* traced loops: the While node is built; the probe runs next */
  PH_PROBE,       /* the probe: the condition and body once more, as dead code */
};

/* What one traced branch left in a variable. */
typedef struct branch_out {
  bool defined;
  ts_port port; /* in the branch graph */
  ts_info info;
} branch_out;

/* The jump flags code in region r (a block; NULL: the function's top) can
 * set: the innermost enclosing loop's, and the function's. */
#define MAX_FLAGS (3 + TS_MAX_RETURNS) /* broke, continued, returned and a tuple's tensors */
typedef struct flag_set {
  int n;
  ts_tensor **slot[MAX_FLAGS];
  const char *name[MAX_FLAGS];
  bool is_bool[MAX_FLAGS];
  ts_tensor *value[MAX_FLAGS]; /* cf_state.saved: the values at the statement's start */
} flag_set;

static void flag_set_add(flag_set *fs, ts_tensor **slot, const char *name, bool is_bool)
{
  fs->slot[fs->n] = slot;
  fs->name[fs->n] = name;
  fs->is_bool[fs->n++] = is_bool;
}

/* The tracing part of a statement.  A scalar variant tensor of the current
 * scope holds it, so that it is freed even when a `return` out of the block
 * skips the end of the statement (the function's end then reports it). */
typedef struct cf_state {
  ts_variant base;
  ts_tensor *holder;
  ts_frame *outer;       /* the frame holding the statement */
  ts_frame *frame;       /* the subgraph frame being traced, if any */
  int n_hidden;          /* TS_FOR: 1, the loop counter in slot 0 */
  int n_slots;           /* hidden + the user's variables */
  ts_tensor ***slots;
  ts_tensor **before;    /* the slots' values before the statement */
  ts_tensor *counter;    /* TS_FOR: the counter's current value (an index) */
  ts_tensor *trip;       /* TS_FOR over a range: its trip count (i64, outer frame) */
  ts_tensor *cond;       /* TS_IF: the condition */
  bool has_else;
  ts_graph *graph[2];    /* traced subgraphs: then/else or cond/body (owned) */
  GArray *caps[2];       /* their captures (ts_source, owned) */
  branch_out *outs[2];   /* TS_IF: what each branch left in the variables */
  int n_flags;           /* jump flags: the last n_flags slots */
  const char *flag_name[MAX_FLAGS];
  bool flag_bool[MAX_FLAGS]; /* a flag (false by default) or the return value (zeros) */
  int n_then;            /* TS_IF: the slots when the then branch ended (a tuple's
                            TS_RETURN in the else branch may add some) */
  int n_unfolded;        /* loops: the slots before the jump flags were added */
  bool refolded;         /* loops: the condition is traced again with the flags */
  flag_set saved;        /* the flags code in the statement can set, put back if it fails */
} cf_state;

/* ---- jumps: state kept outside the blocks -------------------------------------------
 * A block whose branch or body a jump left ends with the jump pending: the
 * flags of the enclosing loop (broke, continued) or function (returned,
 * retval) are set.  The code after it, up to the end of the enclosing
 * branch, body or function, must not run where the jump happened: it runs
 * under a record, either dead code (a throwaway frame, when the jump
 * happened for sure) or a guard (an If on "no jump", when the flags are
 * symbolic).  Records close, innermost first, where their region ends. */
typedef struct jump_record {
  const void *region;    /* the block (or ts_fn_jumps) whose branch/body it guards */
  ts_frame *dead;        /* dead code: traced into this frame, then dropped */
  ts_cf_block *guard;    /* or the engine's own TS_IF around the code (owned) */
  ts_tensor ***slots;    /* the region's variables and flags (owned) */
  ts_tensor **saved;     /* dead code: their values at the start, put back at the end */
  int n;
  ts_tensor *retval;     /* the return value pending at the start, if any */
} jump_record;

#define MAX_RECORDS 64
static _Thread_local jump_record records[MAX_RECORDS];
static _Thread_local int n_records;
static _Thread_local ts_fn_jumps *current_fn;

ts_cf_block ts__cf;

/* ---- op paths ------------------------------------------------------------------------
 * Each branch, loop condition and loop body is an entry of the op path, so
 * an eager op and the node it became in a subgraph share a site (see
 * ts_op_event).  Each eager iteration enters the body afresh. */

static void path_enter(const ts_cf_block *b, const char *what)
{
  if (b->guard)
    return; /* guarded code keeps its place: its ops are the eager ones' twins */
  ts__path_truncate(b->path_depth);
  ts__path_push(b->loc, what);
}

static void path_leave(const ts_cf_block *b)
{
  ts__path_truncate(b->path_depth);
}

/* ---- helpers ---------------------------------------------------------------------- */

static void __attribute__((format(printf, 3, 4)))
cf_error(const ts_cf_block *b, ts_error_code code, const char *fmt, ...)
{
  if (ts_failed())
    return; /* the first error wins */
  va_list ap;
  va_start(ap, fmt);
  char *detail = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  /* A guard's branches are the code after a jump and the jump's path. */
  ts_error_set(code, b->loc, b->guard ? "the code after the jump in TS_IF" : kind_names[b->kind],
               "%s", detail);
  g_free(detail);
}

/* Variable i's name as written in "&x, &y" ("y" for 1), into buf. */
static const char *var_name(const ts_cf_block *b, int i, char *buf, size_t size)
{
  const char *p = b->names;
  int depth = 0;
  for (int k = 0; p && *p && k < i; p++) {
    if (*p == '(' || *p == '[' || *p == '{')
      depth++;
    else if (*p == ')' || *p == ']' || *p == '}')
      depth--;
    else if (*p == ',' && depth == 0)
      k++;
  }
  if (!p || !*p) {
    snprintf(buf, size, "vars[%d]", i);
    return buf;
  }
  const char *end = p;
  for (depth = 0; *end && (*end != ',' || depth > 0); end++)
    depth += (*end == '(' || *end == '[' || *end == '{') - (*end == ')' || *end == ']' || *end == '}');
  while (p < end && g_ascii_isspace(*p))
    p++;
  p += p < end && *p == '&';
  while (end > p && g_ascii_isspace(end[-1]))
    end--;
  snprintf(buf, size, "%.*s", (int)(end - p), p);
  return buf;
}

/* Which tensor of the function's returned tuple slot holds, or -1. */
static int ret_item(const ts_fn_jumps *fn, ts_tensor **slot)
{
  if (!fn || fn->arity < 1)
    return -1;
  if (slot == &fn->retval)
    return 0;
  for (int k = 1; k < fn->arity; k++)
    if (slot == &fn->more[k - 1])
      return k;
  return -1;
}

/* Slot i's name: a user variable's, a flag's, or the hidden counter's. */
static const char *slot_name(const ts_cf_block *b, const cf_state *st, int i, char *buf,
                             size_t size)
{
  if (st && i < st->n_hidden) {
    snprintf(buf, size, "counter");
    return buf;
  }
  if (st && i >= st->n_slots - st->n_flags) {
    int k = ret_item(current_fn, st->slots[i]);
    if (k >= 0)
      snprintf(buf, size, "item %d of %s's returned tuple", k, current_fn->name);
    else
      snprintf(buf, size, "%s", st->flag_name[i - (st->n_slots - st->n_flags)]);
    return buf;
  }
  return var_name(b, i - (st ? st->n_hidden : 0), buf, size);
}

static ts_info info_of(const ts_tensor *t)
{
  return (ts_info){ t->dtype, t->shape };
}

/* Through the backend: the condition may live on a device. */
static bool truth(const ts_tensor *cond)
{
  return ts_tensor_get_f64(cond, 0) != 0;
}

/* A condition must be one number or bool: "if tensor" on more than one
 * element is ambiguous, as in NumPy and TensorFlow.  A symbolic one whose
 * size is not known yet is checked when the graph runs. */
static bool check_cond(const ts_cf_block *b, const ts_tensor *cond)
{
  char buf[TS_INFO_STR];
  if (!cond) {
    cf_error(b, TS_ERR_INVALID_ARGUMENT, "the condition is NULL");
    return false;
  }
  if (cond->dtype >= TS_NUMERIC_DTYPE_COUNT) {
    cf_error(b, TS_ERR_DTYPE, "the condition must be a number or a bool, got a %s tensor",
             ts_dtype_name(cond->dtype));
    return false;
  }
  int64_t size = ts_shape_size(cond->shape);
  if (size == 1 || (size < 0 && cond->node))
    return true;
  cf_error(b, TS_ERR_SHAPE,
           size == 0 ? "the truth value of an empty tensor is ambiguous (the condition has "
                       "shape %s)"
                     : "the truth value of a tensor with more than one element is ambiguous "
                       "(the condition has shape %s); reduce it to one element first, e.g. "
                       "with ts_reduce_max or ts_reduce_min",
           ts__shape_msg_str(buf, cond->shape));
  return false;
}

static bool frame_on_stack(const ts_frame *frame)
{
  for (ts_frame *f = ts__trace_frame(); f; f = f->outer)
    if (f == frame)
      return true;
  return false;
}

/* ---- the tracing state ------------------------------------------------------------- */

static void caps_free(GArray *caps)
{
  if (!caps)
    return;
  for (guint i = 0; i < caps->len; i++)
    ts_tensor_unref(g_array_index(caps, ts_source, i).value);
  g_array_unref(caps);
}

static void state_destroy(ts_variant *v)
{
  cf_state *st = (cf_state *)v;
  for (int i = 0; i < 2; i++) {
    ts__graph_free(st->graph[i]);
    caps_free(st->caps[i]);
    g_free(st->outs[i]);
  }
  g_free(st->slots);
  g_free(st->before);
  g_free(st);
}

static flag_set flags_of(ts_cf_block *r);

/* Opens the traced statement in frame `outer`; counter (TS_FOR) becomes
 * the hidden slot 0.  NULL after an error. */
static cf_state *state_new(ts_cf_block *b, ts_frame *outer, ts_tensor *counter)
{
  ts_tensor *holder = ts__tensor_alloc(b->loc, TS_VARIANT, TS_SCALAR_SHAPE);
  if (!holder)
    return NULL;
  cf_state *st = g_new0(cf_state, 1);
  st->base = (ts_variant){ .refcount = 1, .destroy = state_destroy, .kind = "ControlFlowState" };
  ((ts_variant **)holder->data)[0] = &st->base;
  st->holder = holder;
  st->outer = outer;
  st->counter = counter;
  st->n_hidden = counter != NULL;
  st->n_slots = st->n_hidden + b->n_vars;
  st->slots = g_new(ts_tensor **, st->n_slots ? st->n_slots : 1);
  st->before = g_new(ts_tensor *, st->n_slots ? st->n_slots : 1);
  if (counter)
    st->slots[0] = &st->counter;
  for (int i = 0; i < b->n_vars; i++)
    st->slots[st->n_hidden + i] = b->vars[i];
  for (int i = 0; i < st->n_slots; i++)
    st->before[i] = *st->slots[i];
  /* (not a guard's: the records close guards at the function's end, when
   * the region they guard may be a block a plain C `return` left) */
  st->saved = b->guard ? (flag_set){ 0 } : flags_of(b->up);
  for (int i = 0; i < st->saved.n; i++)
    st->saved.value[i] = *st->saved.slot[i];
  b->state = st;
  return st;
}

/* Adds a jump flag (or the return value) as a slot of a traced statement. */
static void state_add_flag(cf_state *st, ts_tensor **slot, const char *name, bool is_bool)
{
  int i = st->n_slots++;
  st->slots = g_renew(ts_tensor **, st->slots, st->n_slots);
  st->before = g_renew(ts_tensor *, st->before, st->n_slots);
  st->slots[i] = slot;
  st->before[i] = *slot;
  st->flag_name[st->n_flags] = name;
  st->flag_bool[st->n_flags++] = is_bool;
}

static flag_set flags_of(ts_cf_block *r)
{
  flag_set fs = { 0 };
  for (ts_cf_block *b = r; b; b = b->up)
    if (b->kind != KIND_IF) {
      flag_set_add(&fs, &b->broke, "broke", true);
      flag_set_add(&fs, &b->continued, "continued", true);
      break;
    }
  if (current_fn) {
    flag_set_add(&fs, &current_fn->returned, "returned", true);
    flag_set_add(&fs, &current_fn->retval, "retval", false); /* stays NULL for None */
    for (int k = 1; k < current_fn->arity; k++)
      flag_set_add(&fs, &current_fn->more[k - 1], "retval", false);
  }
  return fs;
}

/* A traced TS_IF carries the flags its branches may set as outputs. */
static void state_add_flags(ts_cf_block *b, cf_state *st)
{
  flag_set fs = flags_of(b->up);
  for (int i = 0; i < fs.n; i++)
    state_add_flag(st, fs.slot[i], fs.name[i], fs.is_bool[i]);
}

/* A subgraph frame of statement b (the frame names b for errors). */
static ts_frame *block_frame_push(const ts_cf_block *b, const char *name)
{
  ts_frame *f = ts__frame_push(name);
  f->block_loc = b->loc;
  f->block_kind = kind_names[b->kind];
  return f;
}

static void state_close(ts_cf_block *b)
{
  cf_state *st = b->state;
  ((ts_variant **)st->holder->data)[0] = NULL;
  ts__variant_unref(&st->base);
  b->state = NULL;
}

/* ---- eager loops: a scope per iteration -------------------------------------------- */

/* An eager TS_WHILE/TS_FOR runs each iteration (its condition included) in a
 * scope of its own, held in b->state while the phase is PH_PLAIN.  What an
 * iteration made lives until the end of the next one, and the last two
 * iterations' values pass to the enclosing scope when the loop ends: the
 * listed variables carry over, a value the body made and the code after
 * the loop still uses stays valid (as in C), and a loop runs in the memory
 * of two iterations.  The previous iteration's scope is the current one's
 * parent on the scope stack, so a `break` leaves both open and the
 * enclosing scope's end releases them. */
static bool iter_scoped(const ts_cf_block *b)
{
  return b->iter_scope && b->phase == PH_PLAIN && b->state;
}

static void iter_scope_begin(ts_cf_block *b)
{
  if (!ts__trace_frame()) {
    ts__scope_enter(ts__scope_new()); /* the previous iteration's: empty at first */
    ts_scope *current = ts__scope_new();
    ts__scope_enter(current);
    b->state = current;
    b->iter_scope = true;
  }
}

/* Ends an iteration: with `next`, the previous iteration's scope is emptied
 * and becomes the new iteration's, above the one just ended; else both pass
 * their values to the enclosing scope.  The variables are kept in the
 * scope that follows. */
static void iter_scope_end(ts_cf_block *b, bool next)
{
  if (!iter_scoped(b))
    return;
  int n = b->n_vars + 1;
  ts_tensor **keep = g_new(ts_tensor *, n);
  for (int i = 0; i < b->n_vars; i++)
    keep[i] = ts_tensor_ref(*b->vars[i]);
  keep[n - 1] = b->loop_var ? ts_tensor_ref(*b->loop_var) : NULL;
  ts_scope *current = b->state, *previous = ts__scope_parent(current);
  ts__scope_leave_keep(current);
  ts__scope_leave_keep(previous);
  /* What the ended iteration made, the variables aside, the next may not use. */
  if (next && !ts__context()->carried_ok)
    ts__scope_mark_carried(current, b->loc, kind_names[b->kind], keep, n);
  if (next) {
    ts__scope_clear(previous);
    ts__scope_enter(current);
    ts__scope_enter(previous);
    b->state = previous;
  } else {
    ts__scope_hand_over(previous);
    ts__scope_hand_over(current);
    b->state = NULL;
    b->iter_scope = false;
  }
  for (int i = 0; i < n; i++)
    if (keep[i])
      ts__scope_adopt(keep[i]);
  g_free(keep);
}

/* Ends the statement after an error: drops its frames (and any a `break`
 * left open inside them) and sets its variables to NULL, so that later ops
 * pass the error on. */
static void region_close(const void *key);

static void block_fail(ts_cf_block *b)
{
  region_close(b);
  cf_state *st = b->state;
  if (iter_scoped(b)) {
    ts_scope_end(ts__scope_parent(b->state)); /* and the current one above it */
    b->state = NULL;
    b->iter_scope = false;
  } else if (st) {
    if (st->frame && frame_on_stack(st->frame)) {
      while (ts__trace_frame() != st->frame)
        ts__frame_abort(ts__trace_frame());
      ts__frame_abort(st->frame);
    }
    /* A jump in it may have set flags to values of the frames just dropped. */
    for (int i = 0; i < st->saved.n; i++)
      *st->saved.slot[i] = st->saved.value[i];
    state_close(b);
  }
  for (int i = 0; i < b->n_vars; i++)
    *b->vars[i] = NULL;
  if (b->loop_var)
    *b->loop_var = NULL;
  b->phase = PH_FAILED;
  b->branch = -1;
}

/* The statement's subgraph frame must be the innermost again when its
 * block ends; otherwise a loop inside was left by `break` (a `return`
 * would have left this block as well). */
static bool frame_intact(const ts_cf_block *b)
{
  const cf_state *st = b->state;
  if (ts__trace_frame() == st->frame)
    return true;
  cf_error(b, TS_ERR_INVALID_ARGUMENT,
           "a TS_WHILE or TS_FOR loop inside this block was left by `break`, which cannot be "
           "traced; use TS_BREAK");
  return false;
}

/* Placeholder names come from the variables' names: "x", "s_total". */
static void placeholder_name(char *name)
{
  for (char *p = name; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_')
      *p = '_';
}

/* Loop variables must be defined before a traced loop (as in AutoGraph). */
static bool loop_vars_defined(const ts_cf_block *b)
{
  const cf_state *st = b->state;
  for (int i = 0; i < st->n_slots; i++) {
    if (st->before[i])
      continue;
    char name[64];
    cf_error(b, TS_ERR_INVALID_ARGUMENT,
             "%s is undefined (NULL) before the loop; give it a value before the %s",
             slot_name(b, st, i, name, sizeof name), kind_names[b->kind]);
    return false;
  }
  return true;
}

/* Opens a loop subgraph frame whose inputs stand for the slots, and points
 * the slots at them. */
static void loop_frame_begin(ts_cf_block *b, const char *graph_name)
{
  cf_state *st = b->state;
  st->frame = block_frame_push(b, graph_name);
  for (int i = 0; i < st->n_slots; i++) {
    char name[64];
    slot_name(b, st, i, name, sizeof name);
    placeholder_name(name);
    *st->slots[i] = ts__frame_placeholder(st->frame, name, info_of(st->before[i]));
  }
}

/* ---- merging the captures of two subgraphs ------------------------------------------- */

static int source_index(const GArray *caps, ts_source s)
{
  for (guint i = 0; i < caps->len; i++) {
    ts_source c = g_array_index(caps, ts_source, i);
    if (c.node == s.node && c.index == s.index && c.value == s.value)
      return (int)i;
  }
  return -1;
}

/* Both subgraphs' captures, the first's first (borrowed sources). */
static GArray *caps_union(const cf_state *st)
{
  GArray *all = g_array_new(FALSE, FALSE, sizeof(ts_source));
  for (int g = 0; g < 2; g++)
    for (guint i = 0; i < st->caps[g]->len; i++) {
      ts_source s = g_array_index(st->caps[g], ts_source, i);
      if (source_index(all, s) < 0)
        g_array_append_val(all, s);
    }
  return all;
}

/* Makes g's inputs its first n_fixed inputs followed by one Placeholder per
 * source of `all`, in that order: g's own capture Placeholders where it
 * captured the source (caps), new unused ones where it did not. */
static void align_inputs(ts_graph *g, int n_fixed, const GArray *caps, const GArray *all)
{
  GArray *inputs = g_array_sized_new(FALSE, FALSE, sizeof(int), n_fixed + all->len);
  g_array_append_vals(inputs, g->inputs->data, (guint)n_fixed);
  for (guint k = 0; k < all->len; k++) {
    ts_source s = g_array_index(all, ts_source, k);
    int at = source_index(caps, s), id;
    if (at >= 0) {
      id = g_array_index(g->inputs, int, n_fixed + at);
    } else {
      id = ts__graph_add_node(g, TS_OP_PLACEHOLDER, "capture", "", (ts_loc){ 0 }, NULL, 0, NULL,
                              0, &s.node->outputs[s.index], 1)->id;
    }
    ts__graph_node(g, id)->input_index = (int)inputs->len;
    g_array_append_val(inputs, id);
  }
  g_array_unref(g->inputs);
  g->inputs = inputs;
}

/* Hangs the traced subgraphs on node, named after it ("If/then"). */
static void attach_subgraphs(cf_state *st, ts_node *node, const char *name0, const char *name1)
{
  const char *names[2] = { name0, name1 };
  for (int i = 0; i < 2; i++) {
    g_free(st->graph[i]->name);
    st->graph[i]->name = g_strdup_printf("%s/%s", node->name, names[i]);
    ts__node_add_subgraph(node, st->graph[i]);
    st->graph[i] = NULL;
  }
}

/* ---- jumps: TS_BREAK, TS_CONTINUE, TS_RETURN ----------------------------------------- */

static ts_cf_block if_begin(ts_loc loc, ts_tensor *cond, ts_cf_block *up, ts_tensor **const *vars,
                            int n_vars, const char *names, bool guard);
static ts_tensor *zeros_of(const ts_cf_block *b, ts_info info);

static int records_base(void)
{
  return current_fn ? current_fn->base : 0;
}

/* The running code comes after a jump that happened for sure. */
static bool in_dead_code(void)
{
  for (int i = n_records - 1; i >= records_base(); i--)
    if (records[i].dead && frame_on_stack(records[i].dead))
      return true;
  return false;
}

/* ---- a returned tuple: its tensors are the return value's slots, merged
 * one by one as a single tensor is (tf.function's nested structure). */

/* The function's pending return value: retval, the tuple of its tensors,
 * or None. */
static ts_tensor *ret_value(const ts_fn_jumps *fn)
{
  if (fn->arity == TS__ARITY_NONE)
    return ts_none();
  if (fn->arity < 1 || !fn->retval)
    return fn->retval;
  ts_tensor *items[TS_MAX_RETURNS] = { fn->retval };
  for (int k = 1; k < fn->arity; k++)
    if (!(items[k] = fn->more[k - 1]))
      return NULL;
  return ts__tuple_new(items, fn->arity);
}

/* Sets the pending return value (NULL: none) to value, a tensor or a tuple. */
static void set_ret(ts_fn_jumps *fn, ts_loc loc, ts_tensor *value)
{
  int n = value && value->items ? value->n_items : 1;
  for (int k = 0; k < n; k++) {
    ts_tensor *v = value && value->items ? value->items[k] : value;
    v = v && v->is_variable ? ts_read_at(loc, v) : v;
    *(k ? &fn->more[k - 1] : &fn->retval) = v;
  }
}

/* Zeros of value's tensor or of each of its tuple's (the placeholder of a
 * path that did not return); NULL + error where a shape is unknown. */
static ts_tensor *zeros_of_value(const ts_cf_block *b, const ts_tensor *value)
{
  if (!value->items)
    return zeros_of(b, info_of(value));
  ts_tensor *items[TS_MAX_RETURNS];
  for (int k = 0; k < value->n_items; k++)
    if (!(items[k] = zeros_of(b, info_of(value->items[k]))))
      return NULL;
  return ts__tuple_new(items, value->n_items);
}

static void structure_str(char *buf, size_t size, int arity)
{
  if (arity == TS__ARITY_NONE)
    snprintf(buf, size, "None");
  else if (arity == 0)
    snprintf(buf, size, "one tensor");
  else
    snprintf(buf, size, "a tuple of %d tensor%s", arity, arity == 1 ? "" : "s");
}

/* Every return of a traced function gives one tensor, or a tuple of as
 * many tensors: the first TS_RETURN sets which (a line of 0: the end of
 * the function).  false + error naming both where they differ. */
static bool same_structure(ts_fn_jumps *fn, ts_loc loc, const ts_tensor *value)
{
  int arity = ts__is_none(value) ? TS__ARITY_NONE : value->items ? value->n_items : 0;
  if (fn->arity == TS__ARITY_UNSET) {
    fn->arity = arity;
    fn->arity_loc = loc;
    return true;
  }
  if (arity == fn->arity)
    return true;
  char was[48], now[48], where[48];
  structure_str(was, sizeof was, fn->arity);
  structure_str(now, sizeof now, arity);
  if (loc.line)
    snprintf(where, sizeof where, "at line %d", loc.line);
  else
    snprintf(where, sizeof where, "at its end");
  if (!ts_failed())
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, "TS_RETURN",
                 "%s: returns %s at line %d but %s %s; every return must have the same "
                 "structure (one tensor, a tuple of as many tensors, or None)",
                 fn->name, was, fn->arity_loc.line, now, where);
  return false;
}

/* A TS_RETURN of a tuple of n tensors, the function's first: the traced
 * TS_IFs open around it (b's and the guards') get slots for its tensors
 * after the first (loops add theirs when their body ends). */
static void add_ret_items(ts_cf_block *b, int n)
{
  ts_fn_jumps *fn = current_fn;
  for (; b; b = b->up)
    if (b->kind == KIND_IF && b->state)
      for (int k = 1; k < n; k++)
        state_add_flag(b->state, &fn->more[k - 1], "retval", false);
  for (int i = records_base(); i < n_records; i++)
    if (records[i].guard && records[i].guard->state)
      for (int k = 1; k < n; k++)
        state_add_flag(records[i].guard->state, &fn->more[k - 1], "retval", false);
}

/* After statement `after` ended with jump flags set, the rest of region r
 * (a block's branch or body; NULL: the function's body) runs as dead code
 * when a flag is true for sure, else under a guard: If (not jumped) with
 * the region's variables and flags as its variables, the rest of the region
 * its then branch, no else (everything passes through). */
static void region_guard(ts_cf_block *r, const ts_cf_block *after)
{
  flag_set fs = flags_of(r);
  bool any = false, sure = false;
  for (int i = 0; i < fs.n; i++)
    if (fs.is_bool[i] && *fs.slot[i]) {
      any = true;
      sure |= !(*fs.slot[i])->node;
    }
  if (!any || ts_failed())
    return;
  if (n_records == MAX_RECORDS) {
    cf_error(after, TS_ERR_INVALID_ARGUMENT, "more than %d jumps pending", MAX_RECORDS);
    return;
  }
  int nv = r ? r->n_vars : 0;
  jump_record rec = { .region = r ? (const void *)r : (const void *)current_fn, .n = nv + fs.n,
                      .retval = current_fn ? ret_value(current_fn) : NULL };
  rec.slots = g_new(ts_tensor **, rec.n);
  for (int i = 0; i < nv; i++)
    rec.slots[i] = r->vars[i];
  for (int i = 0; i < fs.n; i++)
    rec.slots[nv + i] = fs.slot[i];
  if (sure) {
    rec.saved = g_new(ts_tensor *, rec.n);
    for (int i = 0; i < rec.n; i++)
      rec.saved[i] = *rec.slots[i];
    rec.dead = block_frame_push(after, "dead");
  } else {
    ts__implicit(+1); /* the engine's own ops: no eager twin */
    ts_tensor *jumped = NULL;
    for (int i = 0; i < fs.n; i++)
      if (fs.is_bool[i] && *fs.slot[i])
        jumped = jumped ? ts_logical_or_at(after->loc, jumped, *fs.slot[i]) : *fs.slot[i];
    ts_tensor *go_on = ts_logical_not_at(after->loc, jumped);
    ts__implicit(-1);
    rec.guard = g_new(ts_cf_block, 1);
    *rec.guard = if_begin(after->loc, go_on, r, rec.slots, nv, r ? r->names : NULL, true);
    ts__if_next(rec.guard); /* into the guarded branch */
  }
  records[n_records++] = rec;
}

/* Ends a record: the guard's If is built (keep) or dropped; dead code's
 * frame is dropped and the variables it changed are put back. */
static void record_close(jump_record *rec, bool keep)
{
  if (rec->guard) {
    ts_cf_block *g = rec->guard;
    if (keep && !ts_failed() && g->phase == PH_THEN) {
      g->completed = true;
      ts__if_next(g);
    } else if (g->phase != PH_DONE && g->phase != PH_FAILED) {
      block_fail(g);
    }
    ts__if_end(g);
    g_free(g);
  } else {
    if (frame_on_stack(rec->dead)) {
      while (ts__trace_frame() != rec->dead)
        ts__frame_abort(ts__trace_frame());
      ts__frame_abort(rec->dead);
    }
    for (int i = 0; i < rec->n; i++)
      *rec->slots[i] = rec->saved[i];
    g_free(rec->saved);
  }
  g_free(rec->slots);
}

/* The end of region `key`'s branch or body: its records close, innermost
 * first (any above them were left by a plain C `break`/`return` and are
 * dropped). */
static void region_close(const void *key)
{
  int lowest = -1;
  for (int i = n_records - 1; i >= records_base(); i--)
    if (records[i].region == key)
      lowest = i;
  while (lowest >= 0 && n_records > lowest) {
    jump_record rec = records[--n_records];
    record_close(&rec, rec.region == key);
  }
}

void ts__jumps_fn_begin(ts_fn_jumps *fn, const char *name)
{
  *fn = (ts_fn_jumps){ .base = n_records, .prev = current_fn, .name = name,
                       .frame = ts__trace_frame(), .arity = TS__ARITY_UNSET };
  current_fn = fn;
}

/* The frame code after the record's start is traced into. */
static ts_frame *record_frame(const jump_record *rec)
{
  if (rec->dead)
    return rec->dead;
  const cf_state *st = rec->guard->state;
  return st ? st->frame : NULL;
}

/* A traced block's frame still open when the function returns, above its
 * body's own guards: a plain C `return` or `break` left it (checked before
 * the records drop frames, to name the innermost block). */
static void check_left_open(const ts_fn_jumps *fn)
{
  ts_frame *expected = fn->frame, *left = ts__trace_frame();
  for (int i = n_records - 1; i >= fn->base && expected == fn->frame; i--)
    if (records[i].region == fn)
      expected = record_frame(&records[i]);
  if (fn->frame && left != expected && left && left->block_kind && !ts_failed())
    ts_error_set(TS_ERR_INVALID_ARGUMENT, left->block_loc, left->block_kind,
                 "%s: `return` or `break` inside a TS_IF/TS_WHILE/TS_FOR block cannot be traced; "
                 "use TS_RETURN(value) or TS_BREAK",
                 fn->name);
}

ts_tensor *ts__jumps_fn_end(ts_fn_jumps *fn, ts_tensor *out)
{
  check_left_open(fn);
  bool jumped = false;
  for (int i = fn->base; i < n_records; i++)
    jumped |= records[i].region == fn;
  if (out && jumped && !same_structure(fn, (ts_loc){ 0 }, out))
    out = NULL;
  while (n_records > fn->base) {
    jump_record rec = records[--n_records];
    /* The rest of the body ends in out: the result where nothing returned
     * before.  NULL there when every path returned before it (C still
     * wants a return statement): the If's other branch gives the value. */
    bool mine = rec.region == fn && (out || rec.retval) && !ts_failed();
    if (mine) {
      ts_tensor *value = out ? out : rec.guard ? zeros_of_value(rec.guard, rec.retval) : NULL;
      set_ret(fn, (ts_loc){ 0 }, value);
      fn->returned = ts_scalar_bool(true);
      mine = (fn->arity == TS__ARITY_NONE ? value != NULL : fn->retval != NULL) || rec.dead;
    }
    record_close(&rec, mine);
    if (mine)
      out = ret_value(fn);
  }
  current_fn = fn->prev;
  return out;
}

static void __attribute__((format(printf, 3, 4)))
jump_error(ts_loc loc, int how, const char *fmt, ...)
{
  static const char *const macros[] = { "TS_BREAK", "TS_CONTINUE", "TS_RETURN" };
  if (ts_failed())
    return;
  va_list ap;
  va_start(ap, fmt);
  char *detail = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, macros[how], "%s", detail);
  g_free(detail);
}

bool ts__jump(ts_loc loc, ts_cf_block *b, int how, ts_tensor *value)
{
  if (b == &ts__cf) {
    jump_error(loc, how, "outside a TS_IF, TS_WHILE or TS_FOR block; plain C `break`, "
                         "`continue` and `return` work there");
    return false;
  }
  if (b->jumped) {
    jump_error(loc, how, "a second jump before the end of the %s block: the first one's "
                         "`continue` stayed in a plain C loop or switch inside the block; "
                         "jump from the block itself", kind_names[b->kind]);
    return false;
  }
  b->jumped = true;
  if (ts_failed() || in_dead_code())
    return false;
  if (how == TS__JUMP_RETURN) {
    if (!current_fn || !value) {
      jump_error(loc, how, current_fn ? "the value is NULL" : "outside a function");
      return false;
    }
    if (!ts__trace_frame())
      return true; /* eagerly: plain C return */
    if (current_fn->arity == TS__ARITY_UNSET && ts__is_tuple(value) && value->n_items > 1)
      add_ret_items(b, value->n_items);
    if (!same_structure(current_fn, loc, value))
      return false;
    set_ret(current_fn, loc, value);
    current_fn->returned = ts_scalar_bool(true);
    return false;
  }
  ts_cf_block *loop = b;
  while (loop && loop->kind == KIND_IF)
    loop = loop->up;
  if (!loop) {
    jump_error(loc, how, "outside a TS_WHILE or TS_FOR loop (of this function)");
    return false;
  }
  if (how == TS__JUMP_BREAK)
    loop->broke = ts_scalar_bool(true);
  else
    loop->continued = ts_scalar_bool(true);
  return false;
}

/* A plain loop (eager, or on a host condition while tracing) ends after a
 * body that broke or returned. */
static bool plain_loop_ends(ts_cf_block *b)
{
  ts_tensor *ret = current_fn ? current_fn->returned : NULL;
  if (!b->broke && !ret)
    return false;
  if ((b->broke && b->broke->node) || (ret && ret->node)) {
    cf_error(b, TS_ERR_INVALID_ARGUMENT,
             "a TS_BREAK or TS_RETURN under a tensor condition cannot end this loop: its "
             "condition is a host value, so it is a plain C loop while tracing; make the "
             "condition a tensor that depends on the loop variables");
    block_fail(b);
    return true;
  }
  iter_scope_end(b, false);
  b->phase = PH_DONE;
  return true;
}

/* A plain loop ends at a pending error (its body's ops fail from then on,
 * and a fixed condition would keep it going) and when the thread's cancel
 * flag is set, as a call ends at its next op.  false: the loop goes on. */
static bool plain_loop_stopped(ts_cf_block *b)
{
  const int *flag = ts__context()->cancel_flag;
  if (flag && __atomic_load_n(flag, __ATOMIC_RELAXED))
    cf_error(b, TS_ERR_CANCELLED, "cancelled");
  if (!ts_failed())
    return false;
  block_fail(b);
  return true;
}

/* A loop's statement ended: a TS_RETURN in it is pending for the code after it. */
static void loop_finished(ts_cf_block *b)
{
  b->broke = NULL;
  b->continued = NULL;
  if (b->phase == PH_DONE)
    region_guard(b->up, b);
}

/* A variable given as a condition or a range bound is read where the
 * graph runs, as an op's input is (tracer.c): `if v:`, `while v:` and
 * `tf.range(v)` in a tf.function see the variable's value at each call,
 * not the value it had while tracing. */
static ts_tensor *traced_value(ts_loc loc, ts_tensor *t)
{
  if (!t || !t->is_variable || !ts__trace_frame())
    return t;
  ts__implicit(+1);
  ts_tensor *value = ts_read_at(loc, t);
  ts__implicit(-1);
  return value;
}

/* ---- TS_IF ---------------------------------------------------------------------------- */

ts_cf_block ts__if_begin(ts_loc loc, ts_tensor *cond, ts_cf_block *up, ts_tensor **const *vars,
                         int n_vars, const char *names)
{
  return if_begin(loc, cond, up, vars, n_vars, names, false);
}

static ts_cf_block if_begin(ts_loc loc, ts_tensor *cond, ts_cf_block *up, ts_tensor **const *vars,
                            int n_vars, const char *names, bool guard)
{
  ts_cf_block b = {
    .loc = loc, .kind = KIND_IF, .branch = -1, .vars = vars, .n_vars = n_vars, .names = names,
    .path_depth = ts__path_depth(), .up = up == &ts__cf ? NULL : up, .guard = guard,
  };
  cond = traced_value(loc, cond);
  if (!check_cond(&b, cond)) {
    block_fail(&b);
    return b;
  }
  ts_frame *outer = ts__trace_frame();
  if (!outer || !cond->node) {
    b.branch = truth(cond) ? 0 : 1;
    b.phase = PH_PLAIN_READY;
    return b;
  }
  cf_state *st = state_new(&b, outer, NULL);
  if (!st) {
    block_fail(&b);
    return b;
  }
  state_add_flags(&b, st);
  if (guard) /* the guarded code runs where no jump happened */
    for (int i = st->n_slots - st->n_flags; i < st->n_slots; i++)
      *st->slots[i] = NULL;
  st->cond = cond;
  st->frame = block_frame_push(&b, "then");
  b.branch = 0;
  b.phase = PH_THEN_READY;
  return b;
}

void ts__cf_mark(ts_cf_block *b, int at)
{
  /* TS_ELSE marks 0, TS_END_IF 1: the then branch ends at either, the
   * else branch at 1 only. */
  if (at == 0 && b->state)
    ((cf_state *)b->state)->has_else = true;
  if (b->branch == 0 || at == 1)
    b->completed = true;
}

/* `break` or `continue` in a TS_IF block lands in the statement's own loop. */
static void escaped(ts_cf_block *b, const char *how)
{
  cf_error(b, TS_ERR_INVALID_ARGUMENT,
           "`%s` out of a TS_IF block is not supported (the statement cannot pass it on to an "
           "enclosing loop); use TS_%s", how, how[0] == 'b' ? "BREAK" : "CONTINUE");
  block_fail(b);
}

/* The end of a branch: the code after a jump in it closes; reached without
 * TS_ELSE/TS_END_IF or a jump, the branch was left by plain `continue`. */
static bool branch_reached_end(ts_cf_block *b)
{
  region_close(b);
  bool ok = b->completed || b->jumped;
  b->jumped = false;
  if (!ok)
    escaped(b, "continue");
  return ok;
}

/* Records what the branch left in each variable, puts back the values from
 * before the statement and closes the branch's frame. */
static bool branch_end(ts_cf_block *b, int which)
{
  cf_state *st = b->state;
  if (ts_failed() || !frame_intact(b))
    return false; /* after an error the trace is lost: record nothing more */
  branch_out *outs = st->outs[which] = g_new0(branch_out, st->n_slots ? st->n_slots : 1);
  if (which == 0) {
    st->n_then = st->n_slots;
  } else if (st->n_then < st->n_slots) { /* tuple items added in the else branch */
    st->outs[0] = g_renew(branch_out, st->outs[0], st->n_slots);
    memset(st->outs[0] + st->n_then, 0, (size_t)(st->n_slots - st->n_then) * sizeof *outs);
  }
  for (int i = 0; i < st->n_slots; i++) {
    ts_tensor *v = *st->slots[i];
    if (v) {
      if (!ts__frame_port(st->frame, v, &outs[i].port))
        return false;
      outs[i].defined = true;
      outs[i].info = info_of(v);
    }
    *st->slots[i] = st->before[i];
  }
  st->graph[which] = ts__frame_pop(st->frame, &st->caps[which]);
  st->frame = NULL;
  return true;
}

/* The most specific shape both branches agree on: -1 where dims differ,
 * the rank unknown where ranks do (as tf.cond's shape is <unknown> then). */
static ts_shape merge_shapes(ts_shape t, ts_shape e)
{
  if (t.rank != e.rank)
    return (ts_shape){ .rank = TS_RANK_UNKNOWN };
  for (int d = 0; d < t.rank; d++)
    if (t.dim[d] != e.dim[d])
      t.dim[d] = -1;
  return t;
}

/* A Const node of value in g (a flag's default in a branch that left it unset). */
static ts_port graph_const(ts_graph *g, ts_tensor *value)
{
  ts_info info = info_of(value);
  ts_node *n = ts__graph_add_node(g, TS_OP_CONST, NULL, "", (ts_loc){ 0 }, NULL, 0, NULL, 0,
                                  &info, 1);
  n->value = ts_tensor_ref(value);
  return (ts_port){ n->id, 0 };
}

/* A jump flag one branch set and the other did not: false (the return
 * value: zeros) in the other.  false after an error. */
static bool default_flag(cf_state *st, const ts_cf_block *b, int i)
{
  int missing = st->outs[0][i].defined ? 1 : 0;
  const branch_out *set = &st->outs[1 - missing][i];
  ts_tensor *value = st->flag_bool[i - (st->n_slots - st->n_flags)] ? ts_scalar_bool(false)
                                                                    : zeros_of(b, set->info);
  if (!value)
    return false;
  st->outs[missing][i] = (branch_out){ true, graph_const(st->graph[missing], value),
                                       info_of(value) };
  return true;
}

/* The variables' outputs: those defined in both branches (a variable
 * undefined in both stays NULL).  Fills out[] and returns their number, or
 * -1 after an error. */
static int if_outputs(const ts_cf_block *b, ts_info *out)
{
  cf_state *st = b->state;
  char name[64];
  int n_out = 0;
  for (int i = 0; i < st->n_slots; i++) {
    const branch_out *t = &st->outs[0][i], *e = &st->outs[1][i];
    if (!t->defined && !e->defined)
      continue;
    slot_name(b, st, i, name, sizeof name);
    if (t->defined != e->defined && i >= b->n_vars && !default_flag(st, b, i))
      return -1;
    if (t->defined != e->defined) {
      cf_error(b, TS_ERR_INVALID_ARGUMENT,
               "%s is undefined (NULL) at the end of the %s branch but defined in the %s "
               "branch; give it a value before the TS_IF or in both branches",
               name, t->defined ? "else" : "then", t->defined ? "then" : "else");
      return -1;
    }
    if (t->info.dtype != e->info.dtype) {
      cf_error(b, TS_ERR_DTYPE, "%s has dtype %s in the then branch, but dtype %s in the else branch", name,
               ts_dtype_name(t->info.dtype), ts_dtype_name(e->info.dtype));
      return -1;
    }
    if (n_out == TS_MAX_OUTPUTS) {
      cf_error(b, TS_ERR_INVALID_ARGUMENT, "more than %d variables", TS_MAX_OUTPUTS);
      return -1;
    }
    out[n_out++] = (ts_info){ t->info.dtype, merge_shapes(t->info.shape, e->info.shape) };
  }
  return n_out;
}

/* Records the If node: inputs [cond, captures...], outputs the variables
 * defined in both branches, subgraphs [then, else]. */
static bool if_build(ts_cf_block *b)
{
  cf_state *st = b->state;
  ts_info out_info[TS_MAX_OUTPUTS];
  int n_out = if_outputs(b, out_info);
  if (n_out < 0)
    return false;
  GArray *all = caps_union(st);
  bool ok = false;
  ts_port ports[TS_MAX_INPUTS];
  if (1 + all->len > TS_MAX_INPUTS) {
    cf_error(b, TS_ERR_INVALID_ARGUMENT,
             "the branches use %u values from outside the TS_IF; at most %d are supported",
             all->len, TS_MAX_INPUTS - 1);
    goto out;
  }
  for (int g = 0; g < 2; g++) {
    align_inputs(st->graph[g], 0, st->caps[g], all);
    for (int i = 0; i < st->n_slots; i++)
      if (st->outs[0][i].defined && st->outs[1][i].defined)
        g_array_append_val(st->graph[g]->outputs, st->outs[g][i].port);
  }
  if (!ts__frame_port(st->outer, st->cond, &ports[0]))
    goto out;
  for (guint k = 0; k < all->len; k++)
    if (!ts__frame_source_port(st->outer, g_array_index(all, ts_source, k), &ports[1 + k]))
      goto out;

  ts_node *node = ts__trace_record_node(st->outer, b->loc, ts__op_def(TS_OP_IF), ports,
                                        1 + (int)all->len, NULL, out_info, n_out);
  attach_subgraphs(st, node, "then", "else");
  ts__frame_order(st->outer, node);
  ts_tensor *outs[TS_MAX_OUTPUTS];
  for (int i = 0, k = 0; i < st->n_slots; i++)
    if (st->outs[0][i].defined) {
      outs[k] = ts__tensor_symbolic(node, k);
      *st->slots[i] = outs[k++];
    } else {
      *st->slots[i] = NULL;
    }
  ts_source *sources = g_new(ts_source, 1 + all->len);
  sources[0] = st->cond->node ? (ts_source){ .node = st->cond->node, .index = st->cond->node_output }
                              : (ts_source){ .value = st->cond };
  for (guint k = 0; k < all->len; k++)
    sources[1 + k] = g_array_index(all, ts_source, k);
  ts__tape_record_node(node, sources, 1 + (int)all->len, outs, n_out);
  g_free(sources);
  ok = true;
out:
  g_array_unref(all);
  return ok;
}

bool ts__if_next(ts_cf_block *b)
{
  cf_state *st = b->state;
  switch (b->phase) {
  case PH_PLAIN_READY:
  case PH_THEN_READY:
    b->phase = b->phase == PH_PLAIN_READY ? PH_PLAIN : PH_THEN;
    b->completed = false;
    path_enter(b, b->branch == 0 ? "then" : "else");
    return true;
  case PH_PLAIN:
    path_leave(b);
    if (!branch_reached_end(b))
      return false;
    b->phase = PH_DONE;
    b->branch = -1;
    return false;
  case PH_THEN: {
    path_leave(b);
    /* A jump out of the then branch skipped TS_ELSE's mark: whether there
     * is an else branch is found by running the statement once more. */
    bool run_else = st->has_else || b->jumped;
    if (!branch_reached_end(b))
      return false;
    if (!branch_end(b, 0)) {
      block_fail(b);
      return false;
    }
    st->frame = block_frame_push(b, "else");
    path_enter(b, "else");
    b->branch = 1;
    b->completed = !run_else; /* without TS_ELSE the variables pass through */
    b->phase = PH_ELSE;
    if (run_else)
      return true;
  }
    /* fall through */
  case PH_ELSE:
    path_leave(b);
    if (!branch_reached_end(b))
      return false;
    if (!branch_end(b, 1) || !if_build(b)) {
      block_fail(b);
      return false;
    }
    state_close(b);
    b->phase = PH_DONE;
    b->branch = -1;
    return false;
  default:
    return false;
  }
}

void ts__if_end(ts_cf_block *b)
{
  path_leave(b);
  /* Leaving the statement's loop any other way than through ts__if_next
   * returning false is a `break` out of the block. */
  if (b->phase == PH_PLAIN || b->phase == PH_THEN || b->phase == PH_ELSE)
    escaped(b, "break");
  else if (b->phase == PH_DONE && !b->guard)
    region_guard(b->up, b);
}

/* ---- loops: TS_WHILE and TS_FOR while tracing ----------------------------------------------- */

static bool loop_node(ts_cf_block *b);
static ts_tensor *fold_flags(const ts_cf_block *b, ts_tensor *cond);
static ts_tensor *for_cond(const ts_cf_block *b, ts_tensor *counter);

/* Ends the condition's frame on the traced condition and opens the body's.
 * A concrete condition (one that does not depend on the loop variables:
 * host control) makes the statement a plain C loop instead. */
static bool loop_cond_end(ts_cf_block *b, ts_tensor *cond)
{
  cf_state *st = b->state;
  if (!frame_intact(b))
    return false;
  if (cond && !cond->node && !st->refolded) {
    ts__frame_abort(st->frame);
    st->frame = NULL;
    for (int i = 0; i < st->n_slots; i++)
      *st->slots[i] = st->before[i];
    state_close(b);
    b->phase = PH_PLAIN;
    return true;
  }
  if (!check_cond(b, cond))
    return false;
  if (st->refolded && !(cond = fold_flags(b, cond)))
    return false;
  ts_port port;
  if (!ts__frame_port(st->frame, cond, &port))
    return false;
  g_array_append_val(st->frame->graph->outputs, port);
  st->graph[0] = ts__frame_pop(st->frame, &st->caps[0]);
  st->frame = NULL;
  if (st->refolded)
    return loop_node(b);
  loop_frame_begin(b, "body");
  b->phase = PH_BODY;
  return true;
}

/* A loop variable keeps its dtype and shape (dims unknown before the loop
 * may be anything after an iteration, any shape where the rank is unknown). */
static bool check_loop_var(const ts_cf_block *b, int i, const ts_tensor *before,
                           const ts_tensor *after)
{
  const cf_state *st = b->state;
  char name[64], bs[TS_INFO_STR], as[TS_INFO_STR];
  slot_name(b, st, i, name, sizeof name);
  if (!after) {
    cf_error(b, TS_ERR_INVALID_ARGUMENT, "%s is undefined (NULL) at the end of the loop body",
             name);
    return false;
  }
  if (after->dtype != before->dtype) {
    cf_error(b, TS_ERR_DTYPE,
             "%s has dtype %s before the loop, but dtype %s after one iteration; a loop "
             "variable must keep its dtype",
             name, ts_dtype_name(before->dtype), ts_dtype_name(after->dtype));
    return false;
  }
  bool same = before->shape.rank == TS_RANK_UNKNOWN || after->shape.rank == before->shape.rank;
  for (int d = 0; same && d < before->shape.rank; d++)
    same = before->shape.dim[d] < 0 || before->shape.dim[d] == after->shape.dim[d];
  if (!same) {
    cf_error(b, TS_ERR_SHAPE,
             "%s has shape %s before the loop, but shape %s after one iteration; a loop "
             "variable must keep its shape",
             name, ts__shape_msg_str(bs, before->shape), ts__shape_msg_str(as, after->shape));
    return false;
  }
  return true;
}

/* Ends the body's frame and records the While node: inputs [slots...,
 * captures...], outputs the same (the body passes the captures through),
 * subgraphs [cond, body]. */
static bool loop_refold(ts_cf_block *b);

/* The counter's step, in the body (TS_FOR). */
static bool counter_step(ts_cf_block *b)
{
  cf_state *st = b->state;
  if (!st->n_hidden)
    return true;
  bool over = b->over.tensor != NULL;
  ts__implicit(+1);
  st->counter = ts_add_at(b->loc, st->counter, over ? ts_scalar_i32(1) : ts_scalar_i64(1));
  ts__implicit(-1);
  return st->counter != NULL;
}

/* Zeros of info, a concrete tensor: the return value's placeholder where
 * no TS_RETURN set it.  NULL + error when a dim is unknown. */
static ts_tensor *zeros_of(const ts_cf_block *b, ts_info info)
{
  char buf[TS_INFO_STR];
  if (ts_shape_size(info.shape) < 0) {
    cf_error(b, TS_ERR_SHAPE,
             "TS_RETURN of a %s value under a tensor condition: the value's shape must be "
             "known while tracing (the other path needs a placeholder of it)",
             ts__info_str(buf, info.dtype, info.shape));
    return NULL;
  }
  return ts_tensor_new(info.dtype, info.shape);
}

/* A loop whose body a TS_BREAK or TS_RETURN left gets AutoGraph's extra
 * loop variables: broke (and returned, retval), false (zeros) before the
 * loop; the condition is traced again with them folded in. */
static bool loop_add_flags(ts_cf_block *b)
{
  cf_state *st = b->state;
  ts_fn_jumps *fn = current_fn;
  st->n_unfolded = st->n_slots;
  if (b->broke) {
    state_add_flag(st, &b->broke, "broke", true);
    st->before[st->n_slots - 1] = ts_scalar_bool(false);
  }
  if (fn && fn->returned) {
    state_add_flag(st, &fn->returned, "returned", true);
    st->before[st->n_slots - 1] = ts_scalar_bool(false);
    int n_ret = fn->arity == TS__ARITY_NONE ? 0 : fn->arity > 1 ? fn->arity : 1;
    for (int k = 0; k < n_ret; k++) {
      ts_tensor **slot = k ? &fn->more[k - 1] : &fn->retval;
      state_add_flag(st, slot, "retval", false);
      st->before[st->n_slots - 1] = *slot ? zeros_of(b, info_of(*slot)) : NULL;
      if (!st->before[st->n_slots - 1])
        return false;
    }
  }
  return true;
}

/* Ends the body's frame: its outputs are the slots' values. */
static bool body_end(ts_cf_block *b)
{
  cf_state *st = b->state;
  int n = st->n_slots;
  ts_port ports[TS_MAX_INPUTS];
  if (n > TS_MAX_INPUTS) {
    cf_error(b, TS_ERR_INVALID_ARGUMENT, "more than %d loop variables", TS_MAX_INPUTS);
    return false;
  }
  for (int i = 0; i < n; i++) {
    ts_tensor *v = *st->slots[i];
    if (!check_loop_var(b, i, st->before[i], v) || !ts__frame_port(st->frame, v, &ports[i]))
      return false;
  }
  st->graph[1] = ts__frame_pop(st->frame, &st->caps[1]);
  st->frame = NULL;
  g_array_append_vals(st->graph[1]->outputs, ports, (guint)n);
  return true;
}

/* Ends the body's frame and records the While node: inputs [slots...,
 * captures...], outputs the same (the body passes the captures through),
 * subgraphs [cond, body]. */
static bool loop_build(ts_cf_block *b)
{
  if (ts_failed() || !frame_intact(b) || !counter_step(b))
    return false;
  bool refold = b->broke || (current_fn && current_fn->returned);
  if (refold && !loop_add_flags(b))
    return false;
  if (!body_end(b))
    return false;
  return refold ? loop_refold(b) : loop_node(b);
}

/* Adds Placeholders for slots [from, n_slots) to g's inputs after the
 * slots before them (the captures' come after). */
static void insert_slot_inputs(const ts_cf_block *b, ts_graph *g, int from)
{
  const cf_state *st = b->state;
  for (int i = from; i < st->n_slots; i++) {
    char name[64];
    slot_name(b, st, i, name, sizeof name);
    ts_info info = info_of(st->before[i]);
    int id = ts__graph_add_node(g, TS_OP_PLACEHOLDER, name, "", (ts_loc){ 0 }, NULL, 0, NULL, 0,
                                &info, 1)->id;
    g_array_insert_val(g->inputs, (guint)i, id);
  }
  for (guint k = 0; k < g->inputs->len; k++)
    ts__graph_node(g, g_array_index(g->inputs, int, k))->input_index = (int)k;
}

/* The body is traced; the condition is traced again, now on the flags too
 * (TS_WHILE: when its condition is next computed; TS_FOR: here). */
static bool loop_refold(ts_cf_block *b)
{
  cf_state *st = b->state;
  insert_slot_inputs(b, st->graph[1], st->n_unfolded);
  ts__graph_free(st->graph[0]);
  caps_free(st->caps[0]);
  st->graph[0] = NULL;
  st->caps[0] = NULL;
  st->refolded = true;
  loop_frame_begin(b, "cond");
  b->phase = PH_COND;
  if (b->kind == KIND_WHILE)
    return true;
  ts__implicit(+1);
  bool ok = loop_cond_end(b, for_cond(b, st->counter));
  ts__implicit(-1);
  return ok;
}

/* cond and not broke (and not returned), as AutoGraph folds them. */
static ts_tensor *fold_flags(const ts_cf_block *b, ts_tensor *cond)
{
  const cf_state *st = b->state;
  ts_loc loc = b->loc;
  ts__implicit(+1);
  ts_tensor *c = cond->dtype == TS_BOOL ? cond
                                        : ts_not_equal_at(loc, cond, ts_zeros_like_at(loc, cond));
  for (int i = st->n_unfolded; i < st->n_slots; i++)
    if (st->flag_bool[i - (st->n_slots - st->n_flags)])
      c = ts_logical_and_at(loc, c, ts_logical_not_at(loc, *st->slots[i]));
  ts__implicit(-1);
  return c;
}

static bool loop_node(ts_cf_block *b)
{
  cf_state *st = b->state;
  int n = st->n_slots;
  ts_port ports[TS_MAX_INPUTS];
  ts_info infos[TS_MAX_INPUTS];
  ts_graph *body = st->graph[1];
  GArray *all = caps_union(st);
  bool ok = false;
  int n_in = n + (int)all->len;
  if (n_in > TS_MAX_INPUTS) {
    cf_error(b, TS_ERR_INVALID_ARGUMENT,
             "the loop uses %d variables and values from outside it; at most %d are supported",
             n_in, TS_MAX_INPUTS);
    goto out;
  }
  for (int g = 0; g < 2; g++)
    align_inputs(st->graph[g], n, st->caps[g], all);
  for (guint k = 0; k < all->len; k++) {
    ts_port pass = { g_array_index(body->inputs, int, n + (int)k), 0 };
    g_array_append_val(body->outputs, pass);
  }
  for (int i = 0; i < n; i++) {
    infos[i] = info_of(st->before[i]);
    if (!ts__frame_port(st->outer, st->before[i], &ports[i]))
      goto out;
  }
  for (guint k = 0; k < all->len; k++) {
    ts_source s = g_array_index(all, ts_source, k);
    infos[n + k] = s.node->outputs[s.index];
    if (!ts__frame_source_port(st->outer, s, &ports[n + k]))
      goto out;
  }
  ts_node *node = ts__trace_record_node(st->outer, b->loc, ts__op_def(TS_OP_WHILE), ports, n_in,
                                        NULL, infos, n_in);
  attach_subgraphs(st, node, "cond", "body");
  ts__frame_order(st->outer, node);
  ts_tensor *outs[TS_MAX_INPUTS];
  ts_source *sources = g_new(ts_source, n_in);
  for (int i = 0; i < n_in; i++) {
    outs[i] = ts__tensor_symbolic(node, i);
    if (i < n)
      *st->slots[i] = outs[i];
    sources[i] = i >= n ? g_array_index(all, ts_source, i - n)
                 : st->before[i]->node ? (ts_source){ .node = st->before[i]->node,
                                                      .index = st->before[i]->node_output }
                                       : (ts_source){ .value = st->before[i] };
  }
  ts__tape_record_node(node, sources, n_in, outs, n_in);
  g_free(sources);
  state_close(b);
  b->phase = in_dead_code() || ts__context()->carried_ok ? PH_DONE : PH_PROBE_READY;
  ok = true;
out:
  g_array_unref(all);
  return ok;
}

/* ---- the probe: values carried around a loop without being listed ------------------------
 * C cannot tell which variables a loop body changes; the listed ones are
 * loop variables.  A value one iteration makes and an unlisted C variable
 * carries into the next would be the first iteration's value on every
 * iteration of the graph, so once the While node is built its condition
 * and body run once more as dead code (ops into a frame that is dropped,
 * the variables and flags put back after): a value of the first pass that
 * the second uses is refused there, naming it and the loop (tracer.c), as
 * eagerly its use in the next iteration is (scope.c).  Host code in a
 * traced loop body runs twice; a loop in the probe is probed no more. */
static ts_info element_info(const ts_cf_block *b);

static void probe_begin(ts_cf_block *b)
{
  if (n_records == MAX_RECORDS) {
    cf_error(b, TS_ERR_INVALID_ARGUMENT, "more than %d jumps pending", MAX_RECORDS);
    block_fail(b);
    return;
  }
  flag_set fs = flags_of(b);
  int nv = b->n_vars;
  /* TS_FOR's loop variable is put back too: it holds the body's element */
  jump_record rec = { .region = b, .n = nv + fs.n + (b->loop_var != NULL) };
  rec.slots = g_new(ts_tensor **, rec.n);
  rec.saved = g_new(ts_tensor *, rec.n);
  for (int i = 0; i < rec.n; i++) {
    rec.slots[i] = i < nv ? b->vars[i] : i < nv + fs.n ? fs.slot[i - nv] : b->loop_var;
    rec.saved[i] = *rec.slots[i];
  }
  for (int i = 0; i < fs.n; i++)
    *fs.slot[i] = NULL; /* the body starts as the first pass did */
  rec.dead = block_frame_push(b, "probe");
  rec.dead->probe = true;
  if (b->loop_var)
    *b->loop_var = ts__frame_placeholder(rec.dead, "element", element_info(b));
  records[n_records++] = rec;
  b->phase = PH_PROBE;
}

/* The probe's body ended (body_reached_end closed its record). */
static void probe_end(ts_cf_block *b)
{
  if (ts_failed())
    block_fail(b);
  else
    b->phase = PH_DONE;
}

/* ---- TS_WHILE ---------------------------------------------------------------------------- */

ts_cf_block ts__while_begin(ts_loc loc, ts_cf_block *up, ts_tensor **const *vars, int n_vars,
                            const char *names)
{
  ts_cf_block b = {
    .loc = loc, .kind = KIND_WHILE, .branch = -1, .vars = vars, .n_vars = n_vars, .names = names,
    .phase = PH_PLAIN, .path_depth = ts__path_depth(), .up = up == &ts__cf ? NULL : up,
  };
  ts_frame *outer = ts__trace_frame();
  if (!outer) {
    iter_scope_begin(&b);
    return b;
  }
  /* The condition is traced first, on Placeholders for the variables; if
   * it comes out concrete the loop is host control flow after all. */
  if (!state_new(&b, outer, NULL) || !loop_vars_defined(&b)) {
    block_fail(&b);
    return b;
  }
  loop_frame_begin(&b, "cond");
  b.phase = PH_COND;
  return b;
}

bool ts__while_wants_cond(ts_cf_block *b)
{
  if (b->phase == PH_PROBE_READY)
    probe_begin(b);
  bool wants = b->phase == PH_PLAIN || b->phase == PH_COND || b->phase == PH_PROBE;
  if (wants)
    path_enter(b, "cond");
  return wants;
}

/* The test of a TS_WHILE (after its condition, if wanted, was computed). */
static bool while_test(ts_cf_block *b, ts_tensor *cond)
{
  if (b->phase == PH_COND && !loop_cond_end(b, traced_value(b->loc, cond))) {
    block_fail(b);
    return false;
  }
  if (b->phase == PH_PROBE_READY) /* built after the condition traced again (refolded) */
    probe_begin(b);
  if (b->phase == PH_BODY || b->phase == PH_PROBE)
    return true;
  if (b->phase != PH_PLAIN || plain_loop_stopped(b))
    return false;
  if (!check_cond(b, cond)) {
    block_fail(b);
    return false;
  }
  if (truth(cond))
    return true;
  iter_scope_end(b, false);
  b->phase = PH_DONE;
  return false;
}

bool ts__while_test(ts_cf_block *b, ts_tensor *cond)
{
  bool more = while_test(b, cond);
  if (more) {
    path_enter(b, "body");
  } else {
    path_leave(b);
    loop_finished(b);
  }
  return more;
}

/* The end of a loop body: the code after a jump in it closes; a
 * TS_CONTINUE has done its work. */
static void body_reached_end(ts_cf_block *b)
{
  path_leave(b);
  region_close(b);
  b->continued = NULL;
  b->jumped = false;
}

void ts__while_step(ts_cf_block *b)
{
  body_reached_end(b);
  if (b->phase == PH_BODY && !loop_build(b))
    block_fail(b);
  else if (b->phase == PH_PROBE)
    probe_end(b);
  else if (b->phase == PH_PLAIN && !plain_loop_ends(b))
    iter_scope_end(b, true);
}

/* ---- TS_FOR --------------------------------------------------------------------------------- */

static bool is_range(const ts_iterable *it)
{
  return it->start || it->limit || it->delta;
}

/* The dtype a TS_RANGE counts in: its bounds' promoted dtype. */
static ts_dtype range_dtype(const ts_iterable *it)
{
  return ts_dtype_promote(ts_dtype_promote(it->start->dtype, it->limit->dtype), it->delta->dtype);
}

/* What a TS_FOR's loop variable holds: a range's scalar, a row of a tensor. */
static ts_info element_info(const ts_cf_block *b)
{
  const ts_iterable *it = &b->over;
  if (is_range(it))
    return (ts_info){ range_dtype(it), TS_SCALAR_SHAPE };
  if (it->tensor->shape.rank == TS_RANK_UNKNOWN)
    return (ts_info){ it->tensor->dtype, { .rank = TS_RANK_UNKNOWN } };
  ts_shape row = { .rank = it->tensor->shape.rank - 1 };
  memcpy(row.dim, it->tensor->shape.dim + 1, (size_t)row.rank * sizeof row.dim[0]);
  return (ts_info){ it->tensor->dtype, row };
}

static bool check_iterable(const ts_cf_block *b)
{
  const ts_iterable *it = &b->over;
  char buf[TS_INFO_STR];
  if (!is_range(it)) {
    if (!it->tensor) {
      cf_error(b, TS_ERR_INVALID_ARGUMENT, "the tensor to iterate over is NULL");
      return false;
    }
    if (it->tensor->shape.rank == 0) {
      cf_error(b, TS_ERR_SHAPE, "cannot iterate over a scalar tensor (%s)",
               ts__info_str(buf, it->tensor->dtype, it->tensor->shape));
      return false;
    }
    /* The loop counts rows in int32 (as a graph's loop counter does): more
     * rows than that, typically an empty tensor with a huge dim 0 (nothing
     * in any row), is refused at once instead of looping per row. */
    if (it->tensor->shape.rank > 0 && it->tensor->shape.dim[0] > INT32_MAX) {
      cf_error(b, TS_ERR_SHAPE,
               "cannot iterate over the %" G_GINT64_FORMAT " rows of %s: a loop runs at most "
               "%d iterations", it->tensor->shape.dim[0],
               ts__info_str(buf, it->tensor->dtype, it->tensor->shape), INT32_MAX);
      return false;
    }
    return true;
  }
  const ts_tensor *bounds[3] = { it->start, it->limit, it->delta };
  static const char *const what[3] = { "start", "limit", "delta" };
  for (int i = 0; i < 3; i++) {
    const ts_tensor *t = bounds[i];
    if (!t) {
      cf_error(b, TS_ERR_INVALID_ARGUMENT, "TS_RANGE %s is NULL", what[i]);
      return false;
    }
    /* (a symbolic one of unknown rank is made a scalar when traced) */
    bool scalar = t->shape.rank == 0 || (t->shape.rank == TS_RANK_UNKNOWN && t->node);
    if (t->dtype >= TS_BOOL || !scalar) {
      cf_error(b, TS_ERR_INVALID_ARGUMENT, "TS_RANGE %s must be a numeric scalar, got %s",
               what[i], ts__info_str(buf, t->dtype, t->shape));
      return false;
    }
  }
  if (it->delta->data && ts_tensor_get_f64(it->delta, 0) == 0) {
    cf_error(b, TS_ERR_INVALID_ARGUMENT, "TS_RANGE delta must not be zero");
    return false;
  }
  return true;
}

/* A range's trip count from concrete bounds: ts__range_count_*, the one
 * definition ts_range uses too. */
static bool range_count(const ts_cf_block *b, int64_t *n)
{
  const ts_iterable *it = &b->over;
  ts_range_status st;
  if (ts_dtype_is_integer(range_dtype(it)))
    st = ts__range_count_i64(ts_tensor_get_i64(it->start, 0), ts_tensor_get_i64(it->limit, 0),
                             ts_tensor_get_i64(it->delta, 0), n);
  else
    st = ts__range_count_f64(ts_tensor_get_f64(it->start, 0), ts_tensor_get_f64(it->limit, 0),
                             ts_tensor_get_f64(it->delta, 0), n);
  if (st == TS_RANGE_OK)
    return true;
  if (st == TS_RANGE_ZERO_DELTA)
    cf_error(b, TS_ERR_INVALID_ARGUMENT, "TS_RANGE delta must not be zero");
  else
    cf_error(b, TS_ERR_INVALID_ARGUMENT, "TS_RANGE(%g, %g, %g) is not a finite range",
             ts_tensor_get_f64(it->start, 0), ts_tensor_get_f64(it->limit, 0),
             ts_tensor_get_f64(it->delta, 0));
  return false;
}

/* Plain loops: the number of iterations. */
static bool plain_count(const ts_cf_block *b, int64_t *n)
{
  const ts_iterable *it = &b->over;
  if (!is_range(it)) {
    *n = it->tensor->shape.dim[0];
    return true;
  }
  return range_count(b, n);
}

/* A range bound in the trip count's dtype w: a concrete one as a constant
 * of w (no Cast node in the graph), a symbolic one cast there. */
static ts_tensor *bound_as(ts_loc loc, ts_tensor *t, ts_dtype w)
{
  if (!t->data)
    return ts_cast_at(loc, t, w);
  return w == TS_F64 ? ts_scalar_f64(ts_tensor_get_f64(t, 0)) : ts_scalar_i64(ts_tensor_get_i64(t, 0));
}

/* A traced range's trip count as an i64 tensor of the outer frame: a
 * constant from concrete bounds, else the same formula in the graph,
 * -floor(-(limit - start) / delta) clamped at 0, in int64 (integers) or
 * float64.  A concrete delta of zero is refused now, as eagerly; a
 * symbolic one fails when the graph runs (an integer division by zero,
 * at the TS_FOR's line). */
static ts_tensor *range_trip(const ts_cf_block *b)
{
  const ts_iterable *it = &b->over;
  ts_loc loc = b->loc;
  if (it->start->data && it->limit->data && it->delta->data) {
    int64_t n;
    return range_count(b, &n) ? ts_scalar_i64(n) : NULL;
  }
  if (it->delta->data && ts_tensor_get_f64(it->delta, 0) == 0) {
    cf_error(b, TS_ERR_INVALID_ARGUMENT, "TS_RANGE delta must not be zero");
    return NULL;
  }
  ts_dtype w = ts_dtype_is_float(range_dtype(it)) ? TS_F64 : TS_I64;
  ts_tensor *start = bound_as(loc, it->start, w), *limit = bound_as(loc, it->limit, w);
  ts_tensor *delta = bound_as(loc, it->delta, w);
  ts_tensor *q = ts_neg_at(loc, ts_floordiv_at(loc, ts_neg_at(loc, ts_sub_at(loc, limit, start)),
                                               delta));
  ts_tensor *n = w == TS_I64 ? q : ts_cast_at(loc, q, TS_I64);
  if (!it->delta->data) { /* a zero delta divides an integer by zero where the graph runs */
    ts_tensor *nonzero = ts_cast_at(loc, ts_not_equal_at(loc, delta, ts_zeros_like_at(loc, delta)),
                                    TS_I64);
    n = ts_floordiv_at(loc, n, nonzero);
  }
  return ts_maximum_at(loc, n, ts_scalar_i64(0));
}

/* Element i of a range: start + i * delta, in the range's dtype. */
static ts_tensor *range_value(const ts_iterable *it, int64_t i)
{
  ts_dtype dt = range_dtype(it);
  union { float f32; double f64; int32_t i32; int64_t i64; uint8_t u8; } v;
  if (ts_dtype_is_float(dt)) {
    double f = ts_tensor_get_f64(it->start, 0) + (double)i * ts_tensor_get_f64(it->delta, 0);
    if (dt == TS_F32)
      v.f32 = (float)f;
    else
      v.f64 = f;
  } else {
    /* Wrapping arithmetic: the value is in range even where i * delta is not. */
    int64_t n = (int64_t)((uint64_t)ts_tensor_get_i64(it->start, 0) +
                          (uint64_t)i * (uint64_t)ts_tensor_get_i64(it->delta, 0));
    if (dt == TS_I64)
      v.i64 = n;
    else if (dt == TS_I32)
      v.i32 = (int32_t)n;
    else
      v.u8 = (uint8_t)n;
  }
  return ts_constant(dt, TS_SCALAR_SHAPE, &v);
}

/* The traced loop's condition on the counter's Placeholder, in the cond frame. */
static ts_tensor *for_cond(const ts_cf_block *b, ts_tensor *counter)
{
  const ts_iterable *it = &b->over;
  ts_loc loc = b->loc;
  if (!is_range(it)) { /* a rank unknown while tracing: the rows counted at run time */
    int64_t n = it->tensor->shape.rank > 0 ? it->tensor->shape.dim[0] : -1;
    ts_tensor *limit = n >= 0 && n <= INT32_MAX
                         ? ts_scalar_i32((int32_t)n)
                         : ts_gather_at(loc, ts_shape_at(loc, it->tensor), ts_scalar_i32(0), 0);
    return ts_less_at(loc, counter, limit);
  }
  /* An index below the trip count: a value counter would wrap (u8 2..255 by 2). */
  return ts_less_at(loc, counter, ((const cf_state *)b->state)->trip);
}

/* The traced range's element for index i: start + i * delta in the range's
 * dtype (floats computed in f64, as range_value does eagerly). */
static ts_tensor *range_element(const ts_cf_block *b, ts_tensor *i)
{
  const ts_iterable *it = &b->over;
  ts_loc loc = b->loc;
  ts_dtype dt = range_dtype(it), w = ts_dtype_is_float(dt) ? TS_F64 : dt;
  ts_tensor *v = ts_add_at(loc, ts_cast_at(loc, it->start, w),
                           ts_mul_at(loc, ts_cast_at(loc, i, w), ts_cast_at(loc, it->delta, w)));
  return w == dt ? v : ts_cast_at(loc, v, dt);
}

/* A range bound while tracing: a variable is read; one whose rank is
 * unknown while tracing is checked to be a scalar when the graph runs
 * (as tf.range's bounds are), and is one from then on. */
static ts_tensor *range_bound(const ts_cf_block *b, ts_tensor *t, int which)
{
  static const char *const must[3] = { "TS_RANGE start must be a scalar; its rank is",
                                       "TS_RANGE limit must be a scalar; its rank is",
                                       "TS_RANGE delta must be a scalar; its rank is" };
  ts_loc loc = b->loc;
  t = traced_value(loc, t);
  if (!t || !t->node || t->shape.rank != TS_RANK_UNKNOWN)
    return t;
  ts_tensor *rank = ts_gather_at(loc, ts_shape_at(loc, ts_shape_at(loc, t)), ts_scalar_i32(0), 0);
  if (!ts_assert_equal_at(loc, rank, ts_zeros_like_at(loc, rank), must[which]))
    return NULL;
  return ts_reshape_at(loc, t, TS_SCALAR_SHAPE);
}

/* TS_FOR while tracing: a While loop with a hidden counter (an index for
 * TS_OVER, the value itself for TS_RANGE). */
static bool for_trace_begin(ts_cf_block *b, ts_frame *outer)
{
  const ts_iterable *it = &b->over;
  /* The trip count, counter and condition are the engine's own ops (no
   * eager twin); so is a range's element, a constant eagerly. */
  ts__implicit(+1);
  if (is_range(it)) {
    b->over.start = range_bound(b, it->start, 0);
    b->over.limit = range_bound(b, it->limit, 1);
    b->over.delta = range_bound(b, it->delta, 2);
  }
  ts_tensor *trip = is_range(it) && it->start && it->limit && it->delta ? range_trip(b) : NULL;
  ts_tensor *counter = is_range(it) ? ts_scalar_i64(0) : ts_scalar_i32(0);
  cf_state *st = !is_range(it) || trip ? state_new(b, outer, counter) : NULL;
  bool ok = st && loop_vars_defined(b);
  if (ok) {
    st->trip = trip;
    loop_frame_begin(b, "cond");
    ok = loop_cond_end(b, for_cond(b, st->counter));
  }
  if (ok && !it->tensor)
    *b->loop_var = range_element(b, st->counter);
  ts__implicit(-1);
  if (!ok)
    return false;
  /* The element of a tensor is taken in the body, as eagerly each iteration does. */
  path_enter(b, "body");
  if (it->tensor)
    *b->loop_var = ts_gather_at(b->loc, it->tensor, st->counter, 0);
  /* After the loop the variable still holds this value of the body, and
   * a use there is refused as the loop variable's (tracer.c) */
  if (*b->loop_var && (*b->loop_var)->node)
    (*b->loop_var)->node->loop_element = true;
  b->phase = PH_BODY_READY;
  return true;
}

ts_cf_block ts__for_begin(ts_loc loc, ts_cf_block *up, ts_tensor **var, ts_iterable over,
                          ts_tensor **const *vars, int n_vars, const char *names)
{
  ts_cf_block b = {
    .loc = loc, .kind = KIND_FOR, .branch = -1, .vars = vars, .n_vars = n_vars, .names = names,
    .loop_var = var, .over = over, .phase = PH_PLAIN, .path_depth = ts__path_depth(),
    .up = up == &ts__cf ? NULL : up,
  };
  if (!check_iterable(&b)) {
    block_fail(&b);
    return b;
  }
  /* While tracing, iterating over a tensor or a range is a loop in the
   * graph even over constants, as `for i in tf.range(n)` is in a
   * tf.function; plain C `for` is the host-level loop. */
  ts_frame *outer = ts__trace_frame();
  if (outer && !for_trace_begin(&b, outer))
    block_fail(&b);
  else if (!outer)
    iter_scope_begin(&b);
  return b;
}

static bool for_next(ts_cf_block *b)
{
  if (b->phase == PH_BODY_READY) {
    b->phase = PH_BODY; /* its path entry was made with the element */
    return true;
  }
  if (b->phase == PH_PROBE_READY) {
    probe_begin(b);
    path_enter(b, "body");
    return b->phase == PH_PROBE;
  }
  if (b->phase != PH_PLAIN || plain_loop_stopped(b))
    return false;
  int64_t n;
  if (!plain_count(b, &n)) {
    block_fail(b);
    return false;
  }
  if (b->index >= n) {
    /* No iteration bound the loop variable (Python's `for r in []`): it
     * keeps whatever it held, perhaps nothing (an uninitialised C
     * pointer), so it is not read. */
    if (b->index == 0)
      b->loop_var = NULL;
    iter_scope_end(b, false);
    b->phase = PH_DONE;
    return false;
  }
  const ts_iterable *it = &b->over;
  path_enter(b, "body");
  ts_tensor *v = it->tensor ? ts_gather_at(b->loc, it->tensor, ts_scalar_i64(b->index), 0)
                            : range_value(it, b->index);
  if (!v) {
    block_fail(b);
    return false;
  }
  *b->loop_var = v;
  return true;
}

bool ts__for_next(ts_cf_block *b)
{
  bool more = for_next(b);
  if (!more)
    loop_finished(b);
  return more;
}

void ts__for_step(ts_cf_block *b)
{
  body_reached_end(b);
  if (b->phase == PH_PLAIN) {
    b->index++;
    if (!plain_loop_ends(b))
      iter_scope_end(b, true);
  } else if (b->phase == PH_BODY) {
    if (!loop_build(b))
      block_fail(b);
  } else if (b->phase == PH_PROBE) {
    probe_end(b);
  }
}

/* ---- the functional forms ----------------------------------------------------------------- */

static ts_tensor ***var_slots(ts_tensor **vars, int n)
{
  ts_tensor ***slots = g_new(ts_tensor **, n > 0 ? n : 1);
  for (int i = 0; i < n; i++)
    slots[i] = &vars[i];
  return slots;
}

bool ts_cond_at(ts_loc loc, ts_tensor *pred, ts_branch_fn then_fn, ts_branch_fn else_fn,
                ts_tensor **vars, int n, void *user_data)
{
  TS_CHECK_ARG(then_fn && n >= 0 && (vars || n == 0), false);
  ts_tensor ***slots = var_slots(vars, n);
  ts_cf_block b = ts__if_begin(loc, pred, NULL, slots, n, NULL);
  while (ts__if_next(&b)) {
    if (b.branch == 0)
      then_fn(vars, n, user_data);
    ts__cf_mark(&b, 0);
    if (b.branch == 1 && else_fn)
      else_fn(vars, n, user_data);
    ts__cf_mark(&b, 1);
  }
  ts__if_end(&b);
  g_free(slots);
  return b.phase == PH_DONE && !ts_failed();
}

bool ts_while_loop_at(ts_loc loc, ts_loop_cond_fn cond, ts_branch_fn body, ts_tensor **vars,
                      int n, void *user_data)
{
  TS_CHECK_ARG(cond && body && n >= 0 && (vars || n == 0), false);
  ts_tensor ***slots = var_slots(vars, n);
  ts_cf_block b = ts__while_begin(loc, NULL, slots, n, NULL);
  while (ts__while_test(&b, ts__while_wants_cond(&b) ? cond(vars, n, user_data) : NULL)) {
    body(vars, n, user_data);
    ts__while_step(&b);
  }
  g_free(slots);
  return b.phase == PH_DONE && !ts_failed();
}
