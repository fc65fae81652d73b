// GGUF writer: round trips through the reader, byte-for-byte agreement with
// the independent Python encoder (testdata/make_corpus.py), atomic writes and
// rejection of inputs that would make an unreadable file.
#include <QTemporaryDir>
#include <QTest>
#include <cstring>
#include <fstream>

#include "gguf/gguf.h"

using namespace powerinfer;
using namespace powerinfer::gguf;

namespace {

const std::filesystem::path kTestData =
    std::filesystem::path(POWERINFER_SOURCE_DIR) / "engine" / "gguf" / "testdata";

std::vector<uint8_t> read_all(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
    return v;
}

std::vector<std::pair<std::string, Value>> every_value_type() {
    return {
        {"general.architecture", Value::str("llama")},
        {"v.u8", Value::u8(255)},
        {"v.i8", Value::i8(-128)},
        {"v.u16", Value::u16(65535)},
        {"v.i16", Value::i16(-32768)},
        {"v.u32", Value::u32(4294967295u)},
        {"v.i32", Value::i32(INT32_MIN)},
        {"v.u64", Value::u64(UINT64_MAX)},
        {"v.i64", Value::i64(INT64_MIN)},
        {"v.f32", Value::f32(3.25f)},
        {"v.f64", Value::f64(1e-300)},
        {"v.bool_true", Value::boolean(true)},
        {"v.bool_false", Value::boolean(false)},
        {"v.str", Value::str(std::string("with\0nul and \xe2\x82\xac", 16))},
        {"v.empty_str", Value::str("")},
        {"v.str_array", Value::array(ValueType::STRING, {Value::str("a"), Value::str("")})},
        {"v.f32_array", Value::array(ValueType::FLOAT32, {Value::f32(0.5f), Value::f32(-2)})},
        {"v.empty_array", Value::array(ValueType::INT64, {})},
        {"v.nested", Value::array(ValueType::ARRAY,
                                  {Value::array(ValueType::INT8, {Value::i8(-1), Value::i8(2)}),
                                   Value::array(ValueType::INT8, {}),
                                   Value::array(ValueType::INT8, {Value::i8(3)})})},
        {"v.nested_strings",
         Value::array(ValueType::ARRAY,
                      {Value::array(ValueType::ARRAY,
                                    {Value::array(ValueType::STRING, {Value::str("deep")})})})},
    };
}

}  // namespace

class TestGgufWriter : public QObject {
    Q_OBJECT

private slots:
    void roundTrip_data() {
        QTest::addColumn<int>("alignment");
        QTest::newRow("default 32") << 32;
        QTest::newRow("64") << 64;
        QTest::newRow("1") << 1;
        QTest::newRow("4096") << 4096;
    }

    void roundTrip() {
        QFETCH(int, alignment);
        GgufWriter w;
        const auto kv = every_value_type();
        for (const auto& [k, v] : kv) w.set(k, v);
        w.set_alignment(uint64_t(alignment));
        struct T {
            std::string name;
            GgmlType type;
            std::vector<uint64_t> shape;
            size_t bytes;
        };
        const std::vector<T> tensors = {
            {"f32", GgmlType::F32, {3, 5}, 60},
            {"f16", GgmlType::F16, {7}, 14},
            {"q4_1", GgmlType::Q4_1, {64, 2}, 2 * 2 * 20},
            {"q8_0", GgmlType::Q8_0, {32, 1, 3}, 3 * 34},
            {"q4_k", GgmlType::Q4_K, {256, 2, 1, 2}, 4 * 144},
            {"i8", GgmlType::I8, {5}, 5},
        };
        for (size_t i = 0; i < tensors.size(); ++i) {
            const T& t = tensors[i];
            w.add_tensor(t.name, t.type, t.shape, pattern(t.bytes, uint8_t(i)));
        }
        const auto bytes = w.to_bytes();
        QCOMPARE(bytes.size() % uint64_t(alignment), size_t(0));
        const auto f = GgufFile::from_memory(bytes);

        QCOMPARE(f->version(), uint32_t(3));
        QCOMPARE(f->alignment(), uint64_t(alignment));
        // general.alignment is written only when it differs from the default.
        QCOMPARE(f->find("general.alignment") != nullptr, alignment != 32);
        QCOMPARE(f->metadata().size(), kv.size() + (alignment != 32 ? 1 : 0));
        for (size_t i = 0; i < kv.size(); ++i) {
            QCOMPARE(f->metadata()[i].first, kv[i].first);
            QVERIFY2(f->metadata()[i].second == kv[i].second, kv[i].first.c_str());
        }
        QCOMPARE(f->tensors().size(), tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i) {
            const TensorInfo& got = f->tensors()[i];
            QCOMPARE(got.name, tensors[i].name);
            QCOMPARE(got.type, tensors[i].type);
            QCOMPARE(got.shape, tensors[i].shape);
            QCOMPARE(got.n_bytes, uint64_t(tensors[i].bytes));
            QCOMPARE(got.offset % uint64_t(alignment), uint64_t(0));
            const auto want = pattern(tensors[i].bytes, uint8_t(i));
            QVERIFY(std::equal(want.begin(), want.end(), got.data));
        }
    }

    void matchesIndependentEncoder() {
        // The same content as valid_tiny() in testdata/make_corpus.py.
        GgufWriter w;
        w.set("general.architecture", Value::str("llama"));
        w.set("general.name", Value::str("tiny test model"));
        w.set("llama.context_length", Value::u32(256));
        w.set("llama.embedding_length", Value::u32(32));
        w.set("llama.block_count", Value::u32(1));
        w.set("llama.rope.freq_base", Value::f32(10000.0f));
        w.set("llama.attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
        w.set("t.u8", Value::u8(200));
        w.set("t.i8", Value::i8(-100));
        w.set("t.u16", Value::u16(60000));
        w.set("t.i16", Value::i16(-30000));
        w.set("t.u32", Value::u32(4000000000u));
        w.set("t.i32", Value::i32(-2000000000));
        w.set("t.f32", Value::f32(1.5f));
        w.set("t.bool", Value::boolean(true));
        w.set("t.str", Value::str("h\xc3\xa9llo"));
        w.set("t.u64", Value::u64(UINT64_MAX));
        w.set("t.i64", Value::i64(INT64_MIN));
        w.set("t.f64", Value::f64(-0.25));
        w.set("t.empty_array", Value::array(ValueType::INT32, {}));
        w.set("t.int_array",
              Value::array(ValueType::INT32, {Value::i32(1), Value::i32(-2), Value::i32(3)}));
        w.set("t.float_array",
              Value::array(ValueType::FLOAT32, {Value::f32(0.5f), Value::f32(-1.0f)}));
        w.set("tokenizer.ggml.model", Value::str("gpt2"));
        w.set(
            "tokenizer.ggml.tokens",
            Value::array(ValueType::STRING, {Value::str("a"), Value::str("b"), Value::str("<s>")}));
        w.set("t.nested",
              Value::array(ValueType::ARRAY,
                           {Value::array(ValueType::UINT16, {Value::u16(1), Value::u16(2)}),
                            Value::array(ValueType::UINT16, {})}));
        std::vector<uint8_t> f32(64);
        for (int i = 0; i < 16; ++i) {
            const float x = float(i);
            std::memcpy(f32.data() + 4 * i, &x, 4);
        }
        std::vector<uint8_t> q4;
        for (int r = 0; r < 2; ++r)
            for (int i = 0; i < 20; ++i) q4.push_back(uint8_t(i));
        const std::vector<uint8_t> f16 = {0x00, 0x3c, 0x00, 0x3c, 0x00, 0x3c, 0x00, 0x3c};
        w.add_tensor("a.weight", GgmlType::F32, {8, 2}, f32);
        w.add_tensor("b.weight", GgmlType::Q4_1, {64}, q4);
        w.add_tensor("c.weight", GgmlType::F16, {4}, f16);
        QVERIFY(w.to_bytes() == read_all(kTestData / "valid" / "tiny_v3.gguf"));
    }

    void setReplacesAndRoutesAlignment() {
        GgufWriter w;
        w.set("k", Value::u32(1));
        w.set("k", Value::str("two"));
        w.set("general.alignment", Value::u32(128));
        const auto bytes = w.to_bytes();
        const auto f = GgufFile::from_memory(bytes);
        QCOMPARE(f->metadata().size(), size_t(2));
        QCOMPARE(f->get_string("k"), std::optional<std::string>("two"));
        QCOMPARE(f->alignment(), uint64_t(128));
        QCOMPARE(bytes.size() % 128, size_t(0));
    }

    void writeIsAtomicAndReplaces() {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        const auto path = root / "out.gguf";
        {
            std::ofstream old(path, std::ios::binary);
            old << "old content";
        }
        GgufWriter w;
        w.set("general.architecture", Value::str("llama"));
        w.add_tensor("t", GgmlType::F32, {100}, pattern(400, 3));
        w.set_alignment(64);
        w.write(path);
        QVERIFY(read_all(path) == w.to_bytes());
        QCOMPARE(GgufFile::open(path)->tensor("t")->n_bytes, uint64_t(400));
        // Only the target is left: the temp file was renamed over it.
        int files = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(root)) ++files;
        QCOMPARE(files, 1);

        try {
            w.write(root / "no-such-dir" / "x.gguf");
            QFAIL("writing into a missing folder must throw");
        } catch (const GgufError& e) {
            QVERIFY2(std::string(e.what()).find("x.gguf: cannot create") != std::string::npos,
                     e.what());
        }
        QVERIFY(!std::filesystem::exists(root / "no-such-dir"));
    }

    void rejectsBadInput() {
        GgufWriter w;
        QVERIFY_THROWS_EXCEPTION(GgufError, w.set_alignment(0));
        QVERIFY_THROWS_EXCEPTION(GgufError, w.set_alignment(48));
        QVERIFY_THROWS_EXCEPTION(GgufError, w.set("general.alignment", Value::str("32")));
        QVERIFY_THROWS_EXCEPTION(GgufError,
                                 w.add_tensor("t", GgmlType::F32, {4}, std::vector<uint8_t>(15)));
        QVERIFY_THROWS_EXCEPTION(GgufError,
                                 w.add_tensor("t", GgmlType::Q4_0, {31}, std::vector<uint8_t>(18)));
        QVERIFY_THROWS_EXCEPTION(GgufError, w.add_tensor("t", GgmlType::F32, {}, {}));
        QVERIFY_THROWS_EXCEPTION(
            GgufError, w.add_tensor("t", GgmlType::F32, {1, 1, 1, 1, 1}, std::vector<uint8_t>(4)));
        QVERIFY_THROWS_EXCEPTION(
            GgufError,
            w.add_tensor("t", GgmlType::F32, {1ull << 40, 1ull << 40}, std::vector<uint8_t>(4)));
        w.add_tensor("t", GgmlType::F32, {1}, std::vector<uint8_t>(4));
        QVERIFY_THROWS_EXCEPTION(GgufError,
                                 w.add_tensor("t", GgmlType::F32, {1}, std::vector<uint8_t>(4)));

        const auto rejects = [](Value v) {
            GgufWriter bad;
            bad.set("k", std::move(v));
            try {
                bad.to_bytes();
            } catch (const GgufError&) {
                return true;
            }
            return false;
        };
        QVERIFY(rejects(Value{ValueType::UINT8, uint64_t{256}}));
        QVERIFY(rejects(Value{ValueType::INT16, int64_t{-40000}}));
        QVERIFY(rejects(Value{ValueType::UINT32, int64_t{1}}));
        QVERIFY(rejects(Value{ValueType::STRING, uint64_t{1}}));
        QVERIFY(rejects(Value{ValueType::BOOL, std::string("yes")}));
        QVERIFY(rejects(Value{static_cast<ValueType>(13), uint64_t{1}}));
        QVERIFY(rejects(Value::array(ValueType::UINT8, {Value::u8(1), Value::u16(2)})));
        QVERIFY(!rejects(Value{ValueType::INT8, int64_t{-128}}));
    }
};

QTEST_GUILESS_MAIN(TestGgufWriter)
#include "tst_gguf_writer.moc"
