// Continuous batching on the real default model: greedy replies of
// sequences that share their steps with neighbours (joining at different
// steps, one of them constrained by a JSON schema) equal the replies each
// gets alone from generate(); a cancelled sequence frees its slot at once;
// the logits of a batched row are the bits of the same token alone; a
// reply past the context length shifts the context batched as it does alone.
// Skips without POWERINFER_MODEL.
#include <QtTest>
#include <cstring>

#include "model/model.h"
#include "runtime/local_engine.h"

using namespace powerinfer;

namespace {

GenerateRequest chat(const std::string& text, int max_tokens) {
    GenerateRequest r;
    r.messages = {{"user", text}};
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0;
    r.reuse_cache = false;
    return r;
}

}  // namespace

class TestBatchedGeneration : public QObject {
    Q_OBJECT
    std::unique_ptr<runtime::LocalEngine> engine_;

private slots:
    void initTestCase() {
        const QByteArray path = qgetenv("POWERINFER_MODEL");
        if (path.isEmpty())
            QSKIP("POWERINFER_MODEL is not set (scripts/test sets it to the default model)");
        LoadOptions o;
        o.model_path = path.toStdString();
        o.n_ctx = 512;
        o.tuning.sparse = false;
        engine_ = runtime::LocalEngine::load(o);
    }

    void greedyRepliesAreTheSameWithNeighbours() {
        std::vector<GenerateRequest> requests = {
            chat("What is the capital of France?", 20), chat("Write a haiku about rain.", 24),
            chat("Count from one to ten.", 16), chat("Name three colours.", 20)};
        GenerateRequest json = chat("Describe a cat.", 24);
        json.constraint = OutputConstraint{
            R"({"type":"object","properties":{"name":{"type":"string","maxLength":10},"age":{"type":"integer"}},"required":["name","age"]})",
            "", ""};
        requests.push_back(json);
        std::vector<GenerateResult> alone;
        for (const auto& r : requests) alone.push_back(engine_->generate(r, nullptr));

        engine_->set_max_sequences(4);
        QCOMPARE(engine_->max_sequences(), 4);
        std::map<int, size_t> running;  // sequence -> request
        std::vector<std::string> streamed(requests.size());
        std::vector<GenerateResult> batched(requests.size());
        size_t next = 0, finished = 0;
        int steps = 0, widest = 0;
        while (finished < requests.size()) {
            // Join at different steps: one new request every third step.
            if (next < requests.size() && engine_->active_sequences() < 4 &&
                (steps % 3 == 0 || engine_->active_sequences() == 0))
                running[engine_->start_sequence(requests[next])] = next, ++next;
            widest = std::max(widest, engine_->active_sequences());
            for (const SequenceUpdate& u : engine_->step()) {
                const size_t i = running.at(u.sequence);
                for (const auto& e : u.events) streamed[i] += e.piece;
                if (u.finished) {
                    batched[i] = u.result;
                    running.erase(u.sequence);
                    ++finished;
                }
            }
            QVERIFY(++steps < 2000);
        }
        QCOMPARE(widest, 4);
        for (size_t i = 0; i < requests.size(); ++i) {
            QCOMPARE(QString::fromStdString(batched[i].text),
                     QString::fromStdString(alone[i].text));
            QCOMPARE(streamed[i], batched[i].text);
            QCOMPARE(batched[i].generated_tokens, alone[i].generated_tokens);
            QCOMPARE(int(batched[i].finish), int(alone[i].finish));
            QCOMPARE(batched[i].prompt_tokens, alone[i].prompt_tokens);
        }
        QCOMPARE(engine_->active_sequences(), 0);
    }

    // A prompt served from its own slot's cache (the same request again, as
    // a server gets it when a client repeats itself): the last two prompt
    // tokens are evaluated together, as in the fresh prompt, and the reply
    // is the fresh one. Evaluating only the last token, alone, replied
    // "Hola in Spanish!" here where the fresh prompt replies "Hola in
    // English!" (tst_batched_server saw it when its requests arrived in
    // another order under load).
    void aPromptFromItsOwnCacheGetsTheFreshReply() {
        engine_->set_max_sequences(4);
        GenerateRequest r = chat("Say hello in Spanish.", 20);
        r.reuse_cache = true;
        const auto run = [&] {
            const int seq = engine_->start_sequence(r);
            for (int steps = 0; steps < 200; ++steps)
                for (const SequenceUpdate& u : engine_->step())
                    if (u.sequence == seq && u.finished) return u.result;
            return GenerateResult{};
        };
        const GenerateResult first = run();
        const GenerateResult again = run();
        r.reuse_cache = false;
        engine_->set_max_sequences(1);
        const GenerateResult fresh = engine_->generate(r, nullptr);
        QCOMPARE(QString::fromStdString(first.text), QString::fromStdString(fresh.text));
        QCOMPARE(QString::fromStdString(again.text), QString::fromStdString(fresh.text));
        QCOMPARE(again.evaluated_prompt_tokens, 2);
    }

    // A reply longer than the context (512 tokens here): alone, generate()
    // drops the oldest tokens and goes on; batched beside a neighbour the
    // sequence does the same, with the same text (it used to end with
    // "context full" at 512 tokens).
    void aFullContextShiftsBatchedAsAlone() {
        GenerateRequest longer;
        longer.prompt = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10,";
        longer.max_tokens = 560;
        longer.sampling.temperature = 0;
        longer.reuse_cache = false;
        const GenerateResult alone = engine_->generate(longer, nullptr);
        QCOMPARE(alone.generated_tokens, 560);
        QVERIFY2(alone.notice.find("context full") != std::string::npos, alone.notice.c_str());

        engine_->set_max_sequences(2);
        const int seq = engine_->start_sequence(longer);
        engine_->start_sequence(chat("Write a haiku about rain.", 24));
        GenerateResult batched;
        std::string streamed;
        for (int steps = 0; engine_->active_sequences() > 0; ++steps) {
            for (const SequenceUpdate& u : engine_->step()) {
                if (u.sequence != seq) continue;
                for (const auto& e : u.events) streamed += e.piece;
                if (u.finished) batched = u.result;
            }
            QVERIFY(steps < 2000);
        }
        QCOMPARE(int(batched.finish), int(FinishReason::Length));
        QCOMPARE(batched.generated_tokens, alone.generated_tokens);
        QCOMPARE(QString::fromStdString(batched.notice), QString::fromStdString(alone.notice));
        QCOMPARE(QString::fromStdString(batched.text), QString::fromStdString(alone.text));
        QCOMPARE(streamed, batched.text);
        engine_->set_max_sequences(4);
    }

    void aBatchedRowHasTheBitsOfTheTokenAlone() {
        model::Model& m = engine_->model();
        m.set_sequence_slots(3);
        const int64_t V = m.config().n_vocab;
        const std::vector<int32_t> a = engine_->tokenize("The quick brown fox", true);
        const std::vector<int32_t> b = engine_->tokenize("Once upon a time there", true);
        std::vector<float> alone(static_cast<size_t>(V)), batch(static_cast<size_t>(2 * V));
        // Alone: slot 0, the prompt then one more token.
        m.forward(a.data(), int64_t(a.size()), 0, 0, nullptr, 0);
        const int32_t next = 42;
        m.forward(&next, 1, int64_t(a.size()), 1, alone.data(), 0);
        // Batched: slot 1 holds the same prompt, slot 2 another one.
        m.forward(a.data(), int64_t(a.size()), 0, 0, nullptr, 1);
        m.forward(b.data(), int64_t(b.size()), 0, 0, nullptr, 2);
        const int32_t tokens[2] = {777, next};
        const int seq_slots[2] = {2, 1};
        const int64_t positions[2] = {int64_t(b.size()), int64_t(a.size())};
        m.forward_sequences(tokens, seq_slots, positions, 2, batch.data());
        QVERIFY(std::memcmp(alone.data(), batch.data() + V, size_t(V) * sizeof(float)) == 0);
        const int twice[2] = {1, 1};
        QVERIFY_THROWS_EXCEPTION(EngineError,
                                 m.forward_sequences(tokens, twice, positions, 2, batch.data()));
        engine_->set_max_sequences(4);
    }

    void cancelledSequencesFreeTheirSlots() {
        engine_->set_max_sequences(2);
        const int a = engine_->start_sequence(chat("Tell me a long story.", 200));
        const int b = engine_->start_sequence(chat("Tell me another long story.", 200));
        QVERIFY(a != b);
        QVERIFY_THROWS_EXCEPTION(EngineError, engine_->start_sequence(chat("third", 5)));
        for (int i = 0; i < 4; ++i) engine_->step();
        const int64_t kv = engine_->memory().kv_cache;
        engine_->cancel_sequence(a);
        bool cancelled = false;
        for (const SequenceUpdate& u : engine_->step())
            if (u.sequence == a && u.finished)
                cancelled = u.result.finish == FinishReason::Cancelled;
        QVERIFY(cancelled);
        QCOMPARE(engine_->active_sequences(), 1);
        const int c = engine_->start_sequence(chat("Hi", 3));  // the freed slot
        QCOMPARE(c, a);
        engine_->cancel_sequence(b);
        engine_->cancel_sequence(c);
        engine_->step();
        QCOMPARE(engine_->active_sequences(), 0);
        QCOMPARE(engine_->memory().kv_cache, kv);  // slots are reused, nothing grows
        // A request the engine refuses is refused here too.
        QVERIFY_THROWS_EXCEPTION(ContextLengthExceeded,
                                 engine_->start_sequence(chat(std::string(4000, 'x'), 5)));
    }
};

QTEST_GUILESS_MAIN(TestBatchedGeneration)
#include "tst_batched_generation.moc"
