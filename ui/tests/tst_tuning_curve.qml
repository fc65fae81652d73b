import QtQuick
import QtQuick.Controls
import QtTest
import PowerInfer.Ui
import PowerInfer.App

// After calibration the tuning panel draws the sidecar's measured curve
// (perplexity rise per delivered sparsity) with the bound, the current point
// and the decode speeds: calibration's timed ones, and once "Compare with
// dense" ran, the measured one at its level. The controller runs
// on the FakeEngine, whose sidecar carries a curve (tst_ui.cpp).
TestCase {
    id: testCase
    name: "TuningCurve"
    when: windowShown
    visible: true
    width: 1280
    height: 800

    Component {
        id: tuningComponent
        TuningPanel {
            controller: testController
            height: 800
        }
    }

    function cleanup() {
        testController.sparse.resetToDefaults()
    }

    function test_curveIsDrawnWithTheCurrentPoint() {
        const drawer = createTemporaryObject(tuningComponent, testCase)
        drawer.open()
        tryCompare(drawer, "opened", true)
        const box = findChild(drawer, "sparsityCurve")
        const canvas = findChild(drawer, "curveCanvas")
        verify(box.visible)
        compare(testController.sparse.curve.length, 7)
        compare(testController.sparse.recommendedSparsity, 0.45)
        // -1 (the default): the current point is the default level, here 0,
        // which decoded fastest when the sidecar was calibrated.
        compare(testController.sparse.activationSparsity, -1)
        compare(testController.sparse.defaultSparsity, 0)
        compare(testController.sparse.currentSparsity, 0)
        tryCompare(canvas, "drawnPoints", 7, 3000)
        verify(canvas.currentX > 0)
        const summary = findChild(drawer, "curveSummary")
        verify(summary.text.indexOf("Recommended: 45 %") >= 0, summary.text)
        verify(summary.text.indexOf("+1.1 %") >= 0, summary.text)
        verify(summary.text.indexOf("Default: 0 %, the fastest within it when calibrating "
                                    + "(1.03x dense, reading 75 % of dense's weight bytes)") >= 0,
               summary.text)

        // The knob moves the current point along the curve.
        const x0 = canvas.currentX
        testController.sparse.setValue("activation_sparsity", 0.2)
        compare(testController.sparse.currentSparsity, 0.2)
        tryVerify(() => canvas.currentX > x0 + 10, 3000)
        verify(summary.text.indexOf("Now 20 %") >= 0, summary.text)

        // The speeds calibration timed (levels 0-0.45) are drawn hollow from
        // the start; a measured speed replaces the one at its level.
        tryCompare(canvas, "drawnSpeeds", 5, 3000)
        compare(canvas.drawnTimed, 5)
        testController.sparse.setValue("activation_sparsity", -1)
        testController.newConversation()
        testController.send("hello")
        tryCompare(testController, "generating", true, 3000)
        tryCompare(testController, "generating", false, 5000)
        testController.compareWithDense()
        tryCompare(testController.sparse, "comparing", false, 10000)
        tryVerify(() => testController.sparse.speedPoints.length === 1, 10000)
        compare(testController.sparse.speedPoints[0].level, 0)
        tryCompare(canvas, "drawnTimed", 4, 3000)
        compare(canvas.drawnSpeeds, 5)
    }

    function test_cpuOnlySaysWhichKnobsHaveNoEffect() {
        const drawer = createTemporaryObject(tuningComponent, testCase)
        drawer.open()
        tryCompare(drawer, "opened", true)
        verify(testController.sparse.metrics.simulated)
        const scroll = findChild(drawer, "tuningScroll")
        let found = 0
        const walk = item => {
            for (let i = 0; i < item.children.length; ++i) {
                const c = item.children[i]
                if (c.text !== undefined && typeof c.text === "string"
                        && c.text.indexOf("No effect on this machine") === 0)
                    ++found
                walk(c)
            }
        }
        walk(scroll.contentItem)
        // Hot-neuron threshold, predictor threshold, prefetch depth, cache window.
        compare(found, 4)
    }

    // Issue 30, item 14: before calibration (no sidecar: the model runs
    // dense) the knobs were dimmed without a word on why.
    function test_beforeCalibrationEveryKnobSaysItHasNoEffectYet() {
        const fake = testController.modelPath
        const dense = fake.substring(0, fake.lastIndexOf("/") + 1) + "dense.gguf"
        testController.loadModel(dense)
        tryCompare(testController, "modelPath", dense, 3000)
        tryCompare(testController, "modelState", ChatController.Ready, 5000)
        tryVerify(() => !testController.sparse.metrics.hasSidecar, 3000)
        const drawer = createTemporaryObject(tuningComponent, testCase)
        drawer.open()
        tryCompare(drawer, "opened", true)
        for (const key of ["hot_neuron_threshold", "predictor_threshold", "activation_sparsity",
                           "prefetch_depth", "cache_window_size"]) {
            const help = findChild(drawer, "knobHelp_" + key)
            verify(help, key)
            verify(help.text.indexOf("No effect until the model is calibrated") === 0,
                   key + ": " + help.text)
        }
        drawer.close()
        testController.loadModel(fake)
        tryCompare(testController, "modelPath", fake, 3000)
        tryCompare(testController, "modelState", ChatController.Ready, 5000)
    }
}
