/* fuzz-worker-requests.h — the requests fuzz-worker-requests feeds the
 * worker: an input's first byte, modulo their number (seeds are written by
 * `build-test/tests/test-worker-messages --write-request-seeds
 * fuzz/corpus/fuzz-worker-requests`). */
#pragma once

typedef enum {
  FUZZ_REQ_HELLO,                /* "(u)" */
  FUZZ_REQ_SET_INPUT_SIGNATURE,  /* "(sas)": a function and its specs */
  FUZZ_REQ_CALL,                 /* "(usasuba{sv})": id, function, args, repeat, eager, options */
  FUZZ_REQ_GET_OPTIMIZED,        /* "(ss)": a function and a concrete signature */
  FUZZ_REQ_LIST_DEVICES,         /* "()" */
  FUZZ_REQ_TAKE_FAST_REPLY,      /* "(u)" */
  FUZZ_REQ_CANCEL,               /* "(u)" */
  FUZZ_REQ_FRAMES,               /* a remote link's bytes: frames */
  FUZZ_REQ_COUNT
} FuzzRequest;
