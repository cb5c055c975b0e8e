// The PRNG primitives (JAX's jax._src.prng): threefry2x32 and the key-array casts random_wrap /
// random_unwrap. Everything else of jax.random (seeding, split, fold_in, bits, distributions) is
// a composite of these and lax ops in src/api/random.cpp, so every transformation reaches it
// through these rules.
//
// threefry2x32(k0, k1, x0, x1) -> (y0, y1): the Threefry-2x32 block cipher with 20 rounds
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), elementwise on uint32
// operands under lax broadcasting (JAX's primitive broadcasts its keys against the counts the
// same way). Rotations 13,15,26,6 / 17,29,16,24; key schedule (k0, k1, k0^k1^0x1BD11BDA), one
// injection every 4 rounds with the injection count added to the second word. Eager kernel:
// runs of the broadcast plan over the runtime pool (each element computed once: the same bits
// for any thread count). Kind elementwise with a scalar definition (add, xor, shifts and or on
// uint32), so a backend emits it in fused kernels. AD: uint32 outputs, so zero (float0)
// tangents, as JAX's. Batching: lax broadcasting (JAX's defbroadcasting).
//
// random_wrap(uint32[..., 2]) -> key<fry>[...] and random_unwrap(key<fry>[...]) ->
// uint32[..., 2]: the same bytes seen as keys or as words (row-major, a key is 2 x uint32), so
// the eager results share the operand's buffer. Kind library call: a key array never enters a
// fused kernel (key dtypes are not kernel IR types), the compiler runs them as thunks. Zero
// tangents; batching as JAX's (wrap needs the batch axis off the trailing word axis).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "prims/ad_util.h"
#include "prims/batch_util.h"
#include "prims/broadcast_iter.h"
#include "prims/elementwise_util.h"
#include "prims/kernel_util.h"
#include "prims/prims.h"
#include "runtime/thread_pool.h"

namespace tessera::prims {

Primitive threefry2x32_p("threefry2x32", /*multiple_results=*/true);
Primitive random_wrap_p("random_wrap");
Primitive random_unwrap_p("random_unwrap");

namespace {

using ad::JvpOut;
using batching::BatchOut;

constexpr uint32_t kParity = 0x1BD11BDA;
constexpr std::array<std::array<unsigned, 4>, 2> kRotations = {{{13, 15, 26, 6}, {17, 29, 16, 24}}};

inline uint32_t rotl(uint32_t v, unsigned r) { return (v << r) | (v >> (32 - r)); }

// One block: 5 groups of 4 rounds, a key injection after each.
inline void threefry_block(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ kParity};
  x0 += ks[0];
  x1 += ks[1];
  for (unsigned g = 0; g < 5; ++g) {
    for (unsigned r : kRotations[g % 2]) {
      x0 += x1;
      x1 = rotl(x1, r) ^ x0;
    }
    x0 += ks[(g + 1) % 3];
    x1 += ks[(g + 2) % 3] + (g + 1);
  }
}

// ---------------------------------------------------------------- threefry2x32

constexpr const char* kOp = "threefry2x32";

std::vector<Aval> threefry_abstract(std::span<const Aval> in, const Params&) {
  kernels::check_num_operands(kOp, in, 4);
  for (const Aval& a : in) {
    if (a.dtype != DType::kUInt32)
      throw TypeError(op_message(kOp, "Arguments to threefry2x32 must have uint32 type, got " +
                                          kernels::avals_list(in) +
                                          "; convert the keys and counts with "
                                          "convert_element_type(x, uint32)."));
  }
  const Shape s = kernels::broadcast_shapes(kOp, in);
  const Aval out{s, DType::kUInt32, false};
  return {out, out};
}

std::vector<Array> threefry_impl(const ExecContext& ctx, std::span<const Array> args, const Params&,
                                 std::span<const Aval> outs) {
  Array y0 = empty_array(outs[0], kOp, ctx.device);
  Array y1 = empty_array(outs[1], kOp, ctx.device);
  const auto plan = kernels::make_plan<4>(
      outs[0].shape, {&args[0].shape(), &args[1].shape(), &args[2].shape(), &args[3].shape()});
  if (plan.size == 0) return {y0, y1};
  std::array<const uint32_t*, 4> in;
  for (int k = 0; k < 4; ++k) in[k] = static_cast<const uint32_t*>(args[k].raw_data(kOp));
  auto* o0 = static_cast<uint32_t*>(y0.buffer()->data());
  auto* o1 = static_cast<uint32_t*>(y1.buffer()->data());
  // Runs of stride 0 or 1 per operand; each output element is computed once, by one run.
  kernels::parallel_runs<4>(plan, [&](int64_t oo, const std::array<int64_t, 4>& off, int64_t len) {
    const uint32_t* a = in[0] + off[0];
    const uint32_t* b = in[1] + off[1];
    const uint32_t* c = in[2] + off[2];
    const uint32_t* d = in[3] + off[3];
    const int64_t sa = plan.inner[0], sb = plan.inner[1], sc = plan.inner[2], sd = plan.inner[3];
    for (int64_t i = 0; i < len; ++i) {
      uint32_t x0 = c[i * sc], x1 = d[i * sd];
      threefry_block(a[i * sa], b[i * sb], x0, x1);
      o0[oo + i] = x0;
      o1[oo + i] = x1;
    }
  });
  return {y0, y1};
}

JvpOut threefry_jvp(std::span<const Array> primals, std::span<const Array>, const Params& p) {
  return {tessera::bind(threefry2x32_p, primals, p), {Array(), Array()}};
}

BatchOut threefry_batch(const BatchAxis&, std::span<const Array> args,
                        std::span<const int64_t> dims, const Params& p) {
  batching::Aligned a = batching::align_broadcasting(args, dims);
  return {tessera::bind(threefry2x32_p, a.args, p), {a.out_dim, a.out_dim}};
}

// The scalar definition: the same 20 rounds on uint32 values of the kernel IR.
std::vector<scalar::Value> threefry_scalar(scalar::Builder& b, std::span<const scalar::Value> in,
                                           const Params&) {
  using scalar::Op;
  using scalar::Value;
  const DType u32 = DType::kUInt32;
  auto k = [&](uint32_t v) { return b.constant_bits(v, u32); };
  auto rot = [&](Value v, unsigned r) {
    return b.bit_or(b.binary(Op::kShl, v, k(r)), b.binary(Op::kShrLogical, v, k(32 - r)));
  };
  const Value ks[3] = {in[0], in[1],
                       b.binary(Op::kXor, b.binary(Op::kXor, in[0], in[1]), k(kParity))};
  Value x0 = b.add(in[2], ks[0]);
  Value x1 = b.add(in[3], ks[1]);
  for (unsigned g = 0; g < 5; ++g) {
    for (unsigned r : kRotations[g % 2]) {
      x0 = b.add(x0, x1);
      x1 = b.binary(Op::kXor, rot(x1, r), x0);
    }
    x0 = b.add(x0, ks[(g + 1) % 3]);
    x1 = b.add(x1, b.add(ks[(g + 2) % 3], k(g + 1)));
  }
  return {x0, x1};
}

// ---------------------------------------------------------------- random_wrap / random_unwrap

std::vector<Aval> wrap_abstract(std::span<const Aval> in, const Params&) {
  kernels::check_num_operands("random_wrap", in, 1);
  const Aval& x = in[0];
  if (x.ndim() < 1)
    throw TypeError(op_message("random_wrap",
                               "JAX encountered invalid PRNG key data: expected key_data.ndim >= "
                               "1; got ndim=0. Key data of threefry2x32 is uint32[..., 2]."));
  if (x.shape.back() != 2)
    throw TypeError(
        op_message("random_wrap",
                   "JAX encountered invalid PRNG key data: expected key_data.shape to end "
                   "with (2,); got shape=" +
                       shape_str(x.shape) + " for impl=threefry2x32."));
  if (x.dtype != DType::kUInt32)
    throw TypeError(op_message("random_wrap",
                               "JAX encountered invalid PRNG key data: expected key_data.dtype = "
                               "uint32; got dtype=" +
                                   std::string(dtype_name(x.dtype)) +
                                   ". Convert it with convert_element_type(x, uint32)."));
  Shape s(x.shape.begin(), x.shape.end() - 1);
  return {Aval{s, DType::kKeyThreefry, false}};
}

std::vector<Aval> unwrap_abstract(std::span<const Aval> in, const Params&) {
  kernels::check_num_operands("random_unwrap", in, 1);
  const Aval& x = in[0];
  if (x.dtype != DType::kKeyThreefry)
    throw TypeError(op_message("random_unwrap",
                               "random_unwrap takes key array operand, got "
                               "keys.dtype=" +
                                   std::string(dtype_name(x.dtype)) +
                                   "; pass a key from random.key or "
                                   "random.wrap_key_data."));
  Shape s = x.shape;
  s.push_back(2);
  return {Aval{s, DType::kUInt32, false}};
}

// Both casts reinterpret the operand's bytes: the result shares its buffer.
std::vector<Array> cast_impl(std::span<const Array> args, std::span<const Aval> outs) {
  return {Array(outs[0], args[0].buffer("random_wrap"))};
}

BatchOut wrap_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                    const Params& p) {
  Array x = args[0];
  int64_t d = dims[0];
  if (d == x.ndim() - 1) {  // the word axis must stay last
    x = batching::move_axis(x, d, 0);
    d = 0;
  }
  return {{tessera::bind1(random_wrap_p, {x}, p)}, {d}};
}

BatchOut unwrap_batch(const BatchAxis&, std::span<const Array> args, std::span<const int64_t> dims,
                      const Params& p) {
  return {{tessera::bind1(random_unwrap_p, {args[0]}, p)}, {dims[0]}};
}

}  // namespace

void register_random_bits() {
  threefry2x32_p.kind = PrimitiveKind::kElementwise;
  threefry2x32_p.signature = Signature::fixed(4);
  threefry2x32_p.abstract_eval = threefry_abstract;
  threefry2x32_p.impl = threefry_impl;
  threefry2x32_p.jvp = threefry_jvp;
  threefry2x32_p.batch = threefry_batch;
  threefry2x32_p.scalar = {threefry_scalar};
  register_primitive(threefry2x32_p);

  for (Primitive* p : {&random_wrap_p, &random_unwrap_p}) {
    p->kind = PrimitiveKind::kLibraryCall;
    p->signature = Signature::fixed(1);
    p->impl = [](const ExecContext&, std::span<const Array> args, const Params&,
                 std::span<const Aval> outs) { return cast_impl(args, outs); };
    p->jvp = ad::zero_jvp(*p);
  }
  random_wrap_p.abstract_eval = wrap_abstract;
  random_unwrap_p.abstract_eval = unwrap_abstract;
  random_wrap_p.batch = wrap_batch;
  random_unwrap_p.batch = unwrap_batch;
  register_primitive(random_wrap_p);
  register_primitive(random_unwrap_p);
}

}  // namespace tessera::prims
