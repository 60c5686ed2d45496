/* execute.c — the step runner: runs one op, an eager op or a graph's
 * step, on concrete inputs (no validation, promotion or handlers: those
 * are dispatch.c's).  It places the op on a backend (copying its inputs
 * there), infers its outputs (or takes those the graph recorded), takes
 * its planned buffers or allocates, numbers it in the run, tells the op
 * watch, listeners and the observer, and runs the backend's kernel.  The
 * executor (exec/) reaches it through ts__execute with a run site; If and
 * While reach their subgraphs back through the site's pointers, so nothing
 * here calls up the layers. */
#include "engine-private.h"
#include "op_clock.h"

/* Are a graph step's inputs those its outputs were inferred from when traced? */
static bool inputs_as_recorded(const ts_op_call *call, const ts_run_site *site)
{
  if (!site || !site->in_recorded || site->n_recorded > TS_MAX_OUTPUTS)
    return false;
  for (int i = 0; i < call->n_in; i++) {
    const ts_info *r = site->in_recorded[i];
    const ts_tensor *t = call->in[i];
    if (t->dtype != r->dtype || t->shape.rank != r->shape.rank)
      return false;
    for (int d = 0; d < r->shape.rank; d++)
      if (t->shape.dim[d] != r->shape.dim[d])
        return false;
  }
  return true;
}

static bool infer(const ts_op_call *call, const ts_run_site *site, ts_info *out_info, int *n_out)
{
  if (inputs_as_recorded(call, site)) {
    memcpy(out_info, site->recorded, sizeof *out_info * (size_t)site->n_recorded);
    *n_out = site->n_recorded;
    return true;
  }
  ts_info in_info[TS_MAX_INPUTS];
  for (int i = 0; i < call->n_in; i++)
    in_info[i] = (ts_info){ call->in[i]->dtype, call->in[i]->shape };
  ts_infer_ctx ic = {
    .def = call->def, .loc = call->loc, .site = site, .n_in = call->n_in, .in = in_info,
    .attrs = call->attrs, .n_out = call->def->n_outputs, .out = out_info,
  };
  if (!call->def->infer(&ic))
    return false;
  if (ic.n_out < 0 || ic.n_out > TS_MAX_OUTPUTS) {
    ts__op_fail(call->loc, call->def, TS_ERR_INTERNAL, "inferred %d outputs", ic.n_out);
    return false;
  }
  *n_out = ic.n_out;
  return true;
}

bool ts__dispatch_infer(const ts_op_call *call, ts_info *out_info, int *n_out)
{
  return infer(call, NULL, out_info, n_out);
}

/* ---- placement ----------------------------------------------------------------------- */

static bool backend_runs(const ts_backend *b, const ts_op_call *call)
{
  return ts__backend_runs(b, call->def, call->in, call->n_in, call->attrs);
}

/* Soft placement is visible: the op event says CPU, and the first time an
 * op falls back from a device a warning says so. */
static void warn_fallback(const ts_op_call *call, const ts_backend *device)
{
  static uint64_t warned[(TS_OP_COUNT + 63) / 64];
  uint64_t bit = (uint64_t)1 << (call->def->op % 64);
  if (__atomic_fetch_or(&warned[call->def->op / 64], bit, __ATOMIC_RELAXED) & bit)
    return;
  /* a row with a kernel for the device's kind that the device does not
   * take with these inputs: say so, with their dtypes */
  GString *given = g_string_new(NULL);
  if (call->def->kernel[device->iface.kind]) {
    g_string_append(given, " (it has one, but not for ");
    for (int i = 0; i < call->n_in; i++)
      g_string_append_printf(given, "%s%s", i ? ", " : "",
                             call->in[i] ? ts_dtype_name(call->in[i]->dtype) : "?");
    g_string_append(given, call->n_in ? " there)" : "these attributes there)");
  }
  char *message = g_strdup_printf("%s:%d: %s has no kernel on %s: it runs on the CPU, its "
                                  "inputs copied there and back%s",
                                  call->loc.file ? call->loc.file : "?", call->loc.line,
                                  call->def->name, ts_backend_name(device), given->str);
  g_string_free(given, TRUE);
  ts_event ev = { .kind = TS_EVENT_WARNING };
  ev.warning = (ts_warning_event){ .kind = TS_WARNING_DEVICE_FALLBACK, .function_name = "",
                                   .message = message };
  ts__listeners_emit(&ev);
  g_free(message);
}

/* The backend that runs call: the thread's device, or the CPU when the
 * device cannot (soft placement).  Ops on a variable run where it lives,
 * whatever the device (TF's placer colocates them with the resource): a
 * variable never moves, and a variable lives only where its ops run
 * (tensor.c's variable_home). */
static const ts_backend *place(ts_context *c, const ts_op_call *call)
{
  const ts_backend *cpu = c->cpu;
  const ts_backend *b = c->device ? c->device : cpu;
  if ((call->def->flags & TS_OPF_VARIABLE) && call->n_in > 0 && call->in[0]->backend)
    return call->in[0]->backend;
  if (b == cpu || backend_runs(b, call))
    return b;
  if (!(call->def->flags & TS_OPF_CONTROL_FLOW)) /* If and While run on the host anyway */
    warn_fallback(call, b);
  return cpu;
}

/* Correlation ids: unique in the process, handed out to each thread in
 * blocks so that an op takes one without touching a shared counter. */
static uint64_t next_correlation(ts_context *c)
{
  enum { BLOCK = 4096 };
  static uint64_t next_block = 1;
  if (G_UNLIKELY(c->corr_next == c->corr_end)) {
    c->corr_next = __atomic_fetch_add(&next_block, BLOCK, __ATOMIC_RELAXED);
    c->corr_end = c->corr_next + BLOCK;
  }
  return c->corr_next++;
}

/* ---- events -------------------------------------------------------------------------- */

/* Every field set one by one: a compound literal would have the compiler
 * clear the whole event first (a rep stos, half of what building one cost).
 * The size check makes a field added to ts_op_event come here too. */
_Static_assert(sizeof(void *) != 8 || sizeof(ts_op_event) == 184, "emit_op sets every field of ts_op_event");

static void fill_op(ts_event *ev, ts_context *c, ts_event_kind kind, const ts_op_call *call,
                    const ts_backend *b, const ts_run_site *site, const ts_node *twin,
                    uint64_t seq, uint64_t correlation, uint32_t n_copied, ts_tensor *const *out,
                    int n_out, uint64_t start_ns, uint64_t end_ns)
{
  ev->kind = kind; /* the rest of the union (larger than the op event) is not cleared */
  bool end = kind == TS_EVENT_OP_END;
  ts_op_event *o = &ev->op;
  o->op = call->def->op;
  o->op_name = call->def->name;
  o->loc = call->loc;
  o->device = b->iface.name; /* b is never NULL: ts_backend_name's, without the call */
  o->n_inputs = call->n_in;
  o->inputs = call->in;
  o->n_outputs = end ? n_out : 0;
  o->outputs = end ? out : NULL;
  o->start_ns = start_ns;
  o->end_ns = end_ns;
  o->node = site ? site->node : NULL;
  o->run_id = c->run.run_id;
  o->seq = seq;
  o->parent = site ? site->parent : NULL;
  o->parent_seq = site ? site->parent_seq : 0;
  o->concrete = c->run.concrete;
  o->traced = site ? site->traced : twin;
  o->stream = 0;
  o->n_copied = n_copied;
  o->correlation = correlation;
  o->device_start_ns = 0;
  o->device_end_ns = 0;
}

static void emit_op(ts_context *c, ts_event_kind kind, const ts_op_call *call,
                    const ts_backend *b, const ts_run_site *site, const ts_node *twin,
                    uint64_t seq, uint64_t correlation, uint32_t n_copied, ts_tensor *const *out,
                    int n_out, uint64_t start_ns, uint64_t end_ns)
{
  ts_event ev;
  fill_op(&ev, c, kind, call, b, site, twin, seq, correlation, n_copied, out, n_out, start_ns,
          end_ns);
  ts__listeners_emit(&ev);
}

/* The traced node an eager op is, when the run has a concrete function to
 * match against (see ts_op_event in tracescope.h). */
static const ts_node *eager_twin(ts_context *c, ts_loc loc)
{
  uint64_t site;
  int occurrence;
  if (!c->run.twins || !ts__site_next(loc, &site, &occurrence))
    return NULL;
  return ts__twin_lookup(c->run.twins, site, occurrence);
}

/* The failure hook told of op seq, which failed (its error pending). */
static void tell_failure(ts_context *c, const ts_op_call *call, const ts_backend *b,
                         const ts_run_site *site, const ts_node *twin, uint64_t seq)
{
  ts_event ev;
  fill_op(&ev, c, TS_EVENT_OP_END, call, b, site, twin, seq, 0, 0, NULL, 0, 0, 0);
  c->failure_hook->op_failed(c->failure_hook, &ev.op);
}

/* ---- execution ----------------------------------------------------------------------- */

/* The last op event this thread stamped in a run: its run, seq and end.
 * Steps the run makes itself right after it on this thread (ts__announce_flush:
 * variable reads, which take no time) is stamped with that end instead
 * of reading the clock again: nothing ran between but the run's own
 * bookkeeping, and a clock reading (tens of ns under a hypervisor) was
 * most of what announcing a read cost, two thirds of a model's events.
 * Waiting for a call's pieces on other threads forgets it
 * (ts__op_stamp_forget). */
static _Thread_local struct {
  uint64_t run_id, seq, ns;
} last_stamp __attribute__((tls_model("initial-exec")));

static int execute(ts_context *c, const ts_op_call *call, const ts_run_site *site,
                   ts_tensor **out)
{
  const ts_op_def *def = call->def;
  /* Meant for this op only: ops its kernel runs allocate as usual. */
  ts_planned *planned = c->planned;
  c->planned = NULL;
  if (G_UNLIKELY(c->cancel_flag) && __atomic_load_n(c->cancel_flag, __ATOMIC_RELAXED)) {
    ts__op_fail(call->loc, def, TS_ERR_CANCELLED, "cancelled");
    return -1;
  }
  if (!def->infer) {
    ts__op_fail(call->loc, def, TS_ERR_UNIMPLEMENTED, "runs only as a node of a traced graph");
    return -1;
  }
  ts_info out_info[TS_MAX_OUTPUTS];
  int n_out;
  if (!infer(call, site, out_info, &n_out)) {
    if (G_UNLIKELY(c->failure_hook)) /* numbered as if it ran, its twin found */
      tell_failure(c, call, c->device ? c->device : c->cpu, site, site ? NULL : eager_twin(c, call->loc),
                   ++c->run.seq);
    return -1;
  }

  /* Inputs move to the backend that runs the op (strings and variants stay
   * home); the copies, and those its kernel makes, are the op's. */
  if (G_UNLIKELY(c->plan_recording)) { /* a host read now breaks the capture: whose */
    c->plan_op = call;
    c->plan_site = site;
  }
  /* an If or While the device runs stays there, its inputs too */
  bool on_device = site && site->on_device;
  const ts_backend *b = on_device ? c->device : place(c, call);
  uint64_t correlation = next_correlation(c);
  uint64_t outer = ts__activity_correlation_set(correlation);
  ts_tensor *placed[TS_MAX_INPUTS];
  ts_op_call here = *call;
  uint32_t n_copied = 0;
  for (int i = 0; i < call->n_in; i++) {
    placed[i] = call->in[i];
    if (G_UNLIKELY(placed[i]->backend != b) && !on_device) {
      /* a graph's constant is copied to a backend once, then reused */
      bool copied;
      ts__activity_operand_set((uint32_t)i + 1); /* the copy's record says which input */
      placed[i] = ts__tensor_on_kept(call->loc, placed[i], b, &copied);
      ts__activity_operand_set(0);
      if (!placed[i]) {
        ts__activity_correlation_set(outer);
        return -1;
      }
      n_copied += copied;
    }
    here.in = placed;
  }

  if (!(def->flags & TS_OPF_ALIAS)) {
    for (int i = 0; i < n_out; i++)
      if (!(planned && (out[i] = planned->take(planned, i, b, &out_info[i]))) &&
          !(out[i] = ts__tensor_alloc_on(call->loc, b, out_info[i].dtype, out_info[i].shape))) {
        ts__error_name_op(def->name);
        ts__activity_correlation_set(outer);
        return -1;
      }
  } else if (planned) {
    c->planned_view = planned->view(planned); /* the header the view kernel takes */
  }

  uint64_t seq = ++c->run.seq;
  if (G_UNLIKELY(c->op_watch)) {
    ts_op_watch *w = c->op_watch;
    *w = (ts_op_watch){ def->op, call->loc.line, call->loc.file, call->loc.func,
                        site ? site->node : NULL, seq };
  }
  /* op events only: a listener of other kinds (traces, memory, phases)
   * costs an op nothing, not even a clock reading */
  int mask = c->mute ? 0 : __atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & TS__OP_EVENTS;
  uint64_t start_ns = 0;
  const ts_node *twin = NULL;
  if (G_UNLIKELY(mask)) {
    start_ns = ts__op_now_ns();
    if (!site)
      twin = eager_twin(c, call->loc);
    if (mask & TS_EVENT_MASK(TS_EVENT_OP_BEGIN))
      emit_op(c, TS_EVENT_OP_BEGIN, &here, b, site, twin, seq, correlation, n_copied, out,
              n_out, start_ns, 0);
  }

  ts_kernel_ctx kc = {
    .def = def, .loc = call->loc, .site = site, .backend = b, .seq = seq, .n_in = here.n_in,
    .in = here.in, .attrs = call->attrs, .n_out = n_out, .out = out,
    .correlation = correlation,
  };
  if (G_UNLIKELY(c->plan_rec))
    ts__plan_record_op(c->plan_rec, call, site, b, correlation, n_copied);
  const ts_backend_i *bi = &b->iface;
  bool ok = on_device ? def->kernel[TS_DEVICE_CPU](&kc) /* the host drives the capture */
            : bi->run_op ? bi->run_op(b, &kc) : def->kernel[bi->kind](&kc);
  c->planned_view = NULL;
  ts__activity_correlation_set(outer);

  if (G_UNLIKELY(mask & TS_EVENT_MASK(TS_EVENT_OP_END))) {
    uint64_t end_ns = ts__op_now_ns();
    last_stamp.run_id = c->run.run_id;
    last_stamp.seq = seq;
    last_stamp.ns = end_ns;
    emit_op(c, TS_EVENT_OP_END, &here, b, site, twin, seq, correlation, n_copied, out,
            ok ? n_out : 0, start_ns, end_ns);
  }
  if (G_UNLIKELY(c->observer) && ok && !c->mute)
    c->observer->op_end(c->observer, &here, site, seq, out, n_out);
  if (G_UNLIKELY(c->failure_hook) && !ok)
    tell_failure(c, &here, b, site, twin, seq);
  return ok ? n_out : -1;
}

void ts__op_stamp_forget(void)
{
  last_stamp.run_id = 0;
}

void ts__announce_template(ts_event *ev, const ts_op_call *call, const ts_node *node,
                           const ts_node *traced)
{
  ts_context *c = ts__context();
  ts_run_site site = { .node = node, .traced = traced };
  fill_op(ev, c, TS_EVENT_OP_END, call, c->cpu, &site, NULL, 0, 0, 0, NULL, 1, 0, 0);
  ev->op.run_id = 0;
  ev->op.concrete = NULL;
}

void ts__announce(ts_announcements *q, const ts_event *tmpl, ts_tensor *in, ts_tensor *out,
                  uint64_t seq, const ts_node *parent, uint64_t parent_seq)
{
  if (q->n == TS_ANNOUNCE_BATCH)
    ts__announce_flush(q);
  int i = q->n++;
  ts_context *c = ts__context();
  q->in[i] = in;
  q->out[i] = out;
  ts_event *ev = &q->ev[i];
  *ev = *tmpl;
  ev->op.device = (out->backend ? out->backend : c->cpu)->iface.name;
  ev->op.inputs = &q->in[i];
  ev->op.outputs = &q->out[i];
  ev->op.run_id = c->run.run_id;
  ev->op.seq = seq;
  ev->op.parent = parent;
  ev->op.parent_seq = parent_seq;
  ev->op.concrete = c->run.concrete;
}

void ts__announce_flush(ts_announcements *q)
{
  int n = q->n;
  if (!n)
    return;
  q->n = 0;
  ts_context *c = ts__context();
  if (c->mute)
    return;
  int mask = q->to & TS_TELL_LISTENERS
               ? __atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & TS__OP_EVENTS
               : 0;
  if (mask) {
    /* They took no time: one reading, or the end of the step just before
     * them here.  Nothing was told between them: they follow one another. */
    bool follows = c->run.run_id && last_stamp.run_id == c->run.run_id &&
                   last_stamp.seq + 1 == q->ev[0].op.seq;
    uint64_t now = follows ? last_stamp.ns : ts__op_now_ns();
    last_stamp.run_id = c->run.run_id;
    last_stamp.seq = q->ev[n - 1].op.seq;
    last_stamp.ns = now;
    for (int i = 0; i < n; i++)
      q->ev[i].op.start_ns = q->ev[i].op.end_ns = now;
    if (!(mask & TS_EVENT_MASK(TS_EVENT_OP_BEGIN))) {
      ts__listeners_emit_n(q->ev, n);
    } else { /* each read's OP_BEGIN before its OP_END */
      ts_event both[2 * TS_ANNOUNCE_BATCH];
      for (int i = 0; i < n; i++) {
        both[2 * i] = q->ev[i];
        both[2 * i].kind = TS_EVENT_OP_BEGIN;
        both[2 * i].op.n_outputs = 0;
        both[2 * i].op.outputs = NULL;
        both[2 * i].op.end_ns = 0;
        both[2 * i + 1] = q->ev[i];
      }
      ts__listeners_emit_n(both, 2 * n);
    }
  }
  if (c->observer && (q->to & TS_TELL_OBSERVER))
    for (int i = 0; i < n; i++) {
      const ts_op_event *o = &q->ev[i].op;
      ts_op_call call = { o->loc, ts__op_def(o->op), &q->in[i], 1, NULL };
      ts_run_site site = { .node = o->node, .traced = o->traced, .parent = o->parent,
                           .parent_seq = o->parent_seq };
      c->observer->op_end(c->observer, &call, &site, o->seq, &q->out[i], 1);
    }
}

/* ---- a device plan's capture (exec/device_plan.c replays it) ------------------- */

void ts__plan_record_op(ts_plan_record *r, const ts_op_call *call, const ts_run_site *site,
                        const ts_backend *b, uint64_t correlation, uint32_t n_copied)
{
  const ts_op_def *def = call->def;
  /* RandomUniform and RandomNormal replay as they are: their numbers are
   * a function of the op's seed alone (ops/create.c), drawn again by a
   * replay on SIM:0 and uploaded from the plan's staging on CUDA */
  if (b != ts__context()->device)
    r->host_work = true;
  ts_plan_op op = { def, call->loc, site ? site->node : NULL, site ? site->traced : NULL, b,
                    correlation, n_copied };
  g_array_append_val(r->ops, op);
  if (!(def->flags & TS_OPF_VARIABLE))
    return;
  bool writes = def->op != TS_OP_READ_VARIABLE;
  for (int i = 0; i < call->n_in; i++) {
    ts_tensor *var = call->in[i];
    if (!var->is_variable)
      continue;
    guint k = 0;
    while (k < r->vars->len && g_array_index(r->vars, ts_plan_var, k).var != var)
      k++;
    if (k == r->vars->len) {
      ts_plan_var v = { ts_tensor_ref(var), var->data, false };
      g_array_append_val(r->vars, v);
    }
    g_array_index(r->vars, ts_plan_var, k).written |= writes && i == 0;
  }
}

void ts__correlations_take(uint64_t *out, int n)
{
  ts_context *c = ts__context();
  for (int i = 0; i < n; i++)
    out[i] = next_correlation(c);
}

void ts__replay_events(const ts_plan_op *ops, int n, const uint64_t *fresh,
                       const ts_node *parent, uint64_t parent_seq, uint64_t launched_ns)
{
  ts_context *c = ts__context();
  int mask = __atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED);
  uint64_t now = launched_ns;
  for (int k = 0, j = 0; k < n; k++) {
    const ts_plan_op *op = &ops[k];
    uint64_t seq = ++c->run.seq, corr = op->correlation ? fresh[j++] : 0;
    if (!mask)
      continue;
    /* the tensors are the device's, inside the plan: the events carry none */
    ts_op_call call = { op->loc, op->def, NULL, 0, NULL };
    ts_run_site site = { .node = op->node, .traced = op->traced, .parent = parent,
                         .parent_seq = parent_seq };
    if (mask & TS_EVENT_MASK(TS_EVENT_OP_BEGIN))
      emit_op(c, TS_EVENT_OP_BEGIN, &call, op->backend, &site, NULL, seq, corr, op->n_copied,
              NULL, 0, now, 0);
    if (mask & TS_EVENT_MASK(TS_EVENT_OP_END))
      emit_op(c, TS_EVENT_OP_END, &call, op->backend, &site, NULL, seq, corr, op->n_copied,
              NULL, 0, now, now);
  }
}

int ts__execute(const ts_op_call *call, const ts_run_site *site, ts_tensor **out)
{
  return execute(ts__context(), call, site, out);
}

int ts__run_eager(const ts_op_call *call, ts_tensor **out)
{
  return execute(ts__context(), call, NULL, out);
}
