// The device translation of formulas agrees with muparser: the generated C++ text is
// evaluated by a muparser that knows the C math functions it uses.
#include "physics/formula.hpp"
#include "physics/formula_codegen.hpp"

#include <gtest/gtest.h>
#include <muParser.h>

#include <cmath>
#include <random>

namespace adi3d::physics {
namespace {

double cpp_pow(double a, double b) { return std::pow(a, b); }
double cpp_fabs(double a) { return std::fabs(a); }
double cpp_floor(double a) { return std::floor(a); }
double cpp_fmin(double a, double b) { return std::fmin(a, b); }
double cpp_fmax(double a, double b) { return std::fmax(a, b); }

double eval_translated(const std::string& cpp, double x, double y, double z, double t) {
  mu::Parser p;
  p.DefineFun("pow", cpp_pow);
  p.DefineFun("fabs", cpp_fabs);
  p.DefineFun("floor", cpp_floor);
  p.DefineFun("fmin", cpp_fmin);
  p.DefineFun("fmax", cpp_fmax);
  p.DefineVar("x", &x);
  p.DefineVar("y", &y);
  p.DefineVar("z", &z);
  p.DefineVar("t", &t);
  p.SetExpr(cpp);
  return p.Eval();
}

TEST(FormulaCodegen, AgreesWithMuparserOnPrecedenceFunctionsAndLogic) {
  const char* formulas[] = {
      "-2^2 + x",        "2^3^2 * y",          "2^-1 - z",           "-x^2",
      "x - -y",          "1 + 2*3 - 4/5",      "sin(pi*x)*exp(-t)",  "ln(2+x) + log(3) + log2(4) + log10(y+2)",
      "abs(x-y) + sign(z-0.5) + rint(2.5*x)", "min(x, y, z) + max(x, 2*y) + sum(x, y, z) + avg(x, y)",
      "x < 0.5 ? y : z", "x < y && y < z || t > 0.5", "x >= y", "x == x", "x != y",
      "1 ? 2 : 3 ? 4 : 5", "atan2(y, x) + sqrt(x*x + y*y)", "sinh(x) + cosh(y) + tanh(z)",
      "asin(x) + acos(y) + atan(z)", "_pi + _e + e", "1.5e-2 * 2E3", "(x + y) * (z - t)",
      "2*-x", "-(x < y)", "z < 0.5 ? z / 0.505 : 0.5 / 0.505 + (z - 0.5) / (100 * 0.505)"};
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0.05, 0.95);
  for (const char* f : formulas) {
    const Formula reference(f);
    const std::string cpp = to_device_expression(f);
    EXPECT_EQ(reference.device_expression(), cpp);
    for (int trial = 0; trial < 20; ++trial) {
      const double x = u(rng), y = u(rng), z = u(rng), t = u(rng);
      const double expected = reference(x, y, z, t);
      ASSERT_NEAR(eval_translated(cpp, x, y, z, t), expected, 1e-12 * (1 + std::fabs(expected)))
          << f << "  ->  " << cpp;
    }
  }
}

TEST(FormulaCodegen, IntegerLiteralsBecomeDoubles) {
  EXPECT_EQ(to_device_expression("1/2"), "(1.0 / 2.0)");
}

TEST(FormulaCodegen, ConstructsWithoutDeviceFormAreRejectedWithPosition) {
  try {
    Formula("x = 3");
    FAIL() << "assignment accepted";
  } catch (const FormulaError& e) {
    EXPECT_EQ(e.position(), 2);
    EXPECT_NE(std::string(e.what()).find("assignment"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Formula("x, y"), FormulaError);
}

}  // namespace
}  // namespace adi3d::physics
