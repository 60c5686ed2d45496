/* worker-status.c — writing the last op into the status page with plain
 * stores only: it runs in the crash handler, in exit(), and on the
 * connection's thread when Cancel comes (so that a call then killed as
 * hung still says where it was). */
#include "worker-status.h"

typedef struct {
  char *at;
  char *end; /* the last byte, kept for the NUL */
} Out;

static void put(Out *o, const char *s)
{
  while (s && *s && o->at < o->end)
    *o->at++ = *s++;
  *o->at = '\0';
}

static void put_int(Out *o, int v)
{
  char digits[12];
  int n = 0;
  unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
  do
    digits[n++] = (char)('0' + u % 10);
  while ((u /= 10) && n < (int)sizeof digits);
  if (v < 0)
    put(o, "-");
  while (n > 0 && o->at < o->end)
    *o->at++ = digits[--n];
  *o->at = '\0';
}

static Out out(char *buf, unsigned long size)
{
  buf[0] = '\0';
  return (Out){ buf, buf + size - 1 };
}

void worker_status_note_op(TsWorkerStatus *st, const ts_op_watch *w)
{
  ts_op_watch op = *w; /* one read: another thread may be writing it */
  st->op_seq = op.seq;
  Out o = out(st->op, sizeof st->op);
  put(&o, op.seq ? ts_op_name(op.op) : NULL);
  o = out(st->node, sizeof st->node);
  put(&o, op.node ? ts_node_name(op.node) : NULL);
  o = out(st->loc, sizeof st->loc);
  if (op.seq && op.file) {
    put(&o, op.file);
    put(&o, ":");
    put_int(&o, op.line);
    put(&o, " (");
    put(&o, op.func ? op.func : "?");
    put(&o, ")");
  }
}
