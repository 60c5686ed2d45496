/* Parsing and symbolising a worker's crash report (ts-crash-report.h; the
 * format is described in crash-handler.c and docs/crash-report.md). */
#include "ts-crash-report.h"

#include <elfutils/libdwfl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_FRAMES 128
/* vm.max_map_count is 65530 by default */
#define MAX_MAPS (1 << 17)
#define MAX_LINE 8192
#define OOM_MARGIN (G_GUINT64_CONSTANT(64) << 20)
/* the kernel's stack guard gap: a main-thread stack overflow faults below
 * [stack] by up to this much (more only with a larger frame) */
#define STACK_GAP (G_GUINT64_CONSTANT(1) << 20)

typedef struct {
  guint64 start, end, offset;
  char perms[5];
  char *path;   /* "" for an anonymous mapping */
} Mapping;

typedef enum { IN_HEADER, IN_FIELDS, IN_MAPS, AT_END } ParseState;

typedef struct {
  TsCrashReport *report;
  GArray *pcs;    /* guint64 */
  GArray *maps;   /* Mapping, in the order listed */
  ParseState state;
  GHashTable *seen;   /* field names already read */
} Parser;

/* --- numbers: every digit checked, overflow refused --- */

static gboolean
parse_hex_digits(const char *s, guint64 *value)
{
  guint64 v = 0;
  gsize n = strlen(s);
  if (n == 0 || n > 16)
    return FALSE;
  for (gsize i = 0; i < n; i++) {
    int d = g_ascii_xdigit_value(s[i]);
    if (d < 0)
      return FALSE;
    v = (v << 4) | (guint64) d;
  }
  *value = v;
  return TRUE;
}

/* "0x" and 1 to 16 hex digits */
static gboolean
parse_hex(const char *s, guint64 *value)
{
  return g_str_has_prefix(s, "0x") && parse_hex_digits(s + 2, value);
}

static gboolean
parse_dec(const char *s, guint64 *value)
{
  guint64 v = 0;
  if (*s == '\0')
    return FALSE;
  for (; *s; s++) {
    if (!g_ascii_isdigit(*s))
      return FALSE;
    guint d = (guint) (*s - '0');
    if (v > (G_MAXUINT64 - d) / 10)
      return FALSE;
    v = v * 10 + d;
  }
  *value = v;
  return TRUE;
}

static gboolean
parse_int(const char *s, int *value)
{
  gboolean negative = *s == '-';
  guint64 magnitude;
  if (!parse_dec(negative ? s + 1 : s, &magnitude))
    return FALSE;
  if (magnitude > (negative ? (guint64) G_MAXINT + 1 : (guint64) G_MAXINT))
    return FALSE;
  *value = negative ? (int) -(gint64) magnitude : (int) magnitude;
  return TRUE;
}

/* --- header fields --- */

static gboolean
parse_signal(TsCrashReport *report, const char *value)
{
  g_auto(GStrv) parts = g_strsplit(value, " ", -1);
  guint64 number;
  if (g_strv_length(parts) != 2 || !parse_dec(parts[0], &number) || number < 1 || number > 64)
    return FALSE;
  gsize len = strlen(parts[1]);
  if (len == 0 || len > 16)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isupper(parts[1][i]) && !g_ascii_isdigit(parts[1][i]))
      return FALSE;
  report->signal = (int) number;
  report->signal_name = g_strdup(parts[1]);
  return TRUE;
}

static gboolean
parse_field(Parser *parser, const char *key, const char *value)
{
  TsCrashReport *report = parser->report;
  if (strcmp(key, "signal") == 0)
    return parse_signal(report, value);
  if (strcmp(key, "code") == 0)
    return parse_int(value, &report->code);
  if (strcmp(key, "address") == 0) {
    report->has_address = parse_hex(value, &report->address);
    return report->has_address;
  }
  if (strcmp(key, "thread") == 0)
    return parse_dec(value, &report->thread);
  if (strcmp(key, "vm_size") == 0)
    return parse_dec(value, &report->vm_size);
  if (strcmp(key, "as_limit") == 0)
    return strcmp(value, "unlimited") == 0 || parse_dec(value, &report->as_limit);
  return FALSE;
}

/* One "key value" line before the maps: NULL, or what is wrong with it. */
static const char *
parse_fields_line(Parser *parser, const char *line)
{
  if (strcmp(line, "maps") == 0) {
    parser->state = IN_MAPS;
    return NULL;
  }
  const char *space = strchr(line, ' ');
  if (space == NULL)
    return "expected a field and its value";
  g_autofree char *key = g_strndup(line, (gsize) (space - line));
  const char *value = space + 1;
  if (strcmp(key, "pc") == 0) {
    guint64 pc;
    if (parser->pcs->len >= MAX_FRAMES)
      return "more than 128 frames";
    if (!parse_hex(value, &pc))
      return "bad pc";
    g_array_append_val(parser->pcs, pc);
    return NULL;
  }
  if (g_hash_table_contains(parser->seen, key))
    return "repeated field";
  if (!parse_field(parser, key, value))
    return "unknown field or bad value";
  g_hash_table_add(parser->seen, g_steal_pointer(&key));
  return NULL;
}

/* --- /proc/self/maps lines --- */

/* "start-end perms offset dev inode   path" */
static gboolean
parse_maps_line(const char *line, Mapping *mapping)
{
  g_auto(GStrv) fields = g_strsplit(line, " ", 6);
  if (g_strv_length(fields) < 5)
    return FALSE;
  char *dash = strchr(fields[0], '-');
  if (dash == NULL)
    return FALSE;
  *dash = '\0';
  guint64 inode;
  if (!parse_hex_digits(fields[0], &mapping->start) || !parse_hex_digits(dash + 1, &mapping->end) ||
      mapping->start >= mapping->end || strlen(fields[1]) != 4 ||
      !parse_hex_digits(fields[2], &mapping->offset) || strchr(fields[3], ':') == NULL ||
      !parse_dec(fields[4], &inode))
    return FALSE;
  memcpy(mapping->perms, fields[1], 5);
  mapping->path = g_strdup(fields[5] ? g_strchug(fields[5]) : "");
  return TRUE;
}

static const char *
parse_maps_section_line(Parser *parser, const char *line)
{
  if (strcmp(line, "end") == 0) {
    parser->state = AT_END;
    return NULL;
  }
  Mapping mapping = { 0 };
  if (parser->maps->len >= MAX_MAPS)
    return "too many mappings";
  if (!parse_maps_line(line, &mapping))
    return "bad mapping";
  g_array_append_val(parser->maps, mapping);
  return NULL;
}

/* NULL, or what is wrong with the line */
static const char *
parse_line(Parser *parser, const char *line)
{
  switch (parser->state) {
  case IN_HEADER:
    parser->state = IN_FIELDS;
    if (strcmp(line, "tracescope-crash 1") != 0)
      return "not a Tracescope crash report (expected \"tracescope-crash 1\")";
    return NULL;
  case IN_FIELDS:
    return parse_fields_line(parser, line);
  case IN_MAPS:
    return parse_maps_section_line(parser, line);
  case AT_END:
  default:
    return "text after \"end\"";
  }
}

/* Whole lines only: a last line with no newline is where the process died. */
static gboolean
parse_lines(Parser *parser, const char *text, gsize length, GError **error)
{
  guint number = 1;
  gsize pos = 0;
  for (; pos < length; number++) {
    const char *newline = memchr(text + pos, '\n', length - pos);
    if (newline == NULL)
      break;
    gsize len = (gsize) (newline - (text + pos));
    const char *why;
    if (len > MAX_LINE) {
      why = "line too long";
    } else if (memchr(text + pos, '\0', len) != NULL) {
      why = "NUL byte";
    } else {
      g_autofree char *line = g_strndup(text + pos, len);
      why = parse_line(parser, line);
    }
    if (why != NULL) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                  "Crash report, line %u: %s", number, why);
      return FALSE;
    }
    pos += len + 1;
  }
  if (parser->state == IN_HEADER || !g_hash_table_contains(parser->seen, "signal")) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                "Crash report, line %u: %s", number,
                parser->state == IN_HEADER ? "not a Tracescope crash report"
                                           : "the report ends before its signal line");
    return FALSE;
  }
  parser->report->truncated = parser->state != AT_END;
  return TRUE;
}

/* --- what happened --- */

static const Mapping *
mapping_at(GArray *maps, guint64 address)
{
  for (guint i = 0; i < maps->len; i++) {
    const Mapping *m = &g_array_index(maps, Mapping, i);
    if (address >= m->start && address < m->end)
      return m;
  }
  return NULL;
}

/* The lowest mapping above an address in no mapping. */
static const Mapping *
mapping_above(GArray *maps, guint64 address)
{
  const Mapping *above = NULL;
  for (guint i = 0; i < maps->len; i++) {
    const Mapping *m = &g_array_index(maps, Mapping, i);
    if (m->start > address && (above == NULL || m->start < above->start))
      above = m;
  }
  return above;
}

/* A thread's stack as glibc maps it: an inaccessible anonymous guard page
 * right below the anonymous read-write stack.  (malloc's arenas have their
 * inaccessible part above.) */
static gboolean
is_stack(GArray *maps, const Mapping *m)
{
  if (strcmp(m->path, "[stack]") == 0)
    return TRUE;
  if (strcmp(m->perms, "---p") != 0 || m->path[0] != '\0')
    return FALSE;
  const Mapping *next = mapping_at(maps, m->end);
  return next != NULL && g_str_has_prefix(next->perms, "rw") && next->path[0] == '\0';
}

static gboolean
is_stack_overflow(const TsCrashReport *report, GArray *maps)
{
  if (report->signal != SIGSEGV || !report->has_address)
    return FALSE;
  const Mapping *m = mapping_at(maps, report->address);
  if (m != NULL)
    return is_stack(maps, m);
  m = mapping_above(maps, report->address);
  return m != NULL && m->start - report->address <= STACK_GAP && is_stack(maps, m);
}

static const char *
fpe_detail(int code)
{
  switch (code) {
  case FPE_INTDIV: return "integer division by zero";
  case FPE_INTOVF: return "integer overflow";
  case FPE_FLTDIV: return "floating-point division by zero";
  default: return "floating-point exception";
  }
}

static char *
describe(const TsCrashReport *report, GArray *maps)
{
  if (is_stack_overflow(report, maps))
    return g_strdup("stack overflow");
  g_autofree char *at = g_strdup_printf("0x%" G_GINT64_MODIFIER "x", report->address);
  /* si_code <= 0: sent with kill() or raise(), not a fault */
  gboolean sent = report->code <= 0;
  switch (report->signal) {
  case SIGSEGV:
    if (sent)
      return g_strdup("segmentation fault (signal sent by a process)");
    return g_strdup_printf("segmentation fault (%s at %s)",
                           report->code == SEGV_ACCERR ? "memory access not permitted"
                                                       : "invalid memory access", at);
  case SIGBUS:
    return sent ? g_strdup("bus error (signal sent by a process)")
                : g_strdup_printf("bus error (bad memory access at %s)", at);
  case SIGILL:
    return sent ? g_strdup("illegal instruction (signal sent by a process)")
                : g_strdup_printf("illegal instruction at %s", at);
  case SIGFPE:
    return g_strdup_printf("arithmetic error (%s)",
                           sent ? "signal sent by a process" : fpe_detail(report->code));
  case SIGABRT:
    return g_strdup("aborted");
  case SIGTRAP:
    return g_strdup("trace or breakpoint trap");
  default:
    return g_strdup_printf("signal %d (%s)", report->signal, report->signal_name);
  }
}

/* --- symbols --- */

/* No separate debug file: the DWARF in the object itself (a module built
 * with -g), else its symbols alone.  libdw's standard search ends at its
 * debuginfod client, which dlopens libcurl (and with it libssh2 and
 * OpenSSL, whose state LeakSanitizer found leaked at the app's exit, 1 GUI
 * suite run in 9 under load) and may download debug files while the
 * console waits for the backtrace. */
static int
find_no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                  char **debuginfo_file_name)
{
  return -1;
}

static const Dwfl_Callbacks offline_callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = find_no_debuginfo,
  .section_address = dwfl_offline_section_address,
};

/* Where an object is loaded: its lowest mapping, less that mapping's file
 * offset (for the usual first PT_LOAD at vaddr 0 and offset 0, the bias). */
static guint64
load_base(GArray *maps, const char *path)
{
  guint64 base = G_MAXUINT64;
  for (guint i = 0; i < maps->len; i++) {
    const Mapping *m = &g_array_index(maps, Mapping, i);
    if (strcmp(m->path, path) == 0 && m->offset <= m->start)
      base = MIN(base, m->start - m->offset);
  }
  return base;
}

static void
frame_set_object(TsCrashFrame *frame, GArray *maps)
{
  const Mapping *m = mapping_at(maps, frame->pc);
  if (m == NULL || m->path[0] != '/')
    return;
  guint64 base = load_base(maps, m->path);
  if (base > frame->pc)
    return;
  frame->object = g_strdup(m->path);
  frame->offset = frame->pc - base;
}

/* Only regular files are opened: a FIFO or a device named in a report
 * would block or read forever. */
static gboolean
is_regular_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Reports to libdw each object that a frame is in, at its load base; objects
 * that are not ELF files (or are gone) are left out. */
static Dwfl *
symboliser_new(GArray *maps, GPtrArray *frames)
{
  Dwfl *dwfl = dwfl_begin(&offline_callbacks);
  if (dwfl == NULL)
    return NULL;
  dwfl_report_begin(dwfl);
  g_autoptr(GHashTable) reported = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < frames->len; i++) {
    const TsCrashFrame *frame = g_ptr_array_index(frames, i);
    if (frame->object == NULL || !g_hash_table_add(reported, frame->object) ||
        !is_regular_file(frame->object))
      continue;
    dwfl_report_elf(dwfl, frame->object, frame->object, -1,
                    load_base(maps, frame->object), false);
  }
  dwfl_report_end(dwfl, NULL, NULL);
  return dwfl;
}

/* Return addresses (every frame but the interrupted one) are looked up one
 * byte back, inside the call: after a noreturn call the return address is
 * already the next function or line. */
static void
frame_symbolise(TsCrashFrame *frame, Dwfl *dwfl, gboolean return_address)
{
  Dwarf_Addr addr = return_address && frame->pc > 0 ? frame->pc - 1 : frame->pc;
  Dwfl_Module *module = dwfl_addrmodule(dwfl, addr);
  if (module == NULL)
    return;
  const char *name = dwfl_module_addrname(module, addr);
  /* "__libc_start_main@@GLIBC_2.34": the symbol version is noise here */
  frame->function = name ? g_strndup(name, strcspn(name, "@")) : NULL;
  Dwfl_Line *line = dwfl_module_getsrc(module, addr);
  int lineno = 0;
  const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
  if (file != NULL && lineno > 0) {
    frame->file = g_strdup(file);
    frame->line = lineno;
  }
}

static void
frame_free(gpointer data)
{
  TsCrashFrame *frame = data;
  g_free(frame->function);
  g_free(frame->file);
  g_free(frame->object);
  g_free(frame);
}

static GPtrArray *
frames_new(GArray *pcs, GArray *maps)
{
  GPtrArray *frames = g_ptr_array_new_with_free_func(frame_free);
  for (guint i = 0; i < pcs->len; i++) {
    TsCrashFrame *frame = g_new0(TsCrashFrame, 1);
    frame->pc = g_array_index(pcs, guint64, i);
    frame_set_object(frame, maps);
    g_ptr_array_add(frames, frame);
  }
  Dwfl *dwfl = symboliser_new(maps, frames);
  if (dwfl != NULL) {
    for (guint i = 0; i < frames->len; i++)
      frame_symbolise(g_ptr_array_index(frames, i), dwfl, i > 0);
    dwfl_end(dwfl);
  }
  return frames;
}

/* --- public --- */

static void
mapping_clear(gpointer data)
{
  g_free(((Mapping *) data)->path);
}

TsCrashReport *
ts_crash_report_parse(const char *text, gsize length, GError **error)
{
  g_return_val_if_fail(text != NULL || length == 0, NULL);
  g_autoptr(TsCrashReport) report = g_new0(TsCrashReport, 1);
  g_autoptr(GArray) pcs = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_autoptr(GArray) maps = g_array_new(FALSE, TRUE, sizeof(Mapping));
  g_array_set_clear_func(maps, mapping_clear);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  Parser parser = { .report = report, .pcs = pcs, .maps = maps, .seen = seen };
  if (!parse_lines(&parser, text ? text : "", length, error))
    return NULL;
  report->description = describe(report, maps);
  report->out_of_memory = report->as_limit > 0 && report->vm_size > 0 &&
                          (report->vm_size >= report->as_limit ||
                           report->as_limit - report->vm_size <= OOM_MARGIN);
  report->frames = frames_new(pcs, maps);
  return g_steal_pointer(&report);
}

void
ts_crash_report_free(TsCrashReport *report)
{
  if (report == NULL)
    return;
  g_free(report->signal_name);
  g_free(report->description);
  g_clear_pointer(&report->frames, g_ptr_array_unref);
  g_free(report);
}

static void
format_frame(GString *out, guint index, const TsCrashFrame *frame)
{
  g_autofree char *object = frame->object ? g_path_get_basename(frame->object) : NULL;
  g_string_append_printf(out, "#%-3u", index);
  if (frame->function != NULL) {
    g_string_append(out, frame->function);
    if (frame->file != NULL) {
      g_autofree char *file = g_path_get_basename(frame->file);
      g_string_append_printf(out, " (%s:%d)", file, frame->line);
    }
    if (object != NULL)
      g_string_append_printf(out, " in %s", object);
  } else if (object != NULL) {
    g_string_append_printf(out, "%s+0x%" G_GINT64_MODIFIER "x", object, frame->offset);
  } else {
    g_string_append_printf(out, "0x%016" G_GINT64_MODIFIER "x", frame->pc);
  }
  g_string_append_c(out, '\n');
}

/* Recursion repeats a frame 100 times: once shown, the rest is counted. */
char *
ts_crash_report_format_backtrace(const TsCrashReport *report)
{
  g_return_val_if_fail(report != NULL, NULL);
  GString *out = g_string_new(NULL);
  GPtrArray *frames = report->frames;
  for (guint i = 0; i < frames->len; i++) {
    const TsCrashFrame *frame = g_ptr_array_index(frames, i);
    format_frame(out, i, frame);
    guint same = 0;
    while (i + same + 1 < frames->len &&
           ((const TsCrashFrame *) g_ptr_array_index(frames, i + same + 1))->pc == frame->pc)
      same++;
    if (same >= 2) {
      g_string_append_printf(out, "    ... the same %u more times\n", same);
      i += same;
    }
  }
  return g_string_free(out, FALSE);
}
