// The material index of an alpha field (solvers/material_index.hpp), checked without a
// GPU: every node's byte names its own value, rows are padded to whole 32-byte units with
// zeros, the face table holds the CPU rule's harmonic means, and a field of more than
// kMaxMaterials values (or of the wrong size) is not indexed.
#include "solvers/discretization.hpp"
#include "solvers/material_index.hpp"

#include <gtest/gtest.h>

#include <random>

namespace adi3d {
namespace {

template <class T>
std::vector<T> random_materials(const std::array<int, 3>& n, int count, std::mt19937& rng) {
  std::uniform_real_distribution<double> value(0.01, 100.0);
  std::vector<T> values(count);
  for (T& v : values) v = static_cast<T>(value(rng));
  std::uniform_int_distribution<int> pick(0, count - 1);
  std::vector<T> field(static_cast<std::size_t>(n[0]) * n[1] * n[2]);
  for (T& a : field) a = values[pick(rng)];
  return field;
}

template <class T>
class MaterialIndexTest : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MaterialIndexTest, Precisions);

TYPED_TEST(MaterialIndexTest, NamesEveryNodesValue) {
  using T = TypeParam;
  std::mt19937 rng(7);
  for (const std::array<int, 3> n : {std::array<int, 3>{1, 1, 1}, {5, 3, 2}, {33, 7, 4}, {64, 2, 3}, {100, 9, 5}})
    for (int count : {1, 2, 7, kMaxMaterials}) {
      const std::vector<T> alpha = random_materials<T>(n, count, rng);
      const MaterialIndex<T> m = index_materials(alpha, n);
      ASSERT_GT(m.materials, 0);
      ASSERT_LE(m.materials, count);
      EXPECT_EQ(m.pitch % kMaterialRowAlign, 0);
      EXPECT_GE(m.pitch, n[0]);
      EXPECT_LT(m.pitch, n[0] + kMaterialRowAlign);
      ASSERT_EQ(m.index.size(), static_cast<std::size_t>(m.pitch) * n[1] * n[2]);
      for (int r = 0; r < n[1] * n[2]; ++r)
        for (int i = 0; i < m.pitch; ++i) {
          const std::uint8_t mat = m.index[static_cast<std::size_t>(r) * m.pitch + i];
          if (i >= n[0]) {
            EXPECT_EQ(mat, 0) << "padding of row " << r;
            continue;
          }
          ASSERT_LT(mat, m.materials);
          EXPECT_EQ(m.value[mat], alpha[static_cast<std::size_t>(r) * n[0] + i]) << "row " << r << " node " << i;
        }
      ASSERT_EQ(m.face_mean.size(), static_cast<std::size_t>(kMaxMaterials * kMaxMaterials));
      for (int a = 0; a < m.materials; ++a)
        for (int b = 0; b < m.materials; ++b)
          EXPECT_EQ(m.face_mean[a * kMaxMaterials + b], harmonic_mean(m.value[a], m.value[b]));
    }
}

TYPED_TEST(MaterialIndexTest, DeclinesFieldsOfManyValues) {
  using T = TypeParam;
  const std::array<int, 3> n{10, 4, 3};
  std::vector<T> alpha(120, T(1));
  for (int v = 0; v < kMaxMaterials; ++v) alpha[7 * v] = static_cast<T>(2 + v);  // 17 values
  EXPECT_EQ(index_materials(alpha, n).materials, 0);
  alpha[7 * (kMaxMaterials - 1)] = T(1);  // 16 values
  EXPECT_EQ(index_materials(alpha, n).materials, kMaxMaterials);
  EXPECT_THROW(index_materials(std::vector<T>(119, T(1)), n), std::invalid_argument);
}

}  // namespace
}  // namespace adi3d
