#include "snapshot/pickle_reader.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "util/corpus_path.h"
#include "util/error.h"

namespace sextant {
namespace {

using namespace std::string_literals;

PickleDocument Read(std::string_view bytes) { return ReadPickle(bytes, "test.pickle"); }

std::string ErrorOf(std::string_view bytes) {
  try {
    Read(bytes);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

// Hand-assembled byte strings; the comments give what Python's pickle.loads returns for them.
TEST(PickleReaderTest, Protocol4DictOfScalars) {
  // pickle.dumps({'a': 1, 'b': -2, 'c': 300, 'd': 1.5, 'e': None, 'f': True}, protocol=4)
  // with FRAME/MEMOIZE as CPython writes them.
  std::string p =
      "\x80\x04\x95\x32\x00\x00\x00\x00\x00\x00\x00"
      "}\x94(\x8c\x01"
      "a\x94K\x01\x8c\x01"
      "b\x94J\xfe\xff\xff\xff\x8c\x01"
      "c\x94M\x2c\x01"
      "\x8c\x01"
      "d\x94G\x3f\xf8\x00\x00\x00\x00\x00\x00\x8c\x01"
      "e\x94N\x8c\x01"
      "f\x94\x88u."s;
  PickleDocument doc = Read(p);
  EXPECT_EQ(doc.Repr(doc.root), "{'a': 1, 'b': -2, 'c': 300, 'd': 1.5, 'e': None, 'f': True}");
  ASSERT_NE(doc.Find(doc.root, "c"), nullptr);
  EXPECT_EQ(doc.Find(doc.root, "c")->integer, 300);
  EXPECT_EQ(doc.Find(doc.root, "zz"), nullptr);
}

TEST(PickleReaderTest, MemoSharesContainersLikePython) {
  // x = [1]; pickle.dumps([x, x], protocol=2) -> the second element is a BINGET of the first,
  // so both refer to one list.
  std::string p =
      "\x80\x02]q\x00(]q\x01K\x01"
      "ah\x01"
      "e."s;
  PickleDocument doc = Read(p);
  const auto& outer = doc.Items(doc.root);
  ASSERT_EQ(outer.size(), 2u);
  EXPECT_EQ(outer[0].kind, PickleKind::kList);
  EXPECT_EQ(outer[0].index, outer[1].index);
  EXPECT_EQ(doc.Repr(doc.root), "[[1], [1]]");
}

TEST(PickleReaderTest, Protocol0TextOpcodes) {
  // pickle.dumps({'k': [1, 2**70, 'x\u00e9'], 's': 'q'}, protocol=0) as CPython 3 writes it,
  // plus a protocol-0 float, True via INT and a quoted STRING (Python 2 style).
  std::string p =
      "(dp0\nVk\np1\n(lp2\nI1\naL1180591620717411303424L\naVx\\u00e9\np3\nasVs\np4\nVq\n"
      "p5\nsVf\nF0.25\nsVt\nI01\nsVo\nS'it\\'s\\n'\np6\ns.";
  PickleDocument doc = Read(p);
  const PickleValue* k = doc.Find(doc.root, "k");
  ASSERT_NE(k, nullptr);
  const auto& items = doc.Items(*k);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].integer, 1);
  EXPECT_EQ(items[1].kind, PickleKind::kBigInt);  // 2**70 needs 9 bytes
  EXPECT_EQ(doc.Text(items[2]), "x\xc3\xa9");     // U+00E9 in UTF-8
  EXPECT_EQ(doc.Text(*doc.Find(doc.root, "s")), "q");
  EXPECT_DOUBLE_EQ(doc.Find(doc.root, "f")->number, 0.25);
  EXPECT_TRUE(doc.Find(doc.root, "t")->boolean);
  EXPECT_EQ(doc.Text(*doc.Find(doc.root, "o")), "it's\n");
}

TEST(PickleReaderTest, LongOpcodesDecodeTwosComplement) {
  // LONG1 with 0 bytes is 0; ff is -1; 0x80 0x00 is 128; 8 bytes of 0xff.. is -1;
  // LONG4 with 00 00 00 80 00 is 2**31; INT -12 in text.
  std::string p = std::string("\x80\x02(\x8a\x00\x8a\x01\xff\x8a\x02\x80\x00", 12) +
                  "\x8a\x08\xff\xff\xff\xff\xff\xff\xff\xff" +
                  std::string("\x8b\x05\x00\x00\x00\x00\x00\x00\x80\x00", 10) + "I-12\nl.";
  PickleDocument doc = Read(p);
  EXPECT_EQ(doc.Repr(doc.root), "[0, -1, 128, -1, 2147483648, -12]");
}

TEST(PickleReaderTest, TuplesSetsBytesAndStackOps) {
  // (), (1,), (1, 2), (1, 2, 3), {1, 2}, frozenset({3}), b'ab', bytearray(b'c'), with DUP,
  // POP and POP_MARK exercised on throw-away values.
  std::string q;
  q += "\x80\x05(";
  q += ")";
  q += "K\x01\x85";
  q += "K\x01K\x02\x86";
  q += "K\x01K\x02K\x03\x87";
  q += "\x8f(K\x01K\x02\x90";
  q += "(K\x03\x91";
  q += "C\x02"
       "ab";
  q += std::string("\x96\x01\x00\x00\x00\x00\x00\x00\x00", 9) + "c";
  q += "N200";  // push None, DUP, POP, POP
  q += "(K\x09K\x09"
       "1";  // MARK, two ints, POP_MARK
  q += "l.";
  PickleDocument doc = Read(q);
  EXPECT_EQ(doc.Repr(doc.root),
            "[(), (1,), (1, 2), (1, 2, 3), {1, 2}, frozenset({3}), b'ab', b'c']");
}

TEST(PickleReaderTest, RefusesCodeExecutionWithOffsetAndName) {
  // pickle.dumps(os.system, protocol=0) starts with GLOBAL 'posix\nsystem\n'.
  EXPECT_EQ(ErrorOf("cposix\nsystem\n."),
            "test.pickle at byte 0: 'GLOBAL': refused: this opcode imports or calls Python code "
            "(or needs out-of-band data); only plain data pickles are read");
  // STACK_GLOBAL after two strings at byte 2+3+3 = 8; REDUCE at byte 3.
  EXPECT_NE(ErrorOf("\x80\x04\x8c\x01"
                    "a\x8c\x01"
                    "b\x93.")
                .find("at byte 8: 'STACK_GLOBAL'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("\x80\x02NNR.").find("at byte 4: 'REDUCE'"), std::string::npos);
  for (const char* op : {"b", "i", "o", "P", "Q"}) {
    EXPECT_NE(ErrorOf(std::string("N") + op + "x\n.").find("refused"), std::string::npos) << op;
  }
  for (char op : {'\x81', '\x82', '\x83', '\x84', '\x92', '\x97', '\x98'}) {
    EXPECT_NE(ErrorOf(std::string("NN") + op + "\x01\x00\x00\x00.").find("refused"),
              std::string::npos)
        << int(op);
  }
}

TEST(PickleReaderTest, MalformedInputGivesLocatedErrors) {
  EXPECT_EQ(ErrorOf(""), "test.pickle at byte 0: truncated pickle: no STOP opcode before the end");
  EXPECT_EQ(ErrorOf("\x80\x04K"),
            "test.pickle at byte 2: 'BININT1': truncated: needs 1 bytes, 0 remain");
  EXPECT_EQ(ErrorOf("\xff."), "test.pickle at byte 0: unknown opcode 0xff");
  EXPECT_EQ(ErrorOf("\x80\x06N."), "test.pickle at byte 0: 'PROTO': unsupported protocol 6");
  EXPECT_EQ(ErrorOf("h\x05."), "test.pickle at byte 0: 'BINGET': memo key 5 was never stored");
  EXPECT_EQ(ErrorOf("a."), "test.pickle at byte 0: 'APPEND': stack underflow");
  EXPECT_EQ(ErrorOf("K\x01K\x02"
                    "a."),
            "test.pickle at byte 4: 'APPEND': target is a int, not a list");
  EXPECT_EQ(ErrorOf("}(K\x01u."),
            "test.pickle at byte 4: 'SETITEMS': odd number of items for a dict");
  EXPECT_EQ(ErrorOf("e."), "test.pickle at byte 0: 'APPENDS': no MARK on the stack");
  EXPECT_EQ(ErrorOf("."), "test.pickle at byte 0: 'STOP': STOP with an empty stack");
  // A length that claims more than the file holds must fail before allocating it.
  EXPECT_EQ(
      ErrorOf("\x8d\xff\xff\xff\xff\xff\xff\xff\x7f."),
      "test.pickle at byte 0: 'BINUNICODE8': truncated: needs 9223372036854775807 bytes, 1 remain");
  EXPECT_EQ(ErrorOf("N\x94r\xff\xff\xff\x7f."),
            "test.pickle at byte 2: 'LONG_BINPUT': memo index 2147483647 is larger than the input "
            "could need");
  EXPECT_EQ(ErrorOf("Ix\n."), "test.pickle at byte 0: 'INT': bad integer 'x'");
  EXPECT_EQ(ErrorOf("(]1a."), "test.pickle at byte 3: 'APPEND': stack underflow");
}

TEST(PickleReaderTest, ValueLimitStopsRunawayInput) {
  PickleLimits limits;
  limits.max_values = 3;
  try {
    ReadPickle("(NNNNl.", "x", limits);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 3 values"), std::string::npos);
  }
}

TEST(PickleReaderTest, ByteLimitNamesTheFileAndOffset) {
  // A 100-byte BINUNICODE at byte 2 costs a std::string plus its 100 bytes: over a budget
  // of 100.
  PickleLimits limits;
  limits.max_bytes = 100;
  std::string p = "\x80\x02X\x64\x00\x00\x00"s + std::string(100, 'a') + ".";
  try {
    ReadPickle(p, "x.pickle", limits);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "x.pickle at byte 2: 'BINUNICODE': more than 100 bytes of values: refusing to "
                 "continue");
  }
}

// A snapshot-shaped pickle: {'segments': [S] * repeats} where S is one segment dict holding
// `blocks` distinct block dicts, memoised once (LONG_BINPUT 4) and named again by LONG_BINGET
// 4 each time. Keys after their first use are BINGETs, as CPython's pickler writes them.
std::string SharedSegmentPickle(int blocks, int repeats) {
  auto str = [](std::string_view s) {  // SHORT_BINUNICODE
    return "\x8c"s + static_cast<char>(s.size()) + std::string(s);
  };
  auto i32 = [](int32_t v) {
    std::string b(4, '\0');
    for (int k = 0; k < 4; ++k) b[k] = static_cast<char>((v >> (8 * k)) & 0xFF);
    return b;
  };
  std::string p = "\x80\x02";
  p += "}";                                          // root
  p += str("segments") + "q\x00"s;                   // key; BINPUT 0
  p += "]";                                          // the segments list
  p += "}(";                                         // the segment dict, MARK
  p += str("address") + "J" + i32(1 << 20);          //
  p += str("total_size") + "J" + i32(blocks * 512);  //
  p += str("blocks") + "](";                         // its blocks list, MARK
  for (int i = 0; i < blocks; ++i) {
    if (i == 0) {  // size 512 (BININT2 00 02), state 'active_allocated'; keys memoised 1-3
      p += "}(" + str("size") + "q\x01M\x00\x02"s + str("state") + "q\x02" +
           str("active_allocated") + "q\x03u";
    } else {
      p += "}(h\x01M\x00\x02h\x02h\x03u"s;
    }
  }
  p += "e";                                             // APPENDS the blocks
  p += "u";                                             // SETITEMS address, total_size, blocks
  p += "r" + i32(4) + "0";                              // LONG_BINPUT 4 the segment; POP
  p += "(";                                             // MARK
  for (int i = 0; i < repeats; ++i) p += "j" + i32(4);  // LONG_BINGET 4
  p += "e";                                             // APPENDS into the segments list
  p += "s.";                                            // SETITEM root['segments']; STOP
  return p;
}

TEST(PickleReaderTest, MemoReferencesToOneSegmentAreSharedNotCopied) {
  constexpr int kBlocks = 20000, kRepeats = 1000;
  std::string once = SharedSegmentPickle(kBlocks, 1);
  std::string many = SharedSegmentPickle(kBlocks, kRepeats);
  // Budgets a shared read fits easily and a copying one could not: copies would be
  // 1000 x 20000 block dicts, 10^8 values and over a gigabyte.
  PickleLimits limits;
  limits.max_values = 200000;
  limits.max_bytes = 8 << 20;
  PickleDocument base = ReadPickle(once, "once.pickle", limits);
  PickleDocument doc = ReadPickle(many, "many.pickle", limits);

  // Values pushed, by hand: root, key, list, segment dict (4); three keys and their values
  // (6); 5 per block (dict, key, size, key, state); one per reference.
  EXPECT_EQ(base.values, 10 + 5 * kBlocks + 1);
  EXPECT_EQ(doc.values, 10 + 5 * kBlocks + kRepeats);
  // The 999 extra references cost one 16-byte item each in the list (and in the stack).
  EXPECT_LE(doc.bytes - base.bytes, 2 * 16 * (kRepeats - 1));
  const auto& segments = doc.Items(*doc.Find(doc.root, "segments"));
  ASSERT_EQ(segments.size(), static_cast<size_t>(kRepeats));
  for (const PickleValue& s : segments) EXPECT_EQ(s.index, segments[0].index);
  EXPECT_EQ(doc.Items(*doc.Find(segments[0], "blocks")).size(), static_cast<size_t>(kBlocks));
}

TEST(PickleReaderTest, LargeDictsAreFoundByIndexWithLastKeyWinning) {
  // {'k0': 0, ..., 'k99': 99} then SETITEM 'k7' = -1 again: pickle.loads keeps the last.
  std::string p = "\x80\x02}(";
  for (int i = 0; i < 100; ++i) {
    std::string k = "k" + std::to_string(i);
    p += "\x8c"s + static_cast<char>(k.size()) + k + "K" + static_cast<char>(i);
  }
  p += "u\x8c\x02k7J\xff\xff\xff\xffs.";
  PickleDocument doc = Read(p);
  ASSERT_GT(doc.Items(doc.root).size() / 2, PickleDocument::kIndexedDictKeys);
  EXPECT_EQ(doc.Find(doc.root, "k7")->integer, -1);
  EXPECT_EQ(doc.Find(doc.root, "k0")->integer, 0);
  EXPECT_EQ(doc.Find(doc.root, "k99")->integer, 99);
  EXPECT_EQ(doc.Find(doc.root, "k100"), nullptr);
  EXPECT_EQ(doc.Find(doc.root, ""), nullptr);
}

TEST(PickleReaderTest, CyclesDoNotLoopOrLeak) {
  // l = []; l.append(l); pickle.dumps(l, protocol=2)
  std::string p =
      "\x80\x02]q\x00h\x00"
      "a."s;
  PickleDocument doc = Read(p);
  EXPECT_EQ(doc.Repr(doc.root, 3), "[[[...]]]");
}

TEST(PickleReaderTest, ReprOfSharedReferencesIsBounded) {
  // l = [0]; then 20 times l = [l, l]: 2**20 leaves in 60 bytes of pickle.
  std::string p =
      "\x80\x02]K\x00"
      "a"s;
  for (int i = 0; i < 20; ++i) {
    std::string ref = "h" + std::string(1, static_cast<char>(i));  // BINGET i
    p += "\x94(" + ref + ref + "l";                                // MEMOIZE, MARK, LIST
  }
  p += ".";
  PickleDocument doc = Read(p);
  std::string r = doc.Repr(doc.root, 64, 1000);
  EXPECT_LT(r.size(), 1100u);
  EXPECT_NE(r.find("..."), std::string::npos);
}

TEST(PickleReaderTest, ReadsEveryCorpusSnapshot) {
  SEXTANT_SKIP_WITHOUT_CORPUS();
  // Segment and trace-entry counts per file from corpus/README-traces.md section 3.
  struct Expected {
    const char* path;
    size_t segments;
    size_t trace_entries;
  };
  const Expected files[] = {
      {"SnapViewer/memory.pickle", 5, 1040},
      {"Yiyi-philosophy-LLM-inference/1.3b_snapshot.pickle", 257, 1},
      {"Yiyi-philosophy-LLM-inference/oom_snapshot.pickle", 176, 1},
      {"kkaitlyn111-cs336-a2-systems/memory_2.7b_forward.pickle", 961, 8694},
      {"kkaitlyn111-cs336-a2-systems/memory_ctx128_forward.pickle", 516, 4657},
      {"kkaitlyn111-cs336-a2-systems/memory_ctx128_fullstep.pickle", 1010, 19052},
      {"kkaitlyn111-cs336-a2-systems/memory_ctx256_forward.pickle", 620, 3889},
      {"kkaitlyn111-cs336-a2-systems/memory_ctx512_forward.pickle", 649, 4152},
      {"silmont2000-assignment2-systems/mem_snapshot.pickle", 9, 97},
      {"silmont2000-assignment2-systems/memory_forward_bf16_128.pickle", 43, 2811},
      {"silmont2000-assignment2-systems/memory_forward_fp32_128.pickle", 29, 2043},
  };
  for (const auto& f : files) {
    std::string path = CorpusPath("snapshots/") + f.path;
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path;
    std::stringstream ss;
    ss << in.rdbuf();
    PickleDocument doc = ReadPickle(ss.str(), path);
    const PickleValue* segments = doc.Find(doc.root, "segments");
    const PickleValue* traces = doc.Find(doc.root, "device_traces");
    ASSERT_NE(segments, nullptr) << path;
    ASSERT_NE(traces, nullptr) << path;
    EXPECT_EQ(doc.Items(*segments).size(), f.segments) << path;
    ASSERT_EQ(doc.Items(*traces).size(), 1u) << path;
    EXPECT_EQ(doc.Items(doc.Items(*traces)[0]).size(), f.trace_entries) << path;
  }
}

TEST(PickleReaderTest, OpcodeNames) {
  EXPECT_STREQ(PickleOpcodeName('}'), "EMPTY_DICT");
  EXPECT_STREQ(PickleOpcodeName(0x95), "FRAME");
  EXPECT_STREQ(PickleOpcodeName(0xff), "");
}

}  // namespace
}  // namespace sextant
