/* nearest_name.c — the name a mistyped one was probably meant to be
 * ("did you mean ...?"): the closest by edit distance, case aside. */
#include "engine-private.h"

#include <string.h>

/* Edit distance between a and b, case aside, two neighbours swapped
 * counting as one edit (optimal string alignment: 'rnu' is one from 'run',
 * as a typo is). */
static size_t edit_distance(const char *a, const char *b)
{
  size_t n = strlen(b);
  /* the row two back (for a swap), the last one and this one */
  size_t *rows = g_new(size_t, 3 * (n + 1));
  size_t *before = rows, *last = rows + n + 1, *row = rows + 2 * (n + 1);
  for (size_t j = 0; j <= n; j++)
    last[j] = j;
  for (size_t i = 1; a[i - 1]; i++) {
    row[0] = i;
    for (size_t j = 1; j <= n; j++) {
      char x = g_ascii_tolower(a[i - 1]), y = g_ascii_tolower(b[j - 1]);
      size_t d = MIN(MIN(last[j] + 1, row[j - 1] + 1), last[j - 1] + (x == y ? 0 : 1));
      if (i > 1 && j > 1 && x == g_ascii_tolower(b[j - 2]) && g_ascii_tolower(a[i - 2]) == y)
        d = MIN(d, before[j - 2] + 1);
      row[j] = d;
    }
    size_t *oldest = before;
    before = last;
    last = row;
    row = oldest;
  }
  size_t d = last[n];
  g_free(rows);
  return d;
}

const char *ts_nearest_name(const char *name, const char *const *names, size_t n)
{
  if (!name || !names)
    return NULL;
  const char *best = NULL;
  size_t best_d = MAX(strlen(name) / 3, 1) + 1;
  for (size_t i = 0; i < n; i++) {
    if (!names[i])
      continue;
    size_t d = edit_distance(name, names[i]);
    if (d < best_d)
      best = names[i], best_d = d;
  }
  return best;
}
