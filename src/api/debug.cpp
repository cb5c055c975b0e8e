// The callback API of tessera/debug.h: the flat cores binding debug_callback / pure_callback /
// io_callback, vmap_method names, and debug::print's formatting and output sink.
#include "tessera/debug.h"

#include <iostream>
#include <memory>
#include <mutex>
#include <string>

#include "prims/callbacks.h"
#include "tessera/primitive.h"

namespace tessera {

const char* vmap_method_name(VmapMethod m) {
  switch (m) {
    case VmapMethod::kSequential:
      return "sequential";
    case VmapMethod::kSequentialUnrolled:
      return "sequential_unrolled";
    case VmapMethod::kExpandDims:
      return "expand_dims";
    case VmapMethod::kBroadcastAll:
      return "broadcast_all";
    case VmapMethod::kLegacyVectorized:
      return "legacy_vectorized";
    case VmapMethod::kUnspecified:
      break;
  }
  return "None";
}

VmapMethod parse_vmap_method(std::string_view name) {
  for (VmapMethod m :
       {VmapMethod::kSequential, VmapMethod::kSequentialUnrolled, VmapMethod::kExpandDims,
        VmapMethod::kBroadcastAll, VmapMethod::kLegacyVectorized})
    if (name == vmap_method_name(m)) return m;
  if (name.empty() || name == "None") return VmapMethod::kUnspecified;
  throw ValueError(
      "vmap_method must be on of the allowed methods ['sequential', 'sequential_unrolled', "
      "'expand_dims', 'broadcast_all', 'legacy_vectorized', None], but got: " +
      std::string(name));
}

namespace flat {

void debug_callback(HostFun fn, std::span<const Array> args, bool ordered, std::string name) {
  if (!fn) throw TypeError("first argument to jax.debug.callback must be callable");
  tessera::bind(prims::debug_callback_p, args,
                prims::debug_callback_params(std::move(fn), std::move(name), ordered));
}

std::vector<Array> pure_callback(HostFun fn, std::vector<Aval> result_avals,
                                 std::span<const Array> args, VmapMethod vmap_method,
                                 std::string name) {
  if (!fn) throw TypeError("[pure_callback] the callback must be callable");
  return tessera::bind(prims::pure_callback_p, args,
                       prims::pure_callback_params(std::move(fn), std::move(name),
                                                   std::move(result_avals), vmap_method));
}

std::vector<Array> io_callback(HostFun fn, std::vector<Aval> result_avals,
                               std::span<const Array> args, bool ordered, std::string name) {
  if (!fn) throw TypeError("[io_callback] the callback must be callable");
  return tessera::bind(
      prims::io_callback_p, args,
      prims::io_callback_params(std::move(fn), std::move(name), std::move(result_avals), ordered));
}

}  // namespace flat

namespace debug {

namespace {

std::mutex g_sink_mu;
PrintSink& sink() {
  static PrintSink* s = new PrintSink;
  return *s;
}

void emit(const std::string& line) {
  PrintSink s;
  {
    std::lock_guard<std::mutex> lock(g_sink_mu);
    s = sink();
  }
  if (s) {
    s(line);
    return;
  }
  std::lock_guard<std::mutex> lock(g_sink_mu);
  std::cout << line << std::flush;
}

// One piece of a parsed format: literal text, or the index of an argument.
struct Piece {
  std::string text;
  int64_t arg = -1;
};

// Python's str.format syntax restricted to "{}" / "{N}" fields, with Python's messages.
std::vector<Piece> parse(std::string_view fmt, size_t num_args) {
  std::vector<Piece> out;
  std::string text;
  bool automatic = false, manual = false;
  int64_t next = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        text += '}';
        ++i;
        continue;
      }
      throw ValueError("[debug.print] Single '}' encountered in format string");
    }
    if (c != '{') {
      text += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      text += '{';
      ++i;
      continue;
    }
    size_t close = fmt.find('}', i + 1);
    if (close == std::string_view::npos)
      throw ValueError("[debug.print] expected '}' before end of string");
    std::string_view field = fmt.substr(i + 1, close - i - 1);
    int64_t index;
    if (field.empty()) {
      if (manual)
        throw ValueError(
            "[debug.print] cannot switch from manual field specification to automatic field "
            "numbering");
      automatic = true;
      index = next++;
    } else {
      for (char d : field)
        if (d < '0' || d > '9')
          throw ValueError("[debug.print] unsupported replacement field '{" + std::string(field) +
                           "}': the C++ debug::print takes '{}' or '{N}' fields (format "
                           "arrays yourself in a debug::callback for other formats)");
      if (automatic)
        throw ValueError(
            "[debug.print] cannot switch from automatic field numbering to manual field "
            "specification");
      manual = true;
      index = std::stoll(std::string(field));
    }
    if (index >= static_cast<int64_t>(num_args))
      throw IndexError("[debug.print] Replacement index " + std::to_string(index) +
                       " out of range for positional args tuple");
    out.push_back(Piece{std::move(text), -1});
    text.clear();
    out.push_back(Piece{"", index});
    i = close;
  }
  if (!text.empty()) out.push_back(Piece{std::move(text), -1});
  return out;
}

void check_used(const std::vector<Piece>& pieces, std::span<const Array> args) {
  std::vector<bool> used(args.size(), false);
  for (const Piece& p : pieces)
    if (p.arg >= 0) used[p.arg] = true;
  std::string unused;
  for (size_t i = 0; i < args.size(); ++i)
    if (!used[i]) unused += (unused.empty() ? "" : ", ") + args[i].aval().str();
  if (!unused.empty())
    throw ValueError("[debug.print] Unused positional arguments to `jax.debug.print`: [" + unused +
                     "]");
}

}  // namespace

PrintSink set_print_sink(PrintSink s) {
  std::lock_guard<std::mutex> lock(g_sink_mu);
  PrintSink prev = std::move(sink());
  sink() = std::move(s);
  return prev;
}

void check_format(std::string_view fmt, size_t num_args) {
  std::vector<Piece> pieces = parse(fmt, num_args);
  std::vector<bool> used(num_args, false);
  for (const Piece& p : pieces)
    if (p.arg >= 0) used[p.arg] = true;
  for (size_t i = 0; i < num_args; ++i)
    if (!used[i])
      throw ValueError(
          "[debug.print] Unused positional arguments to `jax.debug.print`: "
          "argument " +
          std::to_string(i));
}

std::string format(std::string_view fmt, std::span<const Array> args) {
  std::vector<Piece> pieces = parse(fmt, args.size());
  check_used(pieces, args);
  std::string out;
  for (const Piece& p : pieces) out += p.arg >= 0 ? args[p.arg].str() : p.text;
  return out;
}

void print_flat(std::string fmt, std::span<const Array> args, bool ordered) {
  // Checked now, as JAX checks when tracing, so a bad format fails where it is written.
  std::vector<Piece> pieces = parse(fmt, args.size());
  check_used(pieces, args);
  HostFun host = [pieces = std::move(pieces)](std::span<const Array> xs) {
    std::string line;
    for (const Piece& p : pieces) line += p.arg >= 0 ? xs[p.arg].str() : p.text;
    emit(line + "\n");
    return std::vector<Array>{};
  };
  flat::debug_callback(std::move(host), args, ordered);
}

}  // namespace debug

}  // namespace tessera
