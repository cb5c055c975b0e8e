// flat::scan, flat::fori_loop and flat::map (tessera/control_flow_flat.h) over the scan
// primitive (prims/scan.h).
#include <algorithm>
#include <optional>
#include <string>

#include "prims/scan.h"
#include "tessera/control_flow_flat.h"
#include "tessera/errors.h"
#include "tessera/lax.h"
#include "trace/jaxpr_transforms.h"
#include "trace/tangents.h"

namespace tessera::flat {

namespace {

// JAX's _check_carry_type text over flat carries (components named carry[k]).
std::string carry_type_message(std::span<const Aval> in, std::span<const Aval> out,
                               std::span<const CarryMismatch> diffs) {
  std::string msg =
      "scan body function carry input and carry output must have equal types (e.g. shapes and "
      "dtypes of arrays), but they differ:\n\n";
  for (size_t i = 0; i < diffs.size(); ++i) {
    const CarryMismatch& m = diffs[i];
    std::string d = std::string(diffs.size() == 1 ? "The" : "the") +
                    " input carry component carry[" + std::to_string(m.index) + "] has type " +
                    in[m.index].str() + " but the corresponding output carry component has type " +
                    out[m.index].str() + ", so " + (m.dtype ? "the dtypes do not match" : "") +
                    (m.dtype && m.shape ? " and also " : "") +
                    (m.shape ? "the shapes do not match" : "");
    if (diffs.size() == 1)
      msg += d + ".\n";
    else
      msg += "  * " + d + (i + 1 == diffs.size() ? ".\n" : ";\n");
  }
  return msg +
         "\nRevise the function so that all output types (e.g. shapes and dtypes) match the "
         "corresponding input types.";
}

std::string join_sizes(std::span<const Array> xs, const char* sep) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? sep : "") + std::to_string(xs[i].dim(0));
  return s;
}

std::vector<Aval> avals_of(std::span<const Array> xs) {
  std::vector<Aval> out;
  for (const Array& x : xs) out.push_back(x.aval());
  return out;
}

// The concrete value of x when known (a concrete array, or a tracer standing for one).
const Array* concrete_of(const Array& x) {
  if (x.is_concrete()) return &x;
  return x.tracer()->concrete_value();
}

void check_defined(std::span<const Array> xs, const char* op, const char* what) {
  for (size_t i = 0; i < xs.size(); ++i)
    if (!xs[i].defined())
      throw ValueError(op_message(op, std::string(what) + "[" + std::to_string(i) +
                                          "] is an empty Array handle (default-constructed)"));
}

}  // namespace

ScanResult scan(const Fun& f, std::span<const Array> init_in, std::span<const Array> xs,
                const ScanOptions& options) {
  check_defined(init_in, "scan", "init");
  check_defined(xs, "scan", "xs");
  for (const Array& x : xs)
    if (x.ndim() == 0)
      throw ValueError(op_message(
          "scan", "scan got value with no leading axis to scan over: " + x.aval().str() + "."));
  int64_t length = 0;
  if (options.length) {
    length = *options.length;
    if (length < 0)
      throw ValueError(
          op_message("scan", "scan got a negative `length` argument of " + std::to_string(length)));
    bool agree =
        std::all_of(xs.begin(), xs.end(), [&](const Array& x) { return x.dim(0) == length; });
    if (!agree)
      throw ValueError(op_message(
          "scan", "scan got `length` argument of " + std::to_string(length) +
                      " which disagrees with leading axis sizes [" + join_sizes(xs, ", ") + "]."));
  } else if (xs.empty()) {
    throw ValueError(
        op_message("scan", "scan got no values to scan over and `length` not provided."));
  } else {
    length = xs[0].dim(0);
    for (const Array& x : xs)
      if (x.dim(0) != length)
        throw ValueError(op_message("scan", "scan got values with different leading axis sizes: " +
                                                join_sizes(xs, ", ") + "."));
  }
  if (options.unroll < 0)
    throw ValueError(op_message("scan", "`unroll` must be a `bool` or a positive `int`, got " +
                                            std::to_string(options.unroll)));
  const size_t ncar = init_in.size();
  std::vector<Array> init(init_in.begin(), init_in.end());
  std::vector<Aval> x_avals;
  for (const Array& x : xs) {
    Aval a = x.aval();
    a.shape.erase(a.shape.begin());
    x_avals.push_back(std::move(a));
  }
  // The body as staged: a weak output for a strong carry of its type is made strong.
  Fun body = [&f, &init, ncar](std::span<const Array> v) {
    std::vector<Array> out = f(v);
    for (size_t k = 0; k < ncar && k < out.size(); ++k)
      if (out[k].defined() && carry_output_made_strong(init[k].aval(), out[k].aval()))
        out[k] = lax::convert_element_type(out[k], out[k].dtype());
    return out;
  };
  auto stage_body = [&] {
    std::vector<Aval> in = avals_of(init);
    in.insert(in.end(), x_avals.begin(), x_avals.end());
    trace::Staged st = trace::stage(body, in);
    if (st.jaxpr->outvars.size() < ncar)
      throw TypeError(op_message("scan", "the scan body function returned " +
                                             std::to_string(st.jaxpr->outvars.size()) +
                                             " outputs, fewer than the " + std::to_string(ncar) +
                                             " carry components it must return first"));
    return st;
  };
  auto carry_out = [&](const trace::Staged& st) {
    std::vector<Aval> out;
    for (size_t k = 0; k < ncar; ++k) out.push_back(atom_aval(st.jaxpr->outvars[k]));
    return out;
  };
  trace::Staged st = stage_body();
  // JAX's weak-type promotion (promoted_carry_dtype), then the body is staged again.
  bool restage = false;
  std::vector<Aval> outs = carry_out(st);
  for (size_t k = 0; k < ncar; ++k) {
    if (std::optional<DType> d = promoted_carry_dtype(init[k].aval(), outs[k])) {
      init[k] = lax::convert_element_type(init[k], *d);
      restage = true;
    }
  }
  if (restage) {
    st = stage_body();
    outs = carry_out(st);
  }
  const std::vector<Aval> ins = avals_of(init);
  const std::vector<CarryMismatch> diffs = carry_mismatches(ins, outs);
  if (!diffs.empty()) {
    if (options.on_carry_type_error) options.on_carry_type_error(ins, outs, diffs);
    throw TypeError(op_message("scan", carry_type_message(ins, outs, diffs)));
  }
  prims::ScanParams sp;
  sp.jaxpr = st.jaxpr;
  sp.num_consts = static_cast<int64_t>(st.consts.size());
  sp.num_carry = static_cast<int64_t>(ncar);
  sp.length = length;
  sp.reverse = options.reverse;
  sp.unroll = options.unroll == 0 ? std::max<int64_t>(length, 1) : options.unroll;
  std::vector<Array> operands = st.consts;
  operands.insert(operands.end(), init.begin(), init.end());
  operands.insert(operands.end(), xs.begin(), xs.end());
  std::vector<Array> results = prims::bind_scan(sp, operands);
  ScanResult r;
  r.carry.assign(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(ncar));
  r.ys.assign(results.begin() + static_cast<std::ptrdiff_t>(ncar), results.end());
  return r;
}

std::vector<Array> fori_loop(const Array& lower_in, const Array& upper_in, const Fun& body,
                             std::span<const Array> init, int64_t unroll) {
  if (!lower_in.defined() || !upper_in.defined())
    throw ValueError(op_message("fori_loop", "lower/upper is an empty Array handle"));
  for (const Array* b : {&lower_in, &upper_in})
    if (b->ndim() != 0 || !is_integer(b->dtype()))
      throw TypeError(op_message(
          "fori_loop", "lower and upper arguments to fori_loop must be integer scalars, got " +
                           lower_in.aval().str() + " and " + upper_in.aval().str()));
  Array lower = lower_in, upper = upper_in;
  if (lower.dtype() != upper.dtype() || lower.weak_type() || upper.weak_type()) {
    DType d = lower.dtype() == upper.dtype()
                  ? lower.dtype()
                  : (lower.weak_type()
                         ? upper.dtype()
                         : (upper.weak_type() ? lower.dtype()
                                              : promote_types(lower.dtype(), upper.dtype())));
    lower = lax::convert_element_type(lower, d);
    upper = lax::convert_element_type(upper, d);
  }
  const DType idt = lower.dtype();
  const Array* lo = concrete_of(lower);
  const Array* hi = concrete_of(upper);
  const size_t n = init.size();
  // Both shapes carry (i, carry...): the body advances i and applies body(i, carry...).
  Fun step = [body, idt, n](std::span<const Array> v) {
    std::vector<Array> out = body(v);
    if (out.size() != n)
      throw TypeError(op_message("fori_loop", "body_fun returned " + std::to_string(out.size()) +
                                                  " values for a carry of " + std::to_string(n)));
    out.insert(out.begin(), lax::add(v[0], prims::ad::scalar_const(1, idt)));
    return out;
  };
  std::vector<Array> carry{lower};
  carry.insert(carry.end(), init.begin(), init.end());
  std::vector<Array> outs;
  if (lo != nullptr && hi != nullptr) {
    int64_t len = std::max<int64_t>(
        0, static_cast<int64_t>(hi->item_double()) - static_cast<int64_t>(lo->item_double()));
    ScanOptions o;
    o.length = len;
    o.unroll = unroll;
    outs = scan(step, carry, {}, o).carry;
  } else {
    Fun cond = [upper](std::span<const Array> v) {
      return std::vector<Array>{lax::lt(v[0], upper)};
    };
    outs = while_loop(cond, step, carry);
  }
  outs.erase(outs.begin());
  return outs;
}

std::vector<Array> map(const Fun& f, std::span<const Array> xs, std::optional<int64_t> batch_size) {
  check_defined(xs, "map", "xs");
  for (const Array& x : xs)
    if (x.ndim() == 0)
      throw ValueError(op_message(
          "map", "map got value with no leading axis to scan over: " + x.aval().str() + "."));
  if (xs.empty()) throw ValueError(op_message("map", "scan got no values to scan over."));
  const int64_t n = xs[0].dim(0);
  for (const Array& x : xs)
    if (x.dim(0) != n)
      throw ValueError(op_message("map", "map got values with different leading axis sizes: " +
                                             join_sizes(xs, ", ") + "."));
  if (!batch_size) return scan(f, {}, xs).ys;
  if (*batch_size <= 0)
    throw ValueError(op_message(
        "map", "batch_size must be a positive integer, got " + std::to_string(*batch_size)));
  const int64_t b = *batch_size, num_batches = n / b, rem = n % b;
  auto all_zero = [](size_t k) { return std::vector<std::optional<int64_t>>(k, 0); };
  std::vector<std::optional<int64_t>> in_axes(xs.size(), 0);
  Fun vf = [f, in_axes, all_zero](std::span<const Array> v) {
    return vmap(f, v, in_axes, all_zero);
  };
  std::vector<Array> scan_xs, rem_xs;
  for (const Array& x : xs) {
    Shape s = x.shape();
    Shape bs{num_batches, b};
    bs.insert(bs.end(), s.begin() + 1, s.end());
    Array head = rem ? lax::slice_in_dim(x, 0, num_batches * b, 1, 0) : x;
    scan_xs.push_back(lax::reshape(head, bs));
    if (rem) rem_xs.push_back(lax::slice_in_dim(x, num_batches * b, n, 1, 0));
  }
  std::vector<Array> ys;
  ScanOptions o;
  o.length = num_batches;
  for (const Array& y : scan(vf, {}, scan_xs, o).ys) {
    Shape s{num_batches * b};
    s.insert(s.end(), y.shape().begin() + 2, y.shape().end());
    ys.push_back(lax::reshape(y, s));
  }
  if (rem) {
    std::vector<Array> ry = vf(rem_xs);
    for (size_t k = 0; k < ys.size(); ++k) ys[k] = lax::concatenate({ys[k], ry[k]}, 0);
  }
  return ys;
}

}  // namespace tessera::flat
