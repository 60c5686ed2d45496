/* wrong-abi.c — a module built for another Tracescope ABI; the loader must refuse it. */
#include <tracescope.h>

static ts_tensor *identity(ts_call *c)
{
  return ts_arg(c, 0);
}

static const ts_export exports[] = { TS_EXPORT(identity, x) };

TS_API extern const ts_module_info tracescope_module;
const ts_module_info tracescope_module = { TS_ABI_VERSION + 1, "from another ABI", exports, 1 };
