// jax.config over the C++ flag registry (tessera/config.h).
#include "py_common.h"
#include "tessera/config.h"

namespace tessera::python {
namespace {

py::object to_py(const config::Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return py::none();
  if (const bool* b = std::get_if<bool>(&v)) return py::bool_(*b);
  if (const int64_t* i = std::get_if<int64_t>(&v)) return py::int_(*i);
  return py::str(std::get<std::string>(v));
}

const char* kind_name(config::Kind k) {
  switch (k) {
    case config::Kind::kBool:
      return "bool";
    case config::Kind::kEnum:
      return "enum";
    case config::Kind::kOptionalEnum:
      return "optional_enum";
    case config::Kind::kString:
      return "string";
    case config::Kind::kOptionalString:
      return "optional_string";
  }
  return "?";
}

// A Python value as a flag value. Bool flags take any value through bool(), as JAX's do; the
// other kinds take None, bool, int or str and refuse the rest with the registry's message.
config::Value to_value(const std::string& name, py::handle value) {
  const config::FlagInfo& f = config::info(name);
  if (f.kind == config::Kind::kBool)
    return py::bool_(py::reinterpret_borrow<py::object>(value)).cast<bool>();
  if (value.is_none()) return std::monostate{};
  if (PyBool_Check(value.ptr())) return value.cast<bool>();
  if (PyUnicode_Check(value.ptr())) return value.cast<std::string>();
  if (PyLong_Check(value.ptr())) return as_int(value, "config.update", name.c_str());
  config::reject(name, std::string(py::str(value)), std::string(py::str(py::type::of(value))));
}

}  // namespace

void bind_config(py::module_& m) {
  m.def("config_flags", [] {
    py::list out;
    for (const config::FlagInfo& f : config::flags()) {
      py::dict d;
      d["name"] = f.name;
      d["kind"] = kind_name(f.kind);
      d["default"] = to_py(f.default_value);
      d["choices"] = py::tuple(py::cast(f.choices));
      d["help"] = f.help;
      d["effect"] = f.effect;
      out.append(d);
    }
    return out;
  });
  m.def("config_read", [](const std::string& name) { return to_py(config::read(name)); });
  m.def("config_update", [](const std::string& name, py::handle value) {
    config::update(name, to_value(name, value));
  });
  m.def("config_check", [](const std::string& name, py::handle value) {
    config::check(name, to_value(name, value));
  });
}

}  // namespace tessera::python
