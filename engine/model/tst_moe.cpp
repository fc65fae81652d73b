// Mixture-of-experts models against llama.cpp: the tiny random-weight
// qwen3moe, qwen2moe (shared expert) and Mixtral-style models of tests/fixtures/moe_greedy.json are
// regenerated with our writer (the same bytes as the fixture's, checked by
// hash), run through the graph with llama.cpp's micro-batches of 4, and their
// greedy tokens and top-5 logits must equal llama.cpp's bit for bit at every
// SIMD level llama.cpp's fixtures hold at. Also: decode runs only the routed
// experts, and attention on a stand-in GPU (experts on the host) gives the CPU
// plan's logits bit for bit.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>

#include "backend/compute.h"
#include "calibrate/calibrate.h"
#include "calibrate/synth_model.h"
#include "gguf/gguf.h"
#include "model/expert_placement.h"
#include "model/greedy_fixture_test_support.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "powerinfer/placement.h"
#include "sparse/sidecar.h"
#include "tensor/quant.h"

using namespace powerinfer;

using model::testing::argmax;

namespace {

QJsonObject fixture() {
    QFile f(QStringLiteral(POWERINFER_SOURCE_DIR "/tests/fixtures/moe_greedy.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// Greedy decode of `steps` tokens after `prompt`; logits of every step.
std::vector<std::vector<float>> greedy(model::Model& m, const std::vector<int32_t>& prompt,
                                       int steps) {
    std::vector<std::vector<float>> out;
    std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
    m.forward(prompt.data(), static_cast<int64_t>(prompt.size()), 0, 1, logits.data());
    int64_t pos = static_cast<int64_t>(prompt.size());
    for (int s = 0; s < steps; ++s) {
        out.push_back(logits);
        const int32_t tok = argmax(logits);
        m.forward(&tok, 1, pos++, 1, logits.data());
    }
    return out;
}

}  // namespace

class TestMoe : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<tensor::ThreadPool> pool_;

    std::filesystem::path write(const std::string& preset) {
        const auto path = std::filesystem::path(dir_.path().toStdString()) / (preset + ".gguf");
        if (!std::filesystem::exists(path))
            calibrate::write_synthetic_moe_model(path, calibrate::synth_moe_preset(preset));
        return path;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        pool_ = std::make_unique<tensor::ThreadPool>(2);
    }

    void configAndRefusals() {
        const auto file = gguf::GgufFile::open(write("tiny-qwen3moe"));
        const auto c = model::ModelConfig::from_gguf(*file);
        QCOMPARE(c.arch, std::string("qwen3moe"));
        QVERIFY(c.moe());
        QCOMPARE(c.n_expert, int64_t(8));
        QCOMPARE(c.n_expert_used, int64_t(2));
        QCOMPARE(c.n_ff_exp, int64_t(256));
        QVERIFY(c.qk_norm && c.rope_style == model::RopeStyle::Neox);
        const auto mix =
            model::ModelConfig::from_gguf(*gguf::GgufFile::open(write("tiny-mixtral")));
        QCOMPARE(mix.n_ff_exp, mix.n_ff);
        QVERIFY(mix.moe() && mix.rope_style == model::RopeStyle::Normal);
    }

    // Bad expert metadata is refused with a message naming the key.
    void badExpertMetadata() {
        auto config_error = [&](const std::string& arch, int64_t n_expert, int64_t n_used,
                                bool shared) -> std::string {
            gguf::GgufWriter w;
            const std::string a = arch + ".";
            w.set("general.architecture", gguf::Value::str(arch));
            for (const char* k : {"context_length", "embedding_length", "feed_forward_length"})
                w.set(a + k, gguf::Value::u32(256));
            w.set(a + "block_count", gguf::Value::u32(1));
            w.set(a + "attention.head_count", gguf::Value::u32(4));
            if (n_expert >= 0) w.set(a + "expert_count", gguf::Value::u32(uint32_t(n_expert)));
            if (n_used >= 0) w.set(a + "expert_used_count", gguf::Value::u32(uint32_t(n_used)));
            if (shared) w.set(a + "expert_shared_count", gguf::Value::u32(1));
            std::vector<gguf::Value> toks{gguf::Value::str("a"), gguf::Value::str("b")};
            w.set("tokenizer.ggml.tokens", gguf::Value::array(gguf::ValueType::STRING, toks));
            const auto path = std::filesystem::path(dir_.path().toStdString()) / "bad.gguf";
            w.write(path);
            try {
                model::ModelConfig::from_gguf(*gguf::GgufFile::open(path));
            } catch (const EngineError& e) {
                return e.what();
            }
            return {};
        };
        QVERIFY(config_error("qwen3moe", 8, 9, false).find("expert_used_count") !=
                std::string::npos);
        QVERIFY(config_error("qwen3moe", 8, -1, false).find("expert_used_count") !=
                std::string::npos);
        QVERIFY(config_error("qwen3moe", -1, -1, false).find("expert_count") != std::string::npos);
        QVERIFY(config_error("llama", 8, 2, true).find("shared experts") != std::string::npos);
        QVERIFY(config_error("qwen2moe", 8, 2, false).empty());
        QVERIFY(config_error("qwen2", 8, 2, false).find("not supported") != std::string::npos);
        QVERIFY(config_error("llama", 8, 2, false).empty());
        QVERIFY(config_error("llama", 0, 0, false).empty());  // dense
    }

    void greedyMatchesLlamaCpp_data() { model::testing::add_simd_level_rows(); }
    void greedyMatchesLlamaCpp() {
        QFETCH(QString, level);
        model::testing::expect_greedy_fixture(
            fixture(), level, *pool_, [this](const std::string& preset) { return write(preset); },
            "tests/reference/make_moe_fixtures.py");
    }

    // One decoded token routes each layer to exactly k experts (the counts
    // are what ran); a prompt of n tokens counts n * k per layer.
    void decodeRunsOnlyRoutedExperts() {
        auto file =
            std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(write("tiny-qwen3moe")));
        model::Model m(file, *pool_, 256, 4);
        const auto& c = m.config();
        std::vector<float> logits(static_cast<size_t>(c.n_vocab));
        const std::vector<int32_t> prompt{1, 100, 200, 300, 400, 17};
        m.forward(prompt.data(), 6, 0, 1, logits.data());
        auto total = [&](int il) {
            const auto& v = m.moe_ffn()->expert_counts()[static_cast<size_t>(il)];
            return std::accumulate(v.begin(), v.end(), int64_t{0});
        };
        for (int il = 0; il < c.n_layer; ++il) QCOMPARE(total(il), 6 * c.n_expert_used);
        m.moe_ffn()->reset_counts();
        const int32_t tok = argmax(logits);
        m.forward(&tok, 1, 6, 1, logits.data());
        for (int il = 0; il < c.n_layer; ++il) {
            const auto& v = m.moe_ffn()->expert_counts()[static_cast<size_t>(il)];
            QCOMPARE(total(il), c.n_expert_used);
            QCOMPARE(std::count(v.begin(), v.end(), int64_t{1}), c.n_expert_used);
        }
    }

    // Attention (and the head) on a stand-in GPU, experts on the host: the
    // same logits as the CPU plan, bit for bit; whole layers asked for keep
    // their experts on the host too (llama.cpp's --cpu-moe).
    void hybridPlanEqualsCpuPlan() {
        auto file =
            std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(write("tiny-mixtral")));
        model::Model m(file, *pool_, 128, 4);
        const std::vector<int32_t> prompt{1, 5, 9, 300, 77, 12, 401};
        const auto want = greedy(m, prompt, 6);
        auto device = backend::make_cpu_device({});
        auto stand_in = backend::make_budgeted_cpu_compute(*pool_, *device);
        for (auto parts : {model::OffloadParts::Attention, model::OffloadParts::WholeLayers}) {
            model::LayerPlan lp;
            lp.n_gpu_layers = static_cast<int>(m.config().n_layer);
            lp.output_on_gpu = true;
            const std::string note = m.set_plan(model::graph_plan(lp, parts), stand_in.get());
            QVERIFY2(note.empty(), note.c_str());
            QCOMPARE(m.plan().device_layers(), static_cast<int>(m.config().n_layer));
            for (int il = 0; il < m.config().n_layer; ++il)
                QVERIFY(m.plan().at(il).ffn == model::Site::Host);
            const auto got = greedy(m, prompt, 6);
            QCOMPARE(got.size(), want.size());
            for (size_t i = 0; i < got.size(); ++i)
                QVERIFY(std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)) ==
                        0);
            m.set_plan({}, nullptr);
        }
    }

    // Calibration records each layer's routing counts in the sidecar; the
    // expert plan fills a budget with the most routed experts, counting
    // their bytes exactly (the experts' slices of the stacked tensors, as
    // the file lays them out); the preview counts every expert's bytes.
    void routingSidecarAndExpertPlan() {
        const auto path = write("tiny-qwen3moe");
        const auto sidecar =
            std::filesystem::path(dir_.path().toStdString()) / "tq.powerinfer.gguf";
        CalibrationOptions opt;
        opt.model_path = path;
        opt.corpus_path = POWERINFER_SOURCE_DIR "/tests/data/frankenstein.txt";
        opt.output_path = sidecar;
        opt.tokens = 600;
        opt.window = 128;
        opt.n_threads = 2;
        const CalibrationReport r = calibrate_model(opt);
        QCOMPARE(r.tokens, int64_t(600));
        auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
        QVERIFY_THROWS_EXCEPTION(EngineError,
                                 model::read_expert_sidecar(sidecar, "0000000000000000"));
        const model::ExpertRoutingStats st =
            model::read_expert_sidecar(sidecar, sparse::model_hash(*file));
        QCOMPARE(st.n_layer, int64_t(4));
        QCOMPARE(st.n_expert, int64_t(8));
        QCOMPARE(st.calib_tokens, uint64_t(600));
        for (const auto& layer : st.counts)
            QCOMPARE(std::accumulate(layer.begin(), layer.end(), int64_t{0}), int64_t(1200));

        model::Model m(file, *pool_, 128, 4);
        // One expert's bytes from the file's own tensor sizes.
        int64_t all = 0;
        for (const char* t : {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"})
            for (int l = 0; l < 4; ++l)
                all += static_cast<int64_t>(
                    file->tensor("blk." + std::to_string(l) + "." + t + ".weight")->n_bytes);
        const int64_t one = all / (4 * 8);
        QCOMPARE(m.layer(0).moe.expert_bytes(), one);
        const auto none = model::plan_expert_placement(m, st, one - 1);
        QCOMPARE(none.placed_experts, int64_t(0));
        QCOMPARE(none.routed_share, 0.0);
        const auto three = model::plan_expert_placement(m, st, 3 * one + one / 2);
        QCOMPARE(three.placed_experts, int64_t(3));
        QCOMPARE(three.placed_bytes, 3 * one);
        QCOMPARE(three.expert_bytes, all);
        // The three are the most routed of all layers.
        std::vector<int64_t> counts;
        for (const auto& layer : st.counts) counts.insert(counts.end(), layer.begin(), layer.end());
        std::sort(counts.begin(), counts.end(), std::greater<>());
        int64_t top = 0;
        for (size_t l = 0; l < three.on_device.size(); ++l)
            for (int32_t e : three.on_device[l]) top += st.counts[l][static_cast<size_t>(e)];
        QCOMPARE(top, counts[0] + counts[1] + counts[2]);
        QCOMPARE(three.routed_share, double(top) / double(4 * 1200));
        double last = 0;
        for (int k = 0; k <= 32; k += 4) {
            const auto p = model::plan_expert_placement(m, st, k * one);
            QCOMPARE(p.placed_experts, int64_t(k));
            QVERIFY(p.routed_share >= last);
            last = p.routed_share;
        }
        QCOMPARE(last, 1.0);

        LoadOptions lo;
        lo.model_path = path;
        lo.n_ctx = 128;
        const PlacementPreview pv = preview_placement(lo);
        QCOMPARE(pv.n_experts, int64_t(8));
        QCOMPARE(pv.expert_bytes, all);
        QVERIFY(pv.status.find("mixture of experts") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestMoe)
#include "tst_moe.moc"
