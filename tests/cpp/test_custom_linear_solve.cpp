// lax::custom_linear_solve and lax::custom_root (tessera/lax_linear_solve.h) on fresh random
// float64 systems: solutions against Gaussian elimination written here, derivatives (jvp, grad,
// forward mode with transpose_solve, jvp of grad) against central differences of that reference,
// vmap against a loop, jit against eager, has_aux, symmetric=True with a conjugate-gradient
// solve (a while loop: never differentiated), pytree b, JAX's errors; custom_root with Newton's
// method on a scalar and a vector function, its implicit derivatives against central differences
// of a root found here in plain doubles.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <utility>
#include <vector>

#include "tessera/jaxpr_parse.h"
#include "tessera/lax_linear_solve.h"
#include "tessera/linalg_solve.h"
#include "tessera/tessera.h"
#include "util/oracle.h"
#include "util/test_util.h"

namespace tessera {
namespace {

using testing::random_array;
using testing::to_doubles;
namespace tl = lax::linalg;
namespace tnp = tessera::numpy;
using Op = std::function<Array(const Array&)>;

// ---- float64 references ----

// x with a·x = b (a n×n row-major, b n×k), Gaussian elimination with partial pivoting.
std::vector<double> gauss(std::vector<double> a, std::vector<double> b, int64_t n, int64_t k) {
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[p * n + c])) p = r;
    for (int64_t j = 0; j < n; ++j) std::swap(a[c * n + j], a[p * n + j]);
    for (int64_t j = 0; j < k; ++j) std::swap(b[c * k + j], b[p * k + j]);
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / a[c * n + c];
      for (int64_t j = c; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
      for (int64_t j = 0; j < k; ++j) b[r * k + j] -= f * b[c * k + j];
    }
  }
  std::vector<double> x(static_cast<size_t>(n * k));
  for (int64_t r = n - 1; r >= 0; --r)
    for (int64_t j = 0; j < k; ++j) {
      double s = b[r * k + j];
      for (int64_t c = r + 1; c < n; ++c) s -= a[r * n + c] * x[c * k + j];
      x[r * k + j] = s / a[r * n + r];
    }
  return x;
}

Array f64(const std::vector<double>& v, const Shape& s) { return tnp::array(v, s); }

// A well-conditioned general n×n matrix and an SPD one.
Array random_general(int64_t n) {
  std::vector<double> v = to_doubles(random_array({n, n}, DType::kFloat64, -1.0, 1.0));
  for (int64_t i = 0; i < n; ++i) v[i * n + i] += (i % 2 ? -1.0 : 1.0) * (2.0 + 0.5 * n);
  return f64(v, {n, n});
}
Array random_spd(int64_t n) {
  std::vector<double> m = to_doubles(random_array({n, n}, DType::kFloat64, -1.0, 1.0)), a(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = i == j ? 1.0 : 0.0;
      for (int64_t k = 0; k < n; ++k) s += m[i * n + k] * m[j * n + k] / n;
      a[i * n + j] = s;
    }
  return f64(a, {n, n});
}

// ---- solvers used as `solve` ----

// LU factors of stop_gradient(a) and the one-hot permutation P (P·A = L·U).
struct Lu {
  Array lu, p;
};
Lu factor(const Array& a) {
  auto f = tl::lu(lax::stop_gradient(a));
  const int64_t n = a.shape()[0];
  Array iota = lax::broadcasted_iota(DType::kInt32, {n, n}, 1);
  Array hot = lax::eq(lax::broadcast_in_dim(std::get<2>(f), {n, n}, {0}), iota);
  return {std::get<0>(f), lax::convert_element_type(hot, a.dtype())};
}
// A⁻¹·r (trans: A⁻ᵀ·r) for r of shape (n,) or (n, k).
Array lu_apply(const Lu& f, const Array& r, bool trans) {
  const int64_t n = f.lu.shape()[0];
  Array x = r.ndim() == 1 ? lax::reshape(r, {n, 1}) : r;
  if (!trans) {
    x = tnp::matmul(f.p, x);
    x = tl::triangular_solve(f.lu, x, true, true, false, false, true);
    x = tl::triangular_solve(f.lu, x, true, false, false, false, false);
  } else {
    x = tl::triangular_solve(f.lu, x, true, false, true, false, false);
    x = tl::triangular_solve(f.lu, x, true, true, true, false, true);
    x = tnp::matmul(tnp::swapaxes(f.p, 0, 1), x);
  }
  return r.ndim() == 1 ? lax::reshape(x, {n}) : x;
}

// Conjugate gradients in a while loop (not differentiable in reverse mode): {x, iterations}.
std::pair<Array, Array> cg(const Op& mv, const Array& b) {
  Array zero = tnp::zeros_like(b);
  Array rs0 = tnp::sum(b * b);
  auto out = lax::while_loop(
      [](const auto& c) { return tnp::logical_and(std::get<3>(c) > 1e-28, std::get<4>(c) < 200); },
      [&mv](const auto& c) {
        const auto& [x, r, p, rs, k] = c;
        Array ap = mv(p);
        Array alpha = rs / tnp::sum(p * ap);
        Array r2 = r - alpha * ap;
        Array rs2 = tnp::sum(r2 * r2);
        return std::make_tuple(x + alpha * p, r2, r2 + (rs2 / rs) * p, rs2, k + 1);
      },
      std::make_tuple(zero, b, b, rs0, lax::convert_element_type(tnp::asarray(0), DType::kInt32)));
  return {std::get<0>(out), std::get<4>(out)};
}

// x = A⁻¹ b through custom_linear_solve with LU solves (transpose_solve when `with_t`).
Array lu_solve(const Array& a, const Array& b, bool with_t) {
  Lu f = factor(a);
  auto mv = [&a](const Array& x) { return tnp::matmul(a, x); };
  auto s = [&f](const Op&, const Array& r) { return lu_apply(f, r, false); };
  auto st = [&f](const Op&, const Array& r) { return lu_apply(f, r, true); };
  return with_t ? lax::custom_linear_solve(mv, b, s, st) : lax::custom_linear_solve(mv, b, s);
}
// The symmetric problem solved by CG (symmetric=True: transpose_solve = solve).
Array cg_solve(const Array& a, const Array& b) {
  auto mv = [&a](const Array& x) { return tnp::matmul(a, x); };
  auto s = [](const Op& m, const Array& r) { return cg(m, r).first; };
  return lax::custom_linear_solve(mv, b, s, lax::LinearSolveOptions{.symmetric = true});
}

std::vector<double> ref_solve(const Array& a, const Array& b) {
  const int64_t n = a.shape()[0], k = b.ndim() == 1 ? 1 : b.shape()[1];
  return gauss(to_doubles(a), to_doubles(b), n, k);
}

void expect_close(const Array& got, const std::vector<double>& want, double tol,
                  const std::string& what) {
  EXPECT_EQ(testing::compare(to_doubles(got), want, tol, tol), "") << what;
}

TEST(CustomLinearSolve, SolvesLikeGaussianElimination) {
  testing::X64Scope x64;
  for (int64_t n : {1, 3, 6}) {
    Array a = random_general(n), s = random_spd(n);
    Array b = random_array({n}, DType::kFloat64), bm = random_array({n, 2}, DType::kFloat64);
    expect_close(lu_solve(a, b, true), ref_solve(a, b), 1e-11, "lu n=" + std::to_string(n));
    expect_close(lu_solve(a, bm, false), ref_solve(a, bm), 1e-11, "lu matrix b");
    expect_close(cg_solve(s, b), ref_solve(s, b), 1e-9, "cg n=" + std::to_string(n));
    Array x = lu_solve(a, b, true);
    EXPECT_EQ(x.shape(), b.shape());
    EXPECT_EQ(x.dtype(), DType::kFloat64);
  }
}

// b a pytree of two leaves: the blocks of a 5×5 system.
TEST(CustomLinearSolve, PytreeB) {
  testing::X64Scope x64;
  Array a = random_general(5);
  std::pair<Array, Array> b{random_array({2}, DType::kFloat64), random_array({3}, DType::kFloat64)};
  using P = std::pair<Array, Array>;
  auto solve_blocks = [](const Array& aa, const P& bb) {
    Lu f = factor(aa);
    auto join = [](const P& v) { return tnp::concatenate({v.first, v.second}); };
    auto split = [](const Array& v) { return P{lax::slice(v, {0}, {2}), lax::slice(v, {2}, {5})}; };
    auto mv = [&](const P& v) { return split(tnp::matmul(aa, join(v))); };
    auto s = [&](const std::function<P(const P&)>&, const P& r) {
      return split(lu_apply(f, join(r), false));
    };
    auto st = [&](const std::function<P(const P&)>& vecmat, const P& r) {
      // One step of iterative refinement through vecmat (matvec's transpose): a wrong vecmat
      // leaves a residual that the gradient check below sees.
      P y = split(lu_apply(f, join(r), true));
      Array res = join(r) - join(vecmat(y));
      return split(join(y) + lu_apply(f, res, true));
    };
    return lax::custom_linear_solve(mv, bb, s, st);
  };
  P x = solve_blocks(a, b);
  std::vector<double> want = ref_solve(a, tnp::concatenate({b.first, b.second}));
  expect_close(tnp::concatenate({x.first, x.second}), want, 1e-11, "pytree solve");
  // grad through both leaves against central differences of the reference.
  Array w = random_array({5}, DType::kFloat64);
  auto loss = [&](const Array& aa) {
    P y = solve_blocks(aa, b);
    return tnp::sum(tnp::concatenate({y.first, y.second}) * w);
  };
  std::vector<double> g = to_doubles(grad(loss)(a)), av = to_doubles(a);
  const std::vector<double> bv = to_doubles(tnp::concatenate({b.first, b.second})),
                            wv = to_doubles(w);
  const double h = 1e-6;
  for (size_t i = 0; i < av.size(); ++i) {
    std::vector<double> ap = av, am = av;
    ap[i] += h;
    am[i] -= h;
    auto xp = gauss(ap, bv, 5, 1), xm = gauss(am, bv, 5, 1);
    double fd = 0;
    for (size_t j = 0; j < 5; ++j) fd += wv[j] * (xp[j] - xm[j]) / (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-6) << "d/da[" << i << "]";
  }
}

// Central differences of w·solve(a, b) (the Gaussian reference) in direction (da, db).
double fd_dir(const std::vector<double>& a, const std::vector<double>& b,
              const std::vector<double>& da, const std::vector<double>& db,
              const std::vector<double>& w, int64_t n, size_t out) {
  const double h = 1e-6;
  std::vector<double> ap = a, am = a, bp = b, bm = b;
  for (size_t i = 0; i < a.size(); ++i) ap[i] += h * da[i], am[i] -= h * da[i];
  for (size_t i = 0; i < b.size(); ++i) bp[i] += h * db[i], bm[i] -= h * db[i];
  auto xp = gauss(ap, bp, n, 1), xm = gauss(am, bm, n, 1);
  if (w.empty()) return (xp[out] - xm[out]) / (2 * h);
  double s = 0;
  for (int64_t j = 0; j < n; ++j) s += w[j] * (xp[j] - xm[j]) / (2 * h);
  return s;
}

TEST(CustomLinearSolve, JvpMatchesFiniteDifferences) {
  testing::X64Scope x64;
  const int64_t n = 4;
  for (int variant = 0; variant < 3; ++variant) {
    Array a = variant == 2 ? random_spd(n) : random_general(n);
    Array b = random_array({n}, DType::kFloat64);
    Array da = random_array({n, n}, DType::kFloat64), db = random_array({n}, DType::kFloat64);
    if (variant == 2) da = da + tnp::swapaxes(da, 0, 1);  // stays symmetric for CG
    auto f = [variant](const Array& aa, const Array& bb) {
      return variant == 2 ? cg_solve(aa, bb) : lu_solve(aa, bb, variant == 1);
    };
    auto [x, xt] = jvp(f, std::make_tuple(a, b), std::make_tuple(da, db));
    expect_close(x, ref_solve(a, b), 1e-9, "primal");
    std::vector<double> t = to_doubles(xt);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(t[i],
                  fd_dir(to_doubles(a), to_doubles(b), to_doubles(da), to_doubles(db), {}, n, i),
                  1e-6)
          << "variant " << variant << " i=" << i;
  }
}

TEST(CustomLinearSolve, GradMatchesFiniteDifferences) {
  testing::X64Scope x64;
  const int64_t n = 4;
  for (bool sym : {false, true}) {
    Array a = sym ? random_spd(n) : random_general(n);
    Array b = random_array({n}, DType::kFloat64), w = random_array({n}, DType::kFloat64);
    auto loss = [&](const Array& aa, const Array& bb) {
      return tnp::sum((sym ? cg_solve(aa, bb) : lu_solve(aa, bb, true)) * w);
    };
    auto [ga, gb] = grad(loss, argnums<0, 1>)(a, b);
    const std::vector<double> av = to_doubles(a), bv = to_doubles(b), wv = to_doubles(w);
    std::vector<double> gav = to_doubles(ga), gbv = to_doubles(gb);
    for (int64_t i = 0; i < n * n; ++i) {
      std::vector<double> e(n * n, 0.0);
      e[i] = 1.0;
      EXPECT_NEAR(gav[i], fd_dir(av, bv, e, std::vector<double>(n, 0.0), wv, n, 0), 1e-6)
          << (sym ? "cg" : "lu") << " d/da[" << i << "]";
    }
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> e(n, 0.0);
      e[i] = 1.0;
      EXPECT_NEAR(gbv[i], fd_dir(av, bv, std::vector<double>(n * n, 0.0), e, wv, n, 0), 1e-6)
          << (sym ? "cg" : "lu") << " d/db[" << i << "]";
    }
  }
}

TEST(CustomLinearSolve, ReverseModeNeedsTransposeSolve) {
  testing::X64Scope x64;
  Array a = random_general(3), b = random_array({3}, DType::kFloat64);
  auto loss = [&](const Array& bb) { return tnp::sum(lu_solve(a, bb, false)); };
  EXPECT_ERROR(TypeError, grad(loss)(b),
               "transpose_solve required for backwards mode automatic differentiation of "
               "custom_linear_solve");
  // Forward mode works without it.
  auto [y, yt] = jvp(loss, std::make_tuple(b), std::make_tuple(tnp::ones_like(b)));
  std::vector<double> x1 = ref_solve(a, tnp::ones_like(b));
  double s = 0;
  for (double v : x1) s += v;
  EXPECT_NEAR(yt.item<double>(), s, 1e-10);
}

// Forward over reverse: jvp of the gradient against central differences of the gradient.
TEST(CustomLinearSolve, JvpOfGrad) {
  testing::X64Scope x64;
  const int64_t n = 3;
  Array a = random_general(n), b = random_array({n}, DType::kFloat64);
  Array w = random_array({n}, DType::kFloat64), da = random_array({n, n}, DType::kFloat64);
  auto g = [&](const Array& aa) {
    return grad([&](const Array& x) { return tnp::sum(lu_solve(x, b, true) * w); })(aa);
  };
  auto [g0, gt] = jvp(g, std::make_tuple(a), std::make_tuple(da));
  const double h = 1e-5;
  std::vector<double> gp = to_doubles(g(a + h * da)), gm = to_doubles(g(a - h * da));
  std::vector<double> fd(gp.size());
  for (size_t i = 0; i < gp.size(); ++i) fd[i] = (gp[i] - gm[i]) / (2 * h);
  EXPECT_EQ(testing::compare(to_doubles(gt), fd, 1e-6, 1e-6), "");
  // Reverse over reverse agrees with forward over reverse: ⟨∇(⟨g, v⟩), da⟩ = ⟨jvp(g, da), v⟩.
  Array v = random_array({n, n}, DType::kFloat64);
  Array hv = grad([&](const Array& aa) { return tnp::sum(g(aa) * v); })(a);
  EXPECT_NEAR(tnp::sum(hv * da).item<double>(), tnp::sum(gt * v).item<double>(), 1e-9);
}

TEST(CustomLinearSolve, VmapMatchesLoop) {
  testing::X64Scope x64;
  const int64_t n = 3, B = 4;
  std::vector<Array> as, ss;
  for (int64_t i = 0; i < B; ++i) as.push_back(random_general(n)), ss.push_back(random_spd(n));
  Array a = tnp::stack(as), s = tnp::stack(ss), b = random_array({B, n}, DType::kFloat64);
  Array a0 = as[0], s0 = ss[0], b0 = lax::index_in_dim(b, 0, 0, false);
  auto lu_f = [](const Array& aa, const Array& bb) { return lu_solve(aa, bb, true); };
  auto cg_f = [](const Array& aa, const Array& bb) { return cg_solve(aa, bb); };
  for (int which = 0; which < 2; ++which) {
    const Array& A = which ? s : a;
    const Array& A0 = which ? s0 : a0;
    auto run = [&](VmapAxes axes, bool a_b, bool b_b) {
      auto f = [&](const Array& aa, const Array& bb) {
        return which ? cg_f(aa, bb) : lu_f(aa, bb);
      };
      Array got = vmap(f, axes)(a_b ? A : A0, b_b ? b : b0);
      std::vector<double> want;
      for (int64_t i = 0; i < B; ++i) {
        Array ai = a_b ? lax::index_in_dim(A, i, 0, false) : A0;
        Array bi = b_b ? lax::index_in_dim(b, i, 0, false) : b0;
        auto r = ref_solve(ai, bi);
        want.insert(want.end(), r.begin(), r.end());
      }
      EXPECT_EQ(testing::compare(to_doubles(got), want, 1e-9, 1e-9), "")
          << (which ? "cg" : "lu") << " a batched " << a_b << " b batched " << b_b;
    };
    run({0, 0}, true, true);
    run({0, std::nullopt}, true, false);
    run({std::nullopt, 0}, false, true);
  }
  // vmap of grad against a loop of grads.
  Array w = random_array({n}, DType::kFloat64);
  auto ga = [&](const Array& aa, const Array& bb) {
    return grad([&](const Array& x) { return tnp::sum(lu_solve(x, bb, true) * w); })(aa);
  };
  Array got = vmap(ga, {0, 0})(a, b);
  std::vector<Array> loop;
  for (int64_t i = 0; i < B; ++i)
    loop.push_back(ga(lax::index_in_dim(a, i, 0, false), lax::index_in_dim(b, i, 0, false)));
  EXPECT_EQ(testing::compare(to_doubles(got), to_doubles(tnp::stack(loop)), 1e-10, 1e-10), "");
  // jvp inside vmap with only the tangent batched.
  auto jf = [&](const Array& db) {
    return jvp([&](const Array& bb) { return lu_solve(a0, bb, false); }, std::make_tuple(b0),
               std::make_tuple(db))
        .second;
  };
  Array jt = vmap(jf, {0})(b);
  std::vector<double> want;
  for (int64_t i = 0; i < B; ++i) {
    auto r = ref_solve(a0, lax::index_in_dim(b, i, 0, false));
    want.insert(want.end(), r.begin(), r.end());
  }
  EXPECT_EQ(testing::compare(to_doubles(jt), want, 1e-10, 1e-10), "");
}

TEST(CustomLinearSolve, JitMatchesEager) {
  testing::X64Scope x64;
  const int64_t n = 4;
  Array a = random_general(n), s = random_spd(n), b = random_array({n}, DType::kFloat64);
  auto f = [](const Array& aa, const Array& bb) { return lu_solve(aa, bb, true); };
  auto c = [](const Array& aa, const Array& bb) { return cg_solve(aa, bb); };
  expect_close(jit(f)(a, b), ref_solve(a, b), 1e-11, "jit lu");
  expect_close(jit(c)(s, b), ref_solve(s, b), 1e-9, "jit cg");
  auto loss = [&](const Array& aa) { return tnp::sum(f(aa, b)); };
  EXPECT_EQ(
      testing::compare(to_doubles(jit(grad(loss))(a)), to_doubles(grad(loss)(a)), 1e-11, 1e-11),
      "");
  EXPECT_EQ(
      testing::compare(to_doubles(grad(jit(loss))(a)), to_doubles(grad(loss)(a)), 1e-11, 1e-11),
      "");
  // The staged program carries one custom_linear_solve equation with its jaxprs.
  std::ostringstream os;
  os << make_jaxpr(f)(a, b);
  EXPECT_NE(os.str().find("custom_linear_solve["), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("transpose_solve_jaxpr="), std::string::npos) << os.str();
  // The printed equation parses back to the same text (params: const_lengths and the jaxprs).
  ClosedJaxpr cj = make_jaxpr(f)(a, b);
  const std::string text = to_string(*cj.jaxpr);
  EXPECT_EQ(to_string(parse_jaxpr(text)), text);
  // Compiled, the equation is expanded into the solve jaxpr's equations (JAX's lower_fun of
  // the impl): the plan runs triangular solves, no custom_linear_solve thunk.
  const std::string plan = jit(f).lower(a, b).compile().as_text();
  EXPECT_EQ(plan.find("custom_linear_solve"), std::string::npos) << plan;
  EXPECT_NE(plan.find("triangular_solve"), std::string::npos) << plan;
}

TEST(CustomLinearSolve, HasAux) {
  testing::X64Scope x64;
  const int64_t n = 5;
  Array s = random_spd(n), b = random_array({n}, DType::kFloat64);
  auto f = [](const Array& aa, const Array& bb) {
    auto mv = [&aa](const Array& x) { return tnp::matmul(aa, x); };
    auto sv = [](const Op& m, const Array& r) { return cg(m, r); };
    return lax::custom_linear_solve(has_aux, mv, bb, sv,
                                    lax::LinearSolveOptions{.symmetric = true});
  };
  auto [x, iters] = f(s, b);
  expect_close(x, ref_solve(s, b), 1e-9, "has_aux solution");
  EXPECT_EQ(iters.dtype(), DType::kInt32);
  EXPECT_GE(iters.item<int64_t>(), 1);
  EXPECT_LE(iters.item<int64_t>(), 200);
  // grad through x; aux carries no derivative.
  Array w = random_array({n}, DType::kFloat64);
  Array gb = grad([&](const Array& bb) { return tnp::sum(f(s, bb).first * w); })(b);
  expect_close(gb, ref_solve(s, w), 1e-9, "grad with aux (Aᵀ⁻¹w, A symmetric)");
  auto [xj, aux_j] = jit(f)(s, b);
  expect_close(xj, ref_solve(s, b), 1e-9, "jit with aux");
  EXPECT_EQ(aux_j.item<int64_t>(), iters.item<int64_t>());
}

TEST(CustomLinearSolve, Errors) {
  testing::X64Scope x64;
  Array a = random_general(3), b = random_array({3}, DType::kFloat64);
  auto s = [](const Op&, const Array& r) { return r; };
  EXPECT_ERROR(ValueError,
               lax::custom_linear_solve(
                   [](const Array& x) {
                     return tnp::concatenate({x, x});
                   },
                   b, s),
               "matvec() output shapes must match b, got [(6,)] and [(3,)]");
  EXPECT_ERROR(
      TypeError,
      lax::custom_linear_solve(
          [](const Array& x) { return lax::convert_element_type(x, DType::kFloat32); }, b, s),
      "matvec() output dtypes must match b, got [float32] and [float64]");
  EXPECT_ERROR(ValueError,
               lax::custom_linear_solve([&a](const Array& x) { return tnp::matmul(a, x); }, b,
                                        [](const Op&, const Array& r) { return r[0]; }),
               "solve() output shapes must match b, got [()] and [(3,)]");
  using V = std::vector<Array>;
  EXPECT_ERROR(
      TypeError,
      lax::custom_linear_solve([](const V& v) { return V{v[0]}; }, V{b, b},
                               [](const std::function<V(const V&)>&, const V& r) { return r; }),
      "matvec() output pytree structure must match b, got PyTreeDef([*]) and "
      "PyTreeDef([*, *]).");
  // flat: a wrong leaf count.
  EXPECT_ERROR(TypeError,
               flat::custom_linear_solve(
                   [](std::span<const Array> x) {
                     return std::vector<Array>{x[0], x[0]};
                   },
                   std::vector<Array>{b},
                   [](const flat::Fun&, std::span<const Array> r) {
                     return std::vector<Array>(r.begin(), r.end());
                   }),
               "matvec() output pytree structure must match b");
}

// jnp.linalg.solve is JAX's _solve on custom_linear_solve: jvp, linearize, vjp and jvp of vjp
// on a batch of systems against central differences of the Gaussian reference.
TEST(LinalgSolveOnCustomLinearSolve, AllModes) {
  testing::X64Scope x64;
  const int64_t n = 3, B = 2;
  std::vector<Array> as;
  for (int64_t i = 0; i < B; ++i) as.push_back(random_general(n));
  Array a = tnp::stack(as), b = random_array({B, n, 2}, DType::kFloat64);
  Array da = random_array({B, n, n}, DType::kFloat64),
        db = random_array({B, n, 2}, DType::kFloat64);
  auto f = [](const Array& x, const Array& y) { return linalg::solve(x, y); };
  // Reference: per batch member, Gaussian elimination; central differences in (da, db).
  auto ref = [&](const std::vector<double>& av, const std::vector<double>& bv) {
    std::vector<double> out;
    for (int64_t i = 0; i < B; ++i) {
      std::vector<double> ai(av.begin() + i * n * n, av.begin() + (i + 1) * n * n);
      std::vector<double> bi(bv.begin() + i * n * 2, bv.begin() + (i + 1) * n * 2);
      auto x = gauss(ai, bi, n, 2);
      out.insert(out.end(), x.begin(), x.end());
    }
    return out;
  };
  const std::vector<double> av = to_doubles(a), bv = to_doubles(b), dav = to_doubles(da),
                            dbv = to_doubles(db);
  const double h = 1e-6;
  std::vector<double> ap = av, am = av, bp = bv, bm = bv;
  for (size_t i = 0; i < av.size(); ++i) ap[i] += h * dav[i], am[i] -= h * dav[i];
  for (size_t i = 0; i < bv.size(); ++i) bp[i] += h * dbv[i], bm[i] -= h * dbv[i];
  std::vector<double> xp = ref(ap, bp), xm = ref(am, bm), fdv(xp.size());
  for (size_t i = 0; i < xp.size(); ++i) fdv[i] = (xp[i] - xm[i]) / (2 * h);
  auto [x, xt] = jvp(f, std::make_tuple(a, b), std::make_tuple(da, db));
  expect_close(x, ref(av, bv), 1e-11, "solve");
  expect_close(xt, fdv, 1e-6, "jvp");
  auto [x2, f_jvp] = linearize(f, a, b);
  expect_close(f_jvp(da, db), fdv, 1e-6, "linearize");
  // vjp: ⟨ct, J·(da, db)⟩ = ⟨vjp(ct), (da, db)⟩.
  Array ct = random_array({B, n, 2}, DType::kFloat64);
  auto [y, pull] = vjp(f, a, b);
  auto [ca, cb] = pull(ct);
  double lhs = 0, rhs = tnp::sum(ca * da).item<double>() + tnp::sum(cb * db).item<double>();
  const std::vector<double> ctv = to_doubles(ct);
  for (size_t i = 0; i < ctv.size(); ++i) lhs += ctv[i] * fdv[i];
  EXPECT_NEAR(rhs, lhs, 1e-6);
  // jvp of vjp: the cotangent of a, differentiated in direction da, against central
  // differences of the pulled-back cotangent.
  auto pulled_a = [&](const Array& x0) { return std::get<0>(std::get<1>(vjp(f, x0, b))(ct)); };
  auto [pa, pat] = jvp(pulled_a, std::make_tuple(a), std::make_tuple(da));
  std::vector<double> pp = to_doubles(pulled_a(a + 1e-5 * da)),
                      pm = to_doubles(pulled_a(a - 1e-5 * da)), fd2(pp.size());
  for (size_t i = 0; i < pp.size(); ++i) fd2[i] = (pp[i] - pm[i]) / 2e-5;
  EXPECT_EQ(testing::compare(to_doubles(pat), fd2, 1e-6, 1e-6), "");
}

// ---- custom_root ----

// Newton's method on a scalar function, fixed iteration count.
Array newton_scalar(const Op& f, const Array& x0) {
  return lax::fori_loop(
      0, 30,
      [&f](const Array&, const Array& x) {
        Array d = jvp(f, std::make_tuple(x), std::make_tuple(tnp::ones_like(x))).second;
        return x - f(x) / d;
      },
      x0);
}

TEST(CustomRoot, ScalarNewtonAndImplicitGradient) {
  testing::X64Scope x64;
  for (int trial = 0; trial < 3; ++trial) {
    const double av = 0.5 + 3.0 * std::abs(to_doubles(random_array({}, DType::kFloat64))[0]);
    Array a = tnp::asarray(av);
    auto root = [](const Array& aa) {
      auto f = [&aa](const Array& x) { return x * x - aa; };
      auto sv = [](const Op& ff, const Array& x0) { return newton_scalar(ff, x0); };
      auto ts = [](const Op& g, const Array& y) { return y / g(tnp::ones_like(y)); };
      return lax::custom_root(f, tnp::asarray(1.0), sv, ts);
    };
    EXPECT_NEAR(root(a).item<double>(), std::sqrt(av), 1e-12);
    const double h = 1e-6, fd = (std::sqrt(av + h) - std::sqrt(av - h)) / (2 * h);
    EXPECT_NEAR(grad(root)(a).item<double>(), fd, 1e-7);
    auto [r, rt] = jvp(root, std::make_tuple(a), std::make_tuple(tnp::asarray(2.0)));
    EXPECT_NEAR(rt.item<double>(), 2.0 * fd, 1e-7);
    EXPECT_NEAR(jit(grad(root))(a).item<double>(), fd, 1e-7);
    // Second derivative (jvp of grad): d²√a/da² = −a^{−3/2}/4.
    auto [g1, g2] = jvp(grad(root), std::make_tuple(a), std::make_tuple(tnp::asarray(1.0)));
    EXPECT_NEAR(g2.item<double>(), -0.25 * std::pow(av, -1.5), 1e-7);
  }
  // vmap of the root and of its gradient against sqrt and 1/(2 sqrt).
  Array cs = tnp::array(std::vector<double>{0.7, 1.9, 3.3}, {3});
  std::vector<double> want, dwant;
  for (double v : {0.7, 1.9, 3.3})
    want.push_back(std::sqrt(v)), dwant.push_back(0.5 / std::sqrt(v));
  auto root = [](const Array& aa) {
    auto f = [&aa](const Array& x) { return x * x - aa; };
    auto sv = [](const Op& ff, const Array& x0) { return newton_scalar(ff, x0); };
    auto ts = [](const Op& g, const Array& y) { return y / g(tnp::ones_like(y)); };
    return lax::custom_root(f, tnp::asarray(1.0), sv, ts);
  };
  EXPECT_EQ(testing::compare(to_doubles(vmap(root)(cs)), want, 1e-12, 1e-12), "");
  EXPECT_EQ(testing::compare(to_doubles(vmap(grad(root))(cs)), dwant, 1e-9, 1e-9), "");
}

// f(x) = A·x + 0.1·x³ − c in plain doubles, and its root by Newton with Gaussian elimination.
std::vector<double> root_ref(const std::vector<double>& A, const std::vector<double>& c,
                             int64_t n) {
  std::vector<double> x(n, 0.0);
  for (int it = 0; it < 50; ++it) {
    std::vector<double> f(n), J = A;
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.1 * x[i] * x[i] * x[i] - c[i];
      for (int64_t j = 0; j < n; ++j) s += A[i * n + j] * x[j];
      f[i] = s;
      J[i * n + i] += 0.3 * x[i] * x[i];
    }
    std::vector<double> d = gauss(J, f, n, 1);
    for (int64_t i = 0; i < n; ++i) x[i] -= d[i];
  }
  return x;
}

TEST(CustomRoot, VectorNewtonAndImplicitGradient) {
  testing::X64Scope x64;
  const int64_t n = 3;
  Array A = random_spd(n) + 2.0 * tnp::eye(n, std::nullopt, 0, DType::kFloat64);
  Array c = random_array({n}, DType::kFloat64), w = random_array({n}, DType::kFloat64);
  auto root = [](const Array& aa, const Array& cc) {
    auto f = [&](const Array& x) { return tnp::matmul(aa, x) + 0.1 * x * x * x - cc; };
    auto sv = [](const Op& ff, const Array& x0) {
      return lax::fori_loop(
          0, 30,
          [&ff](const Array&, const Array& x) {
            Array J = jacfwd(ff)(x);
            return x - linalg::solve(J, ff(x));
          },
          x0);
    };
    auto ts = [](const Op& g, const Array& y) { return linalg::solve(jacfwd(g)(y), y); };
    return lax::custom_root(f, tnp::zeros_like(cc), sv, ts);
  };
  const std::vector<double> Av = to_doubles(A), cv = to_doubles(c), wv = to_doubles(w);
  expect_close(root(A, c), root_ref(Av, cv, n), 1e-11, "vector root");
  auto loss = [&](const Array& aa, const Array& cc) { return tnp::sum(root(aa, cc) * w); };
  auto [gA, gc] = grad(loss, argnums<0, 1>)(A, c);
  auto ref_loss = [&](const std::vector<double>& a2, const std::vector<double>& c2) {
    auto x = root_ref(a2, c2, n);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += wv[i] * x[i];
    return s;
  };
  const double h = 1e-6;
  std::vector<double> gAv = to_doubles(gA), gcv = to_doubles(gc);
  for (int64_t i = 0; i < n * n; ++i) {
    auto ap = Av, am = Av;
    ap[i] += h, am[i] -= h;
    EXPECT_NEAR(gAv[i], (ref_loss(ap, cv) - ref_loss(am, cv)) / (2 * h), 1e-6) << "dA " << i;
  }
  for (int64_t i = 0; i < n; ++i) {
    auto cp = cv, cm = cv;
    cp[i] += h, cm[i] -= h;
    EXPECT_NEAR(gcv[i], (ref_loss(Av, cp) - ref_loss(Av, cm)) / (2 * h), 1e-6) << "dc " << i;
  }
  // has_aux: the solve also returns the residual norm.
  auto root_aux = [](const Array& cc) {
    auto f = [&](const Array& x) { return x * x * x + x - cc; };
    auto sv = [](const Op& ff, const Array& x0) {
      Array x = newton_scalar(ff, x0);
      return std::make_pair(x, tnp::abs(ff(x)));
    };
    auto ts = [](const Op& g, const Array& y) { return y / g(tnp::ones_like(y)); };
    return lax::custom_root(has_aux, f, tnp::asarray(0.0), sv, ts);
  };
  auto [r, res] = root_aux(tnp::asarray(2.0));
  EXPECT_NEAR(r.item<double>(), 1.0, 1e-12);
  EXPECT_LT(res.item<double>(), 1e-12);
  // dx/dc = 1 / (3x² + 1) = 1/4 at x = 1.
  EXPECT_NEAR(
      grad([&](const Array& cc) { return root_aux(cc).first; })(tnp::asarray(2.0)).item<double>(),
      0.25, 1e-10);
}

}  // namespace
}  // namespace tessera
