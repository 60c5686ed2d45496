/* ts-fast-channel.h — the Call fast path's shared memory, both sides
 * (docs/worker.md, "Fast calls").
 *
 * One memfd the worker makes and passes to the app (OpenFastChannel): a
 * header page, then a request area and a reply area.  Each message is a
 * GVariant, serialized, after its length (8 bytes).  The app writes a
 * request and bumps request_seq; the worker writes the reply and sets
 * reply_seq to the request's number.  A side that waits spins a little,
 * then sleeps on the word (FUTEX_WAIT, shared: two processes) after
 * raising its *_waiting flag, so the other side knows to wake it.
 * Everything read from the other side is checked: bad lengths, bytes that
 * are not the message's type, numbers out of sequence are errors. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

G_BEGIN_DECLS

#define TS_FAST_MAGIC 0x54534643u /* "TSFC" */
#define TS_FAST_VERSION 1u
#define TS_FAST_HEADER_SIZE 4096u
#define TS_FAST_AREA_SIZE (1u << 20) /* each way; a bigger Call goes over D-Bus */

/* A fast request: the Call method's arguments. */
#define TS_FAST_REQUEST_TYPE "(usasuba{sv})"
/* A fast reply: call id, signals the worker had emitted when it replied,
 * status (TsFastStatus), D-Bus error name and message (status ERROR), the
 * Call result (status OK). */
#define TS_FAST_REPLY_TYPE "(uuussa{sv})"

typedef enum {
  TS_FAST_OK,
  TS_FAST_ERROR,
  TS_FAST_DEFERRED, /* too big or carrying fds: TakeFastReply fetches it over D-Bus */
} TsFastStatus;

typedef struct {
  uint32_t magic;
  uint32_t version;
  uint32_t area_size;      /* bytes of each area */
  uint32_t request_seq;    /* futex word: the app bumps it once a request is in place */
  uint32_t reply_seq;      /* futex word: the worker sets it to the request's once the reply is in place */
  uint32_t worker_waiting; /* 1: the worker sleeps (or is about to) on request_seq */
  uint32_t app_waiting;    /* 1: the app sleeps (or is about to) on reply_seq */
} TsFastHeader;

typedef enum { TS_FAST_REQUEST, TS_FAST_REPLY } TsFastArea;

/* The worker's side: a new channel in a memfd (*fd, close-on-exec, its
 * size sealed), mapped. */
TsFastHeader *ts_fast_channel_create(int *fd, GError **error);
/* The app's side: the channel in fd, mapped after its seals (F_SEAL_SHRINK),
 * size and header are checked. */
TsFastHeader *ts_fast_channel_map(int fd, GError **error);
void ts_fast_channel_unmap(TsFastHeader *h);
/* The whole mapping's size. */
gsize ts_fast_channel_size(void);

/* Puts msg in area; FALSE (nothing written) when it does not fit. */
gboolean ts_fast_put(TsFastHeader *h, TsFastArea area, GVariant *msg);
/* A copy of the message in area, of type `type`; NULL and an error naming
 * `what` when its length or bytes are wrong. */
GVariant *ts_fast_get(TsFastHeader *h, TsFastArea area, const char *type, const char *what, GError **error);

/* Sets *word to value and wakes the other side if its *waiting flag is up. */
void ts_fast_post(uint32_t *word, uint32_t *waiting, uint32_t value);
/* How long a waiter spins before it sleeps; it adapts: a wait a spin
 * caught makes the next spin cover twice its length (up to max_ns), one
 * that had to sleep halves it.  Spinning pays only while both sides have
 * a CPU; on a busy machine a spinner takes the CPU the other side needs,
 * and the spins shrink to nothing (with a short try now and then). */
typedef struct {
  guint64 ns;
  guint64 max_ns;
  guint probe;
} TsFastSpin;

/* Waits while *word == old: spins (spin: NULL for none), then sleeps at
 * most slice_ms (-1: until woken), raising *waiting meanwhile.  TRUE once
 * *word changed. */
gboolean ts_fast_wait(uint32_t *word, uint32_t *waiting, uint32_t old, TsFastSpin *spin, int slice_ms);
/* Wakes every sleeper on word (a waiter that must look at something else). */
void ts_fast_wake(uint32_t *word);

G_END_DECLS
