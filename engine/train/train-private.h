/* train-private.h — what engine/train/ shares.  Not installed. */
#pragma once

#include "engine-private.h"
#include "tracescope-train.h"

/* An error about an argument or a file, not an op (no location). */
#define train_error(code, ...) \
  ts_error_set((code), (ts_loc){ NULL, NULL, 0 }, NULL, __VA_ARGS__)

