// Qwen3.5 (qwen35_graph.cpp) against llama.cpp: the tiny random-weight
// qwen35 (and qwen35moe) models of tests/fixtures/qwen35_greedy.json are
// regenerated with our writer (the same bytes as the fixture's, checked by
// hash), run with llama.cpp's micro-batches of 4, and their greedy tokens and
// top-5 logits must equal llama.cpp's bit for bit at every SIMD level. Also:
// the recurrent state per sequence slot (a rewound prefix, a context shift
// and batched rows give the bits of a fresh run), and the refusals.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <fstream>
#include <iterator>

#include "backend/compute.h"
#include "calibrate/synth_model.h"
#include "common/error.h"
#include "gguf/gguf.h"
#include "model/architecture.h"
#include "model/greedy_fixture_test_support.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "model/qwen35_graph.h"
#include "runtime/local_engine.h"
#include "tensor/quant.h"

using namespace powerinfer;

using model::testing::argmax;

namespace {

QJsonObject fixture() {
    QFile f(QStringLiteral(POWERINFER_SOURCE_DIR "/tests/fixtures/qwen35_greedy.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

GenerateRequest greedy(const std::string& prompt, int max_tokens, bool reuse) {
    GenerateRequest r;
    r.prompt = prompt;
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0;
    r.reuse_cache = reuse;
    return r;
}

}  // namespace

class TestQwen35 : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<tensor::ThreadPool> pool_;

    std::filesystem::path write(const std::string& preset) {
        const auto path = std::filesystem::path(dir_.path().toStdString()) / (preset + ".gguf");
        if (!std::filesystem::exists(path))
            calibrate::write_synthetic_moe_model(path, calibrate::synth_moe_preset(preset));
        return path;
    }
    std::shared_ptr<const gguf::GgufFile> open(const std::string& preset) {
        return std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(write(preset)));
    }

    // The engine over tiny-qwen35, dense, with a context of n_ctx.
    std::unique_ptr<runtime::LocalEngine> load_engine(int n_ctx) {
        LoadOptions o;
        o.model_path = write("tiny-qwen35");
        o.n_ctx = n_ctx;
        o.tuning.sparse = false;
        return runtime::LocalEngine::load(o);
    }

    // A copy of the preset's file with `key` set to `value` (none: dropped)
    // and tensor `drop` left out; the error loading it gives ("" if none).
    std::string load_error(const std::string& preset, const std::string& key,
                           const gguf::Value* value, const std::string& drop = {}) {
        const auto src = open(preset);
        gguf::GgufWriter w;
        for (const auto& [k, v] : src->metadata())
            if (k != key && k != "general.alignment") w.set(k, v);
        if (value) w.set(key, *value);
        for (const auto& t : src->tensors())
            if (t.name != drop)
                w.add_tensor(t.name, t.type, t.shape,
                             std::vector<uint8_t>(t.data, t.data + t.n_bytes));
        const auto path = std::filesystem::path(dir_.path().toStdString()) / "variant.gguf";
        w.write(path);
        try {
            auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
            model::Model m(file, *pool_, 64, 4);
        } catch (const EngineError& e) {
            return e.what();
        }
        return {};
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        pool_ = std::make_unique<tensor::ThreadPool>(2);
    }

    // llama.cpp's keys: the Gated DeltaNet sizes, every
    // full_attention_interval-th layer attending.
    void config() {
        const auto c = model::ModelConfig::from_gguf(*open("tiny-qwen35"));
        QCOMPARE(c.arch, std::string("qwen35"));
        QVERIFY(c.unit == &model::Architecture::qwen35);
        QVERIFY(!c.moe());
        const model::DeltaNetConfig& d = model::delta_net(c);
        QCOMPARE(d.conv_kernel, int64_t(4));
        QCOMPARE(d.head_dim, int64_t(64));
        QCOMPARE(d.n_k_heads, int64_t(2));
        QCOMPARE(d.n_v_heads, int64_t(4));
        QCOMPARE(c.n_rot, int64_t(16));
        for (int il = 0; il < 4; ++il) QCOMPARE(d.is_recurrent(il), il % 2 == 0);
        const auto moe = model::ModelConfig::from_gguf(*open("tiny-qwen35moe"));
        QVERIFY(moe.unit == &model::Architecture::qwen35 && moe.moe());
        QCOMPARE(moe.n_expert, int64_t(8));
        QCOMPARE(moe.n_ff_shexp, int64_t(256));
        QVERIFY(moe.expert_weights_norm && moe.shared_gate != nullptr);
    }

    // Bad files are refused with a message naming what is wrong, never an
    // abort: a missing tensor, a missing or inconsistent key, a layout
    // beyond text M-RoPE. Without full_attention_interval every 4th layer
    // attends (llama.cpp's default), and attention.recurrent_layers wins.
    void refusals() {
        QVERIFY(load_error("tiny-qwen35", "", nullptr).empty());
        const std::string missing =
            load_error("tiny-qwen35", "", nullptr, "blk.2.ssm_conv1d.weight");
        QVERIFY2(missing.find("blk.2.ssm_conv1d.weight") != std::string::npos, missing.c_str());
        const std::string no_key = load_error("tiny-qwen35", "qwen35.ssm.state_size", nullptr);
        QVERIFY2(no_key.find("ssm.state_size") != std::string::npos, no_key.c_str());
        const gguf::Value three = gguf::Value::u32(3);
        const std::string groups = load_error("tiny-qwen35", "qwen35.ssm.group_count", &three);
        QVERIFY2(groups.find("Gated DeltaNet") != std::string::npos, groups.c_str());
        const gguf::Value vision = gguf::Value::array(
            gguf::ValueType::INT32,
            {gguf::Value::i32(2), gguf::Value::i32(2), gguf::Value::i32(2), gguf::Value::i32(2)});
        const std::string mrope =
            load_error("tiny-qwen35", "qwen35.rope.dimension_sections", &vision);
        QVERIFY2(mrope.find("vision") != std::string::npos, mrope.c_str());
        // Layers 0-2 recurrent by default: layer 1 has no attn_q, so it fails on the
        // Gated DeltaNet tensors it lacks.
        const std::string interval =
            load_error("tiny-qwen35", "qwen35.full_attention_interval", nullptr);
        QVERIFY2(interval.find("blk.1.attn_qkv.weight") != std::string::npos, interval.c_str());
        const gguf::Value flags = gguf::Value::array(
            gguf::ValueType::INT32,
            {gguf::Value::i32(1), gguf::Value::i32(0), gguf::Value::i32(1), gguf::Value::i32(0)});
        QVERIFY(load_error("tiny-qwen35", "qwen35.attention.recurrent_layers", &flags).empty());
        // A last block for multi-token prediction is not part of the trunk.
        const gguf::Value one = gguf::Value::u32(1);
        QVERIFY(load_error("tiny-qwen35", "qwen35.nextn_predict_layers", &one).empty());
        const auto variant =
            gguf::GgufFile::open(std::filesystem::path(dir_.path().toStdString()) / "variant.gguf");
        QCOMPARE(model::ModelConfig::from_gguf(*variant).n_layer, int64_t(3));
    }

    void greedyMatchesLlamaCpp_data() { model::testing::add_simd_level_rows(); }
    void greedyMatchesLlamaCpp() {
        QFETCH(QString, level);
        model::testing::expect_greedy_fixture(
            fixture(), level, *pool_, [this](const std::string& preset) { return write(preset); },
            "tests/reference/make_qwen35_fixtures.py");
    }

    // A recurrent state cannot be rewound: a forward() before the slot's
    // last position (a reused prefix, a context shift) re-evaluates the kept
    // tokens, with the bits of a fresh run.
    void rewoundPrefixEqualsFreshRun() {
        auto file = open("tiny-qwen35");
        model::Model m(file, *pool_, 256, 4);
        const int64_t V = m.config().n_vocab;
        const std::vector<int32_t> a{1, 40, 41, 42, 43, 44, 45, 46, 47};
        const std::vector<int32_t> b{1, 40, 41, 42, 43, 300, 301, 302};
        std::vector<float> fresh(static_cast<size_t>(V)), got(fresh.size());
        m.forward(b.data(), int64_t(b.size()), 0, 1, fresh.data());
        m.forward(a.data(), int64_t(a.size()), 0, 1, got.data());
        m.forward(b.data() + 5, 3, 5, 1, got.data());  // shares 5 tokens with a
        QVERIFY(same_bits(got, fresh));
        // Continuing where it stopped needs no rewind, and beyond is refused.
        const int32_t next = 7;
        m.forward(&next, 1, 8, 1, got.data());
        QVERIFY_THROWS_EXCEPTION(EngineError, m.forward(&next, 1, 20, 1, got.data()));
    }

    // A chat turn as the engine runs it: the prompt in chunks, the reply
    // token by token, then the next turn from the end of the prompt (what a
    // prompt evaluation wrote is reused). The state restarts from the
    // snapshot taken at the end of the prompt's last forward(): nothing is
    // re-evaluated, with the bits of a run that never went further.
    void snapshotSparesTheReplay() {
        auto file = open("tiny-qwen35");
        model::Model m(file, *pool_, 256, 4);
        model::Model fresh(file, *pool_, 256, 4);
        const int64_t V = m.config().n_vocab;
        std::vector<int32_t> prompt;
        for (int32_t t = 40; t < 70; ++t) prompt.push_back(t);
        const auto P = static_cast<int64_t>(prompt.size());
        std::vector<float> got(static_cast<size_t>(V)), want(got.size());
        m.forward(prompt.data(), P - 10, 0, 0, nullptr);
        m.forward(prompt.data() + P - 10, 10, P - 10, 1, got.data());
        int64_t pos = P;
        for (const int32_t t : {7, 8, 9}) m.forward(&t, 1, pos++, 1, got.data());
        const std::vector<int32_t> next{300, 301, 302};
        const int64_t before = m.state_replayed_tokens();
        m.forward(next.data(), 3, P, 1, got.data());
        QCOMPARE(m.state_replayed_tokens() - before, int64_t(0));
        fresh.forward(prompt.data(), P, 0, 0, nullptr);
        fresh.forward(next.data(), 3, P, 1, want.data());
        QVERIFY(same_bits(got, want));
        // It keeps the latest two (P and P + 3): a position between them
        // replays from P, one before both from zeros.
        m.forward(next.data(), 3, P + 2, 1, got.data());
        QCOMPARE(m.state_replayed_tokens() - before, int64_t(2));
        model::Model again(file, *pool_, 256, 4);
        again.forward(prompt.data(), P, 0, 0, nullptr);
        again.forward(next.data(), 2, P, 0, nullptr);
        again.forward(next.data(), 3, P + 2, 1, want.data());
        QVERIFY(same_bits(got, want));
        m.forward(next.data(), 3, 12, 1, got.data());
        QCOMPARE(m.state_replayed_tokens() - before, int64_t(2 + 12));
    }

    // Two turns through the engine: the second turn's prompt holds the
    // first's and its reply; its greedy reply is the one a fresh context
    // gives, and the first turn's prompt is neither evaluated again (the KV
    // cache) nor replayed into the recurrent state (its snapshot).
    void nextTurnReusesTheState() {
        auto engine = load_engine(256);
        const std::string turn1 = "Once upon a time, in a land far away, there lived a";
        const GenerateResult first = engine->generate(greedy(turn1, 8, true), nullptr);
        const std::string turn2 = turn1 + first.text + " Then";
        const int64_t before = engine->model().state_replayed_tokens();
        const GenerateResult second = engine->generate(greedy(turn2, 8, true), nullptr);
        const int64_t replayed = engine->model().state_replayed_tokens() - before;
        const int reused = second.prompt_tokens - second.evaluated_prompt_tokens;
        const std::string counts = "reused " + std::to_string(reused) + " of " +
                                   std::to_string(second.prompt_tokens) + " prompt tokens, " +
                                   std::to_string(replayed) + " replayed";
        QVERIFY2(reused >= 10 && replayed == 0, counts.c_str());
        const GenerateResult fresh = engine->generate(greedy(turn2, 8, false), nullptr);
        QCOMPARE(QString::fromStdString(second.text), QString::fromStdString(fresh.text));
        QCOMPARE(second.generated_tokens, fresh.generated_tokens);
    }

    // Sequence slots hold their own recurrent state: a batched step gives
    // each row the bits it gets alone.
    void sequenceSlotsEqualAlone() {
        auto file = open("tiny-qwen35");
        model::Model alone(file, *pool_, 256, 4);
        model::Model batched(file, *pool_, 256, 4);
        batched.set_sequence_slots(2);
        const int64_t V = alone.config().n_vocab;
        const std::vector<int32_t> p0{1, 10, 20, 30, 40, 50}, p1{1, 99, 98};
        std::vector<float> want0(static_cast<size_t>(V)), want1(want0.size());
        std::vector<float> l(want0.size()), rows(2 * want0.size());
        alone.forward(p0.data(), 6, 0, 1, want0.data());
        const int32_t t0 = 5, t1 = 6;
        alone.forward(&t0, 1, 6, 1, want0.data());
        alone.forward(p1.data(), 3, 0, 1, want1.data());
        alone.forward(&t1, 1, 3, 1, want1.data());
        batched.forward(p0.data(), 6, 0, 1, l.data(), 0);
        batched.forward(p1.data(), 3, 0, 1, l.data(), 1);
        const int32_t toks[2] = {t0, t1};
        const int seq[2] = {0, 1};
        const int64_t pos[2] = {6, 3};
        batched.forward_sequences(toks, seq, pos, 2, rows.data());
        QVERIFY(std::memcmp(rows.data(), want0.data(), size_t(V) * sizeof(float)) == 0);
        QVERIFY(std::memcmp(rows.data() + V, want1.data(), size_t(V) * sizeof(float)) == 0);
    }

    // Through the engine, as the server runs it: greedy replies batched
    // beside neighbours (joining at different steps) equal each reply alone;
    // a reply past the context length shifts the context (re-evaluating the
    // kept tokens into the recurrent state) batched as alone; a reused
    // prompt prefix gives the reply a fresh context gives.
    void engineBatchingShiftAndReuse() {
        auto engine = load_engine(64);
        const auto request = greedy;
        const std::vector<GenerateRequest> requests = {request("Hello world", 20, false),
                                                       request("The quick brown fox", 90, false),
                                                       request("Once upon a time", 12, false)};
        std::vector<GenerateResult> alone;
        for (const auto& r : requests) alone.push_back(engine->generate(r, nullptr));
        QVERIFY2(alone[1].notice.find("context full") != std::string::npos,
                 alone[1].notice.c_str());

        engine->set_max_sequences(3);
        std::map<int, size_t> running;
        std::vector<GenerateResult> batched(requests.size());
        size_t next = 0, finished = 0;
        for (int steps = 0; finished < requests.size(); ++steps) {
            if (next < requests.size() && (steps % 3 == 0 || engine->active_sequences() == 0))
                running[engine->start_sequence(requests[next])] = next, ++next;
            for (const SequenceUpdate& u : engine->step())
                if (u.finished) {
                    batched[running.at(u.sequence)] = u.result;
                    ++finished;
                }
            QVERIFY(steps < 1000);
        }
        for (size_t i = 0; i < requests.size(); ++i) {
            QCOMPARE(QString::fromStdString(batched[i].text),
                     QString::fromStdString(alone[i].text));
            QCOMPARE(batched[i].generated_tokens, alone[i].generated_tokens);
            QCOMPARE(QString::fromStdString(batched[i].notice),
                     QString::fromStdString(alone[i].notice));
        }
        engine->set_max_sequences(1);

        // The cache holds "Hello world" and its reply: a prompt sharing its
        // start reuses it (the state re-evaluated up to the shared prefix).
        const GenerateResult first = engine->generate(request("Hello world", 8, true), nullptr);
        const GenerateResult again =
            engine->generate(request("Hello world" + first.text + " again", 8, true), nullptr);
        const GenerateResult fresh =
            engine->generate(request("Hello world" + first.text + " again", 8, false), nullptr);
        QCOMPARE(QString::fromStdString(again.text), QString::fromStdString(fresh.text));
    }

    // Its layers compute on host memory: a device plan stays on the CPU and
    // says why, even on a backend with every capability.
    void deviceRefusedWithReason() {
        auto file = open("tiny-qwen35");
        model::Model m(file, *pool_, 128, 4);
        auto device = backend::make_cpu_device({});
        auto stand_in = backend::make_budgeted_cpu_compute(*pool_, *device);
        const std::string why = m.unsupported_on(*stand_in, model::OffloadParts::Attention);
        QVERIFY2(why.find("Gated DeltaNet") != std::string::npos, why.c_str());
        model::LayerPlan lp;
        lp.n_gpu_layers = 4;
        const std::string note =
            m.set_plan(model::graph_plan(lp, model::OffloadParts::Attention), stand_in.get());
        QVERIFY2(note.find("Gated DeltaNet") != std::string::npos, note.c_str());
        QVERIFY(!m.plan().any_device());
    }
};

QTEST_GUILESS_MAIN(TestQwen35)
#include "tst_qwen35.moc"
