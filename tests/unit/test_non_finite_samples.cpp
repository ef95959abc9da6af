// Formulas sampled on the grid report the first node where they are not finite (issue 39
// item 4): the sampling loops check as they write, and FormulaForcing keeps the first such
// sample with its key and time for the run's checks.
#include "physics/formula_forcing.hpp"
#include "physics/grid_functions.hpp"
#include "solvers/face_layout.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace adi3d::physics {
namespace {

Grid3 unit_grid(int n0, int n1, int n2) {
  Grid3 g;
  g.n = {n0, n1, n2};
  for (int a = 0; a < 3; ++a) g.h[a] = 1.0 / (g.n[a] - 1);
  return g;
}

TEST(NonFiniteSamples, FiniteFormulasReportNothing) {
  const Grid3 g = unit_grid(9, 7, 5);
  std::vector<double> out(g.size());
  EXPECT_FALSE(sample_grid(Formula("sin(x) + y * z"), g, 0.3, out.data()));
  std::vector<float> face(face_size(g, 3));
  EXPECT_FALSE(sample_face(Formula("x + t"), g, 3, 0.3, face.data()));
}

TEST(NonFiniteSamples, GridSamplingNamesTheFirstBadNode) {
  const Grid3 g = unit_grid(9, 7, 5);
  std::vector<double> out(g.size());
  // Infinite on the plane x = 0.5; NaN beyond it: the lowest index is (4, 0, 0).
  const auto bad = sample_grid(Formula("1/(0.5 - x) + sqrt(0.5 - x)"), g, 0.0, out.data());
  ASSERT_TRUE(bad);
  EXPECT_DOUBLE_EQ(bad->x, 0.5);
  EXPECT_DOUBLE_EQ(bad->y, 0.0);
  EXPECT_DOUBLE_EQ(bad->z, 0.0);
  EXPECT_TRUE(std::isinf(bad->value));
  // Only at some nodes of a late plane: found wherever it is.
  const auto late = sample_grid(Formula("z > 0.9 ? (y > 0.9 ? log(x - 1) : 1) : 1"), g, 0.0, out.data());
  ASSERT_TRUE(late);
  EXPECT_DOUBLE_EQ(late->z, 1.0);
  EXPECT_DOUBLE_EQ(late->y, 1.0);
  EXPECT_DOUBLE_EQ(late->x, 0.0);
}

TEST(NonFiniteSamples, FloatSamplingCatchesValuesBeyondFloatRange) {
  const Grid3 g = unit_grid(5, 5, 5);
  std::vector<float> f32(g.size());
  std::vector<double> f64(g.size());
  EXPECT_TRUE(sample_grid(Formula("1e39 * x"), g, 0.0, f32.data()));
  EXPECT_FALSE(sample_grid(Formula("1e39 * x"), g, 0.0, f64.data()));
}

TEST(NonFiniteSamples, FaceSamplingNamesTheNodeOnTheFace) {
  const Grid3 g = unit_grid(9, 7, 5);
  // NaN below z = 0.5: on every face but z+ (z = 1), at its first node in face layout.
  for (int face = 0; face < 5; ++face) {
    std::vector<double> out(face_size(g, face));
    const auto bad = sample_face(Formula("log(z - 0.5)"), g, face, 0.0, out.data());
    ASSERT_TRUE(bad) << face;
    EXPECT_DOUBLE_EQ(bad->z, 0.0) << face;
    EXPECT_DOUBLE_EQ(bad->x, face == 1 ? 1.0 : 0.0) << face;
    EXPECT_DOUBLE_EQ(bad->y, face == 3 ? 1.0 : 0.0) << face;
  }
  std::vector<double> top(face_size(g, 5));
  EXPECT_FALSE(sample_face(Formula("log(z - 0.5)"), g, 5, 0.0, top.data()));
}

TEST(NonFiniteSamples, ForcingKeepsTheFirstBadSampleWithKeyAndTime) {
  const Grid3 g = unit_grid(9, 7, 5);
  Formula source("1/(t - 0.25)");
  source.set_key("source.f");
  std::array<std::optional<Formula>, 6> faces;
  faces[1] = Formula("log(0.5 - t)");
  faces[1]->set_key("boundary.x+");
  FormulaForcing<double> forcing(g, std::move(source), std::move(faces));
  std::vector<double> grid(g.size()), face(face_size(g, 1));
  forcing.source(0.1, grid.data());
  forcing.boundary(1, 0.1, face.data());
  EXPECT_FALSE(forcing.first_non_finite());
  forcing.boundary(1, 0.75, face.data());  // NaN here first
  forcing.source(0.25, grid.data());       // then infinite
  const auto s = forcing.first_non_finite();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->key, "boundary.x+");
  EXPECT_DOUBLE_EQ(s->t, 0.75);
  EXPECT_DOUBLE_EQ(s->x, 1.0);
  EXPECT_NE(describe(*s).find("t = 0.75"), std::string::npos) << describe(*s);
}

}  // namespace
}  // namespace adi3d::physics
