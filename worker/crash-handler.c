/* The worker's crash handler (crash-handler.h).
 *
 * The report, text, one item per line (docs/crash-report.md):
 *
 *   tracescope-crash 1
 *   signal 11 SIGSEGV
 *   code 1                         si_code
 *   address 0x0000000000000000     si_addr; SIGSEGV, SIGBUS, SIGILL and SIGFPE only
 *   thread 4242                    the faulting thread's id
 *   vm_size 123456789              bytes, /proc/self/statm times the page size
 *   as_limit unlimited             RLIMIT_AS soft limit in bytes, or "unlimited"
 *   pc 0x00007f0123456789          one per frame, innermost first, at most 128;
 *                                  the first is the interrupted instruction
 *   maps
 *   ...                            /proc/self/maps, verbatim
 *   end
 *
 * vm_size is left out when /proc/self/statm cannot be read.  Everything in the
 * handler is async-signal-safe: write, open, read, close, getrlimit, sigaction,
 * raise, and backtrace (primed at install, so it does not dlopen libgcc_s in
 * the handler).  Numbers are formatted by hand into a stack buffer. */
#include "crash-handler.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_FRAMES 128
/* the handler's own frames and the signal trampoline sit above the fault */
#define MAX_HANDLER_FRAMES 16
/* backtrace() unwinds with libgcc on this stack: SIGSTKSZ (no longer a
 * constant in glibc) is far too small for that. */
#define ALT_STACK_SIZE (64 * 1024)

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP };

static int crash_fd = -1;
static uint64_t page_size;
/* id of the thread writing the report, 0 while none is */
static int crash_owner;

static pthread_key_t alt_stack_key;
static pthread_once_t alt_stack_once = PTHREAD_ONCE_INIT;

/* --- writing, async-signal-safe --- */

typedef struct {
  int fd;
  size_t len;
  char buf[1024];
} Out;

static void
write_all(int fd, const char *data, size_t len)
{
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;   /* the app is gone: nothing to report to */
    data += n;
    len -= (size_t) n;
  }
}

static void
out_flush(Out *out)
{
  write_all(out->fd, out->buf, out->len);
  out->len = 0;
}

static void
out_bytes(Out *out, const char *data, size_t len)
{
  if (out->len + len > sizeof out->buf)
    out_flush(out);
  if (len > sizeof out->buf) {
    write_all(out->fd, data, len);
    return;
  }
  memcpy(out->buf + out->len, data, len);
  out->len += len;
}

static void
out_str(Out *out, const char *s)
{
  out_bytes(out, s, strlen(s));
}

static void
out_dec(Out *out, uint64_t value)
{
  char digits[20];
  size_t n = 0;
  do {
    digits[sizeof digits - ++n] = (char) ('0' + value % 10);
    value /= 10;
  } while (value > 0);
  out_bytes(out, digits + sizeof digits - n, n);
}

static void
out_signed(Out *out, int64_t value)
{
  if (value < 0) {
    out_str(out, "-");
    out_dec(out, -(uint64_t) value);
  } else {
    out_dec(out, (uint64_t) value);
  }
}

static void
out_hex(Out *out, uint64_t value)
{
  char digits[18] = "0x";
  for (int i = 0; i < 16; i++)
    digits[17 - i] = "0123456789abcdef"[(value >> (4 * i)) & 0xf];
  out_bytes(out, digits, sizeof digits);
}

/* --- the report --- */

static const char *
signal_name(int sig)
{
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGILL: return "SIGILL";
  case SIGFPE: return "SIGFPE";
  case SIGABRT: return "SIGABRT";
  case SIGTRAP: return "SIGTRAP";
  default: return "UNKNOWN";
  }
}

static bool
signal_has_address(int sig)
{
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

/* The first number in /proc/self/statm: the size of the address space, in pages. */
static bool
read_vm_size(uint64_t *bytes)
{
  char buf[64];
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  uint64_t pages = 0;
  ssize_t i = 0;
  for (; i < n && buf[i] >= '0' && buf[i] <= '9' && i < 19; i++)
    pages = pages * 10 + (uint64_t) (buf[i] - '0');
  if (i == 0)
    return false;
  *bytes = pages * page_size;
  return true;
}

static void
write_memory(Out *out)
{
  uint64_t vm_size;
  if (read_vm_size(&vm_size)) {
    out_str(out, "vm_size ");
    out_dec(out, vm_size);
    out_str(out, "\n");
  }
  struct rlimit limit;
  out_str(out, "as_limit ");
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    out_str(out, "unlimited");
  else
    out_dec(out, limit.rlim_cur);
  out_str(out, "\n");
}

static uint64_t
context_pc(const void *context)
{
#if defined(__x86_64__)
  return (uint64_t) ((const ucontext_t *) context)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return ((const ucontext_t *) context)->uc_mcontext.pc;
#else
  return 0;
#endif
}

/* Frames from the interrupted instruction out: backtrace() sees the handler
 * and the signal trampoline first.  All of them if the fault's pc is not
 * among them (the unwinder did not get through the signal frame). */
static void
write_frames(Out *out, const void *context)
{
  void *frames[MAX_HANDLER_FRAMES + MAX_FRAMES];
  int count = backtrace(frames, (int) G_N_ELEMENTS(frames));
  uint64_t pc = context_pc(context);
  int first = 0;
  for (int i = 0; i < count && i < MAX_HANDLER_FRAMES; i++) {
    if ((uint64_t) (uintptr_t) frames[i] == pc) {
      first = i;
      break;
    }
  }
  for (int i = first; i < count && i < first + MAX_FRAMES; i++) {
    out_str(out, "pc ");
    out_hex(out, (uint64_t) (uintptr_t) frames[i]);
    out_str(out, "\n");
  }
}

static void
write_maps(Out *out)
{
  char chunk[4096];
  out_str(out, "maps\n");
  out_flush(out);
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    write_all(out->fd, chunk, (size_t) n);
  }
  close(fd);
}

static void
write_report(int sig, const siginfo_t *info, const void *context)
{
  Out out = { .fd = crash_fd };
  out_str(&out, "tracescope-crash 1\nsignal ");
  out_dec(&out, (uint64_t) sig);
  out_str(&out, " ");
  out_str(&out, signal_name(sig));
  out_str(&out, "\ncode ");
  out_signed(&out, info->si_code);
  out_str(&out, "\n");
  if (signal_has_address(sig)) {
    out_str(&out, "address ");
    out_hex(&out, (uint64_t) (uintptr_t) info->si_addr);
    out_str(&out, "\n");
  }
  out_str(&out, "thread ");
  out_dec(&out, (uint64_t) gettid());
  out_str(&out, "\n");
  write_memory(&out);
  write_frames(&out, context);
  write_maps(&out);
  out_str(&out, "end\n");
  out_flush(&out);
}

/* Default action, then the signal again: unblocking it delivers it here and now. */
static void
die_with(int sig)
{
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  raise(sig);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  _exit(128 + sig);
}

static void (*crash_hook)(void);

void
ts_crash_handler_set_hook(void (*hook)(void))
{
  __atomic_store_n(&crash_hook, hook, __ATOMIC_SEQ_CST);
}

static void
crash_handler(int sig, siginfo_t *info, void *context)
{
  int self = gettid();
  int idle = 0;
  if (!__atomic_compare_exchange_n(&crash_owner, &idle, self, false,
                                   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    if (idle == self)
      die_with(sig);   /* a fault while writing the report */
    for (;;)
      pause();         /* another thread reports, then kills the process */
  }
  void (*hook)(void) = __atomic_load_n(&crash_hook, __ATOMIC_SEQ_CST);
  if (hook)
    hook();
  write_report(sig, info, context);
  die_with(sig);
}

/* --- alternate signal stacks --- */

static size_t
alt_stack_mapping_size(void)
{
  return ALT_STACK_SIZE + (size_t) page_size;
}

static void
alt_stack_release(void *mapping)
{
  stack_t current;
  if (sigaltstack(NULL, &current) == 0 && current.ss_sp == (char *) mapping + page_size) {
    stack_t off = { .ss_flags = SS_DISABLE };
    sigaltstack(&off, NULL);
  }
  munmap(mapping, alt_stack_mapping_size());
}

static void
alt_stack_key_create(void)
{
  page_size = (uint64_t) sysconf(_SC_PAGESIZE);
  pthread_key_create(&alt_stack_key, alt_stack_release);
}

/* A guard page below the stack: an overflow in the handler itself then kills
 * plainly instead of writing over whatever is mapped below.  The key's
 * destructor unmaps it when the thread exits. */
static gboolean
alt_stack_init(GError **error)
{
  pthread_once(&alt_stack_once, alt_stack_key_create);
  if (pthread_getspecific(alt_stack_key) != NULL)
    return TRUE;
  char *mapping = mmap(NULL, alt_stack_mapping_size(), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (mapping == MAP_FAILED) {
    int saved = errno;
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                "Cannot allocate the crash handler's stack: %s", g_strerror(saved));
    return FALSE;
  }
  stack_t stack = { .ss_sp = mapping + page_size, .ss_size = ALT_STACK_SIZE };
  if (mprotect(mapping, page_size, PROT_NONE) != 0 || sigaltstack(&stack, NULL) != 0) {
    int saved = errno;
    munmap(mapping, alt_stack_mapping_size());
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                "Cannot install the crash handler's stack: %s", g_strerror(saved));
    return FALSE;
  }
  pthread_setspecific(alt_stack_key, mapping);
  return TRUE;
}

void
ts_crash_handler_thread_init(void)
{
  g_autoptr(GError) error = NULL;
  if (!alt_stack_init(&error))
    g_warning("%s: a stack overflow on this thread will not be reported", error->message);
}

/* Read back: AddressSanitizer with allow_user_segv_handler=0 (the default is
 * 1) keeps its own handler for SIGSEGV, SIGBUS and SIGFPE and says nothing. */
static gboolean
install_for(int sig, const struct sigaction *action, GError **error)
{
  struct sigaction installed;
  if (sigaction(sig, action, NULL) != 0 || sigaction(sig, NULL, &installed) != 0) {
    int saved = errno;
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                "Cannot install the crash handler for %s: %s", signal_name(sig),
                g_strerror(saved));
    return FALSE;
  }
  if (installed.sa_sigaction != crash_handler) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                "Cannot install the crash handler for %s: another handler keeps it "
                "(AddressSanitizer with allow_user_segv_handler=0?)", signal_name(sig));
    return FALSE;
  }
  return TRUE;
}

gboolean
ts_crash_handler_install(int fd, GError **error)
{
  g_return_val_if_fail(fd >= 0, FALSE);
  void *prime[4];
  backtrace(prime, G_N_ELEMENTS(prime));
  if (!alt_stack_init(error))
    return FALSE;
  crash_fd = fd;

  struct sigaction action = { .sa_sigaction = crash_handler,
                              .sa_flags = SA_SIGINFO | SA_ONSTACK };
  /* a second fault in the handler kills at once (the kernel forces the
   * default action of a blocked fault); SIGPIPE: the app may be gone */
  sigemptyset(&action.sa_mask);
  for (gsize i = 0; i < G_N_ELEMENTS(crash_signals); i++)
    sigaddset(&action.sa_mask, crash_signals[i]);
  sigaddset(&action.sa_mask, SIGPIPE);
  for (gsize i = 0; i < G_N_ELEMENTS(crash_signals); i++)
    if (!install_for(crash_signals[i], &action, error))
      return FALSE;
  return TRUE;
}
