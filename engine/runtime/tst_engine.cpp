// The engine facade on the real model: llama.cpp parity (greedy chat
// continuations, perplexity), KV-cache reuse across turns, cancellation, stop
// strings, the context shift, and the errors a user can cause.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <utility>

#include "gguf/gguf.h"
#include "model/model.h"
#include "powerinfer/engine.h"
#include "runtime/local_engine.h"
#include "runtime/perplexity.h"
#include "tokenizer/tokenizer.h"

using namespace powerinfer;

namespace {

QJsonObject fixture(const char* name) {
    QFile f(QStringLiteral(POWERINFER_SOURCE_DIR "/tests/fixtures/") + name);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

QString load_error(const LoadOptions& o) {
    try {
        Engine::load(o);
    } catch (const EngineError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

bool valid_utf8(const std::string& s) {
    size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        const size_t len = c < 0x80         ? 1
                           : (c >> 5) == 6  ? 2
                           : (c >> 4) == 14 ? 3
                           : (c >> 3) == 30 ? 4
                                            : 0;
        if (len == 0 || i + len > s.size()) return false;
        for (size_t k = 1; k < len; ++k)
            if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
        i += len;
    }
    return true;
}

GenerateRequest greedy(const std::string& prompt, int n) {
    GenerateRequest r;
    r.prompt = prompt;
    r.max_tokens = n;
    r.sampling.temperature = 0;
    return r;
}

}  // namespace

class TestEngine : public QObject {
    Q_OBJECT
    std::string model_path_;
    std::unique_ptr<runtime::LocalEngine> engine_;

    bool have_model() { return engine_ != nullptr; }

private slots:
    void initTestCase() {
        model_path_ = qEnvironmentVariable("POWERINFER_MODEL").toStdString();
        if (model_path_.empty()) return;
        LoadOptions o;
        o.model_path = model_path_;
        o.n_threads = 2;
        o.n_ctx = 1024;
        float last = -1;
        bool monotonic = true;
        o.progress = [&](float p) {
            monotonic = monotonic && p >= last;
            last = p;
            return true;
        };
        engine_ = runtime::LocalEngine::load(o);
        QVERIFY(monotonic);
        QCOMPARE(last, 1.0f);
    }

    void badFiles() {
        QTemporaryDir dir;
        LoadOptions o;
        o.model_path = dir.filePath("missing.gguf").toStdString();
        QVERIFY(load_error(o).contains("file not found"));
        o.model_path = dir.path().toStdString();
        QVERIFY(load_error(o).contains("is a folder"));
        const auto text = std::filesystem::path(dir.filePath("text.gguf").toStdString());
        std::ofstream(text) << "hello, I am not a model";
        o.model_path = text;
        QVERIFY(!load_error(o).isEmpty());

        gguf::GgufWriter w;
        w.set("general.architecture", gguf::Value::str("gpt2"));
        const auto gpt2 = std::filesystem::path(dir.filePath("gpt2.gguf").toStdString());
        w.write(gpt2);
        o.model_path = gpt2;
        QCOMPARE(load_error(o),
                 QString("unsupported architecture 'gpt2': PowerInfer Desktop runs "
                         "llama, mistral, qwen2, qwen2moe, qwen3, qwen3moe, gemma3, qwen35 "
                         "and qwen35moe models"));
    }

    void loadCancelled() {
        if (model_path_.empty())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        LoadOptions o;
        o.model_path = model_path_;
        o.progress = [](float p) { return p < 0.5f; };
        QVERIFY_THROWS_EXCEPTION(LoadCancelled, Engine::load(o));
    }

    void infoAndMemory() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        const ModelInfo& i = engine_->info();
        QCOMPARE(i.architecture, std::string("llama"));
        QCOMPARE(i.quant, std::string("Q4_1"));
        QCOMPARE(i.n_layers, 30);
        QCOMPARE(i.n_ctx, 1024);
        QCOMPARE(i.n_ctx_train, 8192);
        QVERIFY(!i.chat_template_name.empty());
        const MemoryReport m = engine_->memory();
        QCOMPARE(m.kv_cache, int64_t(30) * 1024 * 384 * 2);  // F16
        QVERIFY(m.dense_weights > 90'000'000 && m.dense_weights <= i.file_bytes);
        QVERIFY(!version_string().empty());
        Tuning t = engine_->tuning();
        t.chunk_size = 32;
        engine_->set_tuning(t);
        QCOMPARE(engine_->tuning().chunk_size, 32);
        t.chunk_size = 256;
        engine_->set_tuning(t);
    }

    // The chat cases of tests/fixtures/greedy.json through generate() with
    // messages: template, tokenizer, model and EOG handling together. Tokens
    // must equal llama.cpp's up to the first step where llama.cpp's own top-2
    // logits are within 0.5 (a near-tie that rounding legitimately flips; see
    // tst_model's greedyMatchesLlamaCpp); most cases match whole.
    void chatGreedyMatchesLlamaCpp() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        const QJsonObject root = fixture("greedy.json");
        QVERIFY2(!root.isEmpty(), "tests/fixtures/greedy.json is missing");
        int checked = 0, whole = 0;
        for (const auto& cv : root["cases"].toArray()) {
            const QJsonObject c = cv.toObject();
            if (c["kind"].toString() != "chat") continue;
            GenerateRequest req;
            for (const auto& m : c["messages"].toArray())
                req.messages.push_back({m.toObject()["role"].toString().toStdString(),
                                        m.toObject()["content"].toString().toStdString()});
            req.max_tokens = root["max_steps"].toInt();
            req.sampling.temperature = 0;
            std::vector<int32_t> want_prompt;
            for (const auto& t : c["prompt_ids"].toArray()) want_prompt.push_back(t.toInt());
            QCOMPARE(engine_->prompt_tokens(req), want_prompt);
            std::vector<int32_t> got;
            const auto r = engine_->generate(req, [&](const TokenEvent& ev) {
                if (ev.token >= 0) got.push_back(ev.token);
            });
            std::vector<int32_t> want;
            for (const auto& t : c["generated_ids"].toArray()) want.push_back(t.toInt());
            const bool eog = !c["stopped_at_eog_step"].isNull();
            if (eog) want.pop_back();  // the EOG token ends generation and is not emitted
            const QJsonArray top5 = c["top5"].toArray();
            size_t safe = 0;
            while (safe < size_t(top5.size())) {
                const QJsonArray s = top5[int(safe)].toArray();
                if (s[0].toArray()[1].toDouble() - s[1].toArray()[1].toDouble() < 0.5) break;
                ++safe;
            }
            if (got == want) {
                QCOMPARE(QString::fromStdString(r.text), c["generated_text"].toString());
                QCOMPARE(r.finish, eog ? FinishReason::Stop : FinishReason::Length);
                ++whole;
            } else {
                const size_t n = std::min(safe, want.size());
                QVERIFY(got.size() >= n);
                QCOMPARE(std::vector<int32_t>(got.begin(), got.begin() + long(n)),
                         std::vector<int32_t>(want.begin(), want.begin() + long(n)));
            }
            ++checked;
        }
        qInfo("%d chat cases checked, %d identical to llama.cpp", checked, whole);
        QVERIFY(checked >= 4);
        QVERIFY(whole >= 2);
    }

    // Gemma 3 through the facade, as a user loads it: its tokenizer, the
    // turn format its vocabulary implies (the file has no chat template),
    // sparse mode declined with the reason, and llama.cpp's greedy
    // continuations of raw and chat prompts token for token (prompts in
    // chunks of 4, as the fixture's llama.cpp ran them).
    void gemma3ThroughTheFacade() {
        const QByteArray path = qgetenv("POWERINFER_GEMMA_MODEL");
        if (path.isEmpty()) {
            if (qgetenv("CI") == "true") QFAIL("POWERINFER_GEMMA_MODEL is not set under CI");
            QSKIP("POWERINFER_GEMMA_MODEL is not set: scripts/fetch-model gemma3-270m");
        }
        LoadOptions o;
        o.model_path = path.toStdString();
        o.n_threads = 2;
        o.n_ctx = 512;
        o.tuning.sparse = true;
        o.tuning.chunk_size = 4;
        auto e = runtime::LocalEngine::load(o);
        const ModelInfo& info = e->info();
        QCOMPARE(QString::fromStdString(info.architecture), QStringLiteral("gemma3"));
        // Its file type (15) names it, not its most common weight type (Q5_0).
        QCOMPARE(QString::fromStdString(info.quant), QStringLiteral("Q4_K_M"));
        QCOMPARE(info.n_layers, 18);
        QCOMPARE(QString::fromStdString(info.chat_template_name), QStringLiteral("gemma"));
        QVERIFY2(info.template_warning.find("no chat template") != std::string::npos,
                 info.template_warning.c_str());
        // Sparse is on, but this model has no sidecar next to it: dense, saying so.
        QVERIFY2(info.sparse_status.find("no sidecar") != std::string::npos,
                 info.sparse_status.c_str());
        const QJsonObject root = fixture("gemma3_greedy.json");
        QVERIFY2(!root.isEmpty(), "tests/fixtures/gemma3_greedy.json is missing");
        int checked = 0;
        for (const auto& cv : root["cases"].toArray()) {
            const QJsonObject c = cv.toObject();
            GenerateRequest req;
            if (c["kind"].toString() == "chat") {
                for (const auto& m : c["messages"].toArray())
                    req.messages.push_back({m.toObject()["role"].toString().toStdString(),
                                            m.toObject()["content"].toString().toStdString()});
            } else {
                req.prompt = c["prompt"].toString().toStdString();
            }
            req.max_tokens = root["max_steps"].toInt();
            req.sampling.temperature = 0;
            req.reuse_cache = false;
            std::vector<int32_t> want_prompt;
            for (const auto& t : c["prompt_ids"].toArray()) want_prompt.push_back(t.toInt());
            QCOMPARE(e->prompt_tokens(req), want_prompt);
            std::vector<int32_t> got;
            const auto r = e->generate(req, [&](const TokenEvent& ev) {
                if (ev.token >= 0) got.push_back(ev.token);
            });
            std::vector<int32_t> want;
            for (const auto& t : c["generated_ids"].toArray()) want.push_back(t.toInt());
            if (!c["stopped_at_eog_step"].isNull()) want.pop_back();  // not emitted
            QCOMPARE(got, want);
            QCOMPARE(QString::fromStdString(r.text), c["generated_text"].toString());
            ++checked;
        }
        QCOMPARE(checked, 8);
    }

    void perplexityMatchesLlamaCpp() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        const QJsonObject fx = fixture("perplexity.json");
        if (fx.isEmpty())
            QSKIP("tests/fixtures/perplexity.json is missing: run tests/reference/make-fixtures");
        // The corpus the fixture was made from, committed (public domain).
        const QString corpus_path =
            QStringLiteral(POWERINFER_SOURCE_DIR "/tests/data/frankenstein.txt");
        QVERIFY2(QFile::exists(corpus_path), "tests/data/frankenstein.txt is missing");
        QFile f(corpus_path);
        QVERIFY2(f.open(QIODevice::ReadOnly), "the perplexity corpus cannot be read");
        const auto tokens = engine_->tokenizer().encode(f.readAll().toStdString(), true, false);
        QCOMPARE(int64_t(tokens.size()), int64_t(fx["n_tokens"].toInteger()));
        const QJsonObject subset = fx["subset"].toObject();
        const int64_t windows = subset["n_windows"].toInteger();
        const auto& tok = engine_->tokenizer();
        const auto r = runtime::perplexity(engine_->model(), tokens, fx["n_ctx"].toInt(), windows,
                                           tok.add_bos() ? tok.bos() : -1);
        engine_->reset();  // the cache now holds the last window
        const double ref = subset["ppl"].toDouble();
        qInfo("perplexity over %lld windows: ours %.4f, llama.cpp %.4f (%.3f%%)",
              static_cast<long long>(windows), r.ppl, ref, 100.0 * (r.ppl - ref) / ref);
        QCOMPARE(r.tokens_scored, int64_t(subset["tokens_scored"].toInteger()));
        // README's claim: the same perplexity as llama.cpp (bit-equal logits;
        // only the float64 log-softmax sums may differ in the last digits).
        QVERIFY2(
            std::fabs(r.ppl - ref) / ref < 1e-6,
            qPrintable(QString("ours %1, llama.cpp %2").arg(r.ppl, 0, 'f', 9).arg(ref, 0, 'f', 9)));
    }

    // Qwen2.5-Coder-0.5B's perplexity over the corpus' first 4 windows
    // equals llama.cpp's (tests/fixtures/qwen2_perplexity.json; the greedy
    // and logit check is tst_model's qwen2MatchesLlamaCpp).
    void qwen2PerplexityMatchesLlamaCpp() {
        const QByteArray path = qgetenv("POWERINFER_QWEN_MODEL");
        if (path.isEmpty()) {
            if (qgetenv("CI") == "true") QFAIL("POWERINFER_QWEN_MODEL is not set under CI");
            QSKIP("POWERINFER_QWEN_MODEL is not set: scripts/fetch-model qwen2.5-coder-0.5b");
        }
        const QJsonObject fx = fixture("qwen2_perplexity.json");
        QVERIFY2(!fx.isEmpty(), "tests/fixtures/qwen2_perplexity.json is missing");
        LoadOptions o;
        o.model_path = path.toStdString();
        o.n_ctx = 512;
        o.tuning.sparse = false;
        const auto qwen = runtime::LocalEngine::load(o);
        QFile f(QStringLiteral(POWERINFER_SOURCE_DIR "/tests/data/frankenstein.txt"));
        QVERIFY2(f.open(QIODevice::ReadOnly), "tests/data/frankenstein.txt cannot be read");
        const auto tokens = qwen->tokenizer().encode(f.readAll().toStdString(), false, false);
        QCOMPARE(int64_t(tokens.size()), int64_t(fx["n_tokens"].toInteger()));
        const QJsonArray sums = fx["window_nll_sums"].toArray();
        const auto r =
            runtime::perplexity(qwen->model(), tokens, fx["n_ctx"].toInt(), sums.size(), -1);
        const double ref = fx["ppl"].toDouble();
        qInfo("qwen2 perplexity over %lld windows: ours %.6f, llama.cpp %.6f",
              static_cast<long long>(r.windows), r.ppl, ref);
        QCOMPARE(r.windows, int64_t(sums.size()));
        QCOMPARE(r.tokens_scored, sums.size() * fx["tokens_per_window_scored"].toInteger());
        QVERIFY2(
            std::fabs(r.ppl - ref) / ref < 1e-6,
            qPrintable(QString("ours %1, llama.cpp %2").arg(r.ppl, 0, 'f', 9).arg(ref, 0, 'f', 9)));
    }

    void multiTurnReusesCache() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        GenerateRequest first;
        first.messages = {{"system", "You are a helpful assistant."}, {"user", "Name a color."}};
        first.max_tokens = 12;
        first.sampling.temperature = 0;
        engine_->reset();
        const auto r1 = engine_->generate(first, nullptr);
        QCOMPARE(r1.evaluated_prompt_tokens, r1.prompt_tokens);

        GenerateRequest second = first;
        second.messages.push_back({"assistant", r1.text});
        second.messages.push_back({"user", "And another one?"});
        const auto prompt1 = engine_->prompt_tokens(first);
        const auto prompt2 = engine_->prompt_tokens(second);
        const auto r2 = engine_->generate(second, nullptr);
        // Only what follows the first turn's prompt (at most) is evaluated.
        QVERIFY2(
            r2.evaluated_prompt_tokens <= int(prompt2.size() - prompt1.size()),
            qPrintable(QString("%1 of %2").arg(r2.evaluated_prompt_tokens).arg(prompt2.size())));
        QVERIFY(r2.evaluated_prompt_tokens > 0);

        second.reuse_cache = false;
        const auto fresh = engine_->generate(second, nullptr);
        QCOMPARE(fresh.evaluated_prompt_tokens, fresh.prompt_tokens);
        QCOMPARE(r2.text, fresh.text);
    }

    // Issue 17, "the chat path does each thing once": the engine keeps a
    // context per conversation (tokens and KV cache), so that going back to
    // a conversation evaluates only its new turn, and one turn encodes its
    // prompt once (count_prompt_tokens() and generate() share the tokens).
    // Greedy replies are the bits a fresh engine gives each turn.
    void conversationContextsKeepEachConversation() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        engine_->reset();
        engine_->set_conversation_contexts(3);
        QCOMPARE(engine_->conversation_contexts(), 3);
        const auto turn = [&](std::vector<ChatMessage>& history, const std::string& user,
                              bool reuse, std::vector<int32_t>* tokens) {
            history.push_back({"user", user});
            GenerateRequest r;
            r.messages = history;
            r.max_tokens = 16;
            r.sampling.temperature = 0;
            r.reuse_cache = reuse;
            const auto result = engine_->generate(r, [&](const TokenEvent& ev) {
                if (tokens && ev.token >= 0) tokens->push_back(ev.token);
            });
            history.push_back({"assistant", result.text});
            return result;
        };
        const std::vector<std::string> a = {"Name a color.", "And another one?",
                                            "Which is warmer?"};
        const std::vector<std::string> b = {"What is 2+2?", "And 3+3?", "Add them up."};
        std::vector<ChatMessage> ha = {{"system", "You are a helpful assistant."}};
        std::vector<ChatMessage> hb = ha;
        std::vector<std::vector<int32_t>> reused_a(3), reused_b(3);
        std::vector<std::string> text_a, text_b;
        int prev_a = 0, prev_b = 0;
        for (int t = 0; t < 3; ++t) {
            // The conversations take turns: each comes back to its own context.
            const auto ra = turn(ha, a[size_t(t)], true, &reused_a[size_t(t)]);
            const int context_a = engine_->last_context();
            const auto rb = turn(hb, b[size_t(t)], true, &reused_b[size_t(t)]);
            QVERIFY(engine_->last_context() != context_a);
            text_a.push_back(ha.back().content);
            text_b.push_back(hb.back().content);
            const int pa = std::exchange(prev_a, ra.prompt_tokens);
            const int pb = std::exchange(prev_b, rb.prompt_tokens);
            if (t == 0) {
                QCOMPARE(ra.evaluated_prompt_tokens, ra.prompt_tokens);
                continue;
            }
            // Only the last reply and the new turn: the previous prompt came
            // from the cache although the other conversation ran in between
            // (a decoded reply's keys and values are not reused: they differ
            // in their last bits from a prompt evaluation's).
            QVERIFY(rb.evaluated_prompt_tokens <= rb.prompt_tokens - pb);
            QVERIFY2(ra.evaluated_prompt_tokens <= ra.prompt_tokens - pa,
                     qPrintable(QString("turn %1: %2 of %3 evaluated")
                                    .arg(t + 1)
                                    .arg(ra.evaluated_prompt_tokens)
                                    .arg(ra.prompt_tokens)));
            QVERIFY(rb.evaluated_prompt_tokens < rb.prompt_tokens / 2);
        }
        // A fresh context every turn gives the same tokens.
        engine_->set_conversation_contexts(1);
        std::vector<ChatMessage> fa = {{"system", "You are a helpful assistant."}};
        std::vector<ChatMessage> fb = fa;
        for (int t = 0; t < 3; ++t) {
            std::vector<int32_t> ta, tb;
            engine_->reset();
            const auto ra = turn(fa, a[size_t(t)], false, &ta);
            QCOMPARE(ra.evaluated_prompt_tokens, ra.prompt_tokens);
            engine_->reset();
            turn(fb, b[size_t(t)], false, &tb);
            QVERIFY2(ta == reused_a[size_t(t)], qPrintable(QString("turn %1 of A").arg(t + 1)));
            QVERIFY2(tb == reused_b[size_t(t)], qPrintable(QString("turn %1 of B").arg(t + 1)));
            QCOMPARE(fa.back().content, text_a[size_t(t)]);
            QCOMPARE(fb.back().content, text_b[size_t(t)]);
        }
        // With one context, the other conversation's turn evicts it.
        engine_->reset();
        std::vector<ChatMessage> one = {{"user", a[0]}};
        turn(one, a[1], true, nullptr);
        std::vector<ChatMessage> other = {{"user", b[0]}};
        turn(other, b[1], true, nullptr);
        one.push_back({"user", a[2]});
        GenerateRequest back;
        back.messages = one;
        back.max_tokens = 4;
        back.sampling.temperature = 0;
        const auto evicted = engine_->generate(back, nullptr);
        QVERIFY(evicted.evaluated_prompt_tokens > evicted.prompt_tokens / 2);
    }

    // Issue 30: the turn after a reply (a stopped one too) evaluated the
    // reply again, 413 of 451 tokens in the CLI. A chat front end prefills
    // the conversation with the reply while the user writes; the next turn
    // then evaluates only its own message, and every reply is the one a
    // fresh context gives.
    void aPrefilledConversationEvaluatesOnlyTheNewMessage() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        const std::vector<std::string> users = {"Tell me about the moon.", "And the sun?",
                                                "Which is bigger?"};
        const auto request = [](const std::vector<ChatMessage>& history) {
            GenerateRequest r;
            r.messages = history;
            r.max_tokens = 40;
            r.sampling.temperature = 0;
            return r;
        };
        std::vector<ChatMessage> history = {{"system", "You are a helpful assistant."}};
        std::vector<std::string> replies;
        engine_->reset();
        int prefilled = 0;  // the prompt tokens of the conversation with its last reply
        for (size_t t = 0; t < users.size(); ++t) {
            history.push_back({"user", users[t]});
            const auto r = engine_->generate(request(history), nullptr);
            // Only this message (and the few tokens where the prefilled
            // prompt's generation prompt differs from it): before, the
            // reply's 16-40 tokens as well.
            if (t > 0)
                QVERIFY2(r.evaluated_prompt_tokens <= r.prompt_tokens - prefilled + 8,
                         qPrintable(QString("turn %1: %2 of %3 evaluated, %4 were prefilled")
                                        .arg(t + 1)
                                        .arg(r.evaluated_prompt_tokens)
                                        .arg(r.prompt_tokens)
                                        .arg(prefilled)));
            QVERIFY(r.generated_tokens >= 16);
            history.push_back({"assistant", r.text});
            replies.push_back(r.text);
            // A cancelled prefill evaluates nothing; a second one nothing more.
            const std::atomic<bool> cancelled{true};
            QCOMPARE(engine_->prefill(request(history), &cancelled), 0);
            QVERIFY(engine_->prefill(request(history)) > r.generated_tokens / 2);
            QCOMPARE(engine_->prefill(request(history)), 0);
            prefilled = engine_->count_prompt_tokens(request(history));
        }
        // A fresh context every turn gives the same replies.
        std::vector<ChatMessage> fresh = {{"system", "You are a helpful assistant."}};
        for (size_t t = 0; t < users.size(); ++t) {
            engine_->reset();
            fresh.push_back({"user", users[t]});
            GenerateRequest r = request(fresh);
            r.reuse_cache = false;
            fresh.push_back({"assistant", engine_->generate(r, nullptr).text});
            QCOMPARE(fresh.back().content, replies[t]);
        }
    }

    void aTurnEncodesItsPromptOnce() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        GenerateRequest r;
        r.messages = {{"system", "You are a helpful assistant."},
                      {"user", "Say something about the sea."}};
        r.max_tokens = 2;
        r.sampling.temperature = 0;
        const int64_t before = engine_->prompt_encodings();
        const int counted = engine_->count_prompt_tokens(r);
        const auto result = engine_->generate(r, nullptr);
        QCOMPARE(engine_->prompt_encodings() - before, int64_t{1});
        QCOMPARE(counted, result.prompt_tokens);
        // A different prompt is encoded afresh.
        r.messages.back().content = "Say something about the mountains.";
        QVERIFY(engine_->count_prompt_tokens(r) > 0);
        QCOMPARE(engine_->prompt_encodings() - before, int64_t{2});
    }

    void cancellation() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        std::atomic<bool> cancel{false};
        int events = 0;
        const auto r = engine_->generate(
            greedy("Once upon a time,", 64),
            [&](const TokenEvent&) {
                if (++events == 3) cancel = true;
            },
            &cancel);
        QCOMPARE(r.finish, FinishReason::Cancelled);
        QCOMPARE(r.generated_tokens, 3);
        QVERIFY(!r.text.empty());

        // Stop before the prompt is evaluated: nothing generated, and the
        // next request still works from the cache it left.
        cancel = true;
        const auto stopped =
            engine_->generate(greedy("A different prompt about cats", 8), nullptr, &cancel);
        QCOMPARE(stopped.finish, FinishReason::Cancelled);
        QCOMPARE(stopped.generated_tokens, 0);
        QVERIFY(stopped.text.empty());
        const auto after = engine_->generate(greedy("A different prompt about cats", 8), nullptr);
        QCOMPARE(after.generated_tokens, 8);
    }

    void stopStrings() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        // Greedy: " Paris.\n\nThe United States has a population ..."
        auto req = greedy("The capital of France is", 32);
        req.stop = {"United States"};
        std::string streamed;
        const auto r = engine_->generate(req, [&](const TokenEvent& ev) { streamed += ev.piece; });
        QCOMPARE(r.finish, FinishReason::Stop);
        QCOMPARE(r.text, std::string(" Paris.\n\nThe "));
        QCOMPARE(streamed, r.text);
    }

    void piecesAreCompleteUtf8AndSeeded() {
        if (!have_model())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        GenerateRequest req;
        req.prompt = "Les cafés à Paris, 東京の寿司, and emoji 🎉🚀 are";
        req.max_tokens = 24;
        req.sampling.temperature = 1.0f;
        req.sampling.seed = 42;
        std::vector<std::string> pieces;
        const auto a = engine_->generate(req, [&](const TokenEvent& ev) {
            pieces.push_back(ev.piece);
            QVERIFY(ev.metrics.ffn_neurons_total == 30 * 1536);
        });
        for (const auto& p : pieces) QVERIFY(valid_utf8(p));
        QCOMPARE(engine_->last_metrics().active, int64_t(30 * 1536));
        const auto b = engine_->generate(req, nullptr);
        QCOMPARE(a.text, b.text);  // same seed, same text
        QVERIFY(a.decode_tokens_per_s > 0 && a.prompt_tokens_per_s > 0);
        QVERIFY(a.time_to_first_token_ms > 0);
    }

    void contextShift() {
        if (model_path_.empty())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        LoadOptions o;
        o.model_path = model_path_;
        o.n_threads = 2;
        o.n_ctx = 48;
        auto e = Engine::load(o);
        QCOMPARE(e->info().n_ctx, 48);
        // Counting never ends, so the context (48) fills and shifts twice.
        const auto r = e->generate(greedy("1, 2, 3, 4, 5,", 80), nullptr);
        QCOMPARE(r.finish, FinishReason::Length);
        QCOMPARE(r.generated_tokens, 80);
        QVERIFY2(r.notice.find("context full") != std::string::npos, r.notice.c_str());

        std::string words;
        for (int i = 0; i < 60; ++i) words += " word";
        try {
            e->generate(greedy(words, 4), nullptr);
            QFAIL("a prompt longer than the context was accepted");
        } catch (const EngineError& err) {
            QVERIFY2(QString(err.what())
                         .contains("tokens but the context holds 48: shorten the "
                                   "conversation or raise the context size"),
                     err.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "tst_engine.moc"
