/* ts-spec-text.h — tensor specs as the app spells them ("f32[2,?]"), on
 * both sides of the worker protocol, and signatures split into arguments. */
#pragma once

#include <glib.h>
#include <tracescope.h>

G_BEGIN_DECLS

/* "f32[2,?]" / "float32[]" (a dim of ? or -1 is unknown); FALSE if text is not one. */
gboolean ts_spec_parse(const char *text, ts_spec *out);
/* "f32[2,?]".  Owned. */
char *ts_spec_to_string(const ts_spec *spec);

/* Splits a signature "(x: f32[2], n: 'a, b')" into its arguments' texts
 * ("f32[2]", "'a, b'"), dropping parameter names.  Owned. */
GStrv ts_signature_split(const char *signature);

G_END_DECLS
