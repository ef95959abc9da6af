// Formulas: values, variables in use, bulk rows, and errors with positions.
#include "physics/formula.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace adi3d::physics {
namespace {

TEST(Formula, EvaluatesWithConstantsAndFunctions) {
  const Formula f("sin(pi*x) * exp(-t) + y^2 - z");
  EXPECT_NEAR(f(0.5, 2.0, 1.0, 0.0), 1.0 + 4.0 - 1.0, 1e-14);
  EXPECT_NEAR(f(0.25, 0.0, 0.0, 1.0), std::sin(M_PI / 4) * std::exp(-1.0), 1e-14);
  EXPECT_TRUE(f.uses("t"));
  EXPECT_FALSE(Formula("x + y").uses("t"));
}

TEST(Formula, ConstantsAreRecognised) {
  EXPECT_TRUE(Formula("0").is_zero());
  EXPECT_TRUE(Formula("2*pi").is_constant());
  EXPECT_FALSE(Formula("2*pi").is_zero());
  EXPECT_FALSE(Formula("x*0").is_constant());
}

TEST(Formula, RowEvaluationMatchesPointEvaluationBeyondOneBulk) {
  const Formula f("x*x + 3*y - z*t");
  std::vector<double> x(1000), out(1000);
  for (int i = 0; i < 1000; ++i) x[i] = 0.001 * i - 0.3;
  f.eval_row(x.data(), 1000, 0.5, -2.0, 1.5, out.data());
  for (int i = 0; i < 1000; ++i) ASSERT_DOUBLE_EQ(out[i], x[i] * x[i] + 1.5 + 3.0) << i;
}

TEST(Formula, SyntaxErrorReportsPosition) {
  try {
    Formula("sin(x) + * y");
    FAIL() << "no error";
  } catch (const FormulaError& e) {
    EXPECT_EQ(e.position(), 9);
    EXPECT_NE(std::string(e.what()).find("operator"), std::string::npos) << e.what();
  }
}

TEST(Formula, UnknownVariableIsAnError) {
  EXPECT_THROW(Formula("x + q"), FormulaError);
  try {
    Formula("x + t", {"x", "y", "z"});
    FAIL() << "t allowed where it should not be";
  } catch (const FormulaError& e) {
    EXPECT_NE(std::string(e.what()).find("'t'"), std::string::npos) << e.what();
  }
}

TEST(Formula, UnbalancedParenthesisIsAnError) { EXPECT_THROW(Formula("sin(x"), FormulaError); }

}  // namespace
}  // namespace adi3d::physics
