// Primitives, their static parameters, the registry, bind and the trace interface.
//
// Everything is a primitive applied through bind(). bind hands the primitive to the current
// (thread-local) trace; the eval trace at the bottom runs the eager implementation. Each
// primitive carries all of its rules, registered in its family's file under src/prims/.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/array.h"
#include "tessera/scalar_ir.h"

namespace tessera {

struct Jaxpr;  // the IR (jaxpr.h); params hold interned sub-jaxprs

// An opaque static parameter (a callable such as custom_lin's backward function): compared and
// hashed by identity, printed by str().
class OpaqueParam {
 public:
  virtual ~OpaqueParam() = default;
  virtual std::string str() const = 0;
};

// A tuple of sub-jaxprs (cond's branches), printed as JAX prints a tuple of jaxprs.
using JaxprList = std::vector<std::shared_ptr<const Jaxpr>>;

// ---- Structured params (param_types.h has JAX's enums and records built on these). ----
// An enum type: its JAX name and member names (values are the member indices). Defined once,
// statically, per enum; values point at their definition.
struct EnumDef {
  const char* name;                  // "GatherScatterMode"
  std::vector<const char*> members;  // {"CLIP", "FILL_OR_DROP", ...}
  bool prints_as_int = false;        // IntEnums (RoundingMethod) print their value, as JAX
};
struct ParamEnum {
  const EnumDef* def = nullptr;
  int32_t value = 0;
  bool operator==(const ParamEnum& o) const { return def == o.def && value == o.value; }
};
// A record type (JAX's NamedTuples of dimension numbers): its name and field names, and how
// it prints: "Name(field=value, ...)" by default, or a custom printer (dot_general's dimension
// numbers print as the nested tuple `(([1], [0]), ([], []))`) with its parser.
struct ParamTuple;
struct ParamRecord;
struct RecordDef;
// One static parameter value. Params never hold arrays: constants become constvars. Tuples and
// records are immutable and shared; they compare and hash by content (param_equal/param_hash).
using ParamValue =
    std::variant<bool, int64_t, double, DType, std::vector<int64_t>, std::string,
                 std::shared_ptr<const Jaxpr>, std::shared_ptr<const OpaqueParam>, JaxprList,
                 ParamEnum, std::shared_ptr<const ParamTuple>, std::shared_ptr<const ParamRecord>>;
// A nested tuple of values: `((1, 2), (0, 0))` (padding pairs), `(Precision.HIGH, None)`.
struct ParamTuple {
  std::vector<ParamValue> items;
};
struct RecordDef {
  const char* name;                 // "GatherDimensionNumbers"
  std::vector<const char*> fields;  // {"offset_dims", ...}
  // Custom text form (both set or neither): prints the record; parses the text back (nullopt
  // when the text is not of this form).
  std::string (*print)(const ParamRecord&) = nullptr;
  std::optional<std::shared_ptr<const ParamRecord>> (*parse)(std::string_view text) = nullptr;
};
struct ParamRecord {
  const RecordDef* def = nullptr;
  std::vector<ParamValue> fields;  // one per def->fields, in order
  // The field named `name`; InternalError when the record has none.
  const ParamValue& field(std::string_view name) const;
};
ParamValue make_tuple_param(std::vector<ParamValue> items);
ParamValue make_record_param(const RecordDef& def, std::vector<ParamValue> fields);
bool param_equal(const ParamValue& a, const ParamValue& b);
// Content hash, the same in every process: sub-jaxprs hash structurally (jaxpr.h), never by
// address (opaque callables are the one exception: they compare by identity, as in JAX).
size_t param_hash(const ParamValue& v);

// A small map of static parameters: hashable and comparable so that CSE and compile caches can
// key on it. Keys are kept sorted by name (set() inserts in place), so params built in any order
// compare and hash equal, and items() is the order the jaxpr printer prints (JAX's).
class Params {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<std::string, ParamValue>> kv);
  Params& set(std::string key, ParamValue v);
  bool has(std::string_view key) const;
  const ParamValue& at(std::string_view key) const;  // InternalError when missing
  template <class T>
  const T& get(std::string_view key) const {
    const ParamValue& v = at(key);
    if (auto* p = std::get_if<T>(&v)) return *p;
    bad_type(key);
  }
  int64_t get_int(std::string_view key) const { return get<int64_t>(key); }
  const std::vector<int64_t>& get_ints(std::string_view key) const {
    return get<std::vector<int64_t>>(key);
  }
  DType get_dtype(std::string_view key) const { return get<DType>(key); }
  bool get_bool(std::string_view key) const { return get<bool>(key); }
  std::optional<DType> get_optional_dtype(std::string_view key) const;
  // An enum param of type `def` (its member index); InternalError for another type.
  int32_t get_enum(std::string_view key, const EnumDef& def) const;
  // A record param of type `def`.
  const ParamRecord& get_record(std::string_view key, const RecordDef& def) const;

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const std::vector<std::pair<std::string, ParamValue>>& items() const { return items_; }
  size_t hash() const;
  bool operator==(const Params& o) const;
  // JAX's jaxpr style: "axes=(0, 1) new_dtype=float32"
  std::string str() const;

 private:
  [[noreturn]] void bad_type(std::string_view key) const;
  std::vector<std::pair<std::string, ParamValue>> items_;
};
std::string param_value_str(const ParamValue& v);

class Primitive;

// ---- Rule contexts. ----
// Where an implementation rule runs: the device its outputs are allocated on (every output's
// buffer is on `device`: kernels pass it to empty_array). Reserved for the CUDA and SPMD issues:
// the stream to enqueue on and the partition index of an SPMD program.
struct ExecContext {
  Device* device = nullptr;  // never null when a rule is called
  void* stream = nullptr;    // reserved (null: synchronous host execution)
  int64_t partition = -1;    // reserved (-1: not partitioned)
};
// The axis a batching rule maps over: its size, and its name when vmap was given axis_name
// (empty otherwise) — what a collective under vmap(..., axis_name=) reduces over.
struct BatchAxis {
  int64_t size = 0;
  std::string_view name;
};
// The named axes in scope (JAX's axis environment): vmap with an axis_name pushes its axis for
// the duration of the mapped function, later shard_map/pmap their mesh axes. Abstract evaluation
// reads it through axis_env() — as JAX's core.get_axis_env(), a dynamic scope rather than a rule
// argument, so that every abstract-eval site (bind, the staging trace, the jaxpr parser and
// verifier) sees the same axes without passing them along.
struct AxisEntry {
  std::string name;
  int64_t size = 0;
};
std::span<const AxisEntry> axis_env();
// The entry of `name`, innermost first; nullptr when no enclosing transformation binds it.
const AxisEntry* find_axis(std::string_view name);
class AxisEnvScope {
 public:
  explicit AxisEnvScope(AxisEntry e);
  ~AxisEnvScope();
  AxisEnvScope(const AxisEnvScope&) = delete;
  AxisEnvScope& operator=(const AxisEnvScope&) = delete;
};

// ---- Rule signatures. ----
// Shapes/dtypes of the outputs; all shape and dtype errors of the primitive are raised here.
// The axis names in scope are axis_env().
using AbstractEvalRule = std::function<std::vector<Aval>(std::span<const Aval>, const Params&)>;
// Eager implementation on concrete arrays; out_avals come from the abstract-eval rule. Every
// argument is on ctx.device (the eval trace moved uncommitted ones there).
using ImplRule = std::function<std::vector<Array>(const ExecContext& ctx, std::span<const Array>,
                                                  const Params&, std::span<const Aval> out_avals)>;
// JVP: (primals, tangents) -> (primal outs, tangent outs). An undefined Array tangent is a
// symbolic zero, in and out (integer/bool inputs always have zero tangents; non-differentiable
// outputs such as comparisons return undefined tangents). Rules compute with lax ops, so they
// work under any trace.
using JvpRule = std::function<std::pair<std::vector<Array>, std::vector<Array>>(
    std::span<const Array> primals, std::span<const Array> tangents, const Params&)>;
// Transpose of a primitive linear in some inputs (JAX's UndefinedPrimal convention):
// args[i] is an undefined Array exactly when input i is linear (its aval is arg_avals[i]); the
// other args are the concrete/traced non-linear operands. Cotangents are always defined.
// Returns one entry per input: the cotangent of each linear input (an undefined Array means
// a symbolic zero) and undefined for the non-linear inputs.
using TransposeRule =
    std::function<std::vector<Array>(std::span<const Array> cotangents, std::span<const Array> args,
                                     std::span<const Aval> arg_avals, const Params&)>;
// VJP override consulted by linearize (custom_vjp, fused kernels such as attention): the
// primal outputs, the residuals the backward function needs, and the backward function from
// (residuals, output cotangents) to one cotangent per input (undefined = zero). The residuals
// are passed explicitly, never captured, so that a linear jaxpr holding the backward function
// can be staged, transposed or run later (inside a loop body) with its residuals as operands.
using VjpBwdFn = std::function<std::vector<Array>(std::span<const Array> residuals,
                                                  std::span<const Array> cotangents)>;
struct VjpOverride {
  std::vector<Array> outs;
  std::vector<Array> residuals;
  VjpBwdFn bwd;
};
using VjpOverrideRule = std::function<VjpOverride(std::span<const Array> primals, const Params&)>;
// Batching: (the mapped axis, args, batch dims with -1 = unbatched) -> (outs, out batch dims).
using BatchRule = std::function<std::pair<std::vector<Array>, std::vector<int64_t>>(
    const BatchAxis& axis, std::span<const Array> args, std::span<const int64_t> batch_dims,
    const Params&)>;
// Linearize (JAX's primitive_linearizations): the same signature and calling convention as
// JvpRule under linearize — the rule runs with the partial-eval tangent trace current, so that
// binds on primals alone run now in the parent (the primal computation and its residuals) and
// binds that touch a tangent are staged into the linear jaxpr. Primitives carrying sub-jaxprs
// (scan, cond, checkpoint) use it to split their body into a known part that saves residuals and
// a linear part that reads them; without it, linearize uses the JVP rule.
using LinearizeRule = JvpRule;
// DCE of one equation given which of its outputs are used: the inputs the (possibly rewritten)
// equation still reads, and the equation to keep — nullopt deletes it. Primitives without the
// rule keep every input of an equation with a used output. Sub-jaxpr primitives (scan, while,
// cond) prune their bodies, carries and outputs with it.
struct JaxprEqn;
using DceRule = std::function<std::pair<std::vector<bool>, std::optional<JaxprEqn>>(
    const std::vector<bool>& used_outputs, const JaxprEqn& eqn)>;
struct Effect;
// The effects an equation of the primitive carries given its params (a loop's are its body's;
// a callback's depend on `ordered`). Added to the primitive's fixed effects when staging.
using EffectsRule = std::function<std::vector<Effect>(const Params&)>;
// Constant folding (JAX's pe.const_fold_rules): whether a staging trace evaluates this bind now,
// on the eval trace, instead of staging an equation — asked only when no operand is a tracer of
// that staging trace, and a rule says yes only when every operand is concrete. The result is a
// constant of the jaxpr (a literal when rank 0). convert_element_type folds a concrete scalar (a
// weakly typed C++ or Python constant meeting a typed array), so jaxprs read `2.0:f32[]`, as JAX's
// do.
using ConstFoldRule = std::function<bool(std::span<const Array> args, const Params&)>;

// ---- Signature: what a primitive accepts. ----
// Declared at registration (every registered primitive has one: a registry test checks it) and
// checked centrally — by bind before any trace or rule sees the call, and by the jaxpr parser and
// verifier before abstract evaluation — so that no rule reads an operand or a param that is not
// there, or a param of another type. Arity that depends on params (scan's operands follow its
// body, dynamic_slice takes one start index per operand dimension) is checked by the
// abstract-eval rule, which must check it before it indexes the operands.
enum class ParamKind : uint8_t {
  kBool,
  kInt,
  kFloat,
  kDType,
  kInts,
  kString,
  kJaxpr,
  kOpaque,
  kJaxprList,
  kOptionalDType,  // a DType, or absent / any non-DType value meaning None (get_optional_dtype)
  kAny,            // any value; the rule checks it
  kTuple,          // a ParamTuple (nested)
  kEnum,           // a ParamEnum of ParamSpec::enum_def
  kRecord,         // a ParamRecord of ParamSpec::record_def
};
const char* param_kind_name(ParamKind k);
struct ParamSpec {
  const char* name;
  ParamKind kind;
  bool required = true;
  const EnumDef* enum_def = nullptr;      // kEnum
  const RecordDef* record_def = nullptr;  // kRecord
};
struct Signature {
  static constexpr int32_t kVariadic = INT32_MAX;
  int32_t min_args = -1;  // -1: not declared (bind then skips the check; the registry test fails)
  int32_t max_args = -1;
  std::vector<ParamSpec> params;
  bool open_params = false;  // params beyond `params` are allowed (none are today)

  static Signature fixed(int32_t n, std::vector<ParamSpec> ps = {}) {
    return {n, n, std::move(ps), false};
  }
  static Signature at_least(int32_t n, std::vector<ParamSpec> ps = {}) {
    return {n, kVariadic, std::move(ps), false};
  }
  static Signature range(int32_t lo, int32_t hi, std::vector<ParamSpec> ps = {}) {
    return {lo, hi, std::move(ps), false};
  }
  bool declared() const { return min_args >= 0; }
};

// ---- Kind: what a compiler or backend may assume about a primitive without knowing it. ----
// Every registered primitive declares one (a registry test checks it).
//  kElementwise  each output element is a function of the operands' elements at the same index
//                (after lax broadcasting); has a scalar definition (below) or a written exemption.
//  kIndexMap     data movement: each output element is one operand element (or a constant) at an
//                index computed from the output index (broadcast_in_dim, reshape, transpose,
//                slice, dynamic_slice, pad, concatenate, rev, squeeze, iota, ...).
//  kReduction    combines elements along axes (reduce_*, argmax, cumulative scans).
//  kContraction  dot_general (and later convolution).
//  kLibraryCall  a call into a library kernel (linear algebra, sort, FFT).
//  kControlFlow  carries sub-jaxprs: scan, cond, while, checkpoint, custom_* calls.
//  kCollective   communicates across devices or a mapped axis (psum, all_gather, ...).
//  kEffectful    has effects or is opaque to the compiler (callbacks, custom_lin, name).
enum class PrimitiveKind : uint8_t {
  kUnset,
  kElementwise,
  kIndexMap,
  kReduction,
  kContraction,
  kLibraryCall,
  kControlFlow,
  kCollective,
  kEffectful,
};
const char* primitive_kind_name(PrimitiveKind k);

// ---- Scalar definition of an elementwise primitive (scalar_ir.h). ----
// Given the builder, one value per operand (16-bit float operands arrive converted to float32,
// unless `raw_16bit`) and the params, returns one value per output; the driver converts results
// back to the output dtypes abstract eval gives. Written once, used by the reference evaluator
// test, the compiler's fused kernels and every backend.
using ScalarDefRule = std::function<std::vector<scalar::Value>(
    scalar::Builder&, std::span<const scalar::Value> in, const Params&)>;
struct ScalarDef {
  ScalarDefRule rule;
  bool raw_16bit = false;  // the rule sees float16/bfloat16 operands as they are (bit ops)
  // Why an elementwise primitive has no rule (e.g. a bitcast that changes the width); empty
  // when it has one. A registry test fails when an elementwise primitive has neither.
  const char* exemption = nullptr;
};
// The program of p's scalar definition for operands of `in` and params (results typed as
// abstract eval says). InternalError when p has no rule.
scalar::Program scalar_program(const Primitive& p, std::span<const Aval> in, const Params& params);

// ---- Lowering per target. ----
// A lowering translates one equation into a target's IR. The core does not know the targets'
// IRs: a target defines its LoweringContext subclass and what a LoweredValue id names (a kernel
// IR value, an MLIR value). Rules are registered per open target name ("cpu", "cuda",
// "stablehlo"), as JAX's mlir.register_lowering(prim, rule, platform=...).
class LoweringContext {
 public:
  virtual ~LoweringContext() = default;
  virtual const std::string& target() const = 0;
};
struct LoweredValue {
  int64_t id = -1;
  Aval aval;
};
using LoweringRule = std::function<std::vector<LoweredValue>(
    LoweringContext&, std::span<const LoweredValue> args, const Params&)>;
// The primitive expressed with other primitives (JAX's lower_fun): a target without a rule of its
// own lowers the jaxpr this traces to.
using CompositeRule = std::function<std::vector<Array>(std::span<const Array> args, const Params&)>;

// How a target lowers a primitive, in order: the target's registered rule; the scalar definition
// (elementwise primitives: the target's fused-kernel emitter); the composite; a thunk that runs
// the eager implementation. kNone: the primitive cannot run on that target.
enum class LoweringSource : uint8_t { kRegistered, kScalarDef, kComposite, kEagerThunk, kNone };
const char* lowering_source_name(LoweringSource s);
struct LoweringChoice {
  LoweringSource source = LoweringSource::kNone;
  const LoweringRule* rule = nullptr;  // kRegistered only
};

// ---- Sharding rule (reserved). ----
// How a primitive's operands and results may be partitioned across devices (for the SPMD
// partitioner of the many-device issues): from the operands' shardings to the results'. The slot
// exists so those issues add rules without reopening the struct; no primitive sets it yet.
class Sharding;
using ShardingRule = std::function<std::vector<std::shared_ptr<const Sharding>>(
    std::span<const Aval> in, std::span<const std::shared_ptr<const Sharding>> in_shardings,
    const Params&)>;

class Primitive {
 public:
  explicit Primitive(std::string name, bool multiple_results = false)
      : name_(std::move(name)), multiple_results_(multiple_results) {}
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;

  const std::string& name() const { return name_; }
  // Whether the primitive returns a list of results (loops, cond, callbacks, reduce): bind then
  // accepts any number of abstract results and reconciles each result's weak type with them;
  // single-result primitives must produce exactly one.
  bool multiple_results() const { return multiple_results_; }

  // Operand count and params (see Signature); set in the family's registration function.
  Signature signature;
  AbstractEvalRule abstract_eval;
  ImplRule impl;
  JvpRule jvp;
  TransposeRule transpose;
  VjpOverrideRule vjp_override;
  BatchRule batch;
  LinearizeRule linearize;
  DceRule dce;
  EffectsRule effects;
  ConstFoldRule const_fold;
  PrimitiveKind kind = PrimitiveKind::kUnset;
  ScalarDef scalar;
  CompositeRule composite;
  ShardingRule sharding;  // reserved (see above)

  // Target name -> rule (register_lowering).
  std::vector<std::pair<std::string, LoweringRule>> lowerings;
  // The rule registered for `target`, nullptr when none.
  const LoweringRule* lowering(std::string_view target) const;
  // How `target` lowers the primitive (see LoweringSource).
  LoweringChoice choose_lowering(std::string_view target) const;

 private:
  std::string name_;
  bool multiple_results_;
};

// Throws TypeError "[name] ..." when nargs or params do not match p.signature: the count and
// the expected range, a missing required param, a param of the wrong kind, or an unknown param,
// each naming the op and what it expected.
void check_signature(const Primitive& p, size_t nargs, const Params& params);
// Abstract evaluation as every caller must run it: checks the signature, runs the rule, then
// checks the result — one aval for a single-result primitive, and every aval valid (check_aval:
// rank <= kMaxRank, no negative dimension, no element or byte count overflow), so that a rule
// that computed a size from huge user params can never hand a wrapped-around shape to a kernel.
std::vector<Aval> abstract_eval(const Primitive& p, std::span<const Aval> in, const Params& params);

// Registers (or replaces) p's lowering for a target.
void register_lowering(Primitive& p, std::string target, LoweringRule rule);

// ---- Registry. ----
// Calls every family's registration function once (idempotent, thread-safe). bind() calls it,
// so users rarely need to.
void register_all();
// Adds a primitive to the name index (family registration functions call this).
void register_primitive(Primitive& p);
// Finds a primitive by name; nullptr when unknown.
Primitive* find_primitive(std::string_view name);
std::vector<std::string> primitive_names();

// ---- Traces. ----
// A trace gives meaning to bind. Each has a unique tag and its parent (the trace that was
// current when it was created); its rules bind again with the parent current. A trace is alive
// while its transformation runs; tracers of an ended trace raise UnexpectedTracerError when used.
class Trace {
 public:
  explicit Trace(Trace* parent);
  virtual ~Trace() = default;
  uint64_t tag() const { return tag_; }
  Trace* parent() const { return parent_; }
  bool alive() const { return alive_; }
  void invalidate() { alive_ = false; }
  // "jvp", "linearize", "batch", "staging", "eval": for messages.
  virtual const char* kind() const { return "custom"; }
  virtual std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> args,
                                               const Params& params) = 0;

 private:
  uint64_t tag_;
  Trace* parent_;
  bool alive_ = true;
};

// The bottom trace: runs eager implementations on concrete values.
class EvalTrace final : public Trace {
 public:
  EvalTrace() : Trace(nullptr) {}
  const char* kind() const override { return "eval"; }
  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> args,
                                       const Params& params) override;
};

// The thread's current trace (the eval trace when no transformation is active).
Trace* current_trace();
// Installs a trace as current for a scope; restores the previous one on exit, also when an
// exception unwinds, so a failed transformation leaves the context clean.
class TraceScope {
 public:
  explicit TraceScope(Trace* t);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  Trace* prev_;
};

// The name of the primitive being executed on this thread (for out-of-memory messages).
const char* current_op_name();

// Applies a primitive through the current trace.
std::vector<Array> bind(const Primitive& p, std::span<const Array> args,
                        const Params& params = Params());
inline std::vector<Array> bind(const Primitive& p, std::initializer_list<Array> args,
                               const Params& params = Params()) {
  return bind(p, std::span<const Array>(args.begin(), args.size()), params);
}
// For single-result primitives.
Array bind1(const Primitive& p, std::span<const Array> args, const Params& params = Params());
inline Array bind1(const Primitive& p, std::initializer_list<Array> args,
                   const Params& params = Params()) {
  return bind1(p, std::span<const Array>(args.begin(), args.size()), params);
}

// Counts primitive applications at the eval trace (tests use it to check that reverse mode
// costs a constant factor). Reset with reset_eval_count().
int64_t eval_count();
void reset_eval_count();
// How many eager outputs an implementation rule allocated off its ExecContext's device (the eval
// trace moved them): always 0 unless a rule is wrong; the placement tests check it.
int64_t placement_fixups();

}  // namespace tessera
