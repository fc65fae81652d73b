// A correctly rounded fmaf for MinGW-w64 builds (compiled only there; see
// engine/CMakeLists.txt). The engine's baseline code and scalar kernels call
// std::fma(float, float, float) to round as ggml's FMA builds do, and they
// need the single rounding that C requires. MinGW-w64's fmaf does not give
// it: on 50 million random operand triples it differed from glibc's (and
// from this one) in 19%, which moved the model's logits in batched steps
// (the CPU backend's rope rotation uses it). This definition takes the place
// of the runtime's at link time; glibc, the UCRT and the FMA instruction
// give the same bits.
//
// Method: x * y is exact in double (24 + 24 significant bits); the sum with
// z is rounded to double, its error found exactly (two-sum), and the double
// rounded to odd (an inexact result takes the neighbour with an odd last
// bit). Rounding that to float rounds the exact value once, because double
// has more than 24 + 2 significant bits (Boldo and Melquiond, "Emulation of
// FMA and correctly rounded sums: proved algorithms using rounding to odd",
// IEEE Trans. Computers, 2008).
#include <cmath>
#include <cstdint>
#include <cstring>

extern "C" float fmaf(float x, float y, float z) {
    const double p = static_cast<double>(x) * static_cast<double>(y);
    const double zd = static_cast<double>(z);
    double s = p + zd;
    if (std::isfinite(s)) {
        // Knuth's two-sum: err = (p + zd) - s exactly (no overflow: |p| <
        // 2^256, and every product of floats is a normal double or 0).
        const double b = s - p;
        const double err = (p - (s - b)) + (zd - b);
        if (err != 0) {
            uint64_t bits;
            std::memcpy(&bits, &s, sizeof bits);
            if ((bits & 1) == 0) {
                // The neighbour towards the exact value: away from zero
                // when the error has the sign of s, towards it otherwise
                // (s is not 0 here: a sum that rounds to 0 is exact).
                bits = (err > 0) == (s > 0) ? bits + 1 : bits - 1;
                std::memcpy(&s, &bits, sizeof s);
            }
        }
    }
    return static_cast<float>(s);
}
