#include <gtest/gtest.h>

#include "runners/runners.h"
#include "runners/zip_writer_test_util.h"

namespace genvm::runners {
namespace {

using testing::make_zip;
using testing::ZipEntry;

std::shared_ptr<const std::string> blob(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

Result<Archive> zip(const std::vector<ZipEntry>& entries, int count_delta = 0) {
  return read_zip(blob(make_zip(entries, count_delta)));
}

void expect_malformed(const Result<Archive>& r, std::string_view detail) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "invalid_contract runner malformed");
  EXPECT_EQ(r.error().errc, static_cast<int>(RunnerErrc::kMalformed));
  EXPECT_NE(r.error().message.find(detail), std::string::npos) << r.error().message;
}

TEST(RunnersGvm32, EncodesAsTheSpecDefines) {
  EXPECT_EQ(gvm32_encode(std::vector<std::uint8_t>{}), "");
  EXPECT_EQ(gvm32_encode(std::vector<std::uint8_t>{0xFF}), "zw");
  EXPECT_EQ(gvm32_encode(std::vector<std::uint8_t>{0x00, 0x01}), "000g");
  Hash32 h = sha256("");
  std::string text = gvm32_encode(h);
  EXPECT_EQ(text, "werc8gmrzge196qvyk49jvxs4gktwgf4cjds6k54jpchpy2jq1ag");  // the spec's encoder
  auto back = gvm32_decode(text);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(std::equal(back->begin(), back->end(), h.begin()));
  EXPECT_EQ(gvm32_encode(test_runner_hash()), "test" + std::string(48, '0'));
}

TEST(RunnersGvm32, DecodeIsLenientOnlyWhereTheSpecSays) {
  auto upper = gvm32_decode("ZW");
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(*upper, std::vector<std::uint8_t>{0xFF});
  auto aliases = gvm32_decode("0-0-o-g");  // o reads as 0, '-' ignored
  ASSERT_TRUE(aliases.ok());
  EXPECT_EQ(*aliases, (std::vector<std::uint8_t>{0x00, 0x01}));
  EXPECT_EQ(*gvm32_decode("I0"), *gvm32_decode("10"));
  EXPECT_FALSE(gvm32_decode("u0").ok());   // u is not in the alphabet
  EXPECT_FALSE(gvm32_decode("zz").ok());   // leftover bits 11 are not zero
}

TEST(RunnersId, ParsesEveryForm) {
  std::string hash = gvm32_encode(sha256("x"));
  auto packaged = parse_runner_id("py-genlayer:" + hash);
  ASSERT_TRUE(packaged.ok());
  EXPECT_EQ(packaged->kind, RunnerId::Kind::kPackaged);
  EXPECT_EQ(packaged->name, "py-genlayer");
  EXPECT_EQ(packaged->hash, sha256("x"));
  EXPECT_EQ(packaged->canonical(), "py-genlayer:" + hash);
  EXPECT_EQ(parse_runner_id("contract")->kind, RunnerId::Kind::kContract);
  auto custom = parse_runner_id("custom:" + hash);
  ASSERT_TRUE(custom.ok());
  EXPECT_EQ(custom->kind, RunnerId::Kind::kCustom);
  EXPECT_EQ(custom->canonical(), "custom:" + hash);
  auto latest = parse_runner_id("cpython:latest");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->tag, "latest");
  EXPECT_TRUE(parse_runner_id("chain:0x" + std::string(40, 'a')).ok());
  EXPECT_TRUE(parse_runner_id("chain:0x" + std::string(40, 'a') + ":f:" + hash).ok());
}

TEST(RunnersId, RefusesMalformedIds) {
  std::string hash = gvm32_encode(sha256("x"));
  for (const std::string& bad : std::vector<std::string>{"py", std::string(":") + hash, "contract:" + hash, "chain:" + hash,
                          "py:abc", "p y:" + hash, "py:" + hash.substr(1) + "u", "custom:latest",
                          "chain:0x12:a", "chain:0x" + std::string(40, 'a') + ":d"}) {
    auto r = parse_runner_id(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().code, "invalid_contract runner malformed");
    }
  }
}

TEST(RunnersZip, ReadsStoredEntriesAndSkipsDirectories) {
  auto r = zip({{"runner.json", "{}"}, {"lib/", ""}, {"lib/a.py", "print(1)"}, {"lib/a.py", "print(2)"}});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->files.size(), 2u);
  EXPECT_EQ(*r->find("runner.json"), "{}");
  EXPECT_EQ(*r->find("lib/a.py"), "print(2)");  // the last of duplicates
  EXPECT_EQ(r->find("lib/"), nullptr);
}

TEST(RunnersZip, RefusesCompressedEncryptedAndLyingEntries) {
  expect_malformed(zip({{"a", "x", 8}}), "compressed");
  expect_malformed(zip({{"a", "x", 0, 1}}), "encrypted");
  ZipEntry bad_crc{"a", "x"};
  bad_crc.crc_delta = 1;
  expect_malformed(zip({bad_crc}), "CRC-32");
  ZipEntry other_name{"a", "x"};
  other_name.local_name = "b";
  expect_malformed(zip({other_name}), "local header name");
  ZipEntry sizes{"a", "xy"};
  sizes.local_size_delta = -1;
  expect_malformed(zip({sizes}), "disagrees");
  expect_malformed(zip({{"d/", "x"}}), "directory");
  expect_malformed(zip({{std::string("\xff\xfe", 2), "x"}}), "UTF-8");
}

TEST(RunnersZip, RefusesPathTraversalAndOddNames) {
  for (const std::string& name : std::vector<std::string>{"../x", "a/../b", "/abs", "a\\b", "a//b", "./a", "a/.", ""}) {
    auto r = zip({{name, "x"}});
    EXPECT_FALSE(r.ok()) << name;
  }
  std::string long_name(2000, 'a');
  expect_malformed(zip({{long_name, "x"}}), "longer");
}

TEST(RunnersZip, RefusesHugeCountsAndOverlaps) {
  expect_malformed(zip({{"a", "x"}}, 1000), "more entries");
  ArchiveLimits few;
  few.max_entries = 2;
  auto r = read_zip(blob(make_zip({{"a", "1"}, {"b", "2"}, {"c", "3"}})), few);
  expect_malformed(r, "exceed the limit");
  // Two central records for one local entry: the same octets would be two files.
  std::string z = make_zip({{"a", "x"}});
  auto cd = z.find("PK\x01\x02");
  auto eocd = z.find("PK\x05\x06");
  std::string record = z.substr(cd, eocd - cd);
  z.insert(eocd, record);
  eocd += record.size();
  z[eocd + 8] = 2;
  z[eocd + 10] = 2;
  z[eocd + 12] = static_cast<char>(2 * record.size());
  expect_malformed(read_zip(blob(z)), "overlap");
}

TEST(RunnersZip, EveryTruncationIsAnError) {
  std::string z = make_zip({{"runner.json", R"({"StartWasm":"file"})"}, {"file", "\0asm"}});
  ASSERT_TRUE(read_zip(blob(z)).ok());
  for (std::size_t n = 0; n < z.size(); ++n) {
    EXPECT_FALSE(read_zip(blob(z.substr(0, n))).ok()) << n;
  }
}

TEST(RunnersCode, RawWasmStartsItself) {
  std::string wasm("\0asm\x01\0\0\0", 8);
  // a custom section "genvm.version" = "v0.2.0"
  std::string section = std::string(1, 13) + "genvm.version" + "v0.2.0";
  wasm += '\0';
  wasm += static_cast<char>(section.size());
  wasm += section;
  auto r = archive_from_code(blob(wasm));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->find("file"), wasm);
  EXPECT_EQ(*r->find("runner.json"), R"({ "StartWasm": "file" })");
  EXPECT_EQ(*r->find("version"), "v0.2.0");
}

TEST(RunnersCode, TextHeaderGivesVersionAndRunnerJson) {
  std::string py = "# v0.1.0\n# { \"Depends\": \"py:latest\" }\r\n#  \nimport x\n# not header\n";
  auto r = archive_from_code(blob(py));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(*r->find("version"), " v0.1.0");
  EXPECT_EQ(*r->find("runner.json"), " { \"Depends\": \"py:latest\" }  ");
  EXPECT_EQ(*r->find("file"), py);
  auto lua = archive_from_code(blob("-- {\"StartWasm\": \"f\"}\nx"));
  ASSERT_TRUE(lua.ok());
  EXPECT_EQ(lua->find("version"), nullptr);
  EXPECT_EQ(*lua->find("runner.json"), " {\"StartWasm\": \"f\"}");
  auto c = archive_from_code(blob("//v1\n//{}"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c->find("version"), "v1");
}

TEST(RunnersCode, TextWithoutHeaderOrNotUtf8) {
  auto none = archive_from_code(blob("import x\n"));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, "invalid_contract runner absent");
  auto bytes = archive_from_code(blob("# v0\n\xff"));
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.error().code, "invalid_contract not_utf8_text");
  auto zipped = archive_from_code(blob(make_zip({{"a", "x", 8}})));
  ASSERT_FALSE(zipped.ok());
  EXPECT_EQ(zipped.error().code, "invalid_contract runner malformed");
}

}  // namespace
}  // namespace genvm::runners
