// The kernel IR (kernel_ir.h): affine forms, verification, dimension collapsing, text and the
// reference evaluator.
#include "compiler/kernel_ir.h"

#include <cstring>

#include "tessera/errors.h"

namespace tessera::compiler::kir {

// ---------------------------------------------------------------- Affine

Affine Affine::constant(int64_t c, size_t rank) {
  Affine a;
  a.coeff.assign(rank, 0);
  a.offset = c;
  return a;
}

Affine Affine::dim(size_t d, size_t rank) {
  Affine a = constant(0, rank);
  a.coeff[d] = 1;
  return a;
}

Affine Affine::operator+(const Affine& o) const {
  Affine r = *this;
  for (size_t d = 0; d < r.coeff.size() && d < o.coeff.size(); ++d) r.coeff[d] += o.coeff[d];
  r.offset += o.offset;
  return r;
}

Affine Affine::scaled(int64_t k) const {
  Affine r = *this;
  for (int64_t& c : r.coeff) c *= k;
  r.offset *= k;
  return r;
}

bool Affine::is_constant() const {
  for (int64_t c : coeff)
    if (c != 0) return false;
  return true;
}

int64_t Affine::min_over(std::span<const int64_t> dims) const {
  int64_t v = offset;
  for (size_t d = 0; d < coeff.size() && d < dims.size(); ++d)
    if (coeff[d] < 0 && dims[d] > 0) v += coeff[d] * (dims[d] - 1);
  return v;
}

int64_t Affine::max_over(std::span<const int64_t> dims) const {
  int64_t v = offset;
  for (size_t d = 0; d < coeff.size() && d < dims.size(); ++d)
    if (coeff[d] > 0 && dims[d] > 0) v += coeff[d] * (dims[d] - 1);
  return v;
}

std::string Affine::str() const {
  std::string s;
  for (size_t d = 0; d < coeff.size(); ++d) {
    if (coeff[d] == 0) continue;
    if (!s.empty()) s += " + ";
    if (coeff[d] != 1) {
      s += std::to_string(coeff[d]);
      s += '*';
    }
    s += 'i';
    s += std::to_string(d);
  }
  if (offset != 0 || s.empty()) {
    if (!s.empty()) s += " + ";
    s += std::to_string(offset);
  }
  return s;
}

int64_t BufferType::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// ---------------------------------------------------------------- Kernel

int64_t Kernel::num_points() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

namespace {

[[noreturn]] void bad(const Kernel& k, const std::string& why) {
  throw_internal("compiler/kernel_ir", "kernel " + k.name + " is ill-formed: " + why);
}

}  // namespace

void Kernel::verify() const {
  const size_t rank = dims.size();
  for (int64_t d : dims)
    if (d < 0) bad(*this, "a negative dimension");
  const size_t n_in = loads.size() + indices.size();
  if (body.inputs.size() != n_in)
    bad(*this, "the body takes " + std::to_string(body.inputs.size()) + " inputs, the kernel has " +
                   std::to_string(loads.size()) + " loads and " + std::to_string(indices.size()) +
                   " index values");
  const int64_t points = num_points();
  for (size_t k = 0; k < loads.size(); ++k) {
    const Load& l = loads[k];
    if (l.param < 0 || static_cast<size_t>(l.param) >= inputs.size())
      bad(*this, "load " + std::to_string(k) + " reads a missing input");
    if (l.index.coeff.size() != rank) bad(*this, "load " + std::to_string(k) + " has a wrong rank");
    const BufferType& in = inputs[static_cast<size_t>(l.param)];
    if (body.inputs[k] != in.dtype) bad(*this, "load " + std::to_string(k) + " has a wrong dtype");
    if (points > 0 && (l.index.min_over(dims) < 0 || l.index.max_over(dims) >= in.size()))
      bad(*this, "load " + std::to_string(k) + " (" + l.index.str() + ") leaves input " +
                     std::to_string(l.param) + " of " + std::to_string(in.size()) + " elements");
  }
  for (size_t k = 0; k < indices.size(); ++k) {
    if (indices[k].value.coeff.size() != rank)
      bad(*this, "index value " + std::to_string(k) + " has a wrong rank");
    if (body.inputs[loads.size() + k] != DType::kInt64)
      bad(*this, "index value " + std::to_string(k) + " is not int64");
  }
  const std::vector<DType> out_types = body.output_types();
  if (out_types.size() != outputs.size())
    bad(*this, "the body has " + std::to_string(out_types.size()) + " outputs, the kernel " +
                   std::to_string(outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (out_types[k] != outputs[k].dtype)
      bad(*this, "output " + std::to_string(k) + " has a wrong dtype");
    if (outputs[k].size() != points)
      bad(*this, "output " + std::to_string(k) + " is not the size of the iteration space");
  }
}

Kernel Kernel::collapsed() const {
  // Dimension d merges into d+1 when every form has coeff[d] == coeff[d+1] * dims[d+1] (the
  // row-major stores always do). Unit dimensions drop first.
  Kernel k = *this;
  auto forms = [&k]() {
    std::vector<Affine*> f;
    for (Load& l : k.loads) f.push_back(&l.index);
    for (IndexValue& v : k.indices) f.push_back(&v.value);
    return f;
  };
  auto erase_dim = [&](size_t d) {
    k.dims.erase(k.dims.begin() + static_cast<std::ptrdiff_t>(d));
    for (Affine* a : forms()) a->coeff.erase(a->coeff.begin() + static_cast<std::ptrdiff_t>(d));
  };
  if (k.num_points() == 0) return k;
  for (size_t d = k.dims.size(); d-- > 0;)
    if (k.dims[d] == 1) erase_dim(d);
  for (size_t d = k.dims.size(); d-- > 1;) {
    // Try to merge d-1 into d.
    bool ok = true;
    for (Affine* a : forms())
      if (a->coeff[d - 1] != a->coeff[d] * k.dims[d]) ok = false;
    if (!ok) continue;
    k.dims[d] *= k.dims[d - 1];
    erase_dim(d - 1);
  }
  return k;
}

namespace {

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ',';
    r += std::to_string(s[i]);
  }
  r += ']';
  return r;
}

std::string buffer_types_str(const std::vector<BufferType>& bs) {
  std::string s;
  for (size_t i = 0; i < bs.size(); ++i) {
    if (i) s += ", ";
    s += dtype_short_name(bs[i].dtype);
    s += shape_str(bs[i].shape);
  }
  return s;
}

}  // namespace

std::string Kernel::signature_text() const {
  std::string s = "kernel dims=";
  s += shape_str(dims);
  s += " (";
  s += buffer_types_str(inputs);
  s += ") -> (";
  s += buffer_types_str(outputs);
  s += ") {\n";
  for (size_t k = 0; k < loads.size(); ++k) {
    s += "  in";
    s += std::to_string(k);
    s += " = load p";
    s += std::to_string(loads[k].param);
    s += '[';
    s += loads[k].index.str();
    s += "]\n";
  }
  for (size_t k = 0; k < indices.size(); ++k) {
    s += "  in";
    s += std::to_string(loads.size() + k);
    s += " = index ";
    s += indices[k].value.str();
    s += '\n';
  }
  std::string b = body.str();
  s += "  ";
  for (char c : b) {
    s += c;
    if (c == '\n') s += "  ";
  }
  if (!s.empty() && s.back() == ' ') s.resize(s.find_last_not_of(' ') + 1);
  if (!s.empty() && s.back() != '\n') s += '\n';
  s += '}';
  return s;
}

std::string Kernel::text() const {
  std::string s = name;
  s += ": ";
  s += signature_text();
  return s;
}

// ---------------------------------------------------------------- reference evaluator

scalar::ScalarValue read_element(const void* base, DType t, int64_t i) {
  const char* p = static_cast<const char*>(base) + static_cast<size_t>(i) * itemsize(t);
  auto get = [p]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case DType::kBool:
      return scalar::ScalarValue::of_int(get(uint8_t{}) != 0, t);
    case DType::kInt8:
      return scalar::ScalarValue::of_int(get(int8_t{}), t);
    case DType::kInt16:
      return scalar::ScalarValue::of_int(get(int16_t{}), t);
    case DType::kInt32:
      return scalar::ScalarValue::of_int(get(int32_t{}), t);
    case DType::kInt64:
      return scalar::ScalarValue::of_int(get(int64_t{}), t);
    case DType::kUInt8:
      return scalar::ScalarValue::of_int(get(uint8_t{}), t);
    case DType::kUInt16:
      return scalar::ScalarValue::of_int(get(uint16_t{}), t);
    case DType::kUInt32:
      return scalar::ScalarValue::of_int(get(uint32_t{}), t);
    case DType::kUInt64:
      return scalar::ScalarValue::of_int(static_cast<int64_t>(get(uint64_t{})), t);
    case DType::kFloat16:
      return scalar::ScalarValue::of_double(half_bits_to_float(get(uint16_t{})), t);
    case DType::kBFloat16:
      return scalar::ScalarValue::of_double(bfloat16_bits_to_float(get(uint16_t{})), t);
    case DType::kFloat32:
      return scalar::ScalarValue::of_double(get(float{}), t);
    case DType::kFloat64:
      return scalar::ScalarValue::of_double(get(double{}), t);
    default:
      throw_internal("compiler/kernel_ir", "evaluate: an extended dtype");
  }
}

namespace {

void write(void* base, DType t, int64_t i, const scalar::ScalarValue& v) {
  char* p = static_cast<char*>(base) + static_cast<size_t>(i) * itemsize(t);
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (t) {
    case DType::kBool:
      put(static_cast<uint8_t>(v.bits != 0));
      break;
    case DType::kInt8:
    case DType::kUInt8:
      put(static_cast<uint8_t>(v.bits));
      break;
    case DType::kInt16:
    case DType::kUInt16:
      put(static_cast<uint16_t>(v.bits));
      break;
    case DType::kInt32:
    case DType::kUInt32:
      put(static_cast<uint32_t>(v.bits));
      break;
    case DType::kInt64:
    case DType::kUInt64:
      put(v.bits);
      break;
    case DType::kFloat16:
      put(double_to_half_bits(v.as_double()));
      break;
    case DType::kBFloat16:
      put(double_to_bfloat16_bits(v.as_double()));
      break;
    case DType::kFloat32:
      put(static_cast<float>(v.as_double()));
      break;
    case DType::kFloat64:
      put(v.as_double());
      break;
    default:
      throw_internal("compiler/kernel_ir", "evaluate: an extended dtype");
  }
}

int64_t eval_affine(const Affine& a, const std::vector<int64_t>& idx) {
  int64_t v = a.offset;
  for (size_t d = 0; d < idx.size(); ++d) v += a.coeff[d] * idx[d];
  return v;
}

}  // namespace

void evaluate(const Kernel& k, std::span<const void* const> inputs,
              std::span<void* const> outputs) {
  k.verify();
  if (inputs.size() != k.inputs.size() || outputs.size() != k.outputs.size())
    throw_internal("compiler/kernel_ir", "evaluate: wrong number of buffers");
  const int64_t points = k.num_points();
  std::vector<int64_t> idx(k.dims.size(), 0);
  std::vector<scalar::ScalarValue> args(k.loads.size() + k.indices.size());
  for (int64_t p = 0; p < points; ++p) {
    for (size_t j = 0; j < k.loads.size(); ++j) {
      const Load& l = k.loads[j];
      args[j] =
          read_element(inputs[static_cast<size_t>(l.param)],
                       k.inputs[static_cast<size_t>(l.param)].dtype, eval_affine(l.index, idx));
    }
    for (size_t j = 0; j < k.indices.size(); ++j)
      args[k.loads.size() + j] =
          scalar::ScalarValue::of_int(eval_affine(k.indices[j].value, idx), DType::kInt64);
    const std::vector<scalar::ScalarValue> res = scalar::evaluate(k.body, args);
    for (size_t o = 0; o < res.size(); ++o) write(outputs[o], k.outputs[o].dtype, p, res[o]);
    // Next point, row-major.
    for (size_t d = k.dims.size(); d-- > 0;) {
      if (++idx[d] < k.dims[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace tessera::compiler::kir
