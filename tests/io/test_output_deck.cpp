// The output keys of the deck: formats, cadence by steps or time, precision, fields,
// checkpoints, compression; each bad value is a one-line error at its key.
#include "io/deck.hpp"
#include "io/run_config.hpp"

#include <gtest/gtest.h>

namespace adi3d::io {
namespace {

const char* kDeck = "[grid]\nn = 9\n[time]\ndt = 0.01\nt_end = 0.1\n";

RunConfig read(const std::string& extra, const std::vector<std::string>& sets = {}) {
  return read_run_config(Deck::parse(std::string(kDeck) + extra, "deck.ini", sets));
}

std::string error_of(const std::string& extra, const std::vector<std::string>& sets = {}) {
  try {
    read(extra, sets);
  } catch (const DeckError& e) {
    return e.what();
  }
  return "";
}

TEST(OutputDeck, Defaults) {
  const RunConfig c = read("");
  EXPECT_FALSE(c.output.hdf5);
  EXPECT_FALSE(c.output.vtk);
  EXPECT_EQ(c.output.every, 0);
  EXPECT_EQ(c.output.interval, 0);
  EXPECT_FALSE(c.output.single);
  EXPECT_EQ(c.output.checkpoint_every, 0);
  EXPECT_EQ(c.output.fields, std::vector<std::string>{"u"});
}

TEST(OutputDeck, DefaultFieldsFollowTheDeck) {
  const RunConfig c = read("[check]\nexact = x\n[material]\ndiffusivity = formula 1 + x\n");
  EXPECT_EQ(c.output.fields, (std::vector<std::string>{"u", "error", "alpha"}));
}

TEST(OutputDeck, ReadsEveryKey) {
  const RunConfig c = read(
      "[output]\nformats = vtk hdf5\ninterval = 0.025\nprecision = float\nfields = error u\n"
      "checkpoint_every = 4\n[check]\nexact = x\n");
  EXPECT_TRUE(c.output.hdf5);
  EXPECT_TRUE(c.output.vtk);
  EXPECT_DOUBLE_EQ(c.output.interval, 0.025);
  EXPECT_TRUE(c.output.single);
  EXPECT_EQ(c.output.fields, (std::vector<std::string>{"error", "u"}));
  EXPECT_EQ(c.output.checkpoint_every, 4);
  EXPECT_FALSE(read("", {"output.precision=same"}).output.single);
}

TEST(OutputDeck, BadValuesNameTheKey) {
  struct Case {
    const char* set;
    const char* key;
    const char* message;
  };
  const Case cases[] = {
      {"output.interval=-1", "output.interval", ">= 0"},
      {"output.precision=half", "output.precision", "same, float"},
      {"output.fields=u temperature", "output.fields", "unknown field 'temperature'"},
      {"output.fields=error", "output.fields", "needs check.exact"},
      {"output.fields=alpha", "output.fields", "variable material.diffusivity"},
      {"output.fields=u u", "output.fields", "listed twice"},
      {"output.checkpoint_every=-2", "output.checkpoint_every", ">= 0"},
      {"output.checkpoint_every=1.5", "output.checkpoint_every", ""},
      {"output.formats=hdf5 xdmf", "output.formats", "unknown format 'xdmf'"},
      {"output.compression=zstd", "output.compression", "unknown compression 'zstd'; expected none, gzip"},
      {"output.compression=gzip:0", "output.compression", "gzip level '0' is not 1-9"},
      {"output.compression=gzip:10", "output.compression", "gzip level '10' is not 1-9"},
      {"output.compression=gzip:", "output.compression", "gzip level '' is not 1-9"},
      {"output.compression=GZIP", "output.compression", "unknown compression 'GZIP'"},
      {"output.compression=lz4", "output.compression", "szip"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of("", {c.set});
    EXPECT_NE(e.find(c.key), std::string::npos) << c.set << " -> " << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << c.set << " -> " << e;
    EXPECT_NE(e.find("--set"), std::string::npos) << c.set << " -> " << e;
  }
}

TEST(OutputDeck, CompressionIsOffByDefaultAndReadsGzipLevels) {
  EXPECT_FALSE(read("").output.compression.on());
  EXPECT_EQ(to_string(read("").output.compression), "none");
  const Compression gzip = read("", {"output.compression=gzip"}).output.compression;
  EXPECT_EQ(gzip.kind, Compression::Kind::gzip);
  EXPECT_EQ(gzip.level, 1);
  EXPECT_EQ(read("[output]\ncompression = gzip:6\n").output.compression.level, 6);
  EXPECT_EQ(to_string(read("", {"output.compression=gzip:9"}).output.compression), "gzip:9");
  EXPECT_FALSE(read("", {"output.compression=none"}).output.compression.on());
  // szip where this HDF5 encodes it (Debian's does, through libaec); a deck error naming
  // the key where it does not.
  const std::string e = error_of("", {"output.compression=szip"});
  if (e.empty())
    EXPECT_EQ(read("", {"output.compression=szip"}).output.compression.kind, Compression::Kind::szip);
  else
    EXPECT_NE(e.find("output.compression"), std::string::npos) << e;
}

TEST(OutputDeck, EveryAndIntervalAreExclusive) {
  const std::string e = error_of("[output]\nevery = 2\ninterval = 0.1\n");
  EXPECT_NE(e.find("deck.ini:8: output.interval"), std::string::npos) << e;
  EXPECT_NE(e.find("not both"), std::string::npos) << e;
}

TEST(OutputDeck, MisspelledKeySuggestsTheOutputKey) {
  const std::string e = error_of("[output]\ncheckpoint_evry = 3\n");
  EXPECT_NE(e.find("did you mean 'output.checkpoint_every'"), std::string::npos) << e;
}

}  // namespace
}  // namespace adi3d::io
