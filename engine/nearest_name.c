/* nearest_name.c — the name a mistyped one was probably meant to be
 * ("did you mean ...?"): the closest by edit distance, case aside. */
#include "engine-private.h"

#include <string.h>

/* Edit distance between a and b, case aside (a typo's measure). */
static size_t edit_distance(const char *a, const char *b)
{
  size_t n = strlen(b);
  size_t *row = g_new(size_t, n + 1);
  for (size_t j = 0; j <= n; j++)
    row[j] = j;
  for (size_t i = 1; a[i - 1]; i++) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= n; j++) {
      size_t above = row[j];
      bool same = g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 1]);
      row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), diagonal + (same ? 0 : 1));
      diagonal = above;
    }
  }
  size_t d = row[n];
  g_free(row);
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
