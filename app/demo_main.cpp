// powerinfer-desktop-demo: the desktop app on a scripted FakeEngine, for
// layout work, screenshots and tests on machines without a model or runtime.
// Any --model path "loads" instantly; replies are a fixed Markdown sample.
#include <QRegularExpression>
#include <QString>

#include "desktop_app.h"
#include "fake_engine.h"

namespace {

std::vector<std::string> sampleReplyTokens() {
    const QString reply = QStringLiteral(
        "Sparse inference skips the neurons that stay silent. In a ReLU-style FFN most "
        "activations are **zero** for a given token, so PowerInfer:\n\n"
        "1. predicts the active neurons with a tiny per-layer MLP,\n"
        "2. keeps the *hot* ones in VRAM and the cold ones in RAM,\n"
        "3. computes only what fires.\n\n"
        "A toy version of the idea:\n\n"
        "```python\n"
        "def sparse_ffn(x, W_up, W_down, predictor):\n"
        "    active = predictor(x) > 0.5\n"
        "    h = relu(W_up[active] @ x)\n"
        "    return W_down[:, active] @ h\n"
        "```\n\n"
        "The result matches the dense FFN whenever the predictor's recall is high.");
    std::vector<std::string> tokens;
    // Words with their leading space, like a BPE tokenizer's pieces.
    static const QRegularExpression piece(QStringLiteral("\\s*\\S+|\\s+"));
    auto it = piece.globalMatch(reply);
    while (it.hasNext()) tokens.push_back(it.next().captured().toStdString());
    return tokens;
}

}  // namespace

int main(int argc, char** argv) {
    powerinfer::app::FakeScript script;
    script.tokens = sampleReplyTokens();
    script.tokenDelay =
        std::chrono::milliseconds(qEnvironmentVariableIntValue("FAKE_TOKEN_MS") > 0
                                      ? qEnvironmentVariableIntValue("FAKE_TOKEN_MS")
                                      : 12);
    script.modelName = "SmolLM2 135M Instruct (demo)";
    powerinfer::app::DesktopServices services;
    services.engineFactory = [script](const powerinfer::LoadOptions& options) {
        return powerinfer::app::FakeEngine::load(options, script);
    };
    return powerinfer::app::runDesktopApp(argc, argv, std::move(services));
}
