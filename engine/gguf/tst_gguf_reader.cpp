// GGUF reader: the committed tiny files (built by testdata/make_corpus.py, an
// independent encoder), the malformed corpus, file-system errors, and the
// real default model (whole and truncated).
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "gguf/gguf.h"

#ifdef __linux__
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace powerinfer;
using namespace powerinfer::gguf;

namespace {

#ifdef __linux__
// Root (CI containers run as root) reads any file because of CAP_DAC_OVERRIDE
// and CAP_DAC_READ_SEARCH. Without them in this thread's effective set it is
// refused as any user would be; the permitted set keeps them, so the
// destructor puts them back.
class WithoutFilePermissionOverride {
public:
    WithoutFilePermissionOverride() {
        if (::geteuid() != 0) return;
        if (::syscall(SYS_capget, &header_, saved_) != 0) return;
        __user_cap_data_struct dropped[2] = {saved_[0], saved_[1]};
        dropped[0].effective &= ~(CAP_TO_MASK(CAP_DAC_OVERRIDE) | CAP_TO_MASK(CAP_DAC_READ_SEARCH));
        dropped_ = ::syscall(SYS_capset, &header_, dropped) == 0;
    }
    ~WithoutFilePermissionOverride() {
        if (dropped_) ::syscall(SYS_capset, &header_, saved_);
    }
    WithoutFilePermissionOverride(const WithoutFilePermissionOverride&) = delete;
    WithoutFilePermissionOverride& operator=(const WithoutFilePermissionOverride&) = delete;

private:
    __user_cap_header_struct header_{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct saved_[2]{};
    bool dropped_ = false;
};
#endif

const std::filesystem::path kTestData =
    std::filesystem::path(POWERINFER_SOURCE_DIR) / "engine" / "gguf" / "testdata";

// The message of the GgufError `f` throws; fails the test if it does not throw.
template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const GgufError& e) {
        return e.what();
    }
    return "<no error>";
}

std::filesystem::path model_path() {
    const char* p = std::getenv("POWERINFER_MODEL");
    return p && *p ? std::filesystem::path(p) : std::filesystem::path();
}

void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary);
    f << bytes;
}

}  // namespace

class TestGgufReader : public QObject {
    Q_OBJECT

private slots:
    void tinyFile_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("version");
        QTest::newRow("v3") << "tiny_v3.gguf" << 3;
        QTest::newRow("v2") << "tiny_v2.gguf" << 2;
    }

    void tinyFile() {
        QFETCH(QString, file);
        QFETCH(int, version);
        const auto f = GgufFile::open(kTestData / "valid" / file.toStdString());
        QCOMPARE(f->version(), uint32_t(version));
        QCOMPARE(f->alignment(), uint64_t(32));
        QCOMPARE(f->metadata().size(), size_t(25));

        QCOMPARE(f->get_string("general.architecture"), std::optional<std::string>("llama"));
        QCOMPARE(f->get_int("llama.context_length"), std::optional<int64_t>(256));
        QCOMPARE(f->get_int("t.u8"), std::optional<int64_t>(200));
        QCOMPARE(f->get_int("t.i8"), std::optional<int64_t>(-100));
        QCOMPARE(f->get_int("t.u16"), std::optional<int64_t>(60000));
        QCOMPARE(f->get_int("t.i16"), std::optional<int64_t>(-30000));
        QCOMPARE(f->get_int("t.u32"), std::optional<int64_t>(4000000000));
        QCOMPARE(f->get_int("t.i32"), std::optional<int64_t>(-2000000000));
        QCOMPARE(f->get_int("t.i64"), std::optional<int64_t>(INT64_MIN));
        QCOMPARE(f->find("t.u64")->as_uint(), std::optional<uint64_t>(UINT64_MAX));
        QCOMPARE(f->get_float("t.f32"), std::optional<double>(1.5));
        QCOMPARE(f->get_float("t.f64"), std::optional<double>(-0.25));
        QCOMPARE(f->get_float("t.u8"), std::optional<double>(200.0));  // ints read as floats
        QCOMPARE(f->get_float("llama.attention.layer_norm_rms_epsilon"),
                 std::optional<double>(double(1e-5f)));
        QCOMPARE(f->get_bool("t.bool"), std::optional<bool>(true));
        QCOMPARE(f->get_string("t.str"), std::optional<std::string>("h\xc3\xa9llo"));

        // Each value keeps its declared type.
        QCOMPARE(f->find("t.u16")->type, ValueType::UINT16);
        QCOMPARE(f->find("t.i8")->type, ValueType::INT8);
        QCOMPARE(f->find("t.f32")->type, ValueType::FLOAT32);

        const Array* empty = f->find("t.empty_array")->as_array();
        QVERIFY(empty);
        QCOMPARE(empty->elem_type, ValueType::INT32);
        QVERIFY(empty->items.empty());
        QCOMPARE(f->get_int_array("t.int_array"), (std::vector<int64_t>{1, -2, 3}));
        QCOMPARE(f->get_float_array("t.float_array"), (std::vector<float>{0.5f, -1.0f}));
        QCOMPARE(f->get_string_array("tokenizer.ggml.tokens"),
                 (std::vector<std::string>{"a", "b", "<s>"}));

        const Value expected_nested = Value::array(
            ValueType::ARRAY, {Value::array(ValueType::UINT16, {Value::u16(1), Value::u16(2)}),
                               Value::array(ValueType::UINT16, {})});
        QVERIFY(*f->find("t.nested") == expected_nested);

        QCOMPARE(f->tensors().size(), size_t(3));
        const TensorInfo* a = f->tensor("a.weight");
        QVERIFY(a);
        QCOMPARE(a->type, GgmlType::F32);
        QCOMPARE(a->shape, (std::vector<uint64_t>{8, 2}));
        QCOMPARE(a->n_elements, uint64_t(16));
        QCOMPARE(a->n_bytes, uint64_t(64));
        QCOMPARE(a->offset, uint64_t(0));
        for (int i = 0; i < 16; ++i) {
            float x;
            std::memcpy(&x, a->data + 4 * i, 4);
            QCOMPARE(x, float(i));
        }
        const TensorInfo* b = f->tensor("b.weight");
        QCOMPARE(b->type, GgmlType::Q4_1);
        QCOMPARE(b->n_bytes, uint64_t(40));
        QCOMPARE(b->offset, uint64_t(64));
        QCOMPARE(b->data[0], uint8_t(0));
        QCOMPARE(b->data[19], uint8_t(19));
        QCOMPARE(b->data[20], uint8_t(0));
        QCOMPARE(f->tensor("c.weight")->type, GgmlType::F16);
        QCOMPARE(f->tensor("c.weight")->n_bytes, uint64_t(8));
        QVERIFY(!f->tensor("missing"));
        QCOMPARE(f->data_offset() % 32, uint64_t(0));
        QVERIFY(f->tensor("c.weight")->data + 8 <= f->bytes().data() + f->file_size());
    }

    void accessorsRejectOtherKinds() {
        const auto f = GgufFile::open(kTestData / "valid" / "tiny_v3.gguf");
        QCOMPARE(f->get_int("t.u64"), std::nullopt);         // does not fit int64
        QCOMPARE(f->find("t.i8")->as_uint(), std::nullopt);  // negative
        QCOMPARE(f->get_int("t.str"), std::nullopt);
        QCOMPARE(f->get_int("t.f32"), std::nullopt);
        QCOMPARE(f->get_string("t.u8"), std::nullopt);
        QCOMPARE(f->get_bool("t.u8"), std::nullopt);
        QCOMPARE(f->get_float("t.str"), std::nullopt);
        QCOMPARE(f->get_int("no.such.key"), std::nullopt);
        QVERIFY(f->get_string_array("t.int_array").empty());
        QVERIFY(f->get_int_array("tokenizer.ggml.tokens").empty());
        QVERIFY(f->get_float_array("t.str").empty());
        QVERIFY(f->get_int_array("t.nested").empty());
        QVERIFY(!f->find("t.str")->as_array());
    }

    void fromMemoryMatchesOpen() {
        std::ifstream in(kTestData / "valid" / "tiny_v3.gguf", std::ios::binary);
        const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
        const auto f = GgufFile::from_memory(bytes);
        QCOMPARE(f->tensors().size(), size_t(3));
        QCOMPARE(f->tensor("a.weight")->data, bytes.data() + f->data_offset());
        // Every cut before the end of the last tensor's data is rejected.
        const TensorInfo* last = f->tensor("c.weight");
        const size_t data_end = f->data_offset() + last->offset + last->n_bytes;
        QVERIFY(data_end < bytes.size());  // the padding after it may go
        GgufFile::from_memory(std::span(bytes).first(data_end));
        for (size_t n = 0; n < data_end; ++n) {
            const std::string msg =
                error_of([&] { GgufFile::from_memory(std::span(bytes).first(n), "cut.gguf"); });
            QVERIFY2(msg.rfind("cut.gguf: ", 0) == 0, msg.c_str());
            QVERIFY2(n == 0 || msg.find("offset") != std::string::npos, msg.c_str());
        }
    }

    void malformedCorpus() {
        std::ifstream manifest(kTestData / "malformed.tsv");
        QVERIFY(manifest);
        struct Expect {
            bool offset;
            std::string text;
        };
        std::map<std::string, Expect> expected;
        std::string line;
        std::getline(manifest, line);  // header
        while (std::getline(manifest, line)) {
            std::istringstream ls(line);
            std::string name, offset, text;
            std::getline(ls, name, '\t');
            std::getline(ls, offset, '\t');
            std::getline(ls, text);
            expected[name] = {offset == "yes", text};
        }
        int checked = 0;
        for (const auto& entry : std::filesystem::directory_iterator(kTestData / "malformed")) {
            const std::string name = entry.path().filename().string();
            const auto it = expected.find(name);
            QVERIFY2(it != expected.end(), ("not listed in malformed.tsv: " + name).c_str());
            const std::string msg = error_of([&] { GgufFile::open(entry.path()); });
            QVERIFY2(msg.rfind(entry.path().string() + ": ", 0) == 0, (name + ": " + msg).c_str());
            QVERIFY2(msg.find(it->second.text) != std::string::npos, (name + ": " + msg).c_str());
            if (it->second.offset)
                QVERIFY2(msg.find(" at offset ") != std::string::npos, (name + ": " + msg).c_str());
            ++checked;
        }
        QCOMPARE(checked, int(expected.size()));
        QVERIFY(checked >= 18);
    }

    void fileSystemErrors() {
        QTemporaryDir dir;
        const std::filesystem::path root = dir.path().toStdString();
        const std::string missing = error_of([&] { GgufFile::open(root / "nope.gguf"); });
        QVERIFY2(missing.find("nope.gguf: file not found") != std::string::npos, missing.c_str());
        const std::string directory = error_of([&] { GgufFile::open(root); });
        QVERIFY2(directory.find("is a directory") != std::string::npos, directory.c_str());
        write_bytes(root / "empty.gguf", "");
        const std::string empty = error_of([&] { GgufFile::open(root / "empty.gguf"); });
        QVERIFY2(empty.find("empty.gguf: the file is empty") != std::string::npos, empty.c_str());
    }

    void permissionDenied() {
        QTemporaryDir dir;
        const std::filesystem::path p = std::filesystem::path(dir.path().toStdString()) / "x.gguf";
        write_bytes(p, "GGUF");
        std::filesystem::permissions(p, std::filesystem::perms::none);
#ifdef __linux__
        const WithoutFilePermissionOverride as_a_user;
        // Under CI this skip fails (cmake/run_qt_test.cmake): root is refused too.
        if (std::ifstream(p).is_open())
            QSKIP("running with privileges that ignore file permissions");
#else
        if (std::ifstream(p).is_open())
            QSKIP("file permissions do not deny reading on this platform");
#endif
        const std::string msg = error_of([&] { GgufFile::open(p); });
        QVERIFY2(msg.find("permission denied") != std::string::npos, msg.c_str());
    }

    void alignmentAndZeroSizedTensors() {
        GgufWriter w;
        w.set_alignment(64);
        w.add_tensor("empty", GgmlType::F32, {0, 3}, {});
        w.add_tensor("x", GgmlType::F32, {3}, std::vector<uint8_t>(12, 1));
        const auto bytes = w.to_bytes();
        const auto f = GgufFile::from_memory(bytes);
        QCOMPARE(f->alignment(), uint64_t(64));
        QCOMPARE(f->get_int("general.alignment"), std::optional<int64_t>(64));
        QCOMPARE(f->data_offset() % 64, uint64_t(0));
        QCOMPARE(f->tensor("empty")->n_bytes, uint64_t(0));
        QCOMPARE(f->tensor("x")->offset % 64, uint64_t(0));
    }

    void nestingLimit() {
        const auto nested = [](int depth) {
            Value v = Value::array(ValueType::UINT8, {Value::u8(1)});
            for (int i = 1; i < depth; ++i) v = Value::array(ValueType::ARRAY, {v});
            return v;
        };
        GgufWriter w;
        w.set("deep", nested(8));
        const auto bytes = w.to_bytes();
        QVERIFY(*GgufFile::from_memory(bytes)->find("deep") == nested(8));
        GgufWriter too_deep;
        too_deep.set("deep", nested(9));
        QVERIFY_THROWS_EXCEPTION(GgufError, too_deep.to_bytes());
    }

    void realModel() {
        const auto path = model_path();
        if (path.empty()) QSKIP("POWERINFER_MODEL is not set (scripts/test sets it)");
        QElapsedTimer timer;
        qint64 best_ns = INT64_MAX;
        std::unique_ptr<GgufFile> f;
        for (int i = 0; i < 5; ++i) {
            timer.start();
            f = GgufFile::open(path);
            best_ns = std::min(best_ns, timer.nsecsElapsed());
        }
        qInfo("opened %s (%.1f MB) in %.2f ms", path.filename().string().c_str(),
              f->file_size() / 1e6, best_ns / 1e6);
        QVERIFY(best_ns < 1'000'000'000);

        QCOMPARE(f->get_string("general.architecture"), std::optional<std::string>("llama"));
        QCOMPARE(f->get_string_array("tokenizer.ggml.tokens").size(), size_t(49152));
        QCOMPARE(f->get_int("llama.block_count"), std::optional<int64_t>(30));
        QVERIFY(f->tensors().size() >= 270 && f->tensors().size() <= 300);
        QVERIFY(f->tensor("token_embd.weight"));
        std::set<const uint8_t*> starts;
        const uint8_t* begin = f->bytes().data();
        for (const TensorInfo& t : f->tensors()) {
            QVERIFY(t.data >= begin + f->data_offset());
            QVERIFY2(t.data + t.n_bytes <= begin + f->file_size(), t.name.c_str());
            QCOMPARE(uint64_t(t.data - begin), f->data_offset() + t.offset);
            QCOMPARE(uint64_t(t.data - begin) % f->alignment(), uint64_t(0));
            QCOMPARE(t.n_bytes, *ggml_row_bytes(t.type, t.n_elements));
            starts.insert(t.data);
        }
        QCOMPARE(starts.size(), f->tensors().size());
    }

    void realModelTruncated() {
        const auto path = model_path();
        if (path.empty()) QSKIP("POWERINFER_MODEL is not set (scripts/test sets it)");
        const auto f = GgufFile::open(path);
        uint64_t data_end = 0;
        for (const TensorInfo& t : f->tensors())
            data_end = std::max(data_end, f->data_offset() + t.offset + t.n_bytes);
        // Cuts in the header, spread through the metadata and tensor infos,
        // and spread through the tensor data (any cut before data_end loses
        // some tensor's bytes).
        std::vector<uint64_t> cuts = {1, 3, 4, 7, 8, 15, 16, 23, 24, 25, 40};
        const uint64_t meta = f->data_offset();
        for (int i = 1; i <= 15; ++i) cuts.push_back(meta * i / 16);
        for (int i = 0; i < 14; ++i) cuts.push_back(meta + (data_end - meta) * i / 14 + 1);
        cuts.push_back(data_end - 1);
        QVERIFY(cuts.size() >= 40);
        for (uint64_t n : cuts) {
            const std::string msg =
                error_of([&] { GgufFile::from_memory(f->bytes().first(n), "model.gguf"); });
            QVERIFY2(msg.find(" at offset ") != std::string::npos,
                     (std::to_string(n) + ": " + msg).c_str());
            QVERIFY2(msg.find("truncated") != std::string::npos,
                     (std::to_string(n) + ": " + msg).c_str());
        }
    }

    void describeRealModel() {
        const auto path = model_path();
        if (path.empty()) QSKIP("POWERINFER_MODEL is not set (scripts/test sets it)");
        const auto f = GgufFile::open(path);
        const std::string text = describe(*f);
        qInfo("%s", text.substr(0, 1800).c_str());
        for (const char* s : {"architecture          llama", "block count           30",
                              "vocab size            49152", "token_embd.weight", "Q4_1",
                              "embedding length      576"}) {
            QVERIFY2(text.find(s) != std::string::npos, s);
        }
        // The type column starts at the same position in every tensor row.
        std::istringstream lines(text.substr(text.find("\nTensors\n") + 9));
        std::string row;
        std::getline(lines, row);
        const size_t type_col = row.find("type");
        int rows = 0;
        while (std::getline(lines, row) && !row.empty()) {
            if (row.find(".weight") == std::string::npos) continue;
            QVERIFY2(row[type_col - 1] == ' ' && row[type_col] != ' ', row.c_str());
            ++rows;
        }
        QCOMPARE(rows, int(f->tensors().size()));
    }
};

QTEST_GUILESS_MAIN(TestGgufReader)
#include "tst_gguf_reader.moc"
