/* float_repr.h — a double as Python's repr() writes it, which is the
 * text AsString gives a float64 (ops/strings.c): the fewest digits that
 * read back as it, positional from 1e-4 up to 1e16 ("0.1", "2.0", "-0.0"),
 * else scientific ("1e-05", "1e+16"); "nan", "inf" and "-inf". */
#pragma once

#include <stddef.h>

#define TS_FLOAT_REPR_SIZE 32

void ts__float_repr(char *buf, size_t size, double v);
