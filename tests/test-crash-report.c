/* Crash reports (worker/crash-handler.c, worker/ts-crash-report.c): a
 * stand-in worker (crash-helper) crashes in tests/modules/crashy.c, its crash
 * handler writes a report to a pipe, and the report parses and symbolises
 * back to crashy.c's functions and lines.  Then the parser alone, on
 * truncated reports and garbage. */
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "ts-crash-report.h"

/* AddressSanitizer and ThreadSanitizer reserve terabytes of address space */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_RESERVES_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZER_RESERVES_MEMORY 1
#endif
#endif

typedef struct {
  int term_sig;     /* 0 if the helper was not killed by a signal */
  GByteArray *text; /* what came through the crash pipe */
} Crash;

static void
crash_clear(Crash *crash)
{
  g_clear_pointer(&crash->text, g_byte_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Crash, crash_clear)

/* Runs crash-helper with the crash pipe on its fd 3, reads the pipe to EOF. */
static void
crash_run(Crash *crash, const char *function, const char *mode)
{
  g_autoptr(GError) error = NULL;
  int fds[2];
  g_assert_true(g_unix_open_pipe(fds, FD_CLOEXEC, &error));
  GSubprocessLauncher *launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_take_fd(launcher, fds[1], 3);
  g_autoptr(GSubprocess) helper = g_subprocess_launcher_spawn(
      launcher, &error, TS_CRASH_HELPER, TS_CRASHY_MODULE, function, mode, NULL);
  g_object_unref(launcher);   /* closes our end of the write side */
  g_assert_no_error(error);

  crash->text = g_byte_array_new();
  guint8 chunk[4096];
  ssize_t n;
  while ((n = read(fds[0], chunk, sizeof chunk)) > 0)
    g_byte_array_append(crash->text, chunk, (guint) n);
  g_assert_cmpint(n, ==, 0);
  close(fds[0]);

  g_assert_true(g_subprocess_wait(helper, NULL, &error));
  g_assert_no_error(error);
  crash->term_sig = g_subprocess_get_if_signaled(helper) ? g_subprocess_get_term_sig(helper) : 0;
}

static TsCrashReport *
crash_parse(const Crash *crash)
{
  g_autoptr(GError) error = NULL;
  TsCrashReport *report = ts_crash_report_parse((const char *) crash->text->data,
                                                crash->text->len, &error);
  g_assert_no_error(error);
  g_assert_nonnull(report);
  g_autofree char *backtrace = ts_crash_report_format_backtrace(report);
  g_test_message("%s: %s\n%s", report->signal_name, report->description, backtrace);
  return report;
}

/* The frame in crashy.c's `function`, with its source line. */
static const TsCrashFrame *
find_frame(const TsCrashReport *report, const char *function)
{
  for (guint i = 0; i < report->frames->len; i++) {
    const TsCrashFrame *frame = g_ptr_array_index(report->frames, i);
    if (g_strcmp0(frame->function, function) == 0)
      return frame;
  }
  g_assert_not_reached();
}

static void
assert_in_source(const TsCrashFrame *frame, const char *source, const char *object)
{
  g_assert_nonnull(frame->file);
  g_autofree char *file = g_path_get_basename(frame->file);
  g_assert_cmpstr(file, ==, source);
  g_assert_cmpint(frame->line, >, 0);
  g_assert_nonnull(frame->object);
  g_autofree char *base = g_path_get_basename(frame->object);
  g_assert_cmpstr(base, ==, object);
}

static void
test_segv(void)
{
  g_auto(Crash) crash = { 0 };
  crash_run(&crash, "crash_segv", NULL);
  g_assert_cmpint(crash.term_sig, ==, SIGSEGV);
  g_autoptr(TsCrashReport) report = crash_parse(&crash);
  g_assert_cmpint(report->signal, ==, SIGSEGV);
  g_assert_cmpstr(report->signal_name, ==, "SIGSEGV");
  g_assert_cmpstr(report->description, ==, "segmentation fault (invalid memory access at 0x0)");
  g_assert_true(report->has_address);
  g_assert_cmpuint(report->address, ==, 0);
  g_assert_cmpint(report->code, ==, SEGV_MAPERR);
  g_assert_cmpuint(report->thread, >, 0);
  g_assert_cmpuint(report->vm_size, >, 0);
  g_assert_false(report->out_of_memory);
  g_assert_false(report->truncated);

  /* the faulting instruction first, the handler's frames dropped */
  g_assert_cmpuint(report->frames->len, >=, 2);
  const TsCrashFrame *top = g_ptr_array_index(report->frames, 0);
  g_assert_cmpstr(top->function, ==, "crash_segv");
  assert_in_source(top, "crashy.c", "crashy.so");
  g_assert_cmpuint(top->offset, >, 0);
  g_assert_cmpuint(top->offset, <, top->pc);
  /* a return address in the (position-independent) executable */
  assert_in_source(find_frame(report, "main"), "crash-helper.c", "crash-helper");

  g_autofree char *backtrace = ts_crash_report_format_backtrace(report);
  g_autofree char *expected = g_strdup_printf("#0  crash_segv (crashy.c:%d) in crashy.so\n", top->line);
  g_assert_true(g_str_has_prefix(backtrace, expected));
}

static void
test_abort(void)
{
  g_auto(Crash) crash = { 0 };
  crash_run(&crash, "crash_abort", NULL);
  g_assert_cmpint(crash.term_sig, ==, SIGABRT);
  g_autoptr(TsCrashReport) report = crash_parse(&crash);
  g_assert_cmpstr(report->signal_name, ==, "SIGABRT");
  g_assert_cmpstr(report->description, ==, "aborted");
  g_assert_false(report->has_address);
  assert_in_source(find_frame(report, "crash_abort"), "crashy.c", "crashy.so");
}

static void
test_divide(void)
{
  g_auto(Crash) crash = { 0 };
  crash_run(&crash, "crash_divide", NULL);
  g_assert_cmpint(crash.term_sig, ==, SIGFPE);
  g_autoptr(TsCrashReport) report = crash_parse(&crash);
  g_assert_cmpstr(report->signal_name, ==, "SIGFPE");
  g_assert_cmpstr(report->description, ==, "arithmetic error (integer division by zero)");
  const TsCrashFrame *top = g_ptr_array_index(report->frames, 0);
  g_assert_cmpstr(top->function, ==, "crash_divide");
  assert_in_source(top, "crashy.c", "crashy.so");
}

static void
check_stack_overflow(const char *mode)
{
  g_auto(Crash) crash = { 0 };
  crash_run(&crash, "crash_stack_overflow", mode);
  g_assert_cmpint(crash.term_sig, ==, SIGSEGV);
  g_autoptr(TsCrashReport) report = crash_parse(&crash);
  g_assert_cmpstr(report->signal_name, ==, "SIGSEGV");
  g_assert_cmpstr(report->description, ==, "stack overflow");
  g_assert_cmpuint(report->frames->len, ==, 128);
  /* (under ThreadSanitizer, its check of a store in recurse is on top) */
  assert_in_source(find_frame(report, "recurse"), "crashy.c", "crashy.so");
}

static void
test_stack_overflow(void)
{
  check_stack_overflow(NULL);
}

static void
test_stack_overflow_thread(void)
{
  check_stack_overflow("--thread");
}

static void
test_out_of_memory(void)
{
#ifdef SANITIZER_RESERVES_MEMORY
  g_test_skip("the sanitizer reserves terabytes of address space: no RLIMIT_AS under it");
#else
  g_auto(Crash) crash = { 0 };
  crash_run(&crash, "crash_out_of_memory", "--limit-as");
  g_assert_cmpint(crash.term_sig, ==, SIGSEGV);
  g_autoptr(TsCrashReport) report = crash_parse(&crash);
  g_assert_cmpuint(report->as_limit, >, 0);
  g_assert_true(report->out_of_memory);
  g_assert_cmpstr(report->description, ==, "segmentation fault (invalid memory access at 0x0)");
  const TsCrashFrame *top = g_ptr_array_index(report->frames, 0);
  g_assert_cmpstr(top->function, ==, "crash_out_of_memory");
  assert_in_source(top, "crashy.c", "crashy.so");
#endif
}

/* A report with only crashy.so's mappings: the same parse, without loading
 * libc's debug info (where it is installed) thousands of times. */
static char *
only_crashy_maps(const char *text)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  GString *out = g_string_new(NULL);
  gboolean in_maps = FALSE;
  for (guint i = 0; lines[i] != NULL && lines[i + 1] != NULL; i++) {
    if (!in_maps || g_str_has_suffix(lines[i], "/crashy.so") || g_str_equal(lines[i], "end"))
      g_string_append_printf(out, "%s\n", lines[i]);
    in_maps = in_maps || g_str_equal(lines[i], "maps");
  }
  return g_string_free(out, FALSE);
}

/* Every prefix of a real report is a report or an error; one that stops
 * before "end" is a truncated report, its frames symbolised as far as the
 * maps it has go. */
static void
test_truncated(void)
{
  g_auto(Crash) crash = { 0 };
  crash_run(&crash, "crash_segv", NULL);
  g_byte_array_append(crash.text, (const guint8 *) "", 1);
  g_autofree char *text = only_crashy_maps((const char *) crash.text->data);
  gsize length = strlen(text);
  gsize complete = 0;
  for (gsize prefix = 0; prefix <= length; prefix++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(TsCrashReport) report = ts_crash_report_parse(text, prefix, &error);
    g_assert_true((report == NULL) != (error == NULL));
    if (report == NULL) {
      g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
      continue;
    }
    complete++;
    g_assert_cmpint(report->truncated, ==, prefix < length);
    const TsCrashFrame *top = report->frames->len ? g_ptr_array_index(report->frames, 0) : NULL;
    if (top != NULL && top->object != NULL)
      g_assert_cmpstr(top->function, ==, "crash_segv");
    if (prefix == length)
      g_assert_nonnull(top->object);
  }
  g_test_message("%zu of %zu prefixes parse", complete, length);
  g_assert_cmpuint(complete, >, length / 2);
}

static void
assert_invalid(const char *text, const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCrashReport) report = ts_crash_report_parse(text, strlen(text), &error);
  g_assert_null(report);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_cmpstr(error->message, ==, message);
}

static TsCrashReport *
parse_valid(const char *text)
{
  g_autoptr(GError) error = NULL;
  TsCrashReport *report = ts_crash_report_parse(text, strlen(text), &error);
  g_assert_no_error(error);
  return report;
}

#define HEADER "tracescope-crash 1\nsignal 11 SIGSEGV\n"

static void
test_garbage(void)
{
  assert_invalid("", "Crash report, line 1: not a Tracescope crash report");
  assert_invalid("hello\n", "Crash report, line 1: not a Tracescope crash report "
                            "(expected \"tracescope-crash 1\")");
  assert_invalid("tracescope-crash 2\n", "Crash report, line 1: not a Tracescope crash report "
                                         "(expected \"tracescope-crash 1\")");
  assert_invalid("tracescope-crash 1\n", "Crash report, line 2: the report ends before its signal line");
  assert_invalid(HEADER "colour blue\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "signal 11 SIGSEGV\n", "Crash report, line 3: repeated field");
  assert_invalid(HEADER "nonsense\n", "Crash report, line 3: expected a field and its value");
  assert_invalid(HEADER "pc 1234\n", "Crash report, line 3: bad pc");
  assert_invalid(HEADER "maps\nend\nmore\n", "Crash report, line 5: text after \"end\"");
  assert_invalid(HEADER "maps\n7f00-7e00 r-xp 00000000 08:01 12 /lib/x.so\n",
                 "Crash report, line 4: bad mapping");
  assert_invalid(HEADER "maps\n7f00-8f00 r-xp 0 08:01\n", "Crash report, line 4: bad mapping");
  assert_invalid("tracescope-crash 1\nsignal 11 sigsegv\n", "Crash report, line 2: unknown field or bad value");
  assert_invalid("tracescope-crash 1\nsignal 0 SIGSEGV\n", "Crash report, line 2: unknown field or bad value");
  assert_invalid("tracescope-crash 1\nsignal 11 SIGSEGV \n", "Crash report, line 2: unknown field or bad value");

  g_autoptr(GError) error = NULL;
  const char nul[] = "tracescope-crash 1\nsignal 11\0SIGSEGV\n";
  g_assert_null(ts_crash_report_parse(nul, sizeof nul - 1, &error));
  g_assert_cmpstr(error->message, ==, "Crash report, line 2: NUL byte");
  g_clear_error(&error);
  g_autofree char *xs = g_strnfill(10000, 'x');
  g_autofree char *long_line = g_strdup_printf(HEADER "%s\n", xs);
  g_assert_null(ts_crash_report_parse(long_line, strlen(long_line), &error));
  g_assert_cmpstr(error->message, ==, "Crash report, line 3: line too long");
  g_clear_error(&error);

  /* random bytes after a header, and alone: errors, never crashes */
  for (int round = 0; round < 2000; round++) {
    guint8 bytes[256];
    gsize len = (gsize) g_test_rand_int_range(0, sizeof bytes);
    for (gsize i = 0; i < len; i++)
      bytes[i] = (guint8) g_test_rand_int_range(0, 256);
    GString *text = g_string_new(round % 2 ? HEADER : "");
    g_string_append_len(text, (const char *) bytes, (gssize) len);
    g_autoptr(TsCrashReport) report = ts_crash_report_parse(text->str, text->len, &error);
    g_assert_true((report == NULL) != (error == NULL));
    g_clear_error(&error);
    g_string_free(text, TRUE);
  }
}

static void
test_numbers(void)
{
  g_autoptr(TsCrashReport) big = parse_valid(
      HEADER "code -2147483648\naddress 0xffffffffffffffff\nthread 7\n"
      "vm_size 18446744073709551615\nas_limit 18446744073709551615\npc 0xffffffffffffffff\n");
  g_assert_cmpint(big->code, ==, G_MININT);
  g_assert_cmpuint(big->address, ==, G_MAXUINT64);
  g_assert_cmpuint(big->vm_size, ==, G_MAXUINT64);
  g_assert_true(big->out_of_memory);
  g_assert_true(big->truncated);
  g_assert_cmpuint(big->frames->len, ==, 1);
  g_autofree char *backtrace = ts_crash_report_format_backtrace(big);
  g_assert_cmpstr(backtrace, ==, "#0  0xffffffffffffffff\n");

  assert_invalid(HEADER "code 2147483648\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "code -2147483649\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "vm_size 18446744073709551616\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "vm_size 99999999999999999999999999\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "vm_size +5\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "vm_size -5\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "vm_size \n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "address 0x10000000000000000\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "address 0x\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid(HEADER "address 12\n", "Crash report, line 3: unknown field or bad value");
  assert_invalid("tracescope-crash 1\nsignal 99999999999999999999999 SIGSEGV\n",
                 "Crash report, line 2: unknown field or bad value");
  assert_invalid("tracescope-crash 1\nsignal 65 SIGSEGV\n", "Crash report, line 2: unknown field or bad value");

  GString *many = g_string_new(HEADER);
  for (int i = 0; i < 129; i++)
    g_string_append(many, "pc 0x1\n");
  assert_invalid(many->str, "Crash report, line 131: more than 128 frames");
  g_string_free(many, TRUE);
}

/* The faulting thread's stack, told from the address and the maps alone. */
static void
test_stack_maps(void)
{
  const char *maps =
      "maps\n"
      "7f0000000000-7f0000001000 ---p 00000000 00:00 0 \n"      /* guard */
      "7f0000001000-7f0000800000 rw-p 00000000 00:00 0 \n"      /* thread stack */
      "7f1000000000-7f1000021000 rw-p 00000000 00:00 0 \n"      /* malloc arena */
      "7f1000021000-7f1004000000 ---p 00000000 00:00 0 \n"
      "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
      "end\n";
  struct { const char *address; const char *description; } cases[] = {
    { "0x00007f0000000ff8", "stack overflow" },
    { "0x00007ffbffffffc0", "stack overflow" },
    { "0x00007ffc00000010", "stack overflow" },
    { "0x00007ffbff000000", "segmentation fault (invalid memory access at 0x7ffbff000000)" },
    { "0x00007f1000030000", "segmentation fault (invalid memory access at 0x7f1000030000)" },
    { "0x0000000000000010", "segmentation fault (invalid memory access at 0x10)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = g_strdup_printf(HEADER "code 1\naddress %s\n%s", cases[i].address, maps);
    g_autoptr(TsCrashReport) report = parse_valid(text);
    g_assert_cmpstr(report->description, ==, cases[i].description);
    g_assert_false(report->truncated);
  }
}

/* A frame in a FIFO (or a device) is not symbolised: opening it would block. */
static void
test_not_a_file(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("crash-report-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  g_autofree char *text = g_strdup_printf(
      HEADER "pc 0x00007f0000001234\nmaps\n"
      "7f0000000000-7f0000002000 r-xp 00000000 00:05 12 %s\nend\n", fifo);
  g_autoptr(TsCrashReport) report = parse_valid(text);
  const TsCrashFrame *frame = g_ptr_array_index(report->frames, 0);
  g_assert_cmpstr(frame->object, ==, fifo);
  g_assert_cmpuint(frame->offset, ==, 0x1234);
  g_assert_null(frame->function);
  g_autofree char *backtrace = ts_crash_report_format_backtrace(report);
  g_assert_cmpstr(backtrace, ==, "#0  fifo+0x1234\n");
  g_unlink(fifo);
  g_rmdir(dir);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/crash-report/segv", test_segv);
  g_test_add_func("/crash-report/abort", test_abort);
  g_test_add_func("/crash-report/divide", test_divide);
  g_test_add_func("/crash-report/stack-overflow", test_stack_overflow);
  g_test_add_func("/crash-report/stack-overflow-thread", test_stack_overflow_thread);
  g_test_add_func("/crash-report/out-of-memory", test_out_of_memory);
  g_test_add_func("/crash-report/truncated", test_truncated);
  g_test_add_func("/crash-report/garbage", test_garbage);
  g_test_add_func("/crash-report/numbers", test_numbers);
  g_test_add_func("/crash-report/stack-maps", test_stack_maps);
  g_test_add_func("/crash-report/not-a-file", test_not_a_file);
  return g_test_run();
}
