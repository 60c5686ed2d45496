/* cuda/gemm.c — MatMul and _FusedMatMul on CUDA through cuBLASLt, loaded
 * with dlopen on the first product (the library is large, and a machine
 * without it still runs: its products then fall back to the CPU, saying
 * why).  The engine's row-major C = op(A) op(B) is cuBLAS's column-major
 * Cᵀ = op(B)ᵀ op(A)ᵀ: the operands swap, nothing is copied.  A bias along
 * the output's columns is a bias along Cᵀ's rows, which is what the BIAS
 * epilogue adds; Relu is an epilogue too; Sigmoid and Tanh, which
 * cuBLASLt has no epilogue for, run as the elementwise rows' kernels on
 * the product (as do a bias and Relu where cuBLASLt has no algorithm
 * with their epilogue).  Floats multiply in their own precision (no TF32), as the
 * CPU does.  Descriptors and the algorithm chosen are kept per shape. */
#include "../../engine-private.h"
#include "cuda_backend.h"
#include "kernels.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define MAX_DEVICES 8
#define WORKSPACE_BYTES ((size_t)32 << 20)
#define MAX_PLANS 64

static struct {
  pthread_once_t once;
  void *lib;
  char why[320];
#define LT_FN(name) __typeof__(cublasLt##name) *name;
  LT_FN(Create)
  LT_FN(MatmulDescCreate)
  LT_FN(MatmulDescDestroy)
  LT_FN(MatmulDescSetAttribute)
  LT_FN(MatrixLayoutCreate)
  LT_FN(MatrixLayoutDestroy)
  LT_FN(MatrixLayoutSetAttribute)
  LT_FN(MatmulPreferenceCreate)
  LT_FN(MatmulPreferenceDestroy)
  LT_FN(MatmulPreferenceSetAttribute)
  LT_FN(MatmulAlgoGetHeuristic)
  LT_FN(Matmul)
#undef LT_FN
} lt = { .once = PTHREAD_ONCE_INIT };

static void load(void)
{
  const char *soname = "libcublasLt.so.13";
  void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    h = dlopen("/usr/local/cuda/lib64/libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(lt.why, sizeof lt.why, "cuBLASLt not found (%s): products run on the CPU", soname);
    return;
  }
#define SYM(name)                                                                       \
  if (!(*(void **)&lt.name = dlsym(h, "cublasLt" #name))) {                              \
    snprintf(lt.why, sizeof lt.why, "cuBLASLt lacks cublasLt%s: products run on the CPU", #name); \
    dlclose(h);                                                                         \
    return;                                                                             \
  }
  SYM(Create)
  SYM(MatmulDescCreate)
  SYM(MatmulDescDestroy)
  SYM(MatmulDescSetAttribute)
  SYM(MatrixLayoutCreate)
  SYM(MatrixLayoutDestroy)
  SYM(MatrixLayoutSetAttribute)
  SYM(MatmulPreferenceCreate)
  SYM(MatmulPreferenceDestroy)
  SYM(MatmulPreferenceSetAttribute)
  SYM(MatmulAlgoGetHeuristic)
  SYM(Matmul)
#undef SYM
  lt.lib = h;
}

bool ts__cuda_gemm_available(const char **why)
{
  pthread_once(&lt.once, load);
  if (!lt.lib && why)
    *why = lt.why;
  return lt.lib != NULL;
}

/* A product's shape: what its descriptors and algorithm depend on. */
typedef struct gemm_key {
  int device;
  ts_dtype dtype;
  int64_t m, n, k, batch, stride_a, stride_b;
  bool ta, tb, bias;
  int act;
  uint32_t align; /* bytes every matrix (and batch of it) is aligned to, at most 256 */
} gemm_key;

typedef struct gemm_plan {
  gemm_key key;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc; /* cuBLAS's A (our b), B (our a), C = D */
  cublasLtMatmulAlgo_t algo;
} gemm_plan;

static struct {
  pthread_mutex_t lock;
  cublasLtHandle_t handle[MAX_DEVICES];
  void *workspace[MAX_DEVICES];
  gemm_plan plans[MAX_PLANS];
  int n_plans, next; /* plans past MAX_PLANS replace the oldest */
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool lt_ok(cublasStatus_t s, const char *what)
{
  if (s == CUBLAS_STATUS_SUCCESS)
    return true;
  ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "cuBLASLt: %s failed (status %d)", what,
               (int)s);
  return false;
}

/* The device's handle and workspace, made on first use; a capture in
 * progress on this thread is told to allow it (cudaMalloc is otherwise
 * refused mid-capture). */
static bool device_ready(int dev)
{
  if (cache.handle[dev])
    return true;
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  bool ok = lt_ok(lt.Create(&cache.handle[dev]), "cublasLtCreate");
  if (ok && cudaMalloc(&cache.workspace[dev], WORKSPACE_BYTES) != cudaSuccess) {
    cudaGetLastError();
    cache.workspace[dev] = NULL; /* products without one */
  }
  cudaThreadExchangeStreamCaptureMode(&mode);
  return ok;
}

static bool layout(cublasLtMatrixLayout_t *l, cudaDataType_t type, int64_t rows, int64_t cols,
                   int64_t batch, int64_t stride)
{
  if (!lt_ok(lt.MatrixLayoutCreate(l, type, (uint64_t)rows, (uint64_t)cols, rows), "layout"))
    return false;
  int32_t count = (int32_t)batch;
  return batch == 1 ||
         (lt_ok(lt.MatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                            sizeof count), "batch count") &&
          lt_ok(lt.MatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &stride, sizeof stride), "batch stride"));
}

static void plan_clear(gemm_plan *p)
{
  if (p->desc)
    lt.MatmulDescDestroy(p->desc);
  if (p->la)
    lt.MatrixLayoutDestroy(p->la);
  if (p->lb)
    lt.MatrixLayoutDestroy(p->lb);
  if (p->lc)
    lt.MatrixLayoutDestroy(p->lc);
  memset(p, 0, sizeof *p);
}

static bool plan_make(gemm_plan *p, const gemm_key *key)
{
  *p = (gemm_plan){ .key = *key };
  bool f32 = key->dtype == TS_F32;
  cudaDataType_t type = f32 ? CUDA_R_32F : CUDA_R_64F;
  cublasOperation_t op_a = key->tb ? CUBLAS_OP_T : CUBLAS_OP_N; /* cuBLAS's A: our b */
  cublasOperation_t op_b = key->ta ? CUBLAS_OP_T : CUBLAS_OP_N; /* cuBLAS's B: our a */
  cublasLtEpilogue_t epi = key->act == 1 ? (key->bias ? CUBLASLT_EPILOGUE_RELU_BIAS
                                                      : CUBLASLT_EPILOGUE_RELU)
                         : key->bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  if (!lt_ok(lt.MatmulDescCreate(&p->desc, f32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F, type),
             "cublasLtMatmulDescCreate") ||
      !lt_ok(lt.MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a),
             "transa") ||
      !lt_ok(lt.MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b),
             "transb") ||
      !lt_ok(lt.MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
             "epilogue"))
    return false;
  int64_t m = key->m, n = key->n, k = key->k;
  if (!layout(&p->la, type, key->tb ? k : n, key->tb ? n : k, key->batch, key->stride_b) ||
      !layout(&p->lb, type, key->ta ? m : k, key->ta ? k : m, key->batch, key->stride_a) ||
      !layout(&p->lc, type, n, m, key->batch, m * n))
    return false;
  cublasLtMatmulPreference_t pref;
  size_t ws = cache.workspace[key->device] ? WORKSPACE_BYTES : 0;
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  if (!lt_ok(lt.MatmulPreferenceCreate(&pref), "preference"))
    return false;
  /* the default assumes 256-byte alignment; the engine's buffers have 64
   * (the memory planner's), a batch's matrices perhaps less */
  bool ok = lt_ok(lt.MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &ws, sizeof ws), "workspace preference");
  const cublasLtMatmulPreferenceAttributes_t aligns[] = {
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
  };
  for (size_t i = 0; ok && i < G_N_ELEMENTS(aligns); i++)
    ok = lt_ok(lt.MatmulPreferenceSetAttribute(pref, aligns[i], &key->align, sizeof key->align),
               "alignment preference");
  ok = ok &&
            lt_ok(lt.MatmulAlgoGetHeuristic(cache.handle[key->device], p->desc, p->la, p->lb,
                                            p->lc, p->lc, pref, 1, &result, &found),
                  "cublasLtMatmulAlgoGetHeuristic");
  lt.MatmulPreferenceDestroy(pref);
  if (ok && found < 1) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL,
                 "cuBLASLt has no algorithm for this product");
    ok = false;
  }
  if (ok)
    p->algo = result.algo;
  return ok;
}

static gemm_plan *plan_of(const gemm_key *key)
{
  for (int i = 0; i < cache.n_plans; i++)
    if (memcmp(&cache.plans[i].key, key, sizeof *key) == 0)
      return &cache.plans[i];
  gemm_plan *p;
  if (cache.n_plans < MAX_PLANS) {
    p = &cache.plans[cache.n_plans++];
  } else {
    p = &cache.plans[cache.next++ % MAX_PLANS];
    plan_clear(p);
  }
  if (plan_make(p, key))
    return p;
  plan_clear(p);
  cache.n_plans -= p == &cache.plans[cache.n_plans - 1];
  return NULL;
}

/* The largest power of two dividing v, at most 256 (0: 256). */
static uint32_t align_of(uint64_t v)
{
  uint64_t low = v & (~v + 1);
  return low == 0 || low > 256 ? 256 : (uint32_t)low;
}

bool ts__cuda_gemm(const ts_cu_gemm *g, void *stream)
{
  const char *why = NULL;
  if (!ts__cuda_gemm_available(&why)) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL, "%s", why);
    return false;
  }
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= MAX_DEVICES) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "CUDA: no current device for a product (%s)",
                 cudaGetErrorString(cudaGetLastError()));
    return false;
  }
  gemm_key key;
  memset(&key, 0, sizeof key); /* padding: the key is compared whole */
  key.device = dev;
  key.dtype = g->dtype;
  key.m = g->m;
  key.n = g->n;
  key.k = g->k;
  key.batch = g->batch;
  key.stride_a = g->batch > 1 ? g->stride_a : 0;
  key.stride_b = g->batch > 1 ? g->stride_b : 0;
  key.ta = g->ta;
  key.tb = g->tb;
  key.bias = g->bias != NULL;
  key.act = g->act == 1 ? 1 : 0; /* Sigmoid, Tanh: after the product */
  size_t es = g->dtype == TS_F32 ? sizeof(float) : sizeof(double);
  key.align = MIN(MIN(align_of((uintptr_t)g->a), align_of((uintptr_t)g->b)),
                  MIN(align_of((uintptr_t)g->c), g->bias ? align_of((uintptr_t)g->bias) : 256));
  if (g->batch > 1)
    key.align = MIN(key.align, MIN(MIN(align_of(g->stride_a * es), align_of(g->stride_b * es)),
                                   align_of(g->m * g->n * es)));
  pthread_mutex_lock(&cache.lock);
  bool ok = device_ready(dev);
  gemm_plan *p = ok ? plan_of(&key) : NULL;
  /* no algorithm with the epilogue (f64 may have none): the plain
   * product, its bias and Relu then as the rows' kernels */
  if (ok && !p && (key.bias || key.act)) {
    ts_error_free(ts_error_take());
    key.bias = false;
    key.act = 0;
    p = plan_of(&key);
  }
  ok = p != NULL;
  if (ok && key.bias)
    ok = lt_ok(lt.MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g->bias,
                                         sizeof g->bias), "bias");
  if (ok) {
    float one_f = 1, zero_f = 0;
    double one_d = 1, zero_d = 0;
    bool f32 = g->dtype == TS_F32;
    ok = lt_ok(lt.Matmul(cache.handle[dev], p->desc, f32 ? (void *)&one_f : (void *)&one_d,
                         g->b, p->la, g->a, p->lb, f32 ? (void *)&zero_f : (void *)&zero_d,
                         g->c, p->lc, g->c, p->lc, &p->algo, cache.workspace[dev],
                         cache.workspace[dev] ? WORKSPACE_BYTES : 0, (cudaStream_t)stream),
               "cublasLtMatmul");
  }
  pthread_mutex_unlock(&cache.lock);
  int64_t n = g->m * g->n * g->batch;
  if (ok && g->bias && !key.bias) { /* c [batch * m, n] += bias [n] */
    ts_cu_bcast s = { .rank = 2, .n_in = 2, .dim = { g->m * g->batch, g->n },
                      .stride = { { g->n, 1 }, { 0, 1 } } };
    ok = ts__cu_binary(TS_OP_ADD, g->dtype, n, &s, g->c, g->bias, g->c, stream);
  }
  if (ok && g->act == 1 && !key.act)
    ok = ts__cu_unary(TS_OP_RELU, g->dtype, n, g->c, g->c, stream);
  if (ok && (g->act == 2 || g->act == 3))
    ok = ts__cu_unary(g->act == 2 ? TS_OP_SIGMOID : TS_OP_TANH, g->dtype, n, g->c, g->c, stream);
  return ok;
}
