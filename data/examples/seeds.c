/* seeds.c — the bundled module: the programs of the tf.function guides
 * (../shared/seeds), written against tracescope.h as a user writes them.
 * Each function quotes the guide program it reproduces.  Host code (printf,
 * the C state below) runs whenever the C function runs: on every eager
 * call, but in graph mode only while tracing.  The bigger models of the
 * benchmark (sequential_model, dense_128_model, lstm_fn, conv_fn) are in
 * seeds_models.c. */
#include "seeds.h"

#include <stdio.h>
#include <stdlib.h>

ts_tensor *like(ts_tensor *x, double v)
{
  ts_tensor *t = NULL;
  if (x)
    TS_INIT_SCOPE { t = ts_cast(ts_scalar_f64(v), ts_tensor_dtype(x)); }
  return t;
}

int64_t arg_count(ts_call *c, int i, const char *fn)
{
  int64_t n = ts_arg_int(c, i);
  if (n < 0)
    ts_error_set(TS_ERR_INVALID_ARGUMENT, TS_HERE, NULL, "%s: argument %d must be >= 0, got %lld",
                 fn, i, (long long)n);
  return ts_failed() ? -1 : n;
}

/* The programs' Python globals: tf.Variables, made when the module loads
 * (as a variable is made before the tf.function that uses it: one made by
 * the function's first call would have it traced twice, as tf.function
 * does), and an iterator.  Released when the module is unloaded. */
static struct {
  ts_tensor *v;   /* find_next_odd: v = tf.Variable(5) */
  ts_tensor *var; /* side_effect: var = tf.Variable(0) */
  int next;       /* side_effect: iterator = iter([0, 1, 2, 3]) */
} globals;

__attribute__((constructor)) static void globals_init(void)
{
  ts_scope *scope = ts_scope_begin();
  globals.v = ts_variable_new(ts_scalar_i32(5), "v");
  globals.var = ts_variable_new(ts_scalar_i32(0), "var");
  ts_scope_end(scope);
}

__attribute__((destructor)) static void globals_release(void)
{
  ts_tensor_unref(globals.v);
  ts_tensor_unref(globals.var);
}

/* ---- "Better performance with tf.function and AutoGraph" (TF 2.0) ------------- */

/* The tf.function decorator:
 *   def simple_nn_layer(x, y): return tf.nn.relu(tf.matmul(x, y)) */
static ts_tensor *simple_nn_layer(ts_call *c)
{
  return ts_relu(ts_matmul(ts_arg(c, 0), ts_arg(c, 1)));
}

/* Functions calling functions:
 *   def linear_layer(x): return 2 * x + 1
 *   def deep_net(x): return tf.nn.relu(linear_layer(x))
 *   deep_net(tf.constant((1, 2, 3)))  ->  [3 5 7] */
static ts_tensor *linear(ts_tensor *x)
{
  return ts_add(ts_mul(like(x, 2), x), like(x, 1));
}

static ts_tensor *linear_layer(ts_call *c)
{
  return linear(ts_arg(c, 0));
}

static ts_tensor *deep_net(ts_call *c)
{
  return ts_relu(linear(ts_arg(c, 0)));
}

/* Python control flow:
 *   def square_if_positive(x):
 *     if x > 0:
 *       x = x * x
 *     else:
 *       x = 0
 *     return x
 *   square_if_positive(tf.constant(2)) -> 4;  square_if_positive(tf.constant(-2)) -> 0 */
static ts_tensor *square_if_positive(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, like(x, 0)), &x) {
    x = ts_mul(x, x);
  } TS_ELSE {
    x = ts_zeros_like(x);
  } TS_END_IF;
  return x;
}

/* Loops over a tensor:
 *   def sum_even(items):
 *     s = 0
 *     for c in items:
 *       if c % 2 > 0:
 *         continue
 *       s += c
 *     return s
 *   sum_even(tf.constant([10, 12, 15, 20]))  ->  42
 * C AutoGraph has no `continue`: the rest of the body runs under the
 * negated test, as AutoGraph's own output does (ag__.not_(continue_)). */
static ts_tensor *sum_even(ts_call *c)
{
  ts_tensor *items = ts_arg(c, 0);
  ts_tensor *s = like(items, 0), *item = NULL;
  TS_FOR (item, TS_OVER(items), &s) {
    ts_tensor *skip = ts_greater(ts_mod(item, like(item, 2)), like(item, 0));
    TS_IF (ts_logical_not(skip), &s) {
      s = ts_add(s, item);
    } TS_END_IF;
  }
  return s;
}

/* i % k == 0 */
static ts_tensor *multiple_of(ts_tensor *i, double k)
{
  return ts_equal(ts_mod(i, like(i, k)), like(i, 0));
}

/* More complicated control flow:
 *   def fizzbuzz(n):
 *     for i in tf.range(n):
 *       if i % 3 == 0: ...
 *       elif i % 5 == 0: ...
 * (the rest is lost from the guide's text); the classic program:
 *   for i in tf.range(1, n + 1):
 *     if i % 15 == 0: tf.print('FizzBuzz')
 *     elif i % 3 == 0: tf.print('Fizz')
 *     elif i % 5 == 0: tf.print('Buzz')
 *     else: tf.print(i)
 *   fizzbuzz(tf.constant(15))  ->  1 2 Fizz 4 Buzz Fizz 7 8 Fizz Buzz 11 Fizz 13 14 FizzBuzz
 * It returns n (the guide's returns nothing). */
static ts_tensor *fizzbuzz(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0);
  ts_tensor *one = like(n, 1), *i = NULL;
  TS_FOR (i, TS_RANGE(one, ts_add(n, one), one)) {
    TS_IF (multiple_of(i, 15)) {
      ts_print("FizzBuzz");
    } TS_ELSE {
      TS_IF (multiple_of(i, 3)) {
        ts_print("Fizz");
      } TS_ELSE {
        TS_IF (multiple_of(i, 5)) {
          ts_print("Buzz");
        } TS_ELSE {
          ts_print(i);
        } TS_END_IF;
      } TS_END_IF;
    } TS_END_IF;
  }
  return n;
}

/* Keras and AutoGraph:
 *   class CustomModel(tf.keras.models.Model):
 *     def call(self, input_data):
 *       if tf.reduce_mean(input_data) > 0:
 *         return input_data
 *       else:
 *         return input_data // 2
 *   model(tf.constant([-2, -4]))  ->  [-1 -2] */
static ts_tensor *custom_model(ts_call *c)
{
  ts_tensor *input_data = ts_arg(c, 0);
  TS_IF (ts_greater(ts_reduce_mean(input_data, TS_ALL_AXES, false), like(input_data, 0)),
         &input_data) {
    /* return input_data as it is */
  } TS_ELSE {
    input_data = ts_floordiv(input_data, like(input_data, 2));
  } TS_END_IF;
  return input_data;
}

/* Side effects:
 *   v = tf.Variable(5)
 *   def find_next_odd():
 *     v.assign(v + 1)
 *     if v % 2 == 0:
 *       v.assign(v + 1)
 *   find_next_odd()  ->  v is 7
 * Like the guide's, it returns nothing (None). */
static ts_tensor *find_next_odd(ts_call *c)
{
  ts_tensor *v = globals.v;
  ts_assign(v, ts_add(ts_read(v), like(v, 1)));
  TS_IF (ts_equal(ts_mod(ts_read(v), like(v, 2)), like(v, 0))) {
    ts_assign(v, ts_add(ts_read(v), like(v, 1)));
  } TS_END_IF;
  return ts_none();
}

/* Batching:
 *   def square_if_positive_naive(x):
 *     result = tf.TensorArray(tf.int32, size=x.shape[0])
 *     for i in tf.range(x.shape[0]):
 *       if x[i] > 0:
 *         result = result.write(i, x[i] ** 2)
 *       else:
 *         result = result.write(i, x[i])
 *     return result.stack()
 *   square_if_positive_naive(tf.range(-5, 5))  ->  [-5 -4 -3 -2 -1  0  1  4  9 16] */
static ts_tensor *square_if_positive_naive(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  /* tf.shape(x)[0]: a tensor while tracing, so the loop is a While node
   * (TS_FOR unrolls over a constant range, as a Python range would) */
  ts_tensor *size = ts_gather(ts_shape(x), ts_scalar_i32(0), 0);
  ts_tensor *result = ts_tensor_array(TS_I32, size), *i = NULL;
  TS_FOR (i, TS_RANGE(like(size, 0), size, like(size, 1)), &result) {
    ts_tensor *x_i = ts_gather(x, i, 0);
    TS_IF (ts_greater(x_i, like(x_i, 0)), &result) {
      result = ts_tensor_array_write(result, i, ts_pow(x_i, like(x_i, 2)));
    } TS_ELSE {
      result = ts_tensor_array_write(result, i, x_i);
    } TS_END_IF;
  }
  return ts_tensor_array_stack(result);
}

/*   def square_if_positive_vectorized(x): return tf.where(x > 0, x ** 2, x)
 *   square_if_positive_vectorized(tf.range(-5, 5))  ->  [-5 -4 -3 -2 -1  0  1  4  9 16] */
static ts_tensor *square_if_positive_vectorized(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_where(ts_greater(x, like(x, 0)), ts_pow(x, like(x, 2)), x);
}

/* Retracing on shape:
 *   def f(x):
 *     print(x.shape, 'Tracing!')
 *     tf.print(x, 'Executing')
 *   f(tf.constant([1])); f(tf.constant([2])); f(tf.constant([1, 2])); f(tf.constant([3, 4]))
 *   ->  (1,) Tracing! / [1] Executing / [2] Executing / (2,) Tracing! / [1 2] Executing / [3 4] Executing
 * It returns x (the guide's returns nothing). */
static void print_shape(ts_shape shape) /* as Python prints a TensorShape: (1,), (2, 3), (None,) */
{
  fputs("(", stdout);
  for (int d = 0; d < shape.rank; d++) {
    fputs(d ? ", " : "", stdout);
    if (shape.dim[d] < 0)
      fputs("None", stdout);
    else
      printf("%lld", (long long)shape.dim[d]);
  }
  fputs(shape.rank == 1 ? ",)" : ")", stdout);
}

static ts_tensor *shape_retrace(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  if (!x)
    return NULL;
  print_shape(ts_tensor_shape(x));
  printf(" Tracing!\n");
  ts_print(x, "Executing");
  return x;
}

/* ---- "Introduction to graphs and tf.function" ---------------------------------- */

/* Using graphs:
 *   def function_to_get_faster(x, y, b):
 *     x = tf.matmul(x, y)
 *     x = x + b
 *     return x
 *   x1 = [[1.0, 2.0]], y1 = [[2.0], [3.0]], b1 = 4.0  ->  [[12.]] */
static ts_tensor *function_to_get_faster(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  x = ts_matmul(x, ts_arg(c, 1));
  x = ts_add(x, ts_arg(c, 2));
  return x;
}

/* tf.function traces the functions it calls:
 *   def inner_function(x, y, b):
 *     x = tf.matmul(x, y)
 *     x = x + b
 *     return x
 *   @tf.function
 *   def outer_function(x):
 *     y = tf.constant([[2.0], [3.0]])
 *     b = tf.constant(4.0)
 *     return inner_function(x, y, b)
 *   outer_function(tf.constant([[1.0, 2.0]]))  ->  [[12.]] */
static ts_tensor *inner_function(ts_call *c)
{
  return function_to_get_faster(c);
}

static ts_tensor *outer_function(ts_call *c)
{
  ts_tensor *y = ts_constant(TS_F32, TS_SHAPE(2, 1), (const float[]){ 2.0f, 3.0f });
  ts_tensor *b = ts_scalar_f32(4.0f);
  return TS_INVOKE(inner_function, ts_arg(c, 0), y, b);
}

/* Converting Python functions to graphs:
 *   def simple_relu(x):
 *     if tf.greater(x, 0):
 *       return x
 *     else:
 *       return 0
 *   tf_simple_relu(tf.constant(1)) -> 1;  tf_simple_relu(tf.constant(-1)) -> 0 */
static ts_tensor *simple_relu(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, like(x, 0)), &x) {
    /* return x as it is */
  } TS_ELSE {
    x = ts_zeros_like(x);
  } TS_END_IF;
  return x;
}

/* Flow control:
 *   def my_function(x):
 *     if tf.reduce_sum(x) <= 1:
 *       return x * x
 *     else:
 *       return x-1
 *   a_function(tf.constant(1.0)) -> 1.0;  a_function(tf.constant([5.0, 5.0])) -> [4. 4.] */
static ts_tensor *my_function(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_less_equal(ts_reduce_sum(x, TS_ALL_AXES, false), like(x, 1)), &x) {
    x = ts_mul(x, x);
  } TS_ELSE {
    x = ts_sub(x, like(x, 1));
  } TS_END_IF;
  return x;
}

/* Polymorphism: one tf.function, many graphs:
 *   @tf.function
 *   def my_relu(x):
 *     return tf.maximum(0., x)
 *   my_relu(tf.constant(5.5)) -> 5.5;  my_relu([1, -1]) -> [1. 0.];
 *   my_relu(tf.constant([3., -3.])) -> [3. 0.]   (three concrete functions) */
static ts_tensor *my_relu(ts_call *c)
{
  return ts_maximum(ts_scalar_f32(0.0f), ts_arg(c, 0));
}

/* Graph execution vs. eager execution:
 *   @tf.function
 *   def get_MSE(y_true, y_pred):
 *     print("Calculating MSE!")
 *     sq_diff = tf.pow(y_true - y_pred, 2)
 *     return tf.reduce_mean(sq_diff)
 *   [1 4 3 1 3] vs [0 3 8 0 6] (int32)  ->  7, printing "Calculating MSE!" once over
 *   three graph calls and on each call when functions run eagerly */
static ts_tensor *get_MSE(ts_call *c)
{
  printf("Calculating MSE!\n");
  ts_tensor *sq_diff = ts_sub(ts_arg(c, 0), ts_arg(c, 1));
  sq_diff = ts_pow(sq_diff, like(sq_diff, 2));
  return ts_reduce_mean(sq_diff, TS_ALL_AXES, false);
}

/* Non-strict execution:
 *   def unused_return_eager(x):
 *     tf.gather(x, [1])  # unused
 *     return x
 *   x = tf.constant([0.0]): eagerly the gather fails (index 1 is out of range);
 *   as a graph it is skipped, and the call returns [0.] */
static ts_tensor *unused_return(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_gather(x, ts_constant(TS_I32, TS_SHAPE(1), (const int32_t[]){ 1 }), 0); /* unused */
  return x;
}

/* Seeing the speed-up:
 *   def power(x, y):
 *     result = tf.eye(10, dtype=tf.dtypes.int32)
 *     for _ in range(y):
 *       result = tf.matmul(x, result)
 *     return result */
static ts_tensor *power(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  int64_t n = arg_count(c, 1, "power");
  if (!x || n < 0)
    return NULL;
  ts_tensor *result = ts_eye(ts_tensor_dtype(x), 10, 10);
  for (int64_t i = 0; i < n; i++)
    result = ts_matmul(x, result);
  return result;
}

/* When is a tf.function tracing?
 *   @tf.function
 *   def a_function_with_python_side_effect(x):
 *     print("Tracing!")  # An eager-only side effect.
 *     return x * x + tf.constant(2)
 *   tensor 2 -> 6 (prints "Tracing!"), tensor 3 -> 11 (no trace);
 *   host 2 -> 6 and host 3 -> 11, each printing "Tracing!" (a trace per host value) */
static ts_tensor *a_function_with_python_side_effect(ts_call *c)
{
  printf("Tracing!\n");
  ts_tensor *x = ts_arg(c, 0);
  return ts_add(ts_mul(x, x), ts_scalar_i32(2));
}

/* ---- "tf.function" (a tutorial on its side effects and polymorphism) ------------- */

/* Side effect 2, iterators:
 *   var = tf.Variable(0)
 *   @tf.function
 *   def side_effect(iterator):
 *     var.assign_add(next(iterator))
 *     tf.print("Value of variable:", var)
 *   iterator = iter([0, 1, 2, 3])
 *   side_effect(iterator) three times  ->  Value of variable: 0 / 0 / 0;
 *   without tf.function                ->  Value of variable: 0 / 1 / 3
 * The iterator is host state: it advances only when the C code runs.  Like
 * the guide's, it returns nothing (None). */
static ts_tensor *side_effect(ts_call *c)
{
  static const int32_t iterator[] = { 0, 1, 2, 3 };
  if (globals.next == (int)(sizeof iterator / sizeof iterator[0])) {
    ts_error_set(TS_ERR_OUT_OF_RANGE, TS_HERE, NULL, "side_effect: the iterator is exhausted");
    return NULL;
  }
  ts_tensor *var = globals.var;
  ts_assign_add(var, ts_scalar_i32(iterator[globals.next++]));
  ts_print("Value of variable:", ts_read(var));
  return ts_none();
}

/* Polymorphic functions:
 *   @tf.function
 *   def poly_func(a):
 *     print("Tracing with", a)
 *     return a
 *   poly_func(tf.constant(1)), (tf.constant(1.1)), (tf.constant("a"))
 *   ->  Tracing with Tensor("a:0", shape=(), dtype=int32) / ... float32 / ... string */
static ts_tensor *poly_func(ts_call *c)
{
  ts_tensor *a = ts_arg(c, 0);
  if (!a)
    return NULL;
  char *text = ts_tensor_to_string(a);
  printf("Tracing with %s\n", text);
  free(text);
  return a;
}

TS_MODULE("seeds",
  TS_EXPORT_WITH(TS_EXAMPLE("f32[3,3]:uniform", "f32[3,3]:uniform@2"), simple_nn_layer, x, y),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[3]=1,2,3"), linear_layer, x),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[3]=1,2,3"), deep_net, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[1,2]=1,2", "f32[2,1]=2,3", "f32[]=4"), function_to_get_faster, x, y, b),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[5]=1,4,3,1,3", "i32[5]=0,3,8,0,6"), get_MSE, y_true, y_pred),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[10]:range(-5)"), square_if_positive_vectorized, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[10,10]:uniform", "3"), power, x, n),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[20,28,28]:uniform", "10"), dense_chain, x, n),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[1,32,32,3]:uniform"), conv_layer, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[1,2]=1,2"), outer_function, x),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[]=2"), square_if_positive, x),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[4]=10,12,15,20"), sum_even, items),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[]=15"), fizzbuzz, n),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[2]=5,5"), my_function, x),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[]=1"), simple_relu, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[2]=1,-1"), my_relu, x),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[]=2"), a_function_with_python_side_effect, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[3]:ones"), shape_retrace, x),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[]=1"), poly_func, a),
  TS_EXPORT(find_next_odd),
  TS_EXPORT(side_effect),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[1]=0"), unused_return, x),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[2]=-2,-4"), custom_model, input_data),
  TS_EXPORT_WITH(TS_EXAMPLE("i32[10]:range(-5)"), square_if_positive_naive, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[20,28,28]:uniform"), sequential_model, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[60,28,28]:uniform"), dense_128_model, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros"), lstm_fn, input, state_h, state_c),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[1,32,32,100]:zeros"), conv_fn, image),
  TS_EXPORT_WITH(TS_EXAMPLE("200"), train, steps),
  TS_EXPORT_WITH(TS_EXAMPLE("20", "1e4", "adam"), train_rate, steps, learning_rate, optimizer),
  TS_EXPORT_WITH(TS_EXAMPLE("20", "1e4"), train_where_log, steps, learning_rate));
