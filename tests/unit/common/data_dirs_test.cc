// The data search path (common/data_dirs.h) and the tests' skip line
// (tests/data_available.h): $QKOV_DATA first, then the cache under $HOME (or
// $XDG_CACHE_HOME), then ../shared/data; the first folder holding every file
// asked for wins; a missing dataset names the fetch command.
#include "common/data_dirs.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "tests/data_available.h"

namespace qkov {
namespace {

// Sets an environment variable for the test's scope (unset when null).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old, had_ = true;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

std::string TempDir() {
  char tmpl[] = "/tmp/qkov-data-dirs-XXXXXX";
  return mkdtemp(tmpl);
}

void Touch(const std::string& dir, const std::string& rel) {
  const std::string path = dir + "/" + rel;
  mkdir(path.substr(0, path.rfind('/')).c_str(), 0755);
  std::ofstream(path) << "x";
}

TEST(DataDirsTest, SearchPathIsDataThenCacheThenShared) {
  ScopedEnv data("QKOV_DATA", "/d");
  ScopedEnv home("HOME", "/h");
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(DataSearchPath(),
            (std::vector<std::string>{"/d", "/h/.cache/qkov/data",
                                      "../shared/data"}));
  EXPECT_EQ(DefaultDataDir(), "/d");
  ScopedEnv no_data("QKOV_DATA", nullptr);
  ScopedEnv cache("XDG_CACHE_HOME", "/c");
  EXPECT_EQ(DataSearchPath(),
            (std::vector<std::string>{"/c/qkov/data", "../shared/data"}));
  EXPECT_EQ(DefaultDataDir(), "/c/qkov/data");
}

TEST(DataDirsTest, TheFirstFolderHoldingEveryFileWins) {
  const std::string first = TempDir(), home = TempDir();
  Touch(first, "sva/a.txt");
  const std::string cache = home + "/.cache/qkov/data";
  for (const std::string& d : {home + "/.cache", home + "/.cache/qkov", cache})
    mkdir(d.c_str(), 0755);
  Touch(cache, "sva/a.txt");
  Touch(cache, "tokenizers/v.txt");
  ScopedEnv data("QKOV_DATA", first.c_str());
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv h("HOME", home.c_str());
  EXPECT_EQ(FindDataDir({"sva/a.txt"}), first);
  EXPECT_EQ(FindDataDir({"sva/a.txt", "tokenizers/v.txt"}), cache);
  EXPECT_EQ(FindDataDir({"glove/g.txt"}), std::nullopt);
}

// A sweep's shipped path (../shared/data/...) is found through the search
// path from any working directory; another path, or one no folder holds,
// stays as written.
TEST(DataDirsTest, AShippedPathResolvesThroughTheSearchPath) {
  const std::string data = TempDir(), home = TempDir();
  Touch(data, "sva/a.txt");
  ScopedEnv d("QKOV_DATA", data.c_str());
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv h("HOME", home.c_str());
  EXPECT_EQ(ResolveDataPath("../shared/data/sva/a.txt"), data + "/sva/a.txt");
  EXPECT_EQ(ResolveDataPath("../shared/data/sva/none.txt"),
            "../shared/data/sva/none.txt");
  EXPECT_EQ(ResolveDataPath("/elsewhere/sva/a.txt"), "/elsewhere/sva/a.txt");
  EXPECT_EQ(ResolveDataPath("sva/a.txt"), "sva/a.txt");
  // The relative ../shared/data entry, from a folder that has one beside
  // it: an absolute path, so nothing later depends on the folder.
  const std::string root = TempDir();
  mkdir((root + "/shared").c_str(), 0755);
  mkdir((root + "/shared/data").c_str(), 0755);
  mkdir((root + "/run").c_str(), 0755);
  Touch(root + "/shared/data", "glove/g.txt");
  ScopedEnv no_data("QKOV_DATA", nullptr);
  char old_cwd[4096];
  ASSERT_NE(getcwd(old_cwd, sizeof(old_cwd)), nullptr);
  ASSERT_EQ(chdir((root + "/run").c_str()), 0);
  const std::string found = ResolveDataPath("../shared/data/glove/g.txt");
  ASSERT_EQ(chdir(old_cwd), 0);
  EXPECT_EQ(found, root + "/shared/data/glove/g.txt");
}

TEST(DataDirsTest, AMissingDatasetNamesTheFetchCommand) {
  const std::string dir = TempDir();
  Touch(dir, "sva/a.txt");
  EXPECT_EQ(testing::MissingData(dir, {"sva"}), "");
  const std::string line = testing::MissingData(dir, {"sva", "squad", "glove"});
  EXPECT_NE(line.find("no squad glove data in " + dir), std::string::npos)
      << line;
  EXPECT_NE(line.find("qkov-data fetch squad glove"), std::string::npos)
      << line;
}

}  // namespace
}  // namespace qkov
