/* npy.c — NumPy .npy files.  Reads format 1.0, 2.0 and 3.0 with the six
 * dtypes in either byte order ('<', '>', '=', '|'), C or Fortran order
 * (Fortran data is reordered to row-major on load); writes 1.0 byte for
 * byte as numpy.save does.  Every size in a file is checked against the
 * file's length before anything is allocated or read. */
#include "engine-private.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <glib.h>

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define ALIGN 64
#define HEADER_MAX 10000       /* numpy refuses longer headers too */
#define GROWTH_AXIS_DIGITS 21  /* numpy pads the header for in-place growth */

static const ts_loc NO_LOC = { NULL, NULL, 0 };

static const struct {
  char code[3];
  ts_dtype dtype;
} DESCRS[] = {
  { "f4", TS_F32 }, { "f8", TS_F64 }, { "i4", TS_I32 }, { "i8", TS_I64 }, { "u1", TS_U8 },
  { "b1", TS_BOOL }, { "i1", TS_I8 },  { "i2", TS_I16 }, { "u2", TS_U16 }, { "u4", TS_U32 },
  { "u8", TS_U64 },  { "f2", TS_F16 },
}; /* bfloat16 has no code: NumPy has no such dtype (ml_dtypes' is a void type) */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_ORDER '<'
#else
#define HOST_ORDER '>'
#endif

#define format_error(...) ts_error_set(TS_ERR_FORMAT, NO_LOC, NULL, __VA_ARGS__)

/* ---- the header: a Python dict literal ------------------------------------ */

typedef struct header {
  char descr[16];
  bool fortran_order;
  ts_shape shape;
} header;

typedef struct parser {
  const char *p, *end;
  const char *path;
} parser;

static void skip_ws(parser *ps)
{
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

/* Consumes c (after blanks) if it is next. */
static bool take_char(parser *ps, char c)
{
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == c) {
    ps->p++;
    return true;
  }
  return false;
}

static bool expect_char(parser *ps, char c, const char *where)
{
  if (take_char(ps, c))
    return true;
  format_error("%s: cannot parse the header: expected '%c' %s", ps->path, c, where);
  return false;
}

static bool take_word(parser *ps, const char *word)
{
  size_t n = strlen(word);
  skip_ws(ps);
  if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0) {
    ps->p += n;
    return true;
  }
  return false;
}

/* A quoted string without escapes, into out[cap]. */
static bool parse_string(parser *ps, char *out, size_t cap, const char *what)
{
  skip_ws(ps);
  char quote = ps->p < ps->end ? *ps->p : 0;
  if (quote == '\'' || quote == '"') {
    const char *start = ++ps->p;
    while (ps->p < ps->end && *ps->p != quote && *ps->p != '\\' && *ps->p != '\0')
      ps->p++;
    size_t n = (size_t)(ps->p - start);
    if (ps->p < ps->end && *ps->p == quote && n < cap) {
      memcpy(out, start, n);
      out[n] = '\0';
      ps->p++;
      return true;
    }
  }
  format_error("%s: cannot parse the header: bad %s", ps->path, what);
  return false;
}

static bool parse_shape(parser *ps, ts_shape *shape)
{
  shape->rank = 0;
  if (!expect_char(ps, '(', "before the shape"))
    return false;
  while (!take_char(ps, ')')) {
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '-') {
      format_error("%s: negative dimension in shape", ps->path);
      return false;
    }
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') {
      format_error("%s: cannot parse the header: bad shape", ps->path);
      return false;
    }
    int64_t dim = 0;
    for (; ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9'; ps->p++) {
      int digit = *ps->p - '0';
      if (dim > (INT64_MAX - digit) / 10) {
        format_error("%s: dimension in shape overflows 64 bits", ps->path);
        return false;
      }
      dim = dim * 10 + digit;
    }
    take_char(ps, 'L'); /* Python 2 longs */
    if (shape->rank == TS_MAX_RANK) {
      format_error("%s: shape has more than %d dimensions", ps->path, TS_MAX_RANK);
      return false;
    }
    shape->dim[shape->rank++] = dim;
    if (!take_char(ps, ',')) {
      if (!expect_char(ps, ')', "after the shape"))
        return false;
      break;
    }
  }
  return true;
}

/* Parses "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }". */
static bool parse_header(const char *path, const char *text, size_t len, header *h)
{
  parser ps = { text, text + len, path };
  enum { DESCR = 1, FORTRAN = 2, SHAPE = 4 };
  unsigned seen = 0;

  if (!expect_char(&ps, '{', "at the start"))
    return false;
  while (!take_char(&ps, '}')) {
    char key[32];
    if (!parse_string(&ps, key, sizeof key, "key") || !expect_char(&ps, ':', "after a key"))
      return false;
    if (strcmp(key, "descr") == 0) {
      if (take_char(&ps, '[')) {
        format_error("%s: unsupported dtype: structured arrays are not supported", path);
        return false;
      }
      if (!parse_string(&ps, h->descr, sizeof h->descr, "descr"))
        return false;
      seen |= DESCR;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (take_word(&ps, "True")) {
        h->fortran_order = true;
      } else if (take_word(&ps, "False")) {
        h->fortran_order = false;
      } else {
        format_error("%s: cannot parse the header: fortran_order is not True or False",
                     path);
        return false;
      }
      seen |= FORTRAN;
    } else if (strcmp(key, "shape") == 0) {
      if (!parse_shape(&ps, &h->shape))
        return false;
      seen |= SHAPE;
    } else {
      format_error("%s: unexpected key '%s' in the header", path, key);
      return false;
    }
    if (!take_char(&ps, ',')) {
      if (!expect_char(&ps, '}', "at the end of the header"))
        return false;
      break;
    }
  }
  skip_ws(&ps);
  if (ps.p != ps.end) {
    format_error("%s: cannot parse the header: text after the closing '}'", path);
    return false;
  }
  if (seen != (DESCR | FORTRAN | SHAPE)) {
    format_error("%s: the header lacks '%s'", path,
                 !(seen & DESCR) ? "descr" : !(seen & FORTRAN) ? "fortran_order" : "shape");
    return false;
  }
  return true;
}

/* Maps a descr ("<f4") to a dtype and whether its bytes need swapping. */
static bool parse_descr(const char *path, const char *descr, ts_dtype *dtype, bool *swap)
{
  char order = descr[0];
  if (strlen(descr) == 3 && strchr("<>=|", order)) {
    for (size_t i = 0; i < G_N_ELEMENTS(DESCRS); i++) {
      if (strcmp(descr + 1, DESCRS[i].code) == 0) {
        *dtype = DESCRS[i].dtype;
        *swap = (order == '<' || order == '>') && order != HOST_ORDER &&
                ts_dtype_size(*dtype) > 1;
        return true;
      }
    }
  }
  format_error("%s: unsupported dtype '%s' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)", path, descr);
  return false;
}

/* ---- loading ------------------------------------------------------------------ */

static void io_error(const char *what, const char *path, int err)
{
  ts_error_set(TS_ERR_IO, NO_LOC, NULL, "cannot %s '%s': %s", what, path, g_strerror(err));
}

static uint32_t read_le(const unsigned char *p, int n)
{
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static void byteswap(unsigned char *data, int64_t n, size_t size)
{
  for (int64_t i = 0; i < n; i++) {
    unsigned char *e = data + (size_t)i * size;
    for (size_t a = 0, b = size - 1; a < b; a++, b--) {
      unsigned char c = e[a];
      e[a] = e[b];
      e[b] = c;
    }
  }
}

/* Row-major dst from column-major src of the same shape. */
static void from_fortran(unsigned char *dst, const unsigned char *src, ts_shape shape, size_t size,
                         int64_t n)
{
  int64_t idx[TS_MAX_RANK] = { 0 }, fstride[TS_MAX_RANK];
  for (int a = 0; a < shape.rank; a++) /* overflows only for an empty shape (n = 0) */
    if (!ts__shape_product(shape.dim, a, &fstride[a]))
      fstride[a] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int a = 0; a < shape.rank; a++)
      off += idx[a] * fstride[a];
    memcpy(dst + (size_t)i * size, src + (size_t)off * size, size);
    for (int a = shape.rank - 1; a >= 0 && ++idx[a] == shape.dim[a]; a--)
      idx[a] = 0;
  }
}

/* Reads the magic, version and header; leaves f at the data.  Returns the
 * data offset, or -1 with an error. */
static int64_t read_header(FILE *f, const char *path, int64_t file_size, header *h)
{
  unsigned char pre[MAGIC_LEN + 2 + 4];
  size_t got = fread(pre, 1, sizeof pre, f);
  if (ferror(f)) {
    io_error("read", path, errno);
    return -1;
  }
  if (got == 0 || memcmp(pre, MAGIC, MIN(got, (size_t)MAGIC_LEN)) != 0) {
    format_error("%s: not a .npy file (bad magic string)", path);
    return -1;
  }
  if (got < MAGIC_LEN + 2) {
    format_error("%s: truncated header (file is %zu bytes)", path, got);
    return -1;
  }
  int major = pre[MAGIC_LEN], minor = pre[MAGIC_LEN + 1];
  if (major < 1 || major > 3 || minor != 0) {
    format_error("%s: unsupported .npy format version %d.%d (1.0, 2.0, 3.0 are)", path,
                 major, minor);
    return -1;
  }
  int len_size = major == 1 ? 2 : 4;
  int64_t header_start = MAGIC_LEN + 2 + len_size;
  if (file_size < header_start) {
    format_error("%s: truncated header (file is %" PRId64 " bytes)", path, file_size);
    return -1;
  }
  uint32_t header_len = read_le(pre + MAGIC_LEN + 2, len_size);
  if (header_len > HEADER_MAX) {
    format_error("%s: header of %" PRIu32 " bytes is larger than %d", path, header_len,
                 HEADER_MAX);
    return -1;
  }
  if (header_start + header_len > file_size) {
    format_error("%s: truncated header (%" PRIu32 " bytes announced, %" PRId64 " in the file)",
                 path, header_len, file_size - header_start);
    return -1;
  }

  char *text = g_malloc(header_len + 1);
  bool ok = fseek(f, (long)header_start, SEEK_SET) == 0 &&
            fread(text, 1, header_len, f) == header_len;
  if (!ok)
    io_error("read", path, ferror(f) ? errno : EIO);
  else
    ok = parse_header(path, text, header_len, h);
  g_free(text);
  return ok ? header_start + header_len : -1;
}

static ts_tensor *load(FILE *f, const char *path, int64_t file_size)
{
  header h = { 0 };
  int64_t data_start = read_header(f, path, file_size, &h);
  ts_dtype dtype;
  bool swap;
  if (data_start < 0 || !parse_descr(path, h.descr, &dtype, &swap))
    return NULL;

  char info[TS_INFO_STR];
  size_t size = ts_dtype_size(dtype);
  int64_t n = 0, bytes = 0;
  if (!ts__shape_product(h.shape.dim, h.shape.rank, &n) ||
      __builtin_mul_overflow(n, (int64_t)size, &bytes)) {
    format_error("%s: %s is too large (over 2^63 bytes)", path, ts__info_str(info, dtype, h.shape));
    return NULL;
  }
  int64_t avail = file_size - data_start;
  if (bytes > avail) {
    format_error("%s: data is truncated: %s needs %" PRId64 " bytes, the file has %" PRId64, path,
                 ts__info_str(info, dtype, h.shape), bytes, avail);
    return NULL;
  }

  ts_tensor *t = ts__tensor_alloc(NO_LOC, dtype, h.shape);
  if (!t)
    return NULL;
  size_t nbytes = (size_t)bytes;
  unsigned char *buf = h.fortran_order && h.shape.rank > 1 ? g_try_malloc(nbytes) : t->data;
  if (!buf && nbytes > 0) {
    ts_error_set(TS_ERR_NO_MEMORY, NO_LOC, NULL, "%s: out of memory reordering %zu bytes", path,
                 nbytes);
    return NULL;
  }
  if (nbytes > 0 && fread(buf, 1, nbytes, f) != nbytes) {
    io_error("read", path, ferror(f) ? errno : EIO);
    if (buf != t->data)
      g_free(buf);
    return NULL;
  }
  if (buf != t->data) {
    from_fortran(t->data, buf, h.shape, size, n);
    g_free(buf);
  }
  if (swap)
    byteswap(t->data, n, size);
  if (dtype == TS_BOOL) {
    unsigned char *b = t->data;
    for (int64_t i = 0; i < n; i++)
      b[i] = b[i] != 0;
  }
  return t;
}

ts_tensor *ts_npy_load(const char *path)
{
  if (!path) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, NO_LOC, NULL, "ts_npy_load: path is NULL");
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    io_error("open", path, errno);
    return NULL;
  }
  struct stat st;
  ts_tensor *t = NULL;
  if (fstat(fileno(f), &st) != 0)
    io_error("read", path, errno);
  else if (S_ISDIR(st.st_mode))
    io_error("read", path, EISDIR);
  else if (!S_ISREG(st.st_mode))
    ts_error_set(TS_ERR_IO, NO_LOC, NULL, "cannot read '%s': not a regular file", path);
  else
    t = load(f, path, (int64_t)st.st_size);
  fclose(f);
  return t;
}

/* ---- saving --------------------------------------------------------------------- */

static const char *descr_code(ts_dtype dtype)
{
  for (size_t i = 0; i < G_N_ELEMENTS(DESCRS); i++)
    if (DESCRS[i].dtype == dtype)
      return DESCRS[i].code;
  return NULL;
}

/* The header numpy.save writes, magic to the final '\n'. */
static GString *make_header(const ts_tensor *t, const char *code)
{
  GString *dict = g_string_new(NULL);
  g_string_append_printf(dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                         ts_dtype_size(t->dtype) > 1 ? HOST_ORDER : '|', code);
  for (int a = 0; a < t->shape.rank; a++)
    g_string_append_printf(dict, a ? ", %" PRId64 : "%" PRId64, t->shape.dim[a]);
  g_string_append(dict, t->shape.rank == 1 ? ",), }" : "), }");
  if (t->shape.rank > 0) {
    char first[24];
    int len = snprintf(first, sizeof first, "%" PRId64, t->shape.dim[0]);
    for (int i = len; i < GROWTH_AXIS_DIGITS; i++)
      g_string_append_c(dict, ' ');
  }

  size_t hlen = dict->len + 1;
  size_t pad = ALIGN - (MAGIC_LEN + 2 + 2 + hlen) % ALIGN;
  GString *out = g_string_new_len(MAGIC "\x01\x00", MAGIC_LEN + 2);
  g_string_append_c(out, (char)((hlen + pad) & 0xff));
  g_string_append_c(out, (char)((hlen + pad) >> 8));
  g_string_append_len(out, dict->str, (gssize)dict->len);
  for (size_t i = 0; i < pad; i++)
    g_string_append_c(out, ' ');
  g_string_append_c(out, '\n');
  g_string_free(dict, TRUE);
  return out;
}

bool ts_npy_save(const char *path, const ts_tensor *t)
{
  if (!t || !path) {
    if (!ts_failed())
      ts_error_set(TS_ERR_INVALID_ARGUMENT, NO_LOC, NULL, "ts_npy_save: %s is NULL",
                   t ? "path" : "tensor");
    return false;
  }
  if (!t->data && t->size != 0) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, NO_LOC, NULL,
                 "cannot save a symbolic tensor to '%s' (it has no values)", path);
    return false;
  }
  if (t->data && !ts__host_visible(t->backend)) {
    /* on a device the host cannot read: save a host copy */
    ts_scope *scope = ts_scope_begin();
    const ts_tensor *host = ts__tensor_host(NO_LOC, t);
    bool ok = host && ts_npy_save(path, host);
    ts_scope_end(scope);
    return ok;
  }

  const char *code = descr_code(t->dtype);
  if (!code) {
    ts_error_set(TS_ERR_DTYPE, NO_LOC, NULL,
                 "cannot save a %s tensor to '%s': .npy has no type for %s%s", ts_dtype_name(t->dtype),
                 path, ts_dtype_name(t->dtype),
                 t->dtype == TS_BF16 ? " (NumPy has no bfloat16; cast to float32 first)" : "");
    return false;
  }
  FILE *f = fopen(path, "wb");
  if (!f) {
    io_error("open", path, errno);
    return false;
  }
  GString *hdr = make_header(t, code);
  size_t nbytes = (size_t)t->size * ts_dtype_size(t->dtype);
  bool ok = fwrite(hdr->str, 1, hdr->len, f) == hdr->len &&
            (nbytes == 0 || fwrite(t->data, 1, nbytes, f) == nbytes);
  int err = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  g_string_free(hdr, TRUE);
  if (!ok) {
    io_error("write", path, err);
    remove(path);
  }
  return ok;
}
