// The fit estimate on the default model's numbers (SmolLM2-135M-Instruct
// Q4_1: 98,362,432 bytes, 30 layers, 576 wide, 9 heads of which 3 KV, FFN
// 1536, vocabulary 49,152, 134,515,008 parameters), bytes exact, on four
// machines: a big GPU, a small one (hybrid), CPU only, too little RAM.
#include <QtTest>

#include "powerinfer/fit_estimate.h"

using namespace powerinfer;

class TestFitEstimate : public QObject {
    Q_OBJECT
    static FitModelShape smollm2() {
        FitModelShape s;
        s.weight_bytes = 98362432;
        s.n_params = 134515008;
        s.n_layers = 30;
        s.n_embd = 576;
        s.n_head = 9;
        s.n_head_kv = 3;
        s.n_ff = 1536;
        s.n_vocab = 49152;
        return s;
    }
    static FitMachine cpuMachine() {
        FitMachine m;
        m.ram_total_bytes = int64_t(16) << 30;
        m.ram_available_bytes = int64_t(12) << 30;
        m.host_read_bytes_per_s = 20e9;
        return m;
    }

private slots:
    void kvCacheIsF16KAndVPerLayer() {
        // 2 (K, V) x 30 layers x 64 head dim x 3 KV heads x 2048 tokens x 2 bytes.
        QCOMPARE(fit_kv_cache_bytes(smollm2(), 2048), int64_t(47185920));
        FitModelShape qwen3 = smollm2();
        qwen3.n_head = 16;
        qwen3.n_embd = 1024;
        qwen3.head_dim = 128;  // not 1024 / 16
        qwen3.n_head_kv = 8;
        QCOMPARE(fit_kv_cache_bytes(qwen3, 1000), int64_t(2) * 30 * 128 * 8 * 1000 * 2);
        QCOMPARE(fit_kv_cache_bytes(FitModelShape{}, 2048), int64_t(0));
    }

    void cpuOnlyWithTheMeasuredBandwidth() {
        const FitEstimate e = estimate_fit(smollm2(), 2048, cpuMachine());
        QCOMPARE(e.verdict, FitVerdict::CpuOnly);
        QCOMPARE(e.weight_bytes, int64_t(98362432));
        QCOMPARE(e.kv_cache_bytes, int64_t(47185920));
        QCOMPARE(e.runtime_bytes, int64_t(2 * 49152 * 4 + (32 << 20)));
        QCOMPARE(e.total_bytes, int64_t(179496000));
        QCOMPARE(e.ram_bytes, e.total_bytes);
        QCOMPARE(e.gpu_bytes, int64_t(0));
        // 20 GB/s over the weights plus a 512-token KV cache (11,796,480 bytes).
        QCOMPARE(qRound64(e.tokens_per_s * 1000), qRound64(20e9 / 110158912.0 * 1000));
        QVERIFY2(QString::fromStdString(e.summary).startsWith("CPU only: 0.2 GB of RAM"),
                 e.summary.c_str());
        QVERIFY(QString::fromStdString(e.summary).contains("up to 182 tok/s"));
    }

    // The decode probe's rate makes the speed an estimate ("about"); for a
    // model that reads more than the bandwidth buffer per token (from RAM,
    // not a cache) the read bandwidth caps it.
    void theDecodeProbesRateGivesAnEstimate() {
        FitMachine m = cpuMachine();
        m.decode_bytes_per_s = 5e9;
        FitEstimate e = estimate_fit(smollm2(), 2048, m);
        QVERIFY(!e.tokens_per_s_is_bound);
        QCOMPARE(qRound64(e.tokens_per_s * 1000), qRound64(5e9 / 110158912.0 * 1000));
        QVERIFY2(QString::fromStdString(e.summary).endsWith(", about 45 tok/s"), e.summary.c_str());
        m.decode_bytes_per_s = 40e9;  // in cache: above the read bandwidth, kept
        e = estimate_fit(smollm2(), 2048, m);
        QCOMPARE(qRound64(e.tokens_per_s * 1000), qRound64(40e9 / 110158912.0 * 1000));
        FitModelShape big = smollm2();
        big.weight_bytes = int64_t(4) << 30;  // from RAM: the read bandwidth caps it
        e = estimate_fit(big, 2048, m);
        QCOMPARE(qRound64(e.tokens_per_s * 1000),
                 qRound64(20e9 / double(big.weight_bytes + 11796480) * 1000));
        QVERIFY(estimate_fit(smollm2(), 2048, cpuMachine()).tokens_per_s_is_bound);
    }

    // With the engine's placement preview (its numbers given here; the
    // preview itself in tst_fit_placement): the hot share, bytes exact.
    void aPreviewGivesTheHotNeuronShare() {
        FitMachine m = cpuMachine();
        m.gpu = true;
        m.vram_free_bytes = kFitVramReserveBytes + 150000000;
        FitPlacement p;
        p.valid = true;
        p.n_layers = 30;
        p.gpu_attention_layers = 30;
        p.hot_neurons = 11520;  // a quarter of 30 x 1536
        p.total_neurons = 46080;
        p.hot_neuron_bytes = 30000000;
        p.wanted_hot_bytes = 40000000;
        p.device_bytes = 140000000;
        const FitEstimate e = estimate_fit(smollm2(), 2048, m, p);
        QCOMPARE(e.verdict, FitVerdict::Hybrid);
        QCOMPARE(e.gpu_bytes, int64_t(140000000));
        QCOMPARE(e.ram_bytes, int64_t(179496000 - 140000000));
        QCOMPARE(e.gpu_hot_fraction, 0.75);
        QCOMPARE(e.gpu_ffn_fraction, 0.25);
        QVERIFY2(QString::fromStdString(e.summary).startsWith(
                     "hybrid: 75 % of hot neurons on the GPU (11520 of 46080 FFN "
                     "neurons), up to "),
                 e.summary.c_str());
        // All attention on the GPU: the CPU reads three quarters of the FFN bytes.
        QVERIFY(qAbs(e.tokens_per_s - 20e9 / double(int64_t(58225700 * 0.75))) < 1e-6);
        // An invalid preview falls back to the byte share.
        p.valid = false;
        QVERIFY(QString::fromStdString(estimate_fit(smollm2(), 2048, m, p).summary)
                    .startsWith("hybrid: about 49 %"));
    }

    void withoutABandwidthThereIsNoSpeed() {
        FitMachine m = cpuMachine();
        m.host_read_bytes_per_s = 0;
        const FitEstimate e = estimate_fit(smollm2(), 2048, m);
        QCOMPARE(e.tokens_per_s, 0.0);
        QVERIFY(!QString::fromStdString(e.summary).contains("tok/s"));
    }

    void aBigGpuHoldsEverything() {
        FitMachine m = cpuMachine();
        m.gpu = true;
        m.vram_free_bytes = int64_t(8) << 30;
        const FitEstimate e = estimate_fit(smollm2(), 2048, m);
        QCOMPARE(e.verdict, FitVerdict::Gpu);
        QCOMPARE(e.gpu_bytes, int64_t(179496000));
        QCOMPARE(e.tokens_per_s, 0.0);  // the GPU's bandwidth is not measured
        QVERIFY(QString::fromStdString(e.summary).startsWith("fits on the GPU"));
    }

    void aSmallGpuTakesPartOfTheFfn() {
        FitMachine m = cpuMachine();
        m.gpu = true;
        m.vram_free_bytes = kFitVramReserveBytes + 150000000;
        const FitEstimate e = estimate_fit(smollm2(), 2048, m);
        QCOMPARE(e.verdict, FitVerdict::Hybrid);
        // FFN share 3 x 576 x 1536 x 30 / 134,515,008 of the weight bytes.
        QCOMPARE(e.ffn_bytes, int64_t(58225700));
        // Attention, KV cache and buffers (121,270,300 bytes) first, the rest to the FFN.
        QCOMPARE(e.gpu_bytes, int64_t(150000000));
        QCOMPARE(qRound64(e.gpu_ffn_fraction * 1e6), qRound64(28729700.0 / 58225700.0 * 1e6));
        QCOMPARE(e.ram_bytes, int64_t(179496000 - 150000000));
        // The CPU reads the FFN bytes left to it: 29,496,000 per token.
        QVERIFY(qAbs(e.tokens_per_s - 20e9 / 29496000.0) < 0.01);
        QVERIFY2(QString::fromStdString(e.summary).startsWith(
                     "hybrid: about 49 % of the FFN on the GPU (calibrate for the hot neurons)"),
                 e.summary.c_str());
    }

    void tooLittleRamDoesNotFit() {
        FitMachine m = cpuMachine();
        m.ram_available_bytes = kFitRamReserveBytes + 100000000;
        const FitEstimate e = estimate_fit(smollm2(), 2048, m);
        QCOMPARE(e.verdict, FitVerdict::DoesNotFit);
        QVERIFY2(QString::fromStdString(e.summary).startsWith(
                     "does not fit: needs 0.2 GB of RAM, 0.1 GB"),
                 e.summary.c_str());
    }

    void theHostProbesAnswer() {
        const HostMemory h = host_memory();
#ifdef Q_OS_LINUX
        QVERIFY(h.total_bytes > 0);
        QVERIFY(h.available_bytes > 0 && h.available_bytes <= h.total_bytes);
#endif
        // Any machine reads memory at more than 100 MB/s and less than 10 TB/s.
        const double bw = measure_host_read_bandwidth(1);
        QVERIFY2(bw > 1e8 && bw < 1e13, qPrintable(QString::number(bw)));
    }
};

QTEST_APPLESS_MAIN(TestFitEstimate)
#include "tst_fit_estimate.moc"
