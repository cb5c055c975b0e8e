// flat::custom_linear_solve and flat::custom_root (tessera/lax_linear_solve.h), after JAX's
// control_flow/solves.py: the user's functions are checked against b (JAX's messages), staged
// into const-free jaxprs (closure constants hoisted to leading operands) and bound as one
// custom_linear_solve primitive (src/prims/custom_linear_solve.cpp); custom_root is a
// custom_jvp call whose rule applies the implicit function theorem through the staged
// linearize-and-solve function, as JAX's _custom_root.
#include "tessera/lax_linear_solve.h"

#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "prims/custom_linear_solve.h"
#include "tessera/custom_derivatives_flat.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"
#include "trace/tangents.h"

namespace tessera::flat {

namespace {

using JaxprPtr = std::shared_ptr<const Jaxpr>;

std::vector<Aval> avals_of(const char* op, std::span<const Array> xs, const char* what) {
  std::vector<Aval> out;
  for (const Array& x : xs) {
    if (!x.defined())
      throw ValueError(op_message(op, std::string(what) + " holds an empty Array handle"));
    out.push_back(x.aval());
  }
  return out;
}

// JAX's list of np.shape values: "[(3,), (2, 2)]".
std::string shapes_str(std::span<const Aval> xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + shape_str(xs[i].shape);
  return s + "]";
}
std::string dtypes_str(std::span<const Aval> xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i)
    s += (i ? ", " : "") + std::string(dtype_name(xs[i].dtype));
  return s + "]";
}

// The output of user function `fn` checked against the `expected` leaves (JAX's _check_tree and
// _check_shapes; the dtypes must agree too): with has_aux, the first leaves are the result and
// the rest are aux.
std::vector<Array> checked(const char* op, std::vector<Array> out, const char* fn,
                           const char* expected, std::span<const Aval> want, bool has_aux) {
  if (out.size() < want.size() || (!has_aux && out.size() != want.size()))
    throw TypeError(op_message(
        op, std::string(fn) + "() output pytree structure must match " + expected + ", got " +
                std::to_string(out.size()) + " leaves and " + std::to_string(want.size()) +
                " leaves" + (has_aux ? " (then aux leaves, as has_aux=True)" : "") + "."));
  std::vector<Aval> got;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!out[i].defined())
      throw TypeError(op_message(op, std::string(fn) + "() returned an empty Array handle"));
    got.push_back(out[i].aval());
  }
  bool shapes = true, dtypes = true;
  for (size_t i = 0; i < want.size(); ++i) {
    shapes = shapes && got[i].shape == want[i].shape;
    dtypes = dtypes && got[i].dtype == want[i].dtype;
  }
  if (!shapes)
    throw ValueError(op_message(op, std::string(fn) + "() output shapes must match " + expected +
                                        ", got " + shapes_str(got) + " and " + shapes_str(want)));
  if (!dtypes)
    throw TypeError(
        op_message(op, std::string(fn) + "() output dtypes must match " + expected + ", got " +
                           dtypes_str(got) + " and " + dtypes_str(want) +
                           "; convert the output (lax.convert_element_type) or b to one dtype"));
  return out;
}

// ---- custom_root ----

struct RootJaxprs {
  JaxprPtr f, solve, l_and_s;
  std::array<size_t, 3> lengths{};  // the constants of f, solve, l_and_s
  size_t n = 0;                     // the guess's leaves
};

std::span<const Array> part(std::span<const Array> xs, const RootJaxprs& r, size_t k) {
  size_t off = 0;
  for (size_t i = 0; i < k; ++i) off += r.lengths[i];
  return xs.subspan(off, k < 3 ? r.lengths[k] : xs.size() - off);
}

std::vector<Array> root_call(const std::shared_ptr<const RootJaxprs>& r,
                             std::span<const Array> args) {
  Fun primal = [r](std::span<const Array> xs) {
    return eval_jaxpr(*r->solve, {}, trace::concat({part(xs, *r, 1), part(xs, *r, 3)}));
  };
  JvpFun jvp = [r](std::span<const Array> ps, std::span<const Array> ts) {
    std::vector<Array> sol = root_call(r, ps);
    std::vector<Array> sol_dot(sol.size());
    std::span<const Array> fc = part(ps, *r, 0), fc_dot = part(ts, *r, 0);
    bool any = false;
    for (size_t i = 0; i < fc.size(); ++i) any |= !trace::zero_tangent(fc[i], fc_dot[i]);
    if (!any) return std::make_pair(std::move(sol), std::move(sol_dot));
    // ∂u*(m)[v] = −(∂₁F(m, u*))⁻¹ [∂₀F(m, u*)[v]]
    std::vector<Array> p(fc.begin(), fc.end()), t(fc_dot.begin(), fc_dot.end());
    p.insert(p.end(), sol.begin(), sol.begin() + static_cast<std::ptrdiff_t>(r->n));
    t.resize(p.size());
    std::vector<Array> rhs = trace::jvp_fun(trace::as_fun(r->f), p, t).second;
    std::vector<Array> in(part(ps, *r, 2).begin(), part(ps, *r, 2).end());
    in.insert(in.end(), sol.begin(), sol.begin() + static_cast<std::ptrdiff_t>(r->n));
    for (size_t i = 0; i < r->n; ++i)
      in.push_back(trace::instantiate(i < rhs.size() ? rhs[i] : Array(),
                                      trace::tangent_aval(sol[i].aval())));
    std::vector<Array> d = eval_jaxpr(*r->l_and_s, {}, in);
    for (size_t i = 0; i < r->n; ++i) sol_dot[i] = lax::neg(d[i]);
    return std::make_pair(std::move(sol), std::move(sol_dot));
  };
  return custom_jvp_call(primal, jvp, args, /*symbolic_zeros=*/true);
}

}  // namespace

std::vector<Array> custom_linear_solve(const Fun& matvec, std::span<const Array> b,
                                       const SolveFun& solve, const SolveFun& transpose_solve,
                                       const LinearSolveOptions& options) {
  constexpr const char* op = "custom_linear_solve";
  if (!matvec || !solve) throw TypeError(op_message(op, "matvec and solve must be functions"));
  const std::vector<Aval> b_avals = avals_of(op, b, "b");
  const bool aux = options.has_aux;
  SolveFun tsolve = transpose_solve;
  if (!tsolve && options.symmetric) tsolve = solve;

  Fun mv = [&](std::span<const Array> xs) {
    return checked(op, matvec(xs), "matvec", "b", b_avals, false);
  };
  trace::Staged smv = trace::stage(mv, b_avals);
  Fun sv = [&](std::span<const Array> xs) {
    return checked(op, solve(matvec, xs), "solve", "b", b_avals, aux);
  };
  trace::Staged ssv = trace::stage(sv, b_avals);

  prims::LinearSolveJaxprs j;
  j.matvec = smv.jaxpr;
  j.solve = ssv.jaxpr;
  std::vector<Array> vm_consts, ts_consts;
  if (tsolve) {
    Fun vecmat;
    if (options.symmetric) {
      vecmat = matvec;
      j.vecmat = smv.jaxpr;
      vm_consts = smv.consts;
    } else {
      // matvec's jaxpr transposed in b (its constants stay non-linear operands): invars
      // [the transpose's own constants, matvec's constants, cotangents].
      std::vector<bool> linear(smv.consts.size(), false);
      linear.resize(smv.consts.size() + b.size(), true);
      trace::Staged svm = trace::transpose_jaxpr(*smv.jaxpr, linear);
      j.vecmat = svm.jaxpr;
      vm_consts = trace::concat({svm.consts, smv.consts});
      vecmat = [jv = svm.jaxpr, vm_consts](std::span<const Array> ct) {
        return eval_jaxpr(*jv, {}, trace::concat({vm_consts, ct}));
      };
    }
    Fun tv = [&](std::span<const Array> xs) {
      return checked(op, tsolve(vecmat, xs), "transpose_solve", "b", b_avals, aux);
    };
    trace::Staged sts = trace::stage(tv, b_avals);
    j.transpose_solve = sts.jaxpr;
    ts_consts = sts.consts;
  }
  std::array<int64_t, 4> lengths{
      static_cast<int64_t>(smv.consts.size()), static_cast<int64_t>(vm_consts.size()),
      static_cast<int64_t>(ssv.consts.size()), static_cast<int64_t>(ts_consts.size())};
  std::vector<Array> ops = trace::concat({smv.consts, vm_consts, ssv.consts, ts_consts, b});
  return tessera::bind(prims::custom_linear_solve, ops, prims::linear_solve_params(j, lengths));
}

std::vector<Array> custom_root(const Fun& f, std::span<const Array> initial_guess,
                               const SolveFun& solve, const SolveFun& tangent_solve, bool has_aux) {
  constexpr const char* op = "custom_root";
  if (!f || !solve || !tangent_solve)
    throw TypeError(op_message(op, "f, solve and tangent_solve must be functions"));
  const std::vector<Aval> g_avals = avals_of(op, initial_guess, "initial_guess");
  const size_t n = g_avals.size();
  Fun fc = [&](std::span<const Array> xs) {
    return checked(op, f(xs), "f", "initial_guess", g_avals, false);
  };
  trace::Staged sf = trace::stage(fc, g_avals);
  Fun sv = [&](std::span<const Array> xs) {
    return checked(op, solve(f, xs), "solve", "initial_guess", g_avals, has_aux);
  };
  trace::Staged ss = trace::stage(sv, g_avals);
  // linearize_and_solve(x, b) = tangent_solve(∂f(x), b).
  Fun ls = [&](std::span<const Array> xs) {
    std::vector<Array> x(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(n));
    Fun g = [&f, x](std::span<const Array> v) { return flat::jvp(f, x, v).second; };
    return checked(op, tangent_solve(g, xs.subspan(n)), "tangent_solve", "x", g_avals, false);
  };
  std::vector<Aval> ls_avals = g_avals;
  ls_avals.insert(ls_avals.end(), g_avals.begin(), g_avals.end());
  trace::Staged sl = trace::stage(ls, ls_avals);
  auto r = std::make_shared<RootJaxprs>();
  r->f = sf.jaxpr;
  r->solve = ss.jaxpr;
  r->l_and_s = sl.jaxpr;
  r->lengths = {sf.consts.size(), ss.consts.size(), sl.consts.size()};
  r->n = n;
  std::vector<Array> args = trace::concat({sf.consts, ss.consts, sl.consts, initial_guess});
  return root_call(r, args);
}

}  // namespace tessera::flat
