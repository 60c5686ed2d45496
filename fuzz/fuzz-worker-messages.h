/* fuzz-worker-messages.h — the messages fuzz-worker-messages feeds: an
 * input's first byte, modulo their number (seeds are written by
 * `build-test/tests/test-worker-messages --write-seeds
 * fuzz/corpus/fuzz-worker-messages`). */
#pragma once

typedef enum {
  FUZZ_MSG_CALL_REPLY,     /* "(a{sv})": a Call's result */
  FUZZ_MSG_TRACE,          /* "(ua{sv})": the Trace signal */
  FUZZ_MSG_OPEN_REPLY,     /* "(ssa(sasas))": Open's title, path and functions */
  FUZZ_MSG_DEBUG_STOP,     /* "a{sv}": DebugWait's stop */
  FUZZ_MSG_DEBUG_HISTORY,  /* "a{sv}": DebugHistory's op */
  FUZZ_MSG_OPTIMIZED,      /* "(a{sv})": GetOptimized's graph and origins */
  FUZZ_MSG_FAST_REPLY,     /* a fast channel's reply area: length, then the message */
  FUZZ_MSG_FAST_REQUEST,   /* its request area (the worker reads it) */
  FUZZ_MSG_CRASH_REPORT,   /* the crash pipe's text */
  FUZZ_MSG_STATUS_PAGE,    /* the status page's bytes (magic set) */
  FUZZ_MSG_OUTPUT,         /* stdout: a chunk size byte, then the bytes */
  FUZZ_MSG_SIGNATURE,      /* a signature the worker splits into specs */
  FUZZ_MSG_COUNT
} FuzzMessage;
