// The compile cache of run-time compiled formulas (solvers/rtc/compile_cache.hpp): an entry
// comes back exactly, and anything that is not a whole entry for exactly the key asked for
// (missing, truncated, damaged, another key's, trailing bytes) is a miss; a cache that
// cannot write says so and throws nothing; the directory comes from the environment.
#include "solvers/rtc/compile_cache.hpp"
#include "tests/unit/scoped_env.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace adi3d::rtc {
namespace {

namespace fs = std::filesystem;

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("adi3d_compile_cache_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::vector<char> bytes(const std::string& s) { return {s.begin(), s.end()}; }
  static std::vector<char> read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void write(const std::string& path, const std::vector<char>& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }

  fs::path dir_;
};

TEST_F(CompileCacheTest, StoredEntryComesBackExactly) {
  const CompileCache cache(dir_.string());  // the directory does not exist yet
  std::vector<char> binary = bytes("a cubin");
  binary.push_back('\0');
  binary.push_back('\xff');
  EXPECT_FALSE(cache.load("key one").has_value());
  ASSERT_TRUE(cache.store("key one", binary));
  const std::optional<std::vector<char>> got = cache.load("key one");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, binary);
  EXPECT_FALSE(cache.load("key two").has_value());
  // Stored again (another run), replaced whole; no temporary file is left behind.
  ASSERT_TRUE(cache.store("key one", bytes("newer")));
  EXPECT_EQ(cache.load("key one"), bytes("newer"));
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(CompileCacheTest, AnythingButAWholeEntryForTheKeyIsAMiss) {
  const CompileCache cache(dir_.string());
  ASSERT_TRUE(cache.store("the key", bytes("0123456789")));
  const std::string path = cache.path_of("the key");
  const std::vector<char> whole = read(path);

  // Another key's entry under this key's name (as a hash collision would leave it).
  ASSERT_TRUE(cache.store("the kez", bytes("other")));  // a key of the same length
  fs::copy_file(cache.path_of("the kez"), path, fs::copy_options::overwrite_existing);
  EXPECT_FALSE(cache.load("the key").has_value()) << "another key's entry";

  std::vector<char> truncated(whole.begin(), whole.end() - 3);
  write(path, truncated);
  EXPECT_FALSE(cache.load("the key").has_value()) << "truncated";

  std::vector<char> damaged = whole;
  damaged[damaged.size() - 2] ^= 0x10;  // a byte of the binary
  write(path, damaged);
  EXPECT_FALSE(cache.load("the key").has_value()) << "damaged binary";

  std::vector<char> trailing = whole;
  trailing.push_back('x');
  write(path, trailing);
  EXPECT_FALSE(cache.load("the key").has_value()) << "trailing bytes";

  write(path, bytes("not an entry at all"));
  EXPECT_FALSE(cache.load("the key").has_value()) << "no magic";

  write(path, whole);
  EXPECT_EQ(cache.load("the key"), bytes("0123456789")) << "the whole entry again";
}

TEST_F(CompileCacheTest, ACacheThatCannotWriteSaysSoAndThrowsNothing) {
  fs::create_directories(dir_);
  write((dir_ / "a_file").string(), bytes("x"));
  const CompileCache under_a_file((dir_ / "a_file" / "rtc").string());
  EXPECT_FALSE(under_a_file.store("k", bytes("binary")));
  EXPECT_FALSE(under_a_file.load("k").has_value());

  const CompileCache none;
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.store("k", bytes("binary")));
  EXPECT_FALSE(none.load("k").has_value());
}

using test::ScopedEnv;

TEST(CompileCacheLocation, FromTheEnvironment) {
  {
    ScopedEnv a("ADI3D_RTC_CACHE", "/somewhere/rtc"), x("XDG_CACHE_HOME", "/xdg"), h("HOME", "/home/u");
    EXPECT_EQ(CompileCache::from_environment().directory(), "/somewhere/rtc");
  }
  {
    ScopedEnv a("ADI3D_RTC_CACHE", "off"), x("XDG_CACHE_HOME", "/xdg");
    EXPECT_FALSE(CompileCache::from_environment().enabled());
  }
  {
    ScopedEnv a("ADI3D_RTC_CACHE", nullptr), x("XDG_CACHE_HOME", "/xdg"), h("HOME", "/home/u");
    EXPECT_EQ(CompileCache::from_environment().directory(), "/xdg/adi3d/rtc");
  }
  {
    ScopedEnv a("ADI3D_RTC_CACHE", nullptr), x("XDG_CACHE_HOME", nullptr), h("HOME", "/home/u");
    EXPECT_EQ(CompileCache::from_environment().directory(), "/home/u/.cache/adi3d/rtc");
  }
  {
    ScopedEnv a("ADI3D_RTC_CACHE", nullptr), x("XDG_CACHE_HOME", nullptr), h("HOME", nullptr);
    EXPECT_FALSE(CompileCache::from_environment().enabled());
  }
}

}  // namespace
}  // namespace adi3d::rtc
