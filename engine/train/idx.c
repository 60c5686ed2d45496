/* idx.c — IDX files (the format MNIST and Fashion-MNIST ship in), read
 * through zlib's gzread, which takes gzip-compressed and plain files alike.
 * The header is checked (magic, element type, rank, each dimension, the
 * size they make against a cap) before anything is allocated; the data
 * must fill the tensor exactly. */
#include "train-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#define DEFAULT_MAX_BYTES ((size_t)1 << 30)
#define FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
#define FASHION_MNIST_PACKAGE "dataset-fashion-mnist"

/* IDX element types: the file's code, its size, the dtype it loads as. */
static const struct {
  unsigned char code;
  const char *name;
  int size;
  ts_dtype dtype;
} TYPES[] = {
  { 0x08, "u8", 1, TS_U8 },   { 0x09, "i8", 1, TS_I32 },  { 0x0B, "i16", 2, TS_I32 },
  { 0x0C, "i32", 4, TS_I32 }, { 0x0D, "f32", 4, TS_F32 }, { 0x0E, "f64", 8, TS_F64 },
};

/* Reads exactly n bytes; false + error naming `field` when the file ends
 * or cannot be read. */
static bool read_exact(gzFile f, const char *path, void *buf, size_t n, const char *field)
{
  size_t got = 0;
  while (got < n) {
    unsigned chunk = n - got > (1u << 30) ? 1u << 30 : (unsigned)(n - got);
    int r = gzread(f, (char *)buf + got, chunk);
    if (r < 0) {
      int err;
      const char *msg = gzerror(f, &err);
      train_error(TS_ERR_FORMAT, "%s: %s: cannot read: %s", path, field, msg);
      return false;
    }
    if (r == 0) {
      train_error(TS_ERR_FORMAT, "%s: %s: the file ends after %zu of its %zu bytes", path, field,
                  got, n);
      return false;
    }
    got += (size_t)r;
  }
  return true;
}

static uint32_t be32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Big-endian elements of `size` bytes in buf to host values in t. */
static void decode(const unsigned char *buf, int64_t n, int size, unsigned char code, ts_tensor *t)
{
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *p = buf + i * size;
    uint64_t u = 0;
    for (int b = 0; b < size; b++)
      u = u << 8 | p[b];
    switch (code) {
    case 0x09: ((int32_t *)t->data)[i] = (int8_t)u; break;
    case 0x0B: ((int32_t *)t->data)[i] = (int16_t)u; break;
    case 0x0C: ((int32_t *)t->data)[i] = (int32_t)(uint32_t)u; break;
    case 0x0D: { uint32_t v = (uint32_t)u; memcpy((float *)t->data + i, &v, 4); break; }
    case 0x0E: memcpy((double *)t->data + i, &u, 8); break;
    default: break;
    }
  }
}

static ts_tensor *idx_read(gzFile f, const char *path, size_t max_bytes)
{
  unsigned char magic[4];
  if (!read_exact(f, path, magic, 4, "magic"))
    return NULL;
  if (magic[0] || magic[1]) {
    train_error(TS_ERR_FORMAT, "%s: magic: expected two zero bytes, got %02x %02x (not an IDX file)",
                path, magic[0], magic[1]);
    return NULL;
  }
  int type = -1;
  for (int i = 0; i < (int)G_N_ELEMENTS(TYPES); i++)
    if (TYPES[i].code == magic[2])
      type = i;
  if (type < 0) {
    train_error(TS_ERR_FORMAT, "%s: type: unknown element type 0x%02x", path, magic[2]);
    return NULL;
  }
  int rank = magic[3];
  if (rank > TS_MAX_RANK) {
    train_error(TS_ERR_FORMAT, "%s: rank: %d dimensions, at most %d are supported", path, rank,
                TS_MAX_RANK);
    return NULL;
  }
  ts_shape shape = { .rank = rank };
  size_t size = (size_t)TYPES[type].size; /* bytes in the file, as the dims multiply */
  for (int d = 0; d < rank; d++) {
    unsigned char b[4];
    char field[32];
    snprintf(field, sizeof field, "dimension %d", d);
    if (!read_exact(f, path, b, 4, field))
      return NULL;
    shape.dim[d] = be32(b);
    if (shape.dim[d] && size > SIZE_MAX / (size_t)shape.dim[d]) {
      train_error(TS_ERR_FORMAT, "%s: %s: %lld makes the data overflow", path, field,
                  (long long)shape.dim[d]);
      return NULL;
    }
    size *= (size_t)shape.dim[d];
    size_t cap = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
    if (size > cap) {
      train_error(TS_ERR_FORMAT, "%s: %s: %lld makes %zu bytes of data, over the cap of %zu", path,
                  field, (long long)shape.dim[d], size, cap);
      return NULL;
    }
  }
  ts_tensor *t = ts__tensor_alloc((ts_loc){ NULL, NULL, 0 }, TYPES[type].dtype, shape);
  if (!t)
    return NULL;
  bool as_is = TYPES[type].size == 1 && TYPES[type].dtype == TS_U8;
  unsigned char *buf = as_is ? t->data : g_try_malloc(size ? size : 1);
  if (!buf) {
    train_error(TS_ERR_NO_MEMORY, "%s: data: no memory for %zu bytes", path, size);
    return NULL;
  }
  bool ok = read_exact(f, path, buf, size, "data");
  if (ok && !as_is)
    decode(buf, ts_shape_size(shape), TYPES[type].size, TYPES[type].code, t);
  if (!as_is)
    g_free(buf);
  unsigned char extra;
  if (ok && gzread(f, &extra, 1) != 0) {
    train_error(TS_ERR_FORMAT, "%s: data: bytes after the %zu the header's dims say", path, size);
    ok = false;
  }
  return ok ? t : NULL;
}

ts_tensor *ts_idx_load(const char *path, size_t max_bytes)
{
  if (!path) {
    train_error(TS_ERR_INVALID_ARGUMENT, "IDX: the path is NULL");
    return NULL;
  }
  gzFile f = gzopen(path, "rb");
  if (!f) {
    train_error(errno == ENOENT ? TS_ERR_NOT_FOUND : TS_ERR_IO, "%s: cannot open: %s", path,
                errno ? g_strerror(errno) : "out of memory");
    return NULL;
  }
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = idx_read(f, path, max_bytes);
  gzclose(f);
  return ts_scope_end_keep(scope, t);
}

bool ts_fashion_mnist_load(const char *split, ts_tensor **images, ts_tensor **labels)
{
  if (!split || (strcmp(split, "train") && strcmp(split, "t10k")) || !images || !labels) {
    train_error(TS_ERR_INVALID_ARGUMENT, "Fashion-MNIST: split must be \"train\" or \"t10k\", "
                "with both outputs given");
    return false;
  }
  const char *dir = g_getenv("TRACESCOPE_FASHION_MNIST");
  if (!dir || !*dir)
    dir = FASHION_MNIST_DIR;
  ts_tensor **out[2] = { images, labels };
  const char *what[2] = { "images-idx3", "labels-idx1" };
  *images = *labels = NULL;
  for (int i = 0; i < 2; i++) {
    char *path = g_strdup_printf("%s/%s-%s-ubyte.gz", dir, split, what[i]);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
      train_error(TS_ERR_NOT_FOUND, "%s: no such file: Fashion-MNIST comes from Debian's %s "
                  "package (apt-get install %s; scripts/install-deps.sh installs it)",
                  path, FASHION_MNIST_PACKAGE, FASHION_MNIST_PACKAGE);
      g_free(path);
      return false;
    }
    *out[i] = ts_idx_load(path, 0);
    g_free(path);
    if (!*out[i])
      return false;
  }
  ts_shape is = ts_tensor_shape(*images), ls = ts_tensor_shape(*labels);
  if (is.rank != 3 || ls.rank != 1 || is.dim[0] != ls.dim[0] || ts_tensor_dtype(*labels) != TS_U8 ||
      ts_tensor_dtype(*images) != TS_U8) {
    train_error(TS_ERR_FORMAT, "%s/%s: images and labels do not match (u8 [N,28,28] and u8 [N])",
                dir, split);
    *images = *labels = NULL;
    return false;
  }
  return true;
}
