/* kernels/tune.c — the kernel choice per op and shape, made by measuring:
 * the first time the engine meets a shape (a GEMM of M x K x N with its
 * transposes, a convolution of its geometry) it times each candidate on
 * the op's own operands, a warm-up then three alternating rounds of enough
 * repeats to last ~20 µs (one round when a run takes milliseconds), and
 * keeps the fastest for the rest of the process, its result left in the
 * op's output.  The first call of a shape so costs a few times the op; the
 * choice is then a hash lookup.  A plan makes its choices when it is made,
 * for the shapes it knows (ts__tune_only).
 * ts_kernel_choices() lists what was chosen and why. */
#include "kernels.h"

#include <glib.h>
#include <string.h>
#include <time.h>

#include "../phase.h"
#include "../tracescope.h"

#define ROUNDS 3
#define ROUND_NS 20000.0
#define MAX_REPS 64
#define LONG_NS 2e6 /* a candidate this slow once: one round, not ROUNDS */

typedef struct choice {
  ts_tune_key key;
  char label[160];
  int pick, n;
  const char *names[TS_TUNE_MAX];
  double ns[TS_TUNE_MAX]; /* fastest time per call */
  double weight[TS_TUNE_MAX]; /* what a candidate's time counts for in the choice */
} choice;

/* The engine's phase events, weakly: test-kernels links these kernels
 * without the engine's insides, and measures without telling anyone. */
#pragma weak ts__phase_begin
#pragma weak ts__phase_end

_Thread_local bool ts__tune_only;
_Thread_local int64_t ts__tune_rows;

static GMutex lock;
static GHashTable *choices; /* &choice->key -> choice */

static guint key_hash(gconstpointer p)
{
  const ts_tune_key *k = p;
  guint h = g_str_hash(k->what);
  for (int i = 0; i < TS_TUNE_DIMS; i++)
    h = h * 31u + (guint)k->dim[i] + (guint)(k->dim[i] >> 32);
  return h;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
  const ts_tune_key *x = a, *y = b;
  return (x->what == y->what || strcmp(x->what, y->what) == 0) &&
         memcmp(x->dim, y->dim, sizeof x->dim) == 0;
}

static double now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double time_per_call(ts_tune_fn fn, const void *op, int reps)
{
  double t0 = now_ns();
  for (int r = 0; r < reps; r++)
    fn(op);
  return (now_ns() - t0) / reps;
}

static void measure(const ts_tune_fn *cands, int n, const void *op, choice *ch)
{
  int reps[TS_TUNE_MAX], rounds = ROUNDS;
  for (int c = 0; c < n; c++) {
    double first = time_per_call(cands[c], op, 1); /* also the warm-up */
    reps[c] = first >= ROUND_NS ? 1 : (int)MIN(MAX_REPS, ROUND_NS / MAX(first, 1.0));
    rounds = first >= LONG_NS ? 1 : rounds;
    ch->ns[c] = G_MAXDOUBLE;
  }
  for (int round = 0; round < rounds; round++)
    for (int c = 0; c < n; c++)
      ch->ns[c] = MIN(ch->ns[c], time_per_call(cands[c], op, reps[c]));
  ch->pick = 0;
  for (int c = 1; c < n; c++)
    if (ch->ns[c] * ch->weight[c] < ch->ns[ch->pick] * ch->weight[ch->pick])
      ch->pick = c;
  /* the result is the chosen kernel's, as on every later call: kernels
   * round differently, and a process must not see two answers */
  if (ch->pick != n - 1)
    cands[ch->pick](op);
}

int ts__tune(const ts_tune_key *key, ts_tune_label_fn label, const ts_tune_fn *cands,
             const char *const *names, int n_cands, const void *op, bool *ran)
{
  return ts__tune_weighted(key, label, cands, names, NULL, n_cands, op, ran);
}

int ts__tune_weighted(const ts_tune_key *key, ts_tune_label_fn label, const ts_tune_fn *cands,
                      const char *const *names, const double *weights, int n_cands,
                      const void *op, bool *ran)
{
  g_assert(n_cands >= 1 && n_cands <= TS_TUNE_MAX);
  *ran = false;
  g_mutex_lock(&lock);
  const choice *known = choices ? g_hash_table_lookup(choices, key) : NULL;
  int pick = known ? known->pick : -1;
  g_mutex_unlock(&lock);
  if (pick >= 0 && ts__tune_only) {
    *ran = true; /* nothing to choose, nothing to compute */
    return pick;
  }

  if (pick < 0) {
    choice *ch = g_new0(choice, 1);
    ch->key = *key;
    label(key, ch->label, sizeof ch->label);
    ch->n = n_cands;
    for (int c = 0; c < n_cands; c++) {
      ch->names[c] = names[c];
      ch->weight[c] = weights ? weights[c] : 1.0;
    }
    ts__phase phase;
    if (ts__phase_begin)
      ts__phase_begin(&phase, TS_PHASE_TUNE, ch->label);
    measure(cands, n_cands, op, ch);
    if (ts__phase_end)
      ts__phase_end(&phase, ch->names[ch->pick]);
    pick = ch->pick;
    *ran = true;
    g_mutex_lock(&lock);
    if (!choices)
      choices = g_hash_table_new_full(key_hash, key_equal, NULL, g_free);
    if (!g_hash_table_contains(choices, key)) /* another thread may have measured it too */
      g_hash_table_insert(choices, &ch->key, ch);
    else
      g_free(ch);
    g_mutex_unlock(&lock);
  }
  return pick;
}

int ts__tune_known(const ts_tune_key *key)
{
  g_mutex_lock(&lock);
  const choice *known = choices ? g_hash_table_lookup(choices, key) : NULL;
  int pick = known ? known->pick : -1;
  g_mutex_unlock(&lock);
  return pick;
}

static gint by_label(gconstpointer a, gconstpointer b)
{
  const choice *x = *(const choice *const *)a, *y = *(const choice *const *)b;
  return strcmp(x->label, y->label);
}

char *ts_kernel_choices(void)
{
  GString *out = g_string_new(NULL);
  g_mutex_lock(&lock);
  GPtrArray *all = g_ptr_array_new();
  if (choices) {
    GHashTableIter it;
    gpointer ch;
    g_hash_table_iter_init(&it, choices);
    while (g_hash_table_iter_next(&it, NULL, &ch))
      g_ptr_array_add(all, ch);
  }
  g_ptr_array_sort(all, by_label);
  for (guint i = 0; i < all->len; i++) {
    const choice *ch = all->pdata[i];
    g_string_append_printf(out, "%s: %s", ch->label, ch->names[ch->pick]);
    for (int c = 0; c < ch->n; c++)
      g_string_append_printf(out, "%s%s %.2f µs%s", c ? ", " : " (", ch->names[c], ch->ns[c] / 1e3,
                             ch->weight[c] > 1 ? " counted more" : "");
    g_string_append(out, ")\n");
  }
  g_ptr_array_free(all, TRUE);
  g_mutex_unlock(&lock);
  return g_string_free(out, FALSE);
}
