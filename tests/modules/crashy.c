/* crashy.c — user code that crashes, for tests/test-crash-report.c: the
 * worker's crash handler reports each crash, the app symbolises the report
 * back to these functions and lines.  Built with -g.
 *
 * UndefinedBehaviorSanitizer would stop a null write or a division by zero
 * itself; the real fault is what is tested here. */
#include <stdlib.h>
#include <string.h>

/* noipa: no "recurse.isra.0" clone either */
#if __has_attribute(noipa)
#define NOINLINE __attribute__((noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif
#define CRASHY NOINLINE __attribute__((visibility("default")))
#define NOT_SANITIZED __attribute__((no_sanitize("undefined")))

void crash_segv(void);
void crash_abort(void);
void crash_stack_overflow(void);
void crash_divide(void);
void crash_out_of_memory(void);

/* volatile: the compiler cannot see the null (GCC would turn a known one into a trap) */
static int *volatile null_pointer;
static volatile int zero;
static volatile int dividend = 42;
static volatile int never = -1;
static char *volatile allocated;

CRASHY NOT_SANITIZED void
crash_segv(void)
{
  *null_pointer = 42;
}

CRASHY void
crash_abort(void)
{
  abort();
}

/* A frame of its own each time: the use of the frame after the call keeps
 * it from becoming a tail call, `never` from looking infinite. */
NOINLINE static int
recurse(volatile char *outer, int depth)
{
  volatile char frame[256];
  frame[0] = (char) depth;
  frame[1] = outer ? outer[0] : 0;
  if (depth == never)
    return 0;
  return recurse(frame, depth + 1) + frame[1];
}

CRASHY void
crash_stack_overflow(void)
{
  recurse(NULL, 0);
}

CRASHY NOT_SANITIZED void
crash_divide(void)
{
  volatile int quotient = dividend / zero;
  (void) quotient;
}

/* Allocates (and touches) until malloc fails, then uses the result
 * unchecked.  The blocks are chained from a global: allocations nobody can
 * see would be optimized away. */
CRASHY NOT_SANITIZED void
crash_out_of_memory(void)
{
  char *block;
  while ((block = malloc(1 << 20)) != NULL) {
    memset(block, 1, 1 << 20);
    memcpy(block, (const void *) &allocated, sizeof allocated);
    allocated = block;
  }
  /* through a volatile: GCC would trap on a known null, or drop a store to
   * memory it knows nobody reads */
  volatile int *volatile unchecked = (volatile int *) block;
  *unchecked = 1;
}
