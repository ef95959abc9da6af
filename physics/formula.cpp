#include "physics/formula.hpp"

#include "physics/formula_codegen.hpp"

#include <muParser.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

namespace adi3d::physics {

// One parser with its own variables. Scalar evaluation runs muparser's compiled bytecode;
// its bulk mode was not used because it rebuilds the bytecode on every call (muparser
// 2.3), which cost 1 us per point on grid rows.
struct Formula::Engine {
  mu::Parser parser;
  double x = 0, y = 0, z = 0, t = 0;

  explicit Engine(const std::string& text) {
    parser.DefineConst("pi", M_PI);
    parser.DefineConst("e", M_E);
    parser.DefineVar("x", &x);
    parser.DefineVar("y", &y);
    parser.DefineVar("z", &z);
    parser.DefineVar("t", &t);
    parser.SetExpr(text);
  }
};

Formula::Formula(const std::string& text, const std::vector<std::string>& allowed) : text_(text) {
  const int threads = std::max(1, omp_get_max_threads());
  try {
    for (int i = 0; i < threads; ++i) engines_.push_back(std::make_unique<Engine>(text));
    // GetUsedVar parses and reports only the variables the expression reads.
    for (const auto& [name, ptr] : engines_.front()->parser.GetUsedVar()) {
      (void)ptr;
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        std::string list;
        for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
        throw FormulaError("variable '" + name + "' is not available here (use " + list + ")",
                           static_cast<int>(text.find(name)));
      }
      used_.push_back(name);
    }
    if (used_.empty()) constant_ = engines_.front()->parser.Eval();
  } catch (const mu::Parser::exception_type& e) {
    throw FormulaError(e.GetMsg(), e.GetPos());
  }
  // Every formula must also have a device form, so CPU and GPU runs accept the same decks.
  device_expression_ = to_device_expression(text);
  if (used_.empty() && !std::isfinite(constant_))
    throw FormulaError("the formula evaluates to " + std::to_string(constant_), 0);
}

Formula::~Formula() = default;
Formula::Formula(Formula&&) noexcept = default;
Formula& Formula::operator=(Formula&&) noexcept = default;

bool Formula::uses(const std::string& variable) const {
  return std::find(used_.begin(), used_.end(), variable) != used_.end();
}

Formula::Engine& Formula::engine() const {
  const int id = omp_get_thread_num();
  return *engines_[static_cast<std::size_t>(id) < engines_.size() ? id : 0];
}

double Formula::operator()(double x, double y, double z, double t) const {
  double out = 0;
  eval_row(&x, 1, y, z, t, &out);
  return out;
}

void Formula::eval_row(const double* x, int n, double y, double z, double t, double* out) const {
  if (is_constant()) {
    std::fill(out, out + n, constant_);
    return;
  }
  Engine& e = engine();
  e.y = y;
  e.z = z;
  e.t = t;
  for (int i = 0; i < n; ++i) {
    e.x = x[i];
    out[i] = e.parser.Eval();
  }
}

}  // namespace adi3d::physics
