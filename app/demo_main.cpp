// powerinfer-desktop-demo: the desktop app on the scripted engine, for
// layout work, screenshots and tests on machines without a model or runtime.
// Any --model path "loads" instantly; replies are a fixed Markdown sample.
#include <QRegularExpression>
#include <QString>
#include <algorithm>
#include <vector>

#include "desktop_app.h"
#include "scripted_engine.h"

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

// The demo's own options, taken out of argv before the app parses it:
// --demo-tokens N (every reply is N tokens) and --demo-rate R (tokens/s).
struct DemoOptions {
    int tokens = 0;
    int rate = 0;
};

// Also: without --model the demo "loads" a fake one, so that a plain
// `--prompt TEXT --quit-after-reply` gets a reply.
DemoOptions takeDemoOptions(int argc, char** argv, std::vector<char*>& rest) {
    DemoOptions d;
    bool model = false, help = false;
    rest.assign(argv, argv + 1);
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if ((a == "--demo-tokens" || a == "--demo-rate") && i + 1 < argc) {
            (a == "--demo-tokens" ? d.tokens : d.rate) = QByteArray(argv[++i]).toInt();
            continue;
        }
        model = model || a == "--model" || a.endsWith(".gguf");
        help = help || a.startsWith("--help") || a == "--version" || a == "-h" || a == "-v";
        rest.push_back(argv[i]);
    }
    static char modelFlag[] = "--model", demoModel[] = "demo.gguf";
    if (!model && !help) {
        rest.push_back(modelFlag);
        rest.push_back(demoModel);
    }
    rest.push_back(nullptr);
    return d;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<char*> args;
    const DemoOptions demo = takeDemoOptions(argc, argv, args);
    int appArgc = int(args.size()) - 1;
    powerinfer::testing::EngineScript script;
    script.tokens = sampleReplyTokens();
    int tokenMs = qEnvironmentVariableIntValue("FAKE_TOKEN_MS") > 0
                      ? qEnvironmentVariableIntValue("FAKE_TOKEN_MS")
                      : 12;
    if (demo.rate > 0) tokenMs = std::max(1, 1000 / demo.rate);
    script.tokenDelay = std::chrono::milliseconds(tokenMs);
    script.replyTokens = demo.tokens;
    script.modelName = "SmolLM2 135M Instruct (demo)";
    powerinfer::app::DesktopServices services;
    services.modelMustExist = false;  // "demo.gguf" is scripted, not a file
    services.engineFactory = [script](const powerinfer::LoadOptions& options) {
        return powerinfer::testing::ScriptedEngine::load(options, script);
    };
    return powerinfer::app::runDesktopApp(appArgc, args.data(), std::move(services));
}
