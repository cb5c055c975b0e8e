// jax.random's gamma family, closed forms and linear-algebra samplers (random_dists.h) as
// composites over random.h's samplers and lax/numpy ops, JAX's jax/_src/random.py step by step:
// the same key splits in the same order, the same draws, the same float operations in the same
// order, so vmap, jit and grad reach them through the primitives' rules.
//
// gamma is JAX's _gamma_one (Marsaglia-Tsang, the boost Gamma(a) = Gamma(a + 1) U^(1/a) for
// a < 1) vmapped over split(key, prod(shape)) keys, each element one rejection while_loop (an
// inner while_loop draws normals until v = 1 + c x > 0); its derivative in `a` is JAX's implicit
// reparameterization gradient, lax::random_gamma_grad, attached by a custom JVP whose primal is
// the custom function itself (so higher derivatives use the rule too).
#include "tessera/random_dists.h"

#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "random_dists_util.h"
#include "tessera/custom_derivatives.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "tessera/lax_cond.h"
#include "tessera/linalg_solve.h"
#include "tessera/linalg_spectral.h"
#include "tessera/numpy_manip.h"
#include "tessera/numpy_reductions.h"
#include "tessera/numpy_ufuncs.h"
#include "tessera/random.h"
#include "tessera/transforms.h"

namespace tessera::random {

namespace np = tessera::numpy;

// ---------------------------------------------------------------- shared argument handling

namespace dists {

Array typed_key(const char* op, const Array& key) {
  if (!key.defined()) throw TypeError(std::string(op) + ": the key is an undefined Array");
  Array k = key;
  if (k.dtype() != DType::kKeyThreefry) {
    if (!is_integer(k.dtype()))
      throw TypeError(std::string(op) + ": unexpected PRNG key type " + k.aval().str() +
                      "; pass a key from random::key or random::PRNGKey");
    k = wrap_key_data(k);
  }
  if (k.ndim() != 0)
    throw TypeError(std::string(op) + " accepts a single key, but was given a key array of shape " +
                    shape_str(k.shape()) + " != (). Use jax.vmap for batching.");
  return k;
}

DType float_dtype(const char* op, std::optional<DType> dtype, const char* kind) {
  const DType d = dtype.value_or(default_float_dtype());
  if (!is_floating(d))
    throw ValueError(std::string("dtype argument to `") + op + "` must be a " + kind +
                     " dtype, got " + std::string(dtype_name(d)));
  return canonicalize_dtype(d);
}

DType int_dtype(const char* op, std::optional<DType> dtype) {
  const DType d = dtype.value_or(default_int_dtype());
  if (!is_integer(d))
    throw ValueError(std::string("dtype argument to `") + op + "` must be an int dtype, got " +
                     std::string(dtype_name(d)));
  return canonicalize_dtype(d);
}

Shape broadcast_all(std::initializer_list<Shape> shapes) {
  Shape r;
  try {
    for (const Shape& s : shapes) r = np::broadcast_shapes(r, s);
  } catch (const ValueError&) {
    std::string list;
    for (const Shape& s : shapes) list += (list.empty() ? "" : ", ") + shape_str(s);
    throw ValueError("Incompatible shapes for broadcasting: shapes=[" + list + "]");
  }
  return r;
}

void check_shape(const char* op, const Shape& shape, std::initializer_list<Shape> params) {
  if (params.size() == 0) return;
  std::vector<Shape> all{shape};
  all.insert(all.end(), params.begin(), params.end());
  Shape r;
  try {
    for (const Shape& s : all) r = np::broadcast_shapes(r, s);
  } catch (const ValueError&) {
    std::string list;
    for (const Shape& s : all) list += (list.empty() ? "" : ", ") + shape_str(s);
    throw ValueError("Incompatible shapes for broadcasting: shapes=[" + list + "]");
  }
  if (r != shape)
    throw ValueError(std::string(op) +
                     " parameter shapes must be broadcast-compatible with shape argument, and "
                     "the result of broadcasting the shapes must equal the shape argument, but "
                     "got result " +
                     shape_str(r) + " for shape argument " + shape_str(shape) + ".");
}

Array convert(const ArrayLike& x, DType d) { return lax::convert_element_type(x.array(), d); }

Array broadcast_to(const Array& x, const Shape& shape) {
  return x.shape() == shape ? x : np::broadcast_to(x, shape);
}

Array select(const Array& pred, const Array& on_true, const Array& on_false) {
  return lax::select_n(pred, {on_false, on_true});
}

Array cst(DType d, double v) { return np::scalar(v, d); }

Array float_of(const ArrayLike& x) {
  const Array& a = x.array();
  return is_floating(a.dtype()) ? a : lax::convert_element_type(a, default_float_dtype());
}

Array key_at(const Array& keys, int64_t i) { return lax::index_in_dim(keys, i, 0, false); }

}  // namespace dists

namespace {

using namespace dists;  // NOLINT(google-build-using-namespace): this file's own helpers

const Shape& shape_of(const ArrayLike& x) { return x.array().shape(); }

// ---------------------------------------------------------------- gamma

// One Marsaglia-Tsang sample for a scalar key and a scalar alpha (JAX's _gamma_one).
Array gamma_one(const Array& key, const Array& alpha_in, bool log_space) {
  const DType dt = alpha_in.dtype();
  const Array zero = cst(dt, 0), one = cst(dt, 1), minus_one = cst(dt, -1);
  const Array one_over_two = cst(dt, 0.5), one_over_three = cst(dt, 1.0 / 3.0);
  const Array squeeze_const = cst(dt, 0.0331);

  // alpha < 1 is boosted to alpha + 1: Gamma(alpha) ~ Gamma(alpha + 1) * U^(1 / alpha).
  const Array boost_mask = lax::ge(alpha_in, one);
  const Array alpha = select(boost_mask, alpha_in, lax::add(alpha_in, one));
  const Array d = lax::sub(alpha, one_over_three);
  const Array c = lax::div(one_over_three, lax::sqrt(d));

  using Kxvu = std::tuple<Array, Array, Array, Array>;  // key, X = x^2, V = v^3, u
  using Kxv = std::tuple<Array, Array, Array>;
  auto cond_fn = [&](const Kxvu& s) {
    const Array& x = std::get<1>(s);
    const Array& v = std::get<2>(s);
    const Array& u = std::get<3>(s);
    return lax::bitwise_and(
        lax::ge(u, lax::sub(one, lax::mul(squeeze_const, lax::mul(x, x)))),
        lax::ge(lax::log(u), lax::add(lax::mul(x, one_over_two),
                                      lax::mul(d, lax::add(lax::sub(one, v), lax::log(v))))));
  };
  auto next_kxv = [&](const Kxv& s) {
    const Array keys = split(std::get<0>(s));
    const Array x = normal(key_at(keys, 1), {}, dt);
    return Kxv{key_at(keys, 0), x, lax::add(one, lax::mul(x, c))};
  };
  auto body_fn = [&](const Kxvu& s) {
    const Array keys = split(std::get<0>(s), 3);
    auto [unused, x, v] =
        lax::while_loop([&](const Kxv& kxv) { return lax::le(std::get<2>(kxv), zero); }, next_kxv,
                        Kxv{key_at(keys, 1), zero, minus_one});
    (void)unused;
    const Array big_x = lax::mul(x, x);
    const Array big_v = lax::mul(lax::mul(v, v), v);
    const Array u = uniform(key_at(keys, 2), {}, dt);
    return Kxvu{key_at(keys, 0), big_x, big_v, u};
  };

  const Array keys = split(key);
  const Array subkey = key_at(keys, 1);
  // The initial state makes cond_fn true.
  const Array v =
      std::get<2>(lax::while_loop(cond_fn, body_fn, Kxvu{key_at(keys, 0), zero, one, cst(dt, 2)}));
  if (log_space) {
    const Array log_samples = lax::neg(exponential(subkey, {}, dt));
    const Array log_boost = select(lax::bitwise_or(boost_mask, lax::eq(log_samples, zero)), zero,
                                   lax::mul(log_samples, lax::div(one, alpha_in)));
    return lax::add(lax::add(lax::log(d), lax::log(v)), log_boost);
  }
  const Array samples = lax::sub(one, uniform(subkey, {}, dt));
  const Array boost = select(boost_mask, one, lax::pow(samples, lax::div(one, alpha_in)));
  return lax::mul(lax::mul(d, v), boost);
}

// JAX's _gamma_impl for one key: split into prod(a.shape) keys, one sampler each.
Array gamma_sample(const Array& key, const Array& a, bool log_space) {
  const Shape& shape = a.shape();
  const int64_t n = shape_size(shape);
  if (n == 0) return np::zeros(shape, a.dtype());
  const Array keys = split(key, n);
  const Array alphas = lax::reshape(a, {n});
  const Array samples = vmap([log_space](const Array& k, const Array& al) {
    return gamma_one(k, al, log_space);
  })(keys, alphas);
  return lax::reshape(samples, shape);
}

// d sample / d a: random_gamma_grad; in log space divided by the sample (exp(log x) can round
// to 0: the smallest normal stands in).
Array gamma_grad(const Array& sample, const Array& a, bool log_space) {
  if (!log_space) return lax::random_gamma_grad(a, sample);
  Array x = lax::exp(sample);
  const Array tiny = broadcast_to(cst(x.dtype(), finfo(x.dtype()).tiny), x.shape());
  x = select(lax::eq(x, np::zeros_like(x)), tiny, x);
  return lax::div(lax::random_gamma_grad(a, x), x);
}

Array gamma_p(const Array& key, const Array& a, bool log_space) {
  auto f = custom_jvp([log_space](const Array& k, const Array& al) {
             return gamma_sample(k, al, log_space);
           }).defjvp([log_space](const auto& primals, const auto& tangents) {
    const Array& k = std::get<0>(primals);
    const Array& al = std::get<1>(primals);
    const Array& a_dot = std::get<1>(tangents);
    Array out = gamma_p(k, al, log_space);
    Array t = lax::mul(a_dot, gamma_grad(out, al, log_space));
    return std::make_pair(std::move(out), std::move(t));
  });
  return f(key, a);
}

Array gamma_impl(const char* name, const Array& key, const ArrayLike& a,
                 const std::optional<Shape>& shape_in, DType dtype, bool log_space) {
  const Array k = typed_key(name, key);
  Shape shape;
  if (shape_in) {
    shape = *shape_in;
    check_shape("gamma", shape, {shape_of(a)});
  } else {
    shape = shape_of(a);
  }
  return gamma_p(k, broadcast_to(convert(a, dtype), shape), log_space);
}

// jax.nn.softmax over the last axis without its custom JVP (JAX's dirichlet calls the plain
// composite).
Array softmax_last(const Array& x) {
  const Array x_max = np::max(x, -1, true);
  const Array unnormalized = np::exp(x - lax::stop_gradient(x_max));
  return unnormalized / np::sum(unnormalized, -1, true);
}

// 1 / p for a scalar p (p's weak type kept, as Python's 1 / p).
Array inverse_of(const ArrayLike& p) { return np::divide(1, p); }

}  // namespace

// ---------------------------------------------------------------- gamma and its family

Array gamma(const Array& key, const ArrayLike& a, std::optional<Shape> shape,
            std::optional<DType> dtype) {
  const DType d = float_dtype("gamma", dtype);
  return gamma_impl("gamma", key, a, shape, d, false);
}

Array loggamma(const Array& key, const ArrayLike& a, std::optional<Shape> shape,
               std::optional<DType> dtype) {
  const DType d = float_dtype("gamma", dtype);  // JAX's text names `gamma` here too
  return gamma_impl("loggamma", key, a, shape, d, true);
}

Array beta(const Array& key, const ArrayLike& a, const ArrayLike& b, std::optional<Shape> shape,
           std::optional<DType> dtype) {
  const Array k = typed_key("beta", key);
  const DType d = float_dtype("beta", dtype);
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("beta", s, {shape_of(a), shape_of(b)});
  } else {
    s = broadcast_all({shape_of(a), shape_of(b)});
  }
  const Array keys = split(k);
  const Array aa = broadcast_to(convert(a, d), s);
  const Array bb = broadcast_to(convert(b, d), s);
  const Array log_gamma_a = gamma_impl("loggamma", key_at(keys, 0), aa, s, d, true);
  const Array log_gamma_b = gamma_impl("loggamma", key_at(keys, 1), bb, s, d, true);
  const Array log_max = lax::max(log_gamma_a, log_gamma_b);
  const Array gamma_a_scaled = lax::exp(log_gamma_a - log_max);
  const Array gamma_b_scaled = lax::exp(log_gamma_b - log_max);
  return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled);
}

Array dirichlet(const Array& key, const ArrayLike& alpha, std::optional<Shape> shape,
                std::optional<DType> dtype) {
  const Array k = typed_key("dirichlet", key);
  const DType d = float_dtype("dirichlet", dtype);
  const Shape& alpha_shape = shape_of(alpha);
  if (alpha_shape.empty())
    throw ValueError("dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0");
  const Shape batch(alpha_shape.begin(), alpha_shape.end() - 1);
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("dirichlet", s, {batch});
  } else {
    s = batch;
  }
  s.push_back(alpha_shape.back());
  return softmax_last(gamma_impl("loggamma", k, convert(alpha, d), s, d, true));
}

Array chisquare(const Array& key, const ArrayLike& df, std::optional<Shape> shape,
                std::optional<DType> dtype) {
  const Array k = typed_key("chisquare", key);
  const DType d = float_dtype("chisquare", dtype);
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("chisquare", s, {shape_of(df)});
  } else {
    s = shape_of(df);
  }
  const Array two = cst(d, 2);
  const Array half_df = np::divide(convert(df, d), two);
  const Array log_g = gamma_impl("loggamma", k, half_df, s, d, true);
  return lax::mul(lax::exp(log_g), broadcast_to(two, log_g.shape()));
}

Array t(const Array& key, const ArrayLike& df, const Shape& shape, std::optional<DType> dtype) {
  const Array k = typed_key("t", key);
  const DType d = float_dtype("t", dtype);
  check_shape("t", shape, {shape_of(df)});
  const Array dff = convert(df, d);
  const Array keys = split(k);
  const Array n = normal(key_at(keys, 0), shape, d);
  const Array half_df = np::divide(dff, cst(d, 2));
  const Array g = gamma_impl("gamma", key_at(keys, 1), half_df, shape, d, false);
  return n * np::sqrt(half_df / g);
}

Array f(const Array& key, const ArrayLike& dfnum, const ArrayLike& dfden,
        std::optional<Shape> shape, std::optional<DType> dtype) {
  const Array k = typed_key("f", key);
  const DType d = float_dtype("f", dtype);
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("f", s, {shape_of(dfden), shape_of(dfnum)});
  } else {
    s = broadcast_all({shape_of(dfden), shape_of(dfnum)});
  }
  const Array den = convert(dfden, d), num = convert(dfnum, d);
  const Array keys = split(k);
  const Array chi2_dfn = chisquare(key_at(keys, 1), num, s, d);
  const Array chi2_dfd = chisquare(key_at(keys, 0), den, s, d);
  return lax::div(lax::div(chi2_dfn, broadcast_to(num, s)),
                  lax::div(chi2_dfd, broadcast_to(den, s)));
}

Array generalized_normal(const Array& key, const ArrayLike& p, const Shape& shape,
                         std::optional<DType> dtype) {
  const Array k = typed_key("generalized_normal", key);
  const DType d = float_dtype("generalized_normal", dtype);
  const Array keys = split(k);
  const Array inv_p = inverse_of(p);
  const Array g = gamma_impl("gamma", key_at(keys, 0), inv_p, shape, d, false);
  const Array r = rademacher(key_at(keys, 1), shape, d);
  return r * np::power(g, inv_p);
}

Array ball(const Array& key, int64_t d, const ArrayLike& p, const Shape& shape,
           std::optional<DType> dtype) {
  const Array k = typed_key("ball", key);
  const DType dt = float_dtype("ball", dtype);
  if (d < 0) throw ValueError("ball: d must be nonnegative, got " + std::to_string(d));
  const Array keys = split(k);
  Shape gs = shape;
  gs.push_back(d);
  const Array g = generalized_normal(key_at(keys, 0), p, gs, dt);
  const Array e = exponential(key_at(keys, 1), shape, dt);
  const Array norm = np::power(np::sum(np::power(np::abs(g), p), -1) + e, inverse_of(p));
  return g / np::expand_dims(norm, -1);
}

// ---------------------------------------------------------------- closed forms

Array lognormal(const Array& key, const ArrayLike& sigma, std::optional<Shape> shape,
                std::optional<DType> dtype) {
  const Array k = typed_key("lognormal", key);
  const DType d = float_dtype("lognormal", dtype, "float or complex");
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("triangular", s, {shape_of(sigma)});  // (sic) JAX's text
  } else {
    s = shape_of(sigma);
  }
  const Array sg = broadcast_to(convert(sigma, d), s);
  return lax::exp(normal(k, s, d) * sg);
}

Array pareto(const Array& key, const ArrayLike& b, std::optional<Shape> shape,
             std::optional<DType> dtype) {
  const Array k = typed_key("pareto", key);
  const DType d = float_dtype("pareto", dtype);
  const Shape s = shape ? *shape : shape_of(b);  // JAX does not check b against shape here
  return lax::exp(exponential(k, s, d) / convert(b, d));
}

Array maxwell(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  const Array k = typed_key("maxwell", key);
  const DType d = float_dtype("maxwell", dtype);
  Shape s = shape;
  s.push_back(3);
  return np::linalg::norm(normal(k, s, d), {}, np::AxisArg(std::vector<int64_t>{-1}));
}

Array double_sided_maxwell(const Array& key, const ArrayLike& loc, const ArrayLike& scale,
                           const Shape& shape, std::optional<DType> dtype) {
  const Array k = typed_key("double_sided_maxwell", key);
  const DType d = float_dtype("double_sided_maxwell", dtype);
  const Shape params_shapes = broadcast_all({shape_of(loc), shape_of(scale)});
  Shape s = shape.empty() ? params_shapes : shape;
  s.insert(s.end(), params_shapes.begin(), params_shapes.end());
  const Array keys = split(k);
  const Array maxwell_rvs = maxwell(key_at(keys, 0), s, d);
  const Array random_sign = rademacher(key_at(keys, 1), s, d);
  return random_sign * maxwell_rvs * scale + loc;
}

Array triangular(const Array& key, const ArrayLike& left, const ArrayLike& mode,
                 const ArrayLike& right, std::optional<Shape> shape, std::optional<DType> dtype) {
  const Array k = typed_key("triangular", key);
  const DType d = float_dtype("triangular", dtype);
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("triangular", s, {shape_of(left), shape_of(mode), shape_of(right)});
  } else {
    s = broadcast_all({shape_of(left), shape_of(mode), shape_of(right)});
  }
  const Array l = broadcast_to(convert(left, d), s);
  const Array m = broadcast_to(convert(mode, d), s);
  const Array r = broadcast_to(convert(right, d), s);
  const Array fc = (m - l) / (r - l);
  const Array u = uniform(k, s, d);
  const Array out1 = l + lax::sqrt(u * (r - l) * (m - l));
  const Array out2 = r - lax::sqrt((1 - u) * (r - l) * (r - m));
  return select(u < fc, out1, out2);
}

Array wald(const Array& key, const ArrayLike& mean, std::optional<Shape> shape,
           std::optional<DType> dtype) {
  const Array k = typed_key("wald", key);
  const DType d = float_dtype("wald", dtype);
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("wald", s, {shape_of(mean)});
  } else {
    s = shape_of(mean);
  }
  const Array keys = split(k, 2);
  const Array mu = broadcast_to(convert(mean, d), s);
  const Array v = normal(key_at(keys, 0), s, d);
  const Array z = uniform(key_at(keys, 1), s, d);
  const Array y = lax::integer_pow(v, 2);
  const Array y_sq = lax::integer_pow(y, 2);
  const Array mean_sq = lax::integer_pow(mu, 2);
  const Array sqrt_term = lax::sqrt(4 * mu * y + mean_sq * y_sq);
  const Array x = mu + mean_sq * y / 2 - mu / 2 * sqrt_term;
  return select(lax::le(z, mu / (mu + x)), x, mean_sq / x);
}

// ---------------------------------------------------------------- linear algebra

Array multivariate_normal(const Array& key, const ArrayLike& mean, const ArrayLike& cov,
                          std::optional<Shape> shape, std::optional<DType> dtype,
                          const std::string& method) {
  const Array k = typed_key("multivariate_normal", key);
  if (method != "svd" && method != "eigh" && method != "cholesky")
    throw ValueError("method must be one of {'svd', 'eigh', 'cholesky'}");
  DType d;
  if (dtype) {
    d = float_dtype("multivariate_normal", dtype);
  } else {
    const DType md = mean.array().dtype();
    d = is_floating(md) ? canonicalize_dtype(md) : default_float_dtype();
  }
  const Array mu = convert(mean, d), cv = convert(cov, d);
  if (mu.ndim() < 1)
    throw ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == " +
                     std::to_string(mu.ndim()));
  const int64_t n = mu.shape().back();
  if (cv.ndim() < 2 || cv.shape()[cv.ndim() - 2] != n || cv.shape().back() != n)
    throw ValueError("multivariate_normal requires cov.shape == (..., n, n) for n=" +
                     std::to_string(n) + ", but got cov.shape == " + shape_str(cv.shape()) + ".");
  const Shape mean_batch(mu.shape().begin(), mu.shape().end() - 1);
  const Shape cov_batch(cv.shape().begin(), cv.shape().end() - 2);
  Shape s;
  if (shape) {
    s = *shape;
    check_shape("multivariate_normal", s, {mean_batch, cov_batch});
  } else {
    s = broadcast_all({mean_batch, cov_batch});
  }
  Array factor;
  if (method == "svd") {
    const std::vector<Array> usv = linalg::svd(cv);
    factor = usv[0] * np::sqrt(np::expand_dims(usv[1], -2));
  } else if (method == "eigh") {
    const linalg::EighResult wv = linalg::eigh(cv);
    factor = wv.eigenvectors * np::sqrt(np::expand_dims(wv.eigenvalues, -2));
  } else {
    factor = linalg::cholesky(cv);
  }
  Shape zs = s;
  zs.push_back(n);
  const Array z = normal(k, zs, d);
  return mu + np::einsum("...ij,...j->...i", {factor, z});
}

Array orthogonal(const Array& key, int64_t n, const Shape& shape, std::optional<DType> dtype,
                 std::optional<int64_t> m) {
  if (m && *m != n)
    throw NotImplementedError(
        "random.orthogonal: m != n (semi-orthogonal matrices) is not implemented in Tessera; "
        "pass m=None.");
  if (n < 0) throw ValueError("orthogonal: n must be nonnegative, got " + std::to_string(n));
  Shape s = shape;
  s.push_back(n);
  s.push_back(n);
  const std::vector<Array> qr = linalg::qr(normal(key, s, dtype));
  const Array diag = np::diagonal(qr[1], 0, -2, -1);
  return qr[0] * np::expand_dims(diag / np::abs(diag), -2);
}

}  // namespace tessera::random
