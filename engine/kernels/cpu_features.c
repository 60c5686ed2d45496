/* kernels/cpu_features.c — what the CPU really has, read with cpuid (never
 * from a library's table that may not know the model), and the OpenBLAS
 * core that matches it. */
#include "kernels.h"

#include <cpuid.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../tracescope.h"

static ts_cpu_features cpu;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

/* The OS saves these register states (XCR0, when OSXSAVE is set). */
#define XCR0_AVX 0x6u     /* SSE and AVX (YMM upper halves) */
#define XCR0_AVX512 0xe6u /* the above, opmask and ZMM */

static uint32_t xcr0(void)
{
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return lo;
}

static void trim(char *s)
{
  size_t start = strspn(s, " "), len = strlen(s);
  while (len > start && s[len - 1] == ' ')
    len--;
  memmove(s, s + start, len - start);
  s[len - start] = '\0';
}

static void read_cpu(void)
{
  unsigned a = 0, b = 0, c = 0, d = 0, max = 0;
  if (!__get_cpuid(0, &max, &b, &c, &d))
    return;
  memcpy(cpu.vendor, &b, 4);
  memcpy(cpu.vendor + 4, &d, 4);
  memcpy(cpu.vendor + 8, &c, 4);

  __get_cpuid(1, &a, &b, &c, &d);
  int family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
  if (family == 0xf)
    family += (a >> 20) & 0xff;
  if (family == 0x6 || family >= 0xf)
    model |= ((a >> 16) & 0xf) << 4;
  cpu.family = family;
  cpu.model = model;
  bool osxsave = c & bit_OSXSAVE;
  uint32_t xcr = osxsave ? xcr0() : 0;
  bool os_avx = (xcr & XCR0_AVX) == XCR0_AVX, os_avx512 = (xcr & XCR0_AVX512) == XCR0_AVX512;
  cpu.sse4_2 = c & bit_SSE4_2;
  cpu.avx = os_avx && (c & bit_AVX);
  cpu.fma = cpu.avx && (c & bit_FMA);

  if (max >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    unsigned sub = a;
    cpu.avx2 = cpu.avx && (b & bit_AVX2);
    cpu.avx512f = os_avx512 && (b & bit_AVX512F);
    cpu.avx512bw = cpu.avx512f && (b & bit_AVX512BW);
    cpu.avx512vl = cpu.avx512f && (b & bit_AVX512VL);
    cpu.avx512dq = cpu.avx512f && (b & bit_AVX512DQ);
    cpu.avx512_vnni = cpu.avx512f && (c & bit_AVX512VNNI);
    if (sub >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      cpu.avx512_bf16 = cpu.avx512f && (a & bit_AVX512BF16);
    }
  }

  unsigned ext = 0;
  __get_cpuid(0x80000000, &ext, &b, &c, &d);
  if (ext >= 0x80000004) {
    unsigned regs[12];
    for (unsigned i = 0; i < 3; i++)
      __get_cpuid(0x80000002 + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2], &regs[4 * i + 3]);
    memcpy(cpu.model_name, regs, 48);
    trim(cpu.model_name);
  }
}

const ts_cpu_features *ts__cpu(void)
{
  pthread_once(&cpu_once, read_cpu);
  return &cpu;
}

/* AVX-512 is SkylakeX with or without BF16: OpenBLAS's Cooperlake core is
 * SkylakeX's kernels plus bf16 ones we do not call, and 0.3.21's
 * OPENBLAS_CORETYPE does not accept "Cooperlake" ("Core not found" under
 * OPENBLAS_VERBOSE=2, then its own guess: Prescott on a model it does not
 * know). */
const char *ts__blas_core_for(const ts_cpu_features *f)
{
  if (f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq)
    return "SkylakeX";
  if (f->avx2 && f->fma)
    return strcmp(f->vendor, "AuthenticAMD") == 0 ? "Zen" : "Haswell";
  return NULL;
}

/* The widest vector ISA in words, then the rest as flags. */
static const char *isa_summary(const ts_cpu_features *f)
{
  return f->avx512f ? "AVX-512" : f->avx2 && f->fma ? "AVX2+FMA" : f->avx ? "AVX" : f->sse4_2 ? "SSE4.2" : "SSE2";
}

static char cpu_text[256];
static pthread_once_t text_once = PTHREAD_ONCE_INIT;

static void describe(void)
{
  const ts_cpu_features *f = ts__cpu();
  static const struct {
    size_t at;
    const char *name;
  } flags[] = {
    { offsetof(ts_cpu_features, avx512bw), "BW" },   { offsetof(ts_cpu_features, avx512vl), "VL" },
    { offsetof(ts_cpu_features, avx512dq), "DQ" },   { offsetof(ts_cpu_features, avx512_vnni), "VNNI" },
    { offsetof(ts_cpu_features, avx512_bf16), "BF16" },
  };
  char extra[64] = "";
  for (size_t i = 0; i < sizeof flags / sizeof flags[0] && f->avx512f; i++)
    if (*(const bool *)((const char *)f + flags[i].at)) {
      strcat(extra, extra[0] ? "/" : " F/");
      strcat(extra, flags[i].name);
    }
  snprintf(cpu_text, sizeof cpu_text, "%s (%s family %d model %d): %s%s", f->model_name[0] ? f->model_name : "unknown CPU",
           f->vendor, f->family, f->model, isa_summary(f), extra);
}

const char *ts_cpu_description(void)
{
  pthread_once(&text_once, describe);
  return cpu_text;
}
