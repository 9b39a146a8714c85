// The lock-script catalogue, SHA-1 and CONFIG GET globs (pure functions).
#include <gtest/gtest.h>

#include "common/sha1.h"
#include "server/commands/config_get.h"
#include "server/commands/script_catalog.h"

namespace leasehold::server {
namespace {

TEST(Sha1, KnownVectors) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  // Lengths around the 55/56/64-byte padding boundaries agree with each other's prefix property.
  EXPECT_NE(sha1_hex(std::string(55, 'x')), sha1_hex(std::string(56, 'x')));
}

TEST(ScriptCatalogue, RedisPyShasAreTheOnesRedisPySends) {
  // hashlib.sha1(Lock.LUA_*_SCRIPT.encode()).hexdigest() with python3-redis 4.3.4.
  const auto& cat = script_catalogue();
  ASSERT_GE(cat.size(), 3u);
  EXPECT_EQ(sha1_hex(cat[0].text), "c3f8721cbb97f72bc19e972846bd7aaf91901658");
  EXPECT_EQ(sha1_hex(cat[1].text), "a4e8783852e6b949f9ef3a97212805108459a890");
  EXPECT_EQ(sha1_hex(cat[2].text), "1cac51482acf5858da00f6d685d68f886cd6b6b2");
  for (const auto& e : cat) EXPECT_EQ(recognise_script(e.text), e.op) << e.name;
}

TEST(ScriptCatalogue, CanonicalReleaseInOtherLayouts) {
  for (const char* text : {
           "if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n    return redis.call(\"del\",KEYS[1])\nelse\n"
           "    return 0\nend\n",
           "\n    if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n        return redis.call(\"del\",KEYS[1])\n"
           "    else\n        return 0\n    end",
           "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end",
           "-- release only if we still own it\nif redis.call(\"GET\", KEYS[1]) == ARGV[1] then\n"
           "    return redis.call(\"DEL\", KEYS[1])\nend\nreturn 0\n",
           "if redis.call(\"get\",KEYS[1])==ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end"}) {
    EXPECT_EQ(recognise_script(text), ScriptOp::kDeleteIfEqual) << text;
  }
}

TEST(ScriptCatalogue, AnythingElseIsRefused) {
  for (const char* text : {
           "return 1",
           "",
           "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[2]) else return 0 end",
           "if redis.call('get',KEYS[1]) ~= ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end",
           "if redis.call('get ',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end",
           "if redis.call('g\\et',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end",
           "if redis.call([[get]],KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end",
           "--[[ x ]] if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end",
           "redis.call('flushall')"}) {
    EXPECT_EQ(recognise_script(text), std::nullopt) << text;
  }
  EXPECT_EQ(normal_form(std::string(9000, ' ')), std::nullopt);
}

TEST(ScriptCache, LoadFindFlush) {
  ScriptCache& cache = ScriptCache::instance();
  const std::string variant = "if redis.call('get',KEYS[1]) == ARGV[1] then\treturn redis.call('del',KEYS[1]) else return 0 end";
  const auto loaded = cache.load(variant);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->first, sha1_hex(variant));
  EXPECT_EQ(cache.find(loaded->first), ScriptOp::kDeleteIfEqual);
  std::string upper = loaded->first;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(cache.find(upper), ScriptOp::kDeleteIfEqual);
  EXPECT_EQ(cache.load("return 1"), std::nullopt);
  EXPECT_EQ(cache.find(sha1_hex("return 1")), std::nullopt);
  cache.flush();
  EXPECT_EQ(cache.find(loaded->first), std::nullopt) << "a loaded variant is forgotten";
  EXPECT_EQ(cache.find("c3f8721cbb97f72bc19e972846bd7aaf91901658"), ScriptOp::kDeleteIfEqual)
      << "catalogue scripts stay known";
  EXPECT_EQ(cache.find("short"), std::nullopt);
}

TEST(ConfigGlob, RedisStyle) {
  EXPECT_TRUE(glob_match("save", "save"));
  EXPECT_TRUE(glob_match("SAVE", "save"));
  EXPECT_TRUE(glob_match("*", "appendonly"));
  EXPECT_TRUE(glob_match("max*", "maxmemory-policy"));
  EXPECT_TRUE(glob_match("*memory*", "maxmemory"));
  EXPECT_TRUE(glob_match("s?ve", "save"));
  EXPECT_FALSE(glob_match("sav", "save"));
  EXPECT_FALSE(glob_match("save?", "save"));
  EXPECT_FALSE(glob_match("x*", "save"));
}

}  // namespace
}  // namespace leasehold::server
