// A diffusivity map read from an HDF5 dataset: the two-layer slab gives the exact steady
// flux with the layers given as data instead of a formula, and bad files are deck errors
// that name the key.
#include "io/field_input.hpp"
#include "io/hdf5_handles.hpp"
#include "tests/io/io_fixtures.hpp"

namespace adi3d::test {
namespace {

class FieldInput : public IoTest {
 protected:
  // Writes alpha (1 below z = 1/2, 100 above) shaped (nz, ny, nx) to DIR/alpha.h5:/material/alpha.
  std::string write_alpha(const Grid3& g, bool wrong_shape = false) {
    Grid3 shape = g;
    if (wrong_shape) shape.n[0] += 1;
    io::FieldBuffer field;
    field.name = "alpha";
    field.single = false;
    field.f64.resize(shape.size());
    for (int k = 0; k < shape.n[2]; ++k)
      for (int j = 0; j < shape.n[1]; ++j)
        for (int i = 0; i < shape.n[0]; ++i) field.f64[shape.index(i, j, k)] = g.coord(2, k) < 0.5 ? 1.0 : 100.0;
    const std::string path = (dir_ / "alpha.h5").string();
    io::h5::Hdf5Lock lock;
    io::h5::Handle file = io::h5::create_file(path);
    io::h5::Handle group = io::h5::create_group(file, "material", path);
    io::h5::write_field(group, field, shape, path);
    return path;
  }

  std::string slab(const std::string& alpha_spec) {
    return "[problem]\ntype = poisson\n[grid]\nn = 6 6 16\n[material]\ndiffusivity = " + alpha_spec +
           "\n[boundary]\nx- = neumann 0\nx+ = neumann 0\ny- = neumann 0\ny+ = neumann 0\n"
           "z- = dirichlet 0\nz+ = dirichlet 1\n[solver]\nbackend = cpu\ntol = 1e-10\nmax_iter = 2000\n"
           "[output]\ndir = " + (dir_ / "out").string() + "\n"
           "[check]\nexact = z < 0.5 ? z / 0.505 : 0.5 / 0.505 + (z - 0.5) / (100 * 0.505)\n";
  }
};

TEST_F(FieldInput, LayeredSlabFromHdf5HasTheExactFlux) {
  Grid3 g;
  g.n = {6, 6, 16};
  g.h = {0.2, 0.2, 1.0 / 15};
  const std::string file = write_alpha(g);
  const std::vector<double> alpha = io::read_grid_dataset(file, "/material/alpha", g);
  EXPECT_EQ(alpha[g.index(2, 3, 7)], 1.0);
  EXPECT_EQ(alpha[g.index(2, 3, 8)], 100.0);
  const Outcome o = run("run " + write_deck(slab("hdf5 " + file + ":/material/alpha")) + " -q");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto at = o.out.find("max error");
  ASSERT_NE(at, std::string::npos) << o.out;
  EXPECT_LT(std::stod(o.out.substr(at + 9)), 1e-7) << o.out;
}

TEST_F(FieldInput, MissingFileOrDatasetOrWrongShapeIsADeckError) {
  Grid3 g;
  g.n = {6, 6, 16};
  g.h = {0.2, 0.2, 1.0 / 15};
  const std::string missing = run("check " + write_deck(slab("hdf5 " + (dir_ / "none.h5").string() + ":/a"))).err;
  EXPECT_NE(missing.find("material.diffusivity"), std::string::npos) << missing;
  const std::string file = write_alpha(g, true);
  const Outcome shape = run("check " + write_deck(slab("hdf5 " + file + ":/material/alpha")));
  EXPECT_EQ(shape.code, 2);
  EXPECT_EQ(count_lines(shape.err), 1) << shape.err;
  EXPECT_NE(shape.err.find("is not shaped (16, 6, 6)"), std::string::npos) << shape.err;
  const Outcome no_set = run("check " + write_deck(slab("hdf5 " + file + ":/material/beta")));
  EXPECT_EQ(no_set.code, 2);
  EXPECT_NE(no_set.err.find("no dataset '/material/beta'"), std::string::npos) << no_set.err;
}

// A damaged map on which HDF5 1.10 reads through a null pointer (found by tests/fuzz): the
// look in a child process crashes, the run does not, and says which file is damaged.
TEST(FieldInputFile, ThatCrashesHdf5IsReportedAsDamaged) {
  const std::string bad =
      std::string(ADI3D_SOURCE_DIR) + "/tests/fuzz/regressions/fuzz_field_input/null_read_after_huge_malloc.h5";
  Grid3 grid;
  grid.n = {5, 4, 3};
  try {
    io::read_grid_dataset(bad, "/field", grid);
    ADD_FAILURE() << "a damaged map was read";
  } catch (const io::OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("null_read_after_huge_malloc.h5: damaged HDF5 file"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace adi3d::test
